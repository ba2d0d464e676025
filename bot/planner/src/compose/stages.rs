//! Splitting large plans into stages, each with its own verification.

use std::collections::BTreeMap;

use navin_ledger::plan::Stage;

use crate::compose::chosen::Chosen;
use crate::detect::commands::RepoCommandKind;
use crate::detect::imports::Graph;
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::lang;

/// Plans with more files than this, or spanning this many modules, are staged.
const STAGE_FILES: usize = 5;
const STAGE_MODULES: usize = 3;

fn group_key(map: &RepoMap, path: &str) -> String {
    match map.module_of(path) {
        Some(m) if !m.path.is_empty() => m.path.clone(),
        _ => path
            .split_once('/')
            .map(|(top, _)| top.to_string())
            .unwrap_or_default(),
    }
}

/// Docs and changelogs: they describe code, so they follow it.
fn is_prose(path: &str) -> bool {
    lang::is_doc_path(path) || lang::language_of(path).is_none_or(|l| !lang::is_code_language(l))
}

/// Stages for large changes, dependencies and schema first, then modules in
/// import order (a module other changed files import lands before them).
/// A test joins the stage of the code it follows in the plan (the paired test
/// comes right after its source), first in that stage for a fix, whose work
/// starts with the failing test; docs and changelogs join the stage of the
/// plan's first code change, after its code. Returns no stages for small plans.
pub fn build(
    scanned: &Scanned,
    map: &RepoMap,
    graph: &Graph,
    chosen: &[Chosen],
    fix: bool,
) -> Vec<Stage> {
    let mut groups: BTreeMap<String, Vec<&Chosen>> = BTreeMap::new();
    let mut foundation: Vec<&Chosen> = Vec::new();
    let mut tests: Vec<(Option<String>, &Chosen)> = Vec::new();
    let mut prose: Vec<&Chosen> = Vec::new();
    let mut last_code: Option<String> = None;
    let mut first_code: Option<String> = None;
    for c in chosen {
        let p = &c.change.path;
        if crate::detect::scan::is_manifest_name(lang::file_name(p)) || lang::is_migration_path(p) {
            foundation.push(c);
        } else if lang::is_test_path(p) {
            tests.push((last_code.clone(), c));
        } else if is_prose(p) {
            prose.push(c);
        } else {
            let key = group_key(map, p);
            first_code.get_or_insert_with(|| key.clone());
            last_code = Some(key.clone());
            groups.entry(key).or_default().push(c);
        }
    }
    for (after, c) in tests {
        // The test's own package when it holds changed code, else the code it follows.
        let own = group_key(map, &c.change.path);
        let key = Some(own)
            .filter(|k| groups.contains_key(k))
            .or(after)
            .or_else(|| first_code.clone())
            .unwrap_or_else(|| group_key(map, &c.change.path));
        let group = groups.entry(key).or_default();
        if fix {
            group.insert(0, c);
        } else {
            group.push(c);
        }
    }
    for c in prose {
        let key = first_code
            .clone()
            .unwrap_or_else(|| group_key(map, &c.change.path));
        groups.entry(key).or_default().push(c);
    }
    if chosen.len() <= STAGE_FILES && groups.len() < STAGE_MODULES {
        return Vec::new();
    }
    if groups.len() == 1 {
        // One module: split by directory instead, tests and docs with the code.
        let only: Vec<&Chosen> = groups.into_values().next().unwrap_or_default();
        let code_dir = only
            .iter()
            .find(|c| !lang::is_test_path(&c.change.path) && !is_prose(&c.change.path))
            .map(|c| lang::parent_dir(&c.change.path).to_string());
        groups = BTreeMap::new();
        let mut last: Option<String> = None;
        for c in only {
            let p = &c.change.path;
            let key = if lang::is_test_path(p) {
                last.clone().or_else(|| code_dir.clone())
            } else if is_prose(p) {
                code_dir.clone()
            } else {
                None
            }
            .unwrap_or_else(|| lang::parent_dir(p).to_string());
            if !lang::is_test_path(p) && !is_prose(p) {
                last = Some(key.clone());
            }
            groups.entry(key).or_default().push(c);
        }
        for group in groups.values_mut() {
            // Within a directory: (a fix's tests,) code, (tests,) then prose.
            group.sort_by_key(|c| {
                let p = &c.change.path;
                match (lang::is_test_path(p), is_prose(p)) {
                    (true, _) if fix => 0,
                    (false, false) => 1,
                    (true, _) => 2,
                    (false, true) => 3,
                }
            });
        }
    }
    // Order: how many other changed files import the group, then best rank.
    let idx = |p: &str| scanned.index_of(p);
    let mut ordered: Vec<(String, Vec<&Chosen>)> = groups.into_iter().collect();
    let importers = |files: &[&Chosen]| -> usize {
        let mine: Vec<usize> = files.iter().filter_map(|c| idx(&c.change.path)).collect();
        chosen
            .iter()
            .filter(|o| !files.iter().any(|f| f.change.path == o.change.path))
            .filter_map(|o| idx(&o.change.path))
            .filter(|&o| graph.imports[o].iter().any(|t| mine.contains(t)))
            .count()
    };
    ordered.sort_by_cached_key(|(key, files)| {
        let best = files
            .iter()
            .filter_map(|c| c.rank)
            .min()
            .unwrap_or(usize::MAX);
        (std::cmp::Reverse(importers(files)), best, key.clone())
    });
    let mut stages = Vec::new();
    if !foundation.is_empty() {
        stages.push(Stage {
            title: "Dependencies and schema".to_string(),
            files: foundation.iter().map(|c| c.change.path.clone()).collect(),
            verification: format!(
                "{} succeeds with the updated manifests/migrations",
                overall_test(map)
            ),
        });
    }
    for (key, files) in ordered {
        let name = if key.is_empty() {
            "repository root".to_string()
        } else {
            format!("`{key}`")
        };
        let verification = scoped_test(map, &key, &files).unwrap_or_else(|| overall_test(map));
        stages.push(Stage {
            title: title(&files).unwrap_or_else(|| format!("Changes in {name}")),
            files: files.iter().map(|c| c.change.path.clone()).collect(),
            verification,
        });
    }
    if stages.len() < 2 {
        return Vec::new();
    }
    stages
}

/// A stage's title says what changes: the Change line of its first code file
/// (else its first file).
fn title(files: &[&Chosen]) -> Option<String> {
    let lead = files
        .iter()
        .find(|c| !lang::is_test_path(&c.change.path) && !is_prose(&c.change.path))
        .or_else(|| files.first())?;
    let title = navin_ledger::plan::convert::change_title(&lead.change.change, &lead.change.path);
    (!title.is_empty()).then_some(title)
}

fn overall_test(map: &RepoMap) -> String {
    map.commands_of(RepoCommandKind::Test)
        .first()
        .map(|c| format!("`{}`", c.command))
        .unwrap_or_else(|| {
            "a manual check of the changed behaviour (no test command detected)".to_string()
        })
}

/// A test command limited to one module when the ecosystem allows it.
fn scoped_test(map: &RepoMap, key: &str, files: &[&Chosen]) -> Option<String> {
    let module = map.modules.iter().find(|m| m.path == key)?;
    let tests = map.commands_of(RepoCommandKind::Test);
    let base = tests.first()?.command.clone();
    // A module at the repository's root is the whole project: its command is the
    // project's own (`go -C  test`, `--workspace <root package>` could never run).
    if key.is_empty() || key == "." {
        return None;
    }
    let cmd = match module.kind.as_str() {
        "crate" if base.starts_with("cargo test") => format!("cargo test -p {}", module.name),
        "npm package" if base.starts_with("pnpm") => format!("pnpm --filter {} test", module.name),
        "npm package" if base.starts_with("yarn") => format!("yarn workspace {} test", module.name),
        "npm package" if base.starts_with("npm") => format!("npm test --workspace {}", module.name),
        // Commands run without a shell: `go -C` changes directory itself.
        "go module" => format!("go -C {key} test ./..."),
        _ if base == "go test ./..." => format!("go test ./{key}/..."),
        _ if base == "pytest" => {
            let test_files: Vec<&str> = files
                .iter()
                .map(|c| c.change.path.as_str())
                .filter(|p| lang::is_test_path(p))
                .collect();
            if test_files.is_empty() {
                return None;
            }
            format!("pytest {}", test_files.join(" "))
        }
        _ => return None,
    };
    Some(format!("`{cmd}`"))
}
