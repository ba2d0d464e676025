//! The fingerprint of a CI failure: which required checks failed and how, with what changes from run to run stripped, so the same failure on a new head is known again.
//!
//! The failure text is what the check run itself reports (`output.title`, `output.summary`,
//! `output.text` and its annotations' messages): test reporters put the failing tests
//! there. Commit SHAs, durations, paths under temporary directories, timestamps and every
//! other number differ between two runs of the same failure, so they are replaced before
//! hashing; what is left is the failure's shape.

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest as _, Sha256};

/// Characters of normalized text kept per check: enough for the failing tests' names.
const MAX_TEXT: usize = 4000;

struct Rule {
    pattern: Regex,
    replacement: &'static str,
}

/// Applied in order: temp paths first (they hold numbers and hex), then SHAs, durations,
/// and any number left.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |pattern: &str, replacement| Rule {
        pattern: Regex::new(pattern)
            .unwrap_or_else(|e| panic!("fingerprint pattern {pattern}: {e}")),
        replacement,
    };
    vec![
        rule(
            r#"(?:/tmp|/var/folders|/private/var/folders|/home/runner/work/_temp|/var/tmp|(?i:[a-z]:\\Users\\[^\\\s]+\\AppData\\Local\\Temp)|(?i:\\\\?\?\\)?[A-Za-z]:\\Windows\\Temp|\$TMPDIR)[^\s:'"`)\]]*"#,
            "<tmp>",
        ),
        rule(r"\b[0-9a-f]{7,64}\b", "<sha>"),
        rule(
            r"(?i)\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b",
            "<dur>",
        ),
        rule(r"\d+", "#"),
    ]
});

/// `text` with what varies between runs of the same failure replaced, whitespace
/// collapsed, bounded to [`MAX_TEXT`] characters.
pub fn normalize(text: &str) -> String {
    let mut out = text.to_owned();
    for rule in RULES.iter() {
        out = rule
            .pattern
            .replace_all(&out, rule.replacement)
            .into_owned();
    }
    let collapsed = collapse_rules(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    collapsed.chars().take(MAX_TEXT).collect()
}

/// Runs of the same punctuation (`=====` banners sized to the terminal, a progress line
/// of dots that grows with the test count) become one character.
fn collapse_rules(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let mut run = 1;
        while chars.peek() == Some(&c) {
            chars.next();
            run += 1;
        }
        let keep = if c.is_ascii_punctuation() { 1 } else { run };
        out.extend(std::iter::repeat_n(c, keep));
    }
    out
}

/// The fingerprint (`fp:` and 16 hex digits) of the failed checks `failed` — (name,
/// failure text) pairs — or `None` when nothing failed. Order does not matter.
pub fn fingerprint(failed: &[(String, String)]) -> Option<String> {
    if failed.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = failed
        .iter()
        .map(|(name, text)| format!("{}\n{}", name.trim(), normalize(text)))
        .collect();
    parts.sort();
    parts.dedup();
    let digest = Sha256::digest(parts.join("\n\u{1e}\n").as_bytes());
    Some(format!("fp:{}", &hex::encode(digest)[..16]))
}
