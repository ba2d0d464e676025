//! Where a change's test goes: the existing test file nearest the changed module, else a new file named after the module.
//!
//! Maintainers add cases to the test file that already exercises a module far
//! more often than they start a new one, so an existing file that imports the
//! module, is named after it, or names it wins, then the nearest test in the
//! same package. Only when the package has no test of that language is a new
//! file proposed, named after the module (never after the request) by the
//! project's convention.

use crate::detect::imports::Graph;
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::lang;
use crate::rank::RankedFile;
use crate::text;

/// Where the test goes and why that file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestPlace {
    pub path: String,
    /// True when the file exists (an edit), false for a new file.
    pub exists: bool,
    /// One sentence for the rationale.
    pub why: String,
    /// The file is named after this module (`args_test.go`, `test_utils.py`), not merely
    /// a test that imports it among others or the nearest test of the package.
    pub paired: bool,
}

/// How a test file relates to the changed module, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tie {
    /// Only in the same package.
    Nearby,
    /// Its text names the module.
    Names,
    /// Named after the module (`test_app.py`, `foo_test.go`).
    NamedAfter,
    /// Imports the module, or is its test module (`mod tests;`).
    Imports,
}

/// The name a module goes by: the file stem, or the directory's name for
/// `mod.rs`, `__init__.py`, `index.ts` and the like.
pub fn module_stem(path: &str) -> String {
    let stem = lang::stem(path);
    let s = if matches!(stem, "mod" | "__init__" | "index" | "lib" | "main") {
        let dir = lang::parent_dir(path);
        let name = lang::file_name(dir);
        if name == "src" {
            lang::file_name(lang::parent_dir(dir))
        } else {
            name
        }
    } else {
        stem
    };
    s.to_string()
}

/// A test file's stem without its test marker (`test_app` gives `app`).
fn tested_name(path: &str) -> String {
    let stem = lang::stem(path).to_ascii_lowercase();
    let base = stem
        .strip_prefix("test_")
        .or_else(|| stem.strip_suffix("_test"))
        .or_else(|| stem.strip_suffix(".test"))
        .or_else(|| stem.strip_suffix(".spec"))
        .or_else(|| stem.strip_suffix("_spec"))
        .or_else(|| stem.strip_suffix("_tests"))
        .or_else(|| stem.strip_suffix("test"))
        .unwrap_or(&stem);
    base.to_string()
}

/// True when the file holds test cases, not only helpers (`world.rs`, `conftest.py`).
fn defines_tests(text: &str) -> bool {
    [
        "#[test]",
        "#[tokio::test]",
        "def test_",
        "func Test",
        "it(",
        "test(",
        "describe(",
    ]
    .iter()
    .any(|m| text.contains(m))
}

fn same_family(a: &str, b: &str) -> bool {
    let js = |l: &str| matches!(l, "JavaScript" | "TypeScript");
    a == b || js(a) && js(b)
}

fn common_dirs(a: &str, b: &str) -> usize {
    lang::parent_dir(a)
        .split('/')
        .zip(lang::parent_dir(b).split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

/// The test file a change to `primary` belongs in (see the module docs).
/// `None` when the language has neither a test file nor a convention here.
pub fn test_place(
    scanned: &Scanned,
    graph: &Graph,
    map: &RepoMap,
    primary: &str,
    ranked: &[RankedFile],
) -> Option<TestPlace> {
    let language = lang::language_of(primary)?;
    let p = scanned.index_of(primary)?;
    let mstem = module_stem(primary);
    let mterm = text::stem(&mstem.to_ascii_lowercase()).to_string();
    let generic = mterm.len() < 3 || matches!(mterm.as_str(), "src" | "lib" | "util" | "utils");
    let module = map.module_of(primary);
    let package = module.map(|m| m.path.clone());
    // A package with its own manifest owns its tests: the workspace root's
    // `tests/` belong to the root package, not to `crates/globset`.
    let own_manifest = module.is_some_and(|m| {
        matches!(
            m.kind.as_str(),
            "crate" | "npm package" | "go module" | "python project" | "jvm module"
        ) && !m.path.is_empty()
    });
    let rank_of = |path: &str| ranked.iter().position(|r| r.path == path);

    let mut best: Option<(bool, Tie, usize, std::cmp::Reverse<usize>, u64, usize)> = None;
    let mut best_path: Option<&str> = None;
    for (t, f) in scanned.files.iter().enumerate() {
        if !f.is_test || t == p || !f.language.is_some_and(|l| same_family(l, language)) {
            continue;
        }
        if f.path
            .split('/')
            .any(|c| c.starts_with("example") || matches!(c, "fixtures" | "testdata" | "snapshots"))
        {
            continue;
        }
        let linked = graph.imports[t].contains(&p) || graph.imports[p].contains(&t);
        // The test's package is the changed file's or one enclosing it
        // (a project's root `tests/` for `src/pkg/mod.py`).
        let same_package = match (&package, map.module_of(&f.path)) {
            (Some(own), Some(m)) => {
                m.path == *own
                    || !own_manifest
                        && (m.path.is_empty() || own.starts_with(&format!("{}/", m.path)))
            }
            _ => false,
        };
        let mentions = if generic {
            0
        } else {
            let mut n = 0usize;
            text::for_each_term(f.text.as_deref().unwrap_or(""), |w| {
                n += usize::from(w == mterm);
            });
            n
        };
        let tie = if linked {
            Tie::Imports
        } else if !generic && tested_name(&f.path) == mstem.to_ascii_lowercase() {
            Tie::NamedAfter
        } else if !same_package {
            // Another package's test is no place for this module's cases.
            continue;
        } else if mentions > 0 {
            Tie::Names
        } else {
            Tie::Nearby
        };
        // Same directory tree first, then what the request ranks, then the
        // bigger (catch-all) file, then the one naming the module most.
        let key = (
            defines_tests(f.text.as_deref().unwrap_or("")),
            tie,
            common_dirs(&f.path, primary),
            std::cmp::Reverse(rank_of(&f.path).unwrap_or(usize::MAX)),
            f.size.unwrap_or(0),
            mentions,
        );
        if best.as_ref().is_none_or(|b| key > *b) {
            best = Some(key);
            best_path = Some(&f.path);
        }
    }
    if let (Some((_, tie, ..)), Some(path)) = (best, best_path) {
        let why = match tie {
            Tie::Imports => format!("`{path}` already tests `{primary}` (it imports it)"),
            Tie::NamedAfter => format!("`{path}` is the test named after `{primary}`"),
            Tie::Names => format!("`{path}` is the existing test that exercises `{mstem}`"),
            Tie::Nearby => format!("`{path}` is the nearest existing test of `{primary}`"),
        };
        return Some(TestPlace {
            path: path.to_string(),
            exists: true,
            why,
            paired: tie == Tie::NamedAfter || tested_name(path) == mstem.to_ascii_lowercase(),
        });
    }
    new_test_file(scanned, map, primary, &mstem)
}

/// Where the tests of a module that does not exist yet go, by the project's
/// convention (the module itself for inline Rust tests).
pub fn new_test_path(scanned: &Scanned, map: &RepoMap, module: &str) -> Option<String> {
    new_test_file(scanned, map, module, &module_stem(module)).map(|t| t.path)
}

/// A new test file named after the module by the project's convention.
fn new_test_file(
    scanned: &Scanned,
    map: &RepoMap,
    primary: &str,
    mstem: &str,
) -> Option<TestPlace> {
    let language = lang::language_of(primary)?;
    let conv = map
        .test_conventions
        .iter()
        .find(|c| same_family(&c.language, language))?;
    let dir = lang::parent_dir(primary);
    let stem = lang::stem(primary);
    let ext = lang::extension(lang::file_name(primary)).unwrap_or_default();
    let path = match (language, conv.pattern.as_str()) {
        ("Go", _) => lang::join(dir, &format!("{stem}_test.go")),
        ("Rust", p) if p.starts_with("<crate>/tests") => {
            let krate = map
                .module_of(primary)
                .map(|m| m.path.clone())
                .unwrap_or_else(|| primary.split("/src/").next().unwrap_or("").to_string());
            let krate = if krate == primary {
                String::new()
            } else {
                krate
            };
            lang::join(&krate, &format!("tests/{}.rs", mstem.replace('-', "_")))
        }
        // Inline Rust tests: the test goes into the file itself.
        ("Rust", _) => {
            return Some(TestPlace {
                path: primary.to_string(),
                exists: true,
                why: "the project keeps Rust unit tests inline, in `#[cfg(test)]` modules"
                    .to_string(),
                paired: false,
            })
        }
        ("Python", _) => {
            let tdir = lang::parent_dir(&conv.example);
            lang::join(tdir, &format!("test_{stem}.py"))
        }
        (_, p) if p.starts_with("*.test.") => lang::join(dir, &format!("{stem}.test.{ext}")),
        (_, p) if p.starts_with("*.spec.") => lang::join(dir, &format!("{stem}.spec.{ext}")),
        (_, "__tests__/*") => lang::join(dir, &format!("__tests__/{stem}.test.{ext}")),
        ("Java", _) if primary.contains("src/main/java/") => {
            let p = primary.replacen("src/main/java/", "src/test/java/", 1);
            format!("{}/{stem}Test.java", lang::parent_dir(&p))
        }
        ("Ruby", _) => {
            let rel = primary.strip_prefix("lib/").unwrap_or(primary);
            format!("spec/{}_spec.rb", rel.trim_end_matches(".rb"))
        }
        _ => return None,
    };
    let exists = scanned.exists(&path);
    Some(TestPlace {
        why: format!(
            "no existing test exercises `{primary}`, so a new one is named after the module"
        ),
        path,
        exists,
        paired: false,
    })
}
