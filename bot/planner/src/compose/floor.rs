//! Requests that move the language versions a project supports (MSRV, minimum Go, a dropped Python or Node): where the floor is declared and where CI tests it, and where a release's version is written.
//!
//! "Raise required compiler to Rust 1.71", "Bump minimum Go to 1.23", "Drop
//! Python 3.8" and "Drop EOL node 20 from test matrix" all change the same two
//! kinds of file whatever the project: the manifest that declares the floor
//! (`rust-version`, the `go` directive, `requires-python`, `engines`) and the
//! CI jobs that pin it. Their words ("compiler", "minimum") match prose all over
//! the repository, so ranking alone proposes the wrong files; these rules
//! read the files instead.

use crate::detect::scan::Scanned;
use crate::lang;
use crate::request::Request;

/// A language whose supported versions the request moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Language {
    Rust,
    Go,
    Python,
    Node,
}

impl Language {
    fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Go => "Go",
            Language::Python => "Python",
            Language::Node => "Node.js",
        }
    }

    /// Text that declares the floor in a manifest, and the manifests' names.
    fn declarations(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Language::Rust => (
                &["rust-version"],
                &["Cargo.toml", "clippy.toml", ".clippy.toml"],
            ),
            Language::Go => (&["\ngo 1.", "\ntoolchain go"], &["go.mod"]),
            Language::Python => (
                &[
                    "requires-python",
                    "python_requires",
                    "Programming Language :: Python ::",
                    "envlist",
                    "python:",
                    "session(python",
                ],
                &[
                    "pyproject.toml",
                    "setup.py",
                    "setup.cfg",
                    "tox.ini",
                    "noxfile.py",
                    ".readthedocs.yaml",
                    ".readthedocs.yml",
                ],
            ),
            Language::Node => (&["\"engines\"", "\"node\""], &["package.json", ".nvmrc"]),
        }
    }

    /// Text by which a CI file pins the language's version.
    fn ci_markers(self) -> &'static [&'static str] {
        match self {
            Language::Rust => &[
                "rust-toolchain@1.",
                "toolchain: 1.",
                "rust: 1.",
                "rust: [",
                "msrv",
            ],
            Language::Go => &["go-version", "go: ["],
            Language::Python => &["python-version", "python: ["],
            Language::Node => &["node-version", "node: ["],
        }
    }
}

/// The language a request moves the supported versions of, if it does: it
/// names the language (or the compiler, or MSRV) and a version or a floor word.
pub(crate) fn floor_request(request: &Request) -> Option<Language> {
    let words = &request.version_words;
    let has = |ws: &[&str]| words.iter().any(|w| ws.contains(&w.as_str()));
    let version = words.iter().any(|w| {
        let mut parts = w.split('.');
        parts
            .next()
            .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
            && parts
                .next()
                .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    }) || words
        .iter()
        .any(|w| w.chars().all(|c| c.is_ascii_digit()) && w.len() <= 2);
    let floor_word = has(&[
        "msrv", "minimum", "min", "required", "requires", "require", "drop", "drops", "raise",
        "bump", "eol", "support", "supports", "oldest",
    ]);
    if !(floor_word && (version || has(&["msrv", "eol"]))) {
        return None;
    }
    if has(&["msrv", "rust", "rustc", "compiler"]) {
        Some(Language::Rust)
    } else if has(&["go", "golang"]) {
        Some(Language::Go)
    } else if has(&["python", "cpython", "py3"]) {
        Some(Language::Python)
    } else if has(&["node", "nodejs", "node.js"]) {
        Some(Language::Node)
    } else {
        None
    }
}

/// A file the floor change edits, with what changes in it and why.
pub(crate) struct FloorFile {
    pub(crate) path: String,
    pub(crate) change: String,
    pub(crate) why: String,
}

/// The manifests declaring the floor (the root's first), then the CI files
/// pinning it; at most four.
pub(crate) fn floor_files(scanned: &Scanned, language: Language) -> Vec<FloorFile> {
    let (needles, names) = language.declarations();
    let mut manifests: Vec<&str> = Vec::new();
    let mut ci: Vec<&str> = Vec::new();
    for f in &scanned.files {
        let Some(text) = f.text.as_deref() else {
            continue;
        };
        let name = lang::file_name(&f.path);
        if names.contains(&name) && needles.iter().any(|n| text.contains(n)) {
            manifests.push(&f.path);
        } else if lang::ci_system(&f.path).is_some()
            && language.ci_markers().iter().any(|m| text.contains(m))
        {
            ci.push(&f.path);
        }
    }
    manifests.sort_by_key(|p| (p.matches('/').count(), *p));
    let lang_name = language.name();
    let mut out: Vec<FloorFile> = manifests
        .into_iter()
        .take(2)
        .map(|p| FloorFile {
            path: p.to_owned(),
            change: format!(
                "Move the declared {lang_name} floor to the version the request names."
            ),
            why: format!("`{p}` declares the oldest {lang_name} the project supports."),
        })
        .collect();
    for p in ci {
        if out.len() >= 4 {
            break;
        }
        out.push(FloorFile {
            path: p.to_owned(),
            change: format!("Pin the {lang_name} versions CI tests to the new floor."),
            why: format!("`{p}` tests against a pinned {lang_name} version."),
        });
    }
    out
}

/// The version a root manifest declares (`version = "1.0.149"`, `"version": "3.1.0"`).
pub(crate) fn manifest_version(text: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let l = l.trim();
        let rest = l
            .strip_prefix("version")
            .or_else(|| l.strip_prefix("\"version\""))?;
        let rest = rest.trim_start().strip_prefix(['=', ':'])?.trim();
        let v = rest.trim_start_matches('"').split('"').next()?;
        (v.contains('.') && v.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .then(|| v.to_owned())
    })
}

/// Source files other than `manifest` that spell out `version` (a crate's
/// `html_root_url`, a package's `__version__`): a release bumps them too.
pub(crate) fn version_files(scanned: &Scanned, manifest: &str, version: &str) -> Vec<String> {
    scanned
        .files
        .iter()
        .filter(|f| {
            f.path != manifest
                && !f.is_test
                && f.language.is_some_and(lang::is_code_language)
                && f.text.as_deref().is_some_and(|t| {
                    t.match_indices(version).any(|(i, _)| {
                        let after = t[i + version.len()..].chars().next();
                        !after.is_some_and(|c| c.is_ascii_digit() || c == '.')
                    })
                })
        })
        .map(|f| f.path.clone())
        .take(2)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_that_move_a_language_floor_are_recognised_by_language() {
        for (r, lang) in [
            ("Raise required compiler to Rust 1.71", Some(Language::Rust)),
            (
                "Bump minimum Go to 1.23, always use request.Pattern",
                Some(Language::Go),
            ),
            ("Drop Python 3.8", Some(Language::Python)),
            ("Support Python 3.13", Some(Language::Python)),
            (
                "Drop EOL node 20 from test matrix, and add node 26",
                Some(Language::Node),
            ),
            ("Update MSRV", Some(Language::Rust)),
            ("fix the compiler error in parse", None),
            ("add a python example", None),
        ] {
            assert_eq!(floor_request(&Request::parse(r)), lang, "{r}");
        }
    }

    #[test]
    fn a_manifests_version_is_read_from_toml_and_json() {
        assert_eq!(
            manifest_version("[package]\nname = \"x\"\nversion = \"1.0.149\"\n").as_deref(),
            Some("1.0.149")
        );
        assert_eq!(
            manifest_version("{\n  \"name\": \"koa\",\n  \"version\": \"3.1.0\",\n}").as_deref(),
            Some("3.1.0")
        );
        assert_eq!(
            manifest_version("[tool.x]\nversion = { workspace = true }\n"),
            None
        );
    }
}
