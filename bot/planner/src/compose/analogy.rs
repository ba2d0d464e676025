//! New files by analogy: a request naming a new thing of a kind the repository keeps one file per item of gets a sibling file and its registration.
//!
//! "add a `yaml` formatter" in a repository with `src/formatters/json.rs` and
//! `src/formatters/toml.rs` proposes `src/formatters/yaml.rs` named like its
//! siblings, plus the `mod yaml;` line in `src/formatters/mod.rs`. The rule
//! fires only when the request pairs a name with a noun that is a directory
//! of at least two such files, and the name is not taken: a vague request
//! ("improve the formatters") or a flag (`--since`) never creates anything.

use std::collections::BTreeMap;

use crate::detect::scan::Scanned;
use crate::detect::symbols::definitions;
use crate::lang;
use crate::request::Request;
use crate::request::CREATE_VERBS;
use crate::text;

/// A directory needs this many sibling files before it counts as "one file per item".
const MIN_SIBLINGS: usize = 2;

/// The file a new item gets, and where the directory registers its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    pub path: String,
    /// The file that declares or re-exports the siblings (`mod.rs`,
    /// `__init__.py`, `index.ts`); `None` for Go packages and directories
    /// whose index does not name its items.
    pub registration: Option<String>,
    /// The item's name as the request spells it (`yaml`).
    pub name: String,
    /// The kind of item (`formatter`).
    pub noun: String,
    /// Up to three existing siblings, for the rationale.
    pub siblings: Vec<String>,
}

/// A plausible item name: an identifier, not a flag, an article or a filler word.
fn is_name(w: &str) -> bool {
    let lower = w.to_ascii_lowercase();
    w.len() >= 2
        && !w.starts_with('-')
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        && !w.chars().all(|c| c.is_ascii_digit())
        && !text::is_stopword(&lower)
        && !CREATE_VERBS.contains(&lower.as_str())
        && !matches!(lower.as_str(), "a" | "an" | "the" | "another" | "custom")
}

/// `(name, noun)` pairs the request states: "add a `yaml` formatter",
/// "add yaml formatter", "new middleware `timeout`".
fn pairs(request: &Request) -> Vec<(String, String)> {
    let ws = &request.sentence;
    let lower: Vec<String> = ws.iter().map(|w| w.text.to_ascii_lowercase()).collect();
    if !lower.iter().any(|w| CREATE_VERBS.contains(&w.as_str())) {
        return Vec::new();
    }
    let lead = |i: usize| {
        CREATE_VERBS.contains(&lower[i].as_str()) || matches!(lower[i].as_str(), "a" | "an")
    };
    let mut out = Vec::new();
    for i in 1..ws.len() {
        // name noun: "a `yaml` formatter", "add yaml formatter".
        if i >= 2 && lead(i - 2) && is_name(&ws[i - 1].text) && !ws[i].quoted {
            out.push((ws[i - 1].text.clone(), lower[i].clone()));
        }
        // noun `name`: "new middleware `timeout`" (the name must be quoted).
        if i >= 2 && ws[i].quoted && lead(i - 2) && !ws[i - 1].quoted && is_name(&ws[i].text) {
            out.push((ws[i].text.clone(), lower[i - 1].clone()));
        }
    }
    out
}

/// Stems that index a directory rather than name an item in it.
fn is_index_stem(stem: &str) -> bool {
    matches!(
        stem,
        "mod"
            | "lib"
            | "main"
            | "index"
            | "__init__"
            | "__main__"
            | "base"
            | "common"
            | "utils"
            | "util"
            | "helpers"
            | "types"
            | "doc"
            | "README"
    )
}

/// Item files per directory: code files that are not tests or indexes, by
/// extension. The repository's root counts only with `root` (a Go package or
/// a flat library keeps its items there, but so does every loose script).
fn item_dirs(scanned: &Scanned, root: bool) -> BTreeMap<(String, String), Vec<String>> {
    let mut by: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for f in &scanned.files {
        if f.is_test || !f.language.is_some_and(lang::is_code_language) {
            continue;
        }
        let dir = lang::parent_dir(&f.path);
        let skip = dir.is_empty() && !root
            || dir
                .split('/')
                .any(|c| c.starts_with("example") || lang::is_vendored_dir(c));
        if skip || is_index_stem(lang::stem(&f.path)) {
            continue;
        }
        let ext = lang::extension(lang::file_name(&f.path)).unwrap_or_default();
        by.entry((dir.to_string(), ext))
            .or_default()
            .push(f.path.clone());
    }
    by.retain(|_, v| v.len() >= MIN_SIBLINGS);
    by
}

/// The new item's file name, following its siblings: a shared prefix or
/// suffix (`json_formatter.py` gives `yaml_formatter.py`), the separator and
/// the case they use.
fn sibling_name(name: &str, siblings: &[String], ext: &str) -> String {
    let stems: Vec<&str> = siblings.iter().map(|p| lang::stem(p)).collect();
    let sep = if stems.iter().any(|s| s.contains('_')) {
        '_'
    } else if stems.iter().any(|s| s.contains('-')) {
        '-'
    } else {
        '_'
    };
    let pascal = stems
        .iter()
        .all(|s| s.starts_with(|c: char| c.is_ascii_uppercase()));
    let parts: Vec<String> = name
        .split(['_', '-'])
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let base = if pascal {
        self::pascal(&parts.join("_"))
    } else {
        parts.join(&sep.to_string())
    };
    let (prefix, suffix) = shared_affixes(&stems);
    format!("{prefix}{base}{suffix}.{ext}")
}

/// A prefix and suffix every stem shares, cut at a separator or a case
/// change (`JsonFormatter`, `TomlFormatter` share the suffix `Formatter`).
fn shared_affixes(stems: &[&str]) -> (String, String) {
    let Some(first) = stems.first() else {
        return (String::new(), String::new());
    };
    let common = |rev: bool| -> String {
        let chars = |s: &str| -> Vec<char> {
            if rev {
                s.chars().rev().collect()
            } else {
                s.chars().collect()
            }
        };
        let f = chars(first);
        let mut n = f.len();
        for s in &stems[1..] {
            let c = chars(s);
            n = n.min(f.iter().zip(&c).take_while(|(a, b)| a == b).count());
        }
        let mut part: Vec<char> = f[..n].to_vec();
        // Cut back to a boundary: the part must start (suffix) or end (prefix)
        // at a separator, or at an upper-case letter for a suffix.
        loop {
            let ok = match part.last() {
                None => true,
                Some(&c) if rev => c.is_ascii_uppercase() || c == '_' || c == '-',
                Some(&c) => c == '_' || c == '-',
            };
            if ok {
                break;
            }
            part.pop();
        }
        if rev {
            part.reverse();
        }
        part.into_iter().collect()
    };
    let prefix = common(false);
    let suffix = common(true);
    // A whole stem is never an affix.
    let whole = |a: &str| stems.iter().any(|s| s.len() <= a.len());
    (
        if whole(&prefix) {
            String::new()
        } else {
            prefix
        },
        if whole(&suffix) {
            String::new()
        } else {
            suffix
        },
    )
}

/// The file that declares the items of `dir`, when it names at least one sibling.
pub(crate) fn registration(
    scanned: &Scanned,
    dir: &str,
    ext: &str,
    siblings: &[String],
) -> Option<String> {
    let candidates: Vec<String> = match ext {
        "rs" => {
            let mut c = vec![lang::join(dir, "mod.rs"), format!("{dir}.rs")];
            if lang::file_name(dir) == "src" {
                c.push(lang::join(dir, "lib.rs"));
                c.push(lang::join(dir, "main.rs"));
            }
            c
        }
        "py" => vec![lang::join(dir, "__init__.py")],
        "ts" | "tsx" | "js" | "jsx" | "mjs" | "cjs" | "mts" => ["ts", "js", "mjs", "tsx", "mts"]
            .iter()
            .map(|e| lang::join(dir, &format!("index.{e}")))
            .collect(),
        _ => Vec::new(),
    };
    let stems: Vec<&str> = siblings.iter().map(|p| lang::stem(p)).collect();
    candidates.into_iter().find(|c| {
        let Some(text) = scanned
            .index_of(c)
            .and_then(|i| scanned.files[i].text.as_deref())
        else {
            return false;
        };
        text.lines().any(|l| {
            let l = l.trim_start();
            let declares = [
                "mod ",
                "pub mod ",
                "pub(crate) mod ",
                "from ",
                "import ",
                "export ",
            ]
            .iter()
            .any(|p| l.starts_with(p))
                || l.contains("require(");
            declares
                && l.split(|ch: char| !(ch.is_alphanumeric() || matches!(ch, '_' | '-')))
                    .any(|w| stems.contains(&w))
        })
    })
}

/// The first or last word of a file stem (`flag` of `flag_bool`, `middleware`
/// of `timeout-middleware`, `Layer` of `TimeoutLayer`), stemmed, when the stem has more than one.
fn affix_words(stem: &str) -> Option<(String, String)> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in stem.chars() {
        let camel =
            c.is_ascii_uppercase() && cur.chars().last().is_some_and(|p| p.is_ascii_lowercase());
        if c == '_' || c == '-' || c == '.' || camel {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            if c == '_' || c == '-' || c == '.' {
                continue;
            }
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    if words.len() < 2 {
        return None;
    }
    let norm = |w: &str| text::stem(&w.to_ascii_lowercase()).to_string();
    Some((norm(&words[0]), norm(&words[words.len() - 1])))
}

/// Where items of `noun` live, best first: a directory named like the noun
/// (`formatters/`), else the largest set of files in one directory sharing the
/// noun as a first or last word (`flag_bool.go`, `flag_string.go` for "flag").
fn item_family(scanned: &Scanned, noun_stem: &str) -> Option<((String, String), Vec<String>)> {
    let pick = |dirs: Vec<((String, String), Vec<String>)>| {
        dirs.into_iter().max_by(|((da, _), a), ((db, _), b)| {
            a.len()
                .cmp(&b.len())
                .then(db.matches('/').count().cmp(&da.matches('/').count()))
                .then(db.cmp(da))
        })
    };
    let named: Vec<_> = item_dirs(scanned, false)
        .into_iter()
        .filter(|((dir, _), _)| {
            let last = lang::file_name(dir).to_ascii_lowercase();
            text::stem(&last) == noun_stem && !lang::is_test_path(dir)
        })
        .collect();
    if let Some(best) = pick(named) {
        return Some(best);
    }
    let families: Vec<_> = item_dirs(scanned, true)
        .into_iter()
        .filter(|((dir, _), _)| !lang::is_test_path(dir))
        .filter_map(|(key, files)| {
            let family: Vec<String> = files
                .into_iter()
                .filter(|p| {
                    affix_words(lang::stem(p))
                        .is_some_and(|(first, last)| first == noun_stem || last == noun_stem)
                })
                .collect();
            (family.len() >= MIN_SIBLINGS).then_some((key, family))
        })
        .collect();
    pick(families)
}

/// The new file a request asks for by analogy with its siblings, if the
/// request names one (see the module docs); deterministic, `None` when in doubt.
pub fn new_by_analogy(scanned: &Scanned, request: &Request) -> Option<NewFile> {
    let pairs = pairs(request);
    if pairs.is_empty() {
        return new_by_type_name(scanned, request);
    }
    for (name, noun) in pairs {
        let noun_stem = text::stem(&noun.to_ascii_lowercase()).to_string();
        if noun_stem.len() < 3 || !is_name(&noun) {
            continue;
        }
        let Some(((dir, ext), siblings)) = item_family(scanned, &noun_stem) else {
            continue;
        };
        let (dir, ext, siblings) = (&dir, &ext, &siblings);
        let file = sibling_name(&name, siblings, ext);
        let path = lang::join(dir, &file);
        let taken = scanned.exists(&path)
            || siblings.iter().any(|s| {
                lang::stem(s)
                    .to_ascii_lowercase()
                    .replace('-', "_")
                    .contains(&name.to_ascii_lowercase().replace('-', "_"))
            });
        if taken {
            return None;
        }
        return Some(NewFile {
            registration: registration(scanned, dir, ext, siblings),
            path,
            name,
            noun,
            siblings: siblings.iter().take(3).cloned().collect(),
        });
    }
    new_by_type_name(scanned, request)
}

/// `ResponseAxumBodyLayer` → `Response`, `Axum`, `Body`, `Layer`; `from_fn` → `from`, `fn`.
fn camel_words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if matches!(c, '_' | '-' | '.') {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        // A capital starts a word after a small letter or a digit, and ends an
        // acronym before a small letter (`HTTPError` → `HTTP`, `Error`).
        let starts = c.is_ascii_uppercase()
            && !cur.is_empty()
            && (cur.chars().last().is_some_and(|p| !p.is_ascii_uppercase())
                || chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase()));
        if starts {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn pascal(stem: &str) -> String {
    camel_words(stem)
        .iter()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn mentions_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let boundary = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        boundary(before) && boundary(after)
    })
}

/// A new type the request spells out (`ResponseAxumBodyLayer`), in a directory
/// whose item files each define a type named after the file plus the same
/// trailing words (`from_fn.rs` defines `FromFnLayer`, `map_request.rs`
/// `MapRequestLayer`): the new file is named after the type without them
/// (`response_axum_body.rs`). Nothing fires for a name the repository already
/// mentions, or where fewer than two siblings follow the pattern.
fn new_by_type_name(scanned: &Scanned, request: &Request) -> Option<NewFile> {
    let names: Vec<String> = request
        .identifiers
        .clone()
        .into_iter()
        .filter(|n| n.starts_with(|c: char| c.is_ascii_uppercase()) && camel_words(n).len() >= 2)
        .collect();
    if names.is_empty() {
        return None;
    }
    let dirs = item_dirs(scanned, false);
    for name in names {
        let known = scanned
            .files
            .iter()
            .any(|f| f.text.as_deref().is_some_and(|t| mentions_word(t, &name)));
        if known {
            continue;
        }
        let words = camel_words(&name);
        // (trailing words, siblings, dir, ext), the most siblings first.
        let mut best: Option<(usize, Vec<String>, &str, &str)> = None;
        for ((dir, ext), files) in &dirs {
            if lang::is_test_path(dir) {
                continue;
            }
            let mut by_tail: BTreeMap<usize, Vec<String>> = BTreeMap::new();
            for path in files {
                let Some(text) = scanned
                    .index_of(path)
                    .and_then(|i| scanned.files[i].text.as_deref())
                else {
                    continue;
                };
                let own = pascal(lang::stem(path));
                for sym in definitions(path, text) {
                    if !matches!(
                        sym.kind,
                        "struct" | "enum" | "trait" | "type" | "class" | "interface"
                    ) {
                        continue;
                    }
                    let Some(rest) = sym.name.strip_prefix(own.as_str()) else {
                        continue;
                    };
                    let tail = camel_words(rest);
                    let k = tail.len();
                    if k == 0 || k >= words.len() || words[words.len() - k..] != tail[..] {
                        continue;
                    }
                    let sibs = by_tail.entry(k).or_default();
                    if !sibs.contains(path) {
                        sibs.push(path.clone());
                    }
                }
            }
            let Some((k, sibs)) = by_tail
                .into_iter()
                .filter(|(_, v)| v.len() >= MIN_SIBLINGS)
                .max_by(|(ka, a), (kb, b)| a.len().cmp(&b.len()).then(ka.cmp(kb)))
            else {
                continue;
            };
            if best
                .as_ref()
                .is_none_or(|(_, b, _, _)| sibs.len() > b.len())
            {
                best = Some((k, sibs, dir.as_str(), ext.as_str()));
            }
        }
        let Some((k, siblings, dir, ext)) = best else {
            continue;
        };
        let base = words[..words.len() - k].join("_").to_ascii_lowercase();
        let path = lang::join(dir, &sibling_name(&base, &siblings, ext));
        if scanned.exists(&path) {
            continue;
        }
        return Some(NewFile {
            registration: registration(scanned, dir, ext, &siblings),
            path,
            name,
            noun: words[words.len() - k..].join(" ").to_ascii_lowercase(),
            siblings: siblings.iter().take(3).cloned().collect(),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_words_at_case_changes_separators_and_acronyms() {
        assert_eq!(
            camel_words("ResponseAxumBodyLayer"),
            ["Response", "Axum", "Body", "Layer"]
        );
        assert_eq!(camel_words("HTTPError"), ["HTTP", "Error"]);
        assert_eq!(camel_words("map_request"), ["map", "request"]);
        assert_eq!(pascal("map_request"), "MapRequest");
        assert!(mentions_word("use a::MapRequestLayer;", "MapRequestLayer"));
        assert!(!mentions_word("MapRequestLayers", "MapRequestLayer"));
    }
}
