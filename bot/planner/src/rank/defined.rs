//! Short requests: the files that define, as a whole identifier, a word the request uses.
//!
//! "Re-add generic flag" has two words, and one of them ("flag") is in half
//! the repository's files and docs, so term statistics alone rank prose first.
//! What such a request means is usually the code that owns the word: the file
//! that defines `Flag` (or `flag`, `Flags`) itself. Only requests this short get
//! the lift; longer ones carry enough words for the statistics to work.

use crate::detect::symbols::Symbol;
use crate::text;

/// A request with at most this many live terms counts as short.
pub(crate) const SHORT_TERMS: usize = 3;
/// A word defined by more files than this has no owner (`Error` in every module).
const MAX_OWNERS: usize = 2;

/// The request terms (stemmed) that some type, flag or command in the file is
/// named after exactly, as its only word: `Flag`, `Flags`, `--flag` for `flag`,
/// not `BoolFlag`. Functions do not count: `def test()` or `fn error()` are
/// helpers named with common verbs, not the owner of the word; nor do modules
/// and constants, which name areas.
pub(crate) fn terms_defined(symbols: &[Symbol], terms: &[String], live: &[bool]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sym in symbols {
        if !matches!(
            sym.kind,
            "struct" | "enum" | "trait" | "type" | "class" | "interface" | "flag" | "command"
        ) {
            continue;
        }
        let pieces = text::terms(&sym.name);
        let [only] = pieces.as_slice() else {
            continue;
        };
        for (t, term) in terms.iter().enumerate() {
            if live.get(t).copied().unwrap_or(false) && only == term && !out.contains(term) {
                out.push(term.clone());
            }
        }
    }
    out
}

/// Keeps only the words few files define: `defines[i]` lists the terms file
/// `i` defines; a term defined in more than [`MAX_OWNERS`] files is dropped everywhere.
pub(crate) fn keep_owned(defines: &mut [Vec<String>]) {
    let mut count: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for d in defines.iter() {
        for t in d {
            *count.entry(t.clone()).or_default() += 1;
        }
    }
    for d in defines.iter_mut() {
        d.retain(|t| count.get(t).copied().unwrap_or(0) <= MAX_OWNERS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::symbols::definitions;

    #[test]
    fn only_a_definition_named_after_the_word_alone_owns_it() {
        let go = "package cli\n\ntype Flag interface {}\n\ntype BoolFlag = FlagBase[bool]\n\nconst flag = 1\n";
        let syms = definitions("flag.go", go);
        let terms = vec!["flag".to_owned(), "gener".to_owned()];
        assert_eq!(terms_defined(&syms, &terms, &[true, true]), ["flag"]);
        let other = definitions(
            "flag_bool.go",
            "package cli\n\ntype BoolFlag = FlagBase[bool]\n",
        );
        assert!(terms_defined(&other, &terms, &[true, true]).is_empty());
        // A term the ranking has switched off (a scope's word) is not owned.
        assert!(terms_defined(&syms, &terms, &[false, true]).is_empty());
    }

    #[test]
    fn a_helper_function_named_after_the_word_does_not_own_it() {
        let py = "class Style:\n    def test(self):\n        pass\n";
        let syms = definitions("rich/style.py", py);
        let terms = vec!["test".to_owned(), "case".to_owned()];
        assert!(terms_defined(&syms, &terms, &[true, true]).is_empty());
    }

    #[test]
    fn a_word_many_files_define_has_no_owner() {
        let mut defines = vec![
            vec!["error".to_owned(), "flag".to_owned()],
            vec!["error".to_owned()],
            vec!["error".to_owned()],
            vec![],
        ];
        keep_owned(&mut defines);
        assert_eq!(defines, [vec!["flag".to_owned()], vec![], vec![], vec![]]);
    }
}
