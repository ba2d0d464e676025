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

/// Stages for large changes, dependencies and schema first, then modules in
/// import order (a module other changed files import lands before them).
/// Returns no stages for small plans.
pub fn build(scanned: &Scanned, map: &RepoMap, graph: &Graph, chosen: &[Chosen]) -> Vec<Stage> {
    let mut groups: BTreeMap<String, Vec<&Chosen>> = BTreeMap::new();
    let mut foundation: Vec<&Chosen> = Vec::new();
    for c in chosen {
        let p = &c.change.path;
        if crate::detect::scan::is_manifest_name(lang::file_name(p)) || lang::is_migration_path(p) {
            foundation.push(c);
        } else {
            groups.entry(group_key(map, p)).or_default().push(c);
        }
    }
    if chosen.len() <= STAGE_FILES && groups.len() < STAGE_MODULES {
        return Vec::new();
    }
    if groups.len() == 1 {
        // One module: split by directory instead.
        let only: Vec<&Chosen> = groups.into_values().next().unwrap_or_default();
        groups = BTreeMap::new();
        for c in only {
            groups
                .entry(lang::parent_dir(&c.change.path).to_string())
                .or_default()
                .push(c);
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
            title: format!("Changes in {name}"),
            files: files.iter().map(|c| c.change.path.clone()).collect(),
            verification,
        });
    }
    if stages.len() < 2 {
        return Vec::new();
    }
    stages
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
