//! What a plan line names: the definitions of a file that the request is about, and the request's own words for a stemmed term.
//!
//! Ranking works on stems (`sinc` for "since"); people read words. So a
//! Change line names the functions, types and flags the request points at,
//! by the symbol index, and anything else is said in the request's spelling.

use crate::detect::symbols::{definitions, Symbol};
use crate::text;

/// At most this many symbols named per Change line.
const MAX_NAMED: usize = 3;

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
    let defs = definitions(path, source);
    let lines: Vec<&str> = source.lines().collect();
    let tests_from = test_region(path, &lines);
    for (i, sym) in defs.iter().enumerate() {
        let name = sym.name.to_lowercase();
        // Test functions (`a_stage_step_names_its_…`) and everything in a test
        // module describe the code; a source change never lands there.
        if sym.name.matches('_').count() >= 4
            || name.starts_with("test_")
            || name == "tests"
            || sym.line >= tests_from
        {
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
        // A function whose doc comment and body use two or more of the request's
        // words is where the change lands even when its name shares none
        // ("timezone" in the body of `parse_offset`), below any name match.
        let body = if exact || shared > 0 || kind_rank(sym.kind) != 1 {
            0
        } else {
            let end = defs
                .get(i + 1)
                .map_or(lines.len(), |n| n.line as usize - 1)
                .min(tests_from as usize - 1);
            body_terms(&lines, sym.line as usize, end, &stems)
        };
        // Every definition the request spells out ranks above every partial match.
        let score = if exact {
            1000
        } else if shared > 0 {
            100 * shared
        } else {
            body
        };
        // One shared word is enough for a flag, a command or a function; a
        // constant or module needs two, or every `const` named like the area floods in.
        let enough =
            exact || shared >= 2 || shared == 1 && kind_rank(sym.kind) <= 2 || body >= BODY_TERMS;
        if enough
            && !scored
                .iter()
                .any(|(_, s)| s.name.eq_ignore_ascii_case(&sym.name))
        {
            scored.push((score, sym.clone()));
        }
    }
    scored.sort_by(|(a, x), (b, y)| {
        b.cmp(a)
            .then(kind_rank(x.kind).cmp(&kind_rank(y.kind)))
            .then(x.line.cmp(&y.line))
    });
    scored.into_iter().take(MAX_NAMED).map(|(_, s)| s).collect()
}

/// The definitions of `source` whose bodies use one of `names` (a whole identifier),
/// each with the first name it uses: the callers a change to those names reaches. At
/// most [`MAX_NAMED`], in file order; nothing in a Rust test module.
pub fn callers(path: &str, source: &str, names: &[String]) -> Vec<(Symbol, String)> {
    if names.is_empty() {
        return Vec::new();
    }
    let defs = definitions(path, source);
    let lines: Vec<&str> = source.lines().collect();
    let tests_from = test_region(path, &lines);
    let mut out = Vec::new();
    for (i, sym) in defs.iter().enumerate() {
        if sym.line >= tests_from || names.contains(&sym.name) || kind_rank(sym.kind) != 1 {
            continue;
        }
        let end = defs
            .get(i + 1)
            .map_or(lines.len(), |n| n.line as usize - 1)
            .min(tests_from as usize - 1)
            .min(lines.len());
        let body = &lines[(sym.line as usize).min(end)..end];
        let used = names.iter().find(|n| {
            body.iter().any(|l| {
                l.match_indices(n.as_str()).any(|(at, _)| {
                    let before = l[..at].chars().next_back();
                    let after = l[at + n.len()..].chars().next();
                    let ident =
                        |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !ident(before) && !ident(after)
                })
            })
        });
        if let Some(used) = used {
            out.push((sym.clone(), used.clone()));
            if out.len() == MAX_NAMED {
                break;
            }
        }
    }
    out
}

/// Request words a function's doc comment and body must share before it is named
/// without a name match.
const BODY_TERMS: u32 = 2;

/// The first line of a Rust file's `#[cfg(test)]` module (1-based), else past the end:
/// definitions from there on are tests.
fn test_region(path: &str, lines: &[&str]) -> u32 {
    if !path.ends_with(".rs") {
        return u32::MAX;
    }
    lines
        .iter()
        .position(|l| l.trim_start().starts_with("#[cfg(test)]"))
        .map_or(u32::MAX, |i| u32::try_from(i + 1).unwrap_or(u32::MAX))
}

/// How many distinct `stems` the definition at `line` (1-based) uses in its doc
/// comment (the comment lines right above it) and its body, through line `end`.
fn body_terms(lines: &[&str], line: usize, end: usize, stems: &[String]) -> u32 {
    let start = line.saturating_sub(1);
    let mut doc = start;
    while doc > 0 && {
        let l = lines[doc - 1].trim_start();
        l.starts_with("//") || l.starts_with('#') || l.starts_with('*') || l.starts_with("/*")
    } {
        doc -= 1;
    }
    let end = end.min(lines.len()).min(start + 200).max(start);
    let mut seen: Vec<&str> = Vec::new();
    for l in &lines[doc..end] {
        text::for_each_term(l, |w| {
            if let Some(s) = stems.iter().find(|s| s.as_str() == w) {
                if !seen.contains(&s.as_str()) {
                    seen.push(s.as_str());
                }
            }
        });
    }
    u32::try_from(seen.len()).unwrap_or(u32::MAX)
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
    use crate::request::request_words;

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
