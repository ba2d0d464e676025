//! A new concern gets a module of its own: "add incremental checking" in a crate that keeps one file per concern proposes `src/incremental.rs`.
//!
//! The rule is narrow on purpose, because a wrong create costs a reviewer more
//! than a missing one. It fires only when the request's sentence opens with a
//! create verb followed by `<concept> <feature noun>` ("incremental checking",
//! "parallel walking", "retry support"), the concept is a word no code file in
//! the repository spells yet (so "add verbose logging" in a tool that already
//! has a verbose flag creates nothing), and the source directory the change
//! lands in keeps at least [`MIN_CONCERNS`] one-word modules that its index
//! declares (`lib.rs`, `mod.rs`, `__init__.py`).

use std::collections::BTreeMap;

use crate::compose::analogy::{registration, NewFile};
use crate::detect::scan::Scanned;
use crate::lang;
use crate::request::Request;
use crate::text;

/// One-word module files a directory needs before it counts as "one file per concern".
const MIN_CONCERNS: usize = 4;

/// Nouns that name a capability rather than a thing: the word before them is the concern.
const FEATURE_NOUNS: &[&str] = &[
    "support",
    "mode",
    "cache",
    "analysis",
    "validation",
    "resolution",
    "backend",
    "engine",
];

/// Openers of a request for a capability that does not exist yet.
const OPENERS: &[&str] = &["add", "introduce", "implement", "support"];

/// The concern a request introduces: "Add incremental checking" gives
/// `("incremental", "checking")`.
fn concept(request: &Request) -> Option<(String, String)> {
    let words: Vec<String> = request
        .sentence
        .iter()
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    let mut it = words.iter().peekable();
    if !OPENERS.contains(&it.next()?.as_str()) {
        return None;
    }
    while it
        .peek()
        .is_some_and(|w| matches!(w.as_str(), "a" | "an" | "the" | "new" | "basic"))
    {
        it.next();
    }
    let concern = it.next()?;
    let noun = it.next()?;
    let plain = |w: &str| w.len() >= 4 && w.chars().all(|c| c.is_ascii_lowercase());
    let feature =
        (noun.ends_with("ing") && noun.len() >= 6) || FEATURE_NOUNS.contains(&noun.as_str());
    (plain(concern) && plain(noun) && feature && !text::is_stopword(concern))
        .then(|| (concern.clone(), noun.clone()))
}

/// Source directories that keep one-word modules, with those modules.
fn concern_dirs(scanned: &Scanned) -> BTreeMap<(String, String), Vec<String>> {
    let mut by: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for f in &scanned.files {
        if f.is_test || !f.language.is_some_and(lang::is_code_language) {
            continue;
        }
        let dir = lang::parent_dir(&f.path);
        if dir.is_empty() || lang::is_test_path(dir) || dir.split('/').any(lang::is_vendored_dir) {
            continue;
        }
        let stem = lang::stem(&f.path);
        let one_word = stem.len() >= 3 && stem.chars().all(|c| c.is_ascii_lowercase());
        if !one_word || matches!(stem, "mod" | "lib" | "main" | "index") {
            continue;
        }
        let ext = lang::extension(lang::file_name(&f.path)).unwrap_or_default();
        by.entry((dir.to_string(), ext))
            .or_default()
            .push(f.path.clone());
    }
    by.retain(|_, v| v.len() >= MIN_CONCERNS);
    by
}

/// Whether any code file spells `word` (any case, inside identifiers too).
fn spelled_anywhere(scanned: &Scanned, word: &str) -> bool {
    scanned.files.iter().any(|f| {
        f.language.is_some_and(lang::is_code_language)
            && f.text
                .as_deref()
                .is_some_and(|t| t.to_ascii_lowercase().contains(word))
    }) || scanned
        .files
        .iter()
        .any(|f| f.path.to_ascii_lowercase().contains(word))
}

/// The module a request for a new concern gets (see the module docs). `near`
/// is the best-ranked code file: the concern goes into the directory holding
/// it, or into the repository's only such directory; `None` when in doubt.
pub fn new_concern(scanned: &Scanned, request: &Request, near: Option<&str>) -> Option<NewFile> {
    let (concern, noun) = concept(request)?;
    if spelled_anywhere(scanned, &concern) {
        return None;
    }
    let dirs = concern_dirs(scanned);
    let with_index: Vec<(&(String, String), &Vec<String>)> = dirs
        .iter()
        .filter(|((dir, ext), files)| registration(scanned, dir, ext, files).is_some())
        .collect();
    let chosen = match near {
        Some(near) => with_index
            .iter()
            .filter(|((dir, ext), _)| {
                lang::extension(lang::file_name(near)).as_deref() == Some(ext.as_str())
                    && (lang::parent_dir(near) == dir || near.starts_with(&format!("{dir}/")))
            })
            .max_by_key(|((dir, _), _)| dir.len())
            .copied(),
        None => None,
    }
    .or_else(|| (with_index.len() == 1).then(|| with_index[0]))?;
    let ((dir, ext), files) = chosen;
    let path = lang::join(dir, &format!("{concern}.{ext}"));
    if scanned.exists(&path) {
        return None;
    }
    Some(NewFile {
        registration: registration(scanned, dir, ext, files),
        path,
        name: concern.clone(),
        noun: format!("{concern} {noun}"),
        siblings: files.iter().take(3).cloned().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_request_names_its_concern_and_a_thing_request_does_not() {
        assert_eq!(
            concept(&Request::parse("Add incremental checking")),
            Some(("incremental".into(), "checking".into()))
        );
        assert_eq!(
            concept(&Request::parse("feat: implement retry support for uploads")),
            Some(("retry".into(), "support".into()))
        );
        // A flag, a fix, or a plain thing is not a new concern.
        assert_eq!(concept(&Request::parse("Add a --since option")), None);
        assert_eq!(concept(&Request::parse("Fix incremental checking")), None);
        assert_eq!(concept(&Request::parse("Add tests")), None);
        assert_eq!(concept(&Request::parse("add yaml formatter")), None);
    }
}
