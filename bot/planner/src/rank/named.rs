//! What a plan line names: the definitions of a file that the request is about, and the request's own words for a stemmed term.
//!
//! Ranking works on stems (`sinc` for "since"); people read words. So a
//! Change line names the functions, types and flags the request points at,
//! by the symbol index, and anything else is said in the request's spelling.

use crate::detect::symbols::{definitions, Symbol};
use crate::text;

/// At most this many symbols named per Change line.
const MAX_NAMED: usize = 3;

/// The request's words, lowercased: `--flags` whole, identifiers whole, stopwords out.
pub fn request_words(request: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in request.split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | ':'))) {
        let w = raw.trim_matches(|c: char| c == ':' || c == '-' && !raw.starts_with("--"));
        let lower = w.to_lowercase();
        if lower.len() < 3 || text::is_stopword(&lower) || out.contains(&lower) {
            continue;
        }
        out.push(lower);
    }
    out
}

/// The request word a stem came from (stems only ever cut a suffix), else the stem.
pub fn surface<'a>(words: &'a [String], stem: &'a str) -> &'a str {
    words
        .iter()
        .flat_map(|w| w.split(['_', '-', ':']))
        .find(|w| w.starts_with(stem))
        .unwrap_or(stem)
}

fn kind_rank(kind: &str) -> u8 {
    match kind {
        "flag" | "command" => 0,
        "fn" | "def" | "func" => 1,
        "struct" | "enum" | "trait" | "class" | "interface" | "type" => 2,
        _ => 3,
    }
}

/// The definitions in `source` the request names, best first: a definition
/// spelled out in the request (`WalkBuilder::empty`, `--since`) beats one
/// sharing a word with it; constants and modules come last.
pub fn named_symbols(path: &str, source: &str, words: &[String]) -> Vec<Symbol> {
    if words.is_empty() {
        return Vec::new();
    }
    // Identifier pieces, stemmed the way ranking stems them.
    let stems: Vec<String> = words
        .iter()
        .flat_map(|w| text::terms(w))
        .filter(|t| t.len() >= 3 && !text::is_stopword(t))
        .collect();
    let mut scored: Vec<(u32, Symbol)> = Vec::new();
    for sym in definitions(path, source) {
        let name = sym.name.to_lowercase();
        // Test functions (`a_stage_step_names_its_…`) describe, they are not changed.
        if sym.name.matches('_').count() >= 4 || name.starts_with("test_") {
            continue;
        }
        let exact = words
            .iter()
            .any(|w| *w == name || w.split("::").any(|part| part == name));
        let pieces = text::terms(&sym.name);
        let shared = stems
            .iter()
            .filter(|s| pieces.iter().any(|p| p == *s))
            .count() as u32;
        // Every definition the request spells out ranks above every partial match.
        let score = if exact { 100 } else { shared };
        // One shared word is enough for a flag, a command or a function; a
        // constant or module needs two, or every `const` named like the area floods in.
        let enough = exact || shared >= 2 || shared == 1 && kind_rank(sym.kind) <= 2;
        if enough
            && !scored
                .iter()
                .any(|(_, s)| s.name.eq_ignore_ascii_case(&sym.name))
        {
            scored.push((score, sym));
        }
    }
    scored.sort_by(|(a, x), (b, y)| {
        b.cmp(a)
            .then(kind_rank(x.kind).cmp(&kind_rank(y.kind)))
            .then(x.line.cmp(&y.line))
    });
    scored.into_iter().take(MAX_NAMED).map(|(_, s)| s).collect()
}

/// `` `HistoryArgs` (struct, line 4) and `history` (fn, line 9) ``.
pub fn describe(symbols: &[Symbol]) -> String {
    let parts: Vec<String> = symbols
        .iter()
        .map(|s| format!("`{}` ({}, line {})", s.name, s.kind, s.line))
        .collect();
    match parts.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_and_the_args_struct_the_request_names_are_found_in_the_cli_file() {
        let words = request_words("Add a --since option to navin ledger history");
        assert!(words.contains(&"--since".to_owned()) && words.contains(&"history".to_owned()));
        let cli = "#[derive(clap::Args)]\npub struct HistoryArgs {\n    #[arg(long)]\n    limit: Option<usize>,\n}\npub fn history(args: &HistoryArgs) {}\nconst HISTORY_MAX: usize = 3;\nfn unrelated() {}\n";
        let named = named_symbols("src/cli/ledger.rs", cli, &words);
        let names: Vec<&str> = named.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["history", "HistoryArgs"], "{named:?}");
        assert_eq!(
            describe(&named),
            "`history` (fn, line 6) and `HistoryArgs` (struct, line 2)"
        );
    }

    #[test]
    fn a_symbol_spelled_out_in_the_request_comes_first() {
        let words =
            request_words("ignore/walk: add `WalkBuilder::empty` and `WalkBuilder::from_iter`");
        let src = "pub struct WalkBuilder {}\nimpl WalkBuilder {\n    pub fn new() -> Self {}\n    pub fn empty() -> Self {}\n    pub fn from_iter() -> Self {}\n}\npub fn walk_dir() {}\n";
        let named = named_symbols("src/walk.rs", src, &words);
        let names: Vec<&str> = named.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            &names[..3],
            ["empty", "from_iter", "WalkBuilder"],
            "{named:?}"
        );
    }

    #[test]
    fn stems_are_shown_in_the_requests_spelling() {
        let words = request_words("Add a --since option");
        assert_eq!(surface(&words, text::stem("since")), "since");
        assert_eq!(surface(&words, "opt"), "option");
        assert_eq!(surface(&words, "zzz"), "zzz");
    }
}
