//! The new files a request names outright: a file (`CONTRIBUTING.md`), a module, a type, a test file, each placed where the repository's conventions put it, with its registration.
//!
//! Analogy and new concerns infer a new file from the repository's shape; this
//! step takes the request at its word. A name the repository already has (the
//! same file name anywhere, a module stem, a defined type) creates nothing: the
//! request extends that, and ranking finds it.

use navin_ledger::plan::{FileChange, Operation};

use crate::compose::analogy::registration;
use crate::compose::chosen::{Chosen, Inputs};
use crate::compose::test_place;
use crate::lang;
use crate::text;

/// Documents GitHub and readers look for at the repository's root.
const ROOT_DOCUMENTS: &[(&str, &str)] = &[
    (
        "CONTRIBUTING",
        "how to set up the project, run its checks and propose a change",
    ),
    (
        "CODE_OF_CONDUCT",
        "the standards of behaviour for the project's spaces and how to report a breach",
    ),
    (
        "SECURITY",
        "which versions get security fixes and how to report a vulnerability privately",
    ),
    ("SUPPORT", "where to ask questions and get help"),
    ("GOVERNANCE", "who decides what, and how"),
    ("CHANGELOG", "the notable changes per release, newest first"),
    ("AUTHORS", "the people who wrote the project"),
    (
        "MAINTAINERS",
        "who maintains the project and how to reach them",
    ),
    (
        "README",
        "what the project is, how to install it and a first example",
    ),
    ("LICENSE", "the licence the project is distributed under"),
    ("NOTICE", "the attributions the licence requires"),
];

fn added(path: &str, change: String, rationale: String) -> Chosen {
    Chosen {
        change: FileChange {
            path: path.to_string(),
            operation: Operation::Create,
            change,
            rationale,
            optional: false,
        },
        rank: None,
        symbols: Vec::new(),
    }
}

fn edit(path: &str, change: String, rationale: String) -> Chosen {
    Chosen {
        change: FileChange {
            path: path.to_string(),
            operation: Operation::Edit,
            change,
            rationale,
            optional: false,
        },
        rank: None,
        symbols: Vec::new(),
    }
}

/// Whether some file of the repository already has this file name (any case).
fn name_taken(cx: &Inputs, name: &str) -> bool {
    cx.scanned
        .files
        .iter()
        .any(|f| lang::file_name(&f.path).eq_ignore_ascii_case(name))
}

fn root_document(name: &str) -> Option<&'static str> {
    let stem = name.split('.').next().unwrap_or(name).to_ascii_uppercase();
    ROOT_DOCUMENTS
        .iter()
        .find(|(d, _)| *d == stem)
        .map(|(_, what)| *what)
}

/// The directory most code files with this extension sit in (not tests).
fn busiest_dir(cx: &Inputs, ext: &str) -> Option<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in &cx.scanned.files {
        if f.is_test || lang::extension(lang::file_name(&f.path)).as_deref() != Some(ext) {
            continue;
        }
        *counts.entry(lang::parent_dir(&f.path)).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(dir, n)| (*n, std::cmp::Reverse(dir.len())))
        .map(|(d, _)| d.to_string())
}

/// Code files of `dir` with extension `ext`: the siblings a registration lists.
fn siblings(cx: &Inputs, dir: &str, ext: &str) -> Vec<String> {
    cx.scanned
        .files
        .iter()
        .filter(|f| {
            !f.is_test
                && lang::parent_dir(&f.path) == dir
                && lang::extension(lang::file_name(&f.path)).as_deref() == Some(ext)
        })
        .map(|f| f.path.clone())
        .collect()
}

/// The file that declares `dir`'s modules, for a new one there: the index that
/// lists its siblings, else a Rust crate root (`lib.rs`, then `main.rs`).
fn index_of(cx: &Inputs, dir: &str, ext: &str) -> Option<String> {
    let sibs = siblings(cx, dir, ext);
    registration(cx.scanned, dir, ext, &sibs).or_else(|| {
        (ext == "rs")
            .then(|| {
                ["lib.rs", "main.rs", "mod.rs"]
                    .iter()
                    .map(|n| lang::join(dir, n))
                    .find(|p| cx.scanned.exists(p))
            })
            .flatten()
    })
}

/// Where a named file goes when the request gives only its name.
fn place_file(cx: &Inputs, name: &str, near: Option<&str>) -> String {
    if name.contains('/') || root_document(name).is_some() {
        return name.to_string();
    }
    let ext = lang::extension(name).unwrap_or_default();
    if matches!(ext.as_str(), "md" | "markdown" | "rst" | "adoc" | "txt") {
        let docs = cx
            .scanned
            .files
            .iter()
            .any(|f| f.path.starts_with("docs/") && lang::is_doc_path(&f.path));
        return if docs {
            lang::join("docs", name)
        } else {
            name.to_string()
        };
    }
    if lang::is_test_path(name) {
        if let Some(conv) =
            cx.map.test_conventions.iter().find(|c| {
                lang::extension(lang::file_name(&c.example)).as_deref() == Some(ext.as_str())
            })
        {
            return lang::join(lang::parent_dir(&conv.example), name);
        }
    }
    let dir = near
        .filter(|n| lang::extension(lang::file_name(n)).as_deref() == Some(ext.as_str()))
        .map(|n| lang::parent_dir(n).to_string())
        .or_else(|| busiest_dir(cx, &ext));
    match dir {
        Some(dir) if lang::language_of(name).is_some_and(lang::is_code_language) => {
            lang::join(&dir, name)
        }
        _ => name.to_string(),
    }
}

/// Where a new module of the language of `near` goes: `near`'s directory, else
/// the busiest source directory of the repository's main code extension.
fn module_dir(cx: &Inputs, near: Option<&str>) -> Option<(String, String)> {
    if let Some(near) = near {
        let ext = lang::extension(lang::file_name(near))?;
        return Some((lang::parent_dir(near).to_string(), ext));
    }
    let ext = cx
        .scanned
        .files
        .iter()
        .filter(|f| !f.is_test && f.language.is_some_and(lang::is_code_language))
        .filter_map(|f| lang::extension(lang::file_name(&f.path)))
        .fold(
            std::collections::BTreeMap::<String, usize>::new(),
            |mut m, e| {
                *m.entry(e).or_default() += 1;
                m
            },
        )
        .into_iter()
        .max_by_key(|(_, n)| *n)?
        .0;
    Some((busiest_dir(cx, &ext)?, ext))
}

/// A module file's name in its language's case (`retry_policy.rs`, `retryPolicy.ts`
/// stays as spelled).
fn module_file(name: &str, ext: &str) -> String {
    let stem = match ext {
        "rs" | "py" => snake(name),
        _ => name.to_string(),
    };
    format!("{stem}.{ext}")
}

/// `RetryPolicy` → `retry_policy`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Whether a definition named `name` exists anywhere (as a whole word after a
/// definition keyword): the request then extends it.
fn type_defined(cx: &Inputs, name: &str) -> bool {
    cx.scanned.files.iter().any(|f| {
        f.text.as_deref().is_some_and(|t| {
            [
                "struct ",
                "enum ",
                "class ",
                "trait ",
                "interface ",
                "type ",
            ]
            .iter()
            .any(|k| {
                t.match_indices(&format!("{k}{name}")).any(|(i, m)| {
                    !t[i + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            })
        })
    })
}

/// The Create entries (and their registrations) for what the request names, in
/// the order an agent takes them: module, its test, then named files.
pub fn named_new(cx: &Inputs, near: Option<&str>) -> Vec<Chosen> {
    let new = &cx.request.new;
    let mut out: Vec<Chosen> = Vec::new();
    let types: Vec<&String> = new.types.iter().filter(|t| !type_defined(cx, t)).collect();
    let module_taken = |m: &str| {
        cx.scanned
            .files
            .iter()
            .any(|f| lang::stem(&f.path).eq_ignore_ascii_case(m) && !f.is_test)
    };
    for (i, module) in new.modules.iter().enumerate() {
        if module_taken(module) {
            continue;
        }
        let Some((dir, ext)) = module_dir(cx, near) else {
            continue;
        };
        let path = lang::join(&dir, &module_file(module, &ext));
        if cx.scanned.exists(&path) {
            continue;
        }
        let holds = match (i, types.as_slice()) {
            (0, [_, ..]) => format!(
                " holding the type{} {}",
                if types.len() == 1 { "" } else { "s" },
                text::backticked(types.iter().map(|t| t.as_str()))
            ),
            _ => String::new(),
        };
        // Tests the request asks for: inline Rust tests live in the module itself.
        let test = new
            .tests
            .then(|| test_place::new_test_path(cx.scanned, cx.map, &path))
            .flatten();
        let inline = test.as_deref() == Some(path.as_str());
        out.push(added(
            &path,
            format!(
                "New module `{module}`{holds}{}.",
                if inline {
                    ", with its unit tests in a `#[cfg(test)]` module"
                } else {
                    ""
                }
            ),
            format!(
                "The request names a new module `{module}`; nothing in the repository is named so yet, and `{}` is where the code it belongs with lives.",
                if dir.is_empty() { "the root" } else { dir.as_str() }
            ),
        ));
        if let Some(index) = index_of(cx, &dir, &ext).filter(|x| *x != path) {
            out.push(edit(
                &index,
                format!("Declare the module `{module}` beside the existing ones."),
                format!("`{index}` declares the modules of `{dir}`, so `{module}` is unreachable until it is added there."),
            ));
        }
        if let Some(test) = test.filter(|t| *t != path) {
            let exists = cx.scanned.exists(&test);
            let change = format!("Cases for the new module `{module}`.");
            let why = format!("The project's tests for `{dir}` follow this file's convention.");
            out.push(if exists {
                edit(&test, change, why)
            } else {
                added(&test, change, why)
            });
        }
    }
    if out.is_empty() {
        // No module to hold them: each new type is defined where the change lands.
        if let (Some(near), false) = (near, types.is_empty()) {
            out.push(edit(
                near,
                format!(
                    "Define the new type{} {} here, beside the code that uses it.",
                    if types.len() == 1 { "" } else { "s" },
                    text::backticked(types.iter().map(|t| t.as_str()))
                ),
                "The request names a type the repository does not define yet.".to_string(),
            ));
        }
    }
    for name in &new.files {
        let path = place_file(cx, name, near);
        if cx.scanned.exists(&path)
            || out.iter().any(|c| c.change.path == path)
            || name_taken(cx, lang::file_name(&path))
        {
            continue;
        }
        let file = lang::file_name(&path);
        let (change, why) = match root_document(file) {
            Some(what) => {
                let commands: Vec<String> = cx
                    .map
                    .commands
                    .iter()
                    .take(3)
                    .map(|c| format!("`{}`", c.command))
                    .collect();
                let uses = match (
                    file.to_ascii_uppercase().starts_with("CONTRIBUTING"),
                    commands.is_empty(),
                ) {
                    (true, false) => format!(
                        ", with the project's own commands ({})",
                        commands.join(", ")
                    ),
                    _ => String::new(),
                };
                (
                    format!("Write `{file}`: {what}{uses}."),
                    format!("The request asks for `{file}`, which readers and GitHub look for at the repository's root."),
                )
            }
            None => (
                format!("New file `{file}` as the request describes."),
                "The request names this file, and the repository has none by that name."
                    .to_string(),
            ),
        };
        out.push(added(&path, change, why));
        let ext = lang::extension(file).unwrap_or_default();
        let dir = lang::parent_dir(&path);
        if lang::language_of(&path).is_some_and(lang::is_code_language)
            && !lang::is_test_path(&path)
        {
            if let Some(index) = index_of(cx, dir, &ext).filter(|x| *x != path) {
                let stem = lang::stem(&path);
                out.push(edit(
                    &index,
                    format!("Declare `{stem}` beside the existing modules."),
                    format!("`{index}` declares the modules of `{dir}`, so `{stem}` is unreachable until it is added there."),
                ));
            }
        }
        // A root document is found from the README.
        if root_document(file).is_some() && !file.to_ascii_uppercase().starts_with("README") {
            if let Some(readme) = cx
                .scanned
                .files
                .iter()
                .map(|f| f.path.as_str())
                .find(|p| !p.contains('/') && lang::stem(p).eq_ignore_ascii_case("readme"))
            {
                let mut link = edit(
                    readme,
                    format!("Link `{file}` where the README tells readers how to take part."),
                    "Readers start at the README.".to_string(),
                );
                link.change.optional = true;
                out.push(link);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_document_is_known_by_its_stem_in_any_case() {
        assert!(root_document("CONTRIBUTING.md").is_some());
        assert!(root_document("contributing.rst").is_some());
        assert!(root_document("usage.md").is_none());
    }
}
