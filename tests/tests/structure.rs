//! The workspace's layering: no source file imports a file that imports it back, so a
//! reader can learn each module from the ones below it.
//!
//! Edges are the `crate::`, `super::` and `self::` paths a file names outside its
//! `#[cfg(test)]` tail and its comments, and the bare paths that start with a name those
//! brought into scope or with a child module, resolved to the longest module path that is
//! a file. Method calls are not followed: a call to a method defined in another file
//! makes no edge unless the file also names that file's path. A child naming its own
//! parent (`super::Session` from `session/plans.rs`) is not an edge: a `mod.rs` that
//! declares its children is above them by construction. No file passes 800 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate's source directory, from the workspace root.
const CRATES: [&str; 9] = [
    "ledger-git/src",
    "bot/planner/src",
    "bot/github/src",
    "bot/domain/src",
    "bot/engine/src",
    "bot/runner/src",
    "bot/src",
    "action/src",
    "tests/src",
];

type Module = Vec<String>;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `session/plans.rs` → `[session, plans]`; `session/mod.rs` and `lib.rs` name their
/// directory.
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Module = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The code a reader of the module sees: before its test module, without comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    s.split_at(end)
}

/// The module paths `code` names: `crate::a::b`, `super::x`, and each item of a
/// one-level group (`super::{a, b::c}`).
fn named_paths(code: &str, this: &Module) -> Vec<Module> {
    let mut found = Vec::new();
    for head in ["crate::", "super::", "self::"] {
        let mut rest = code;
        while let Some(at) = rest.find(head) {
            let before = rest[..at].chars().last();
            rest = &rest[at + head.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base: Module = match head {
                "crate::" => Vec::new(),
                "super::" => this[..this.len().saturating_sub(1)].to_vec(),
                _ => this.clone(),
            };
            let mut tail = rest;
            loop {
                if let Some(group) = tail.strip_prefix('{') {
                    let inner = group.split('}').next().unwrap_or_default();
                    for item in inner.split(',') {
                        let item = item.split(" as ").next().unwrap_or_default().trim();
                        if item.is_empty() || item == "self" {
                            continue;
                        }
                        let mut path = base.clone();
                        path.extend(item.split("::").map(|p| p.trim().to_owned()));
                        found.push(path);
                    }
                    break;
                }
                let (name, after) = ident(tail);
                if name.is_empty() {
                    break;
                }
                base.push(name.to_owned());
                match after.strip_prefix("::") {
                    Some(next) => tail = next,
                    None => break,
                }
            }
            found.push(base);
        }
    }
    found
}

/// The module paths `code` reaches through a bare first segment: a name a path above
/// brought into scope (`use crate::plan;` then `plan::convert::clip`) or a child module
/// (`mission::apply` in `ops/mod.rs`). Without these, a file reaching another through its
/// parent's name, or a parent calling into its child, makes no edge.
fn bare_paths(code: &str, this: &Module, named: &[Module], children: &[String]) -> Vec<Module> {
    let mut scope: BTreeMap<&str, Module> = BTreeMap::new();
    for path in named {
        if let Some(last) = path.last() {
            scope.insert(last, path.clone());
        }
    }
    for child in children {
        let mut path = this.clone();
        path.push(child.clone());
        scope.insert(child, path);
    }
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(found_at) = code[from..].find("::") {
        let at = from + found_at;
        from = at + 2;
        let head = &code[..at];
        let start = head
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let name = &head[start..];
        // The middle of a longer path (`other::mission::`) is not a name in scope.
        if head[..start].ends_with(':') {
            continue;
        }
        let rest = &code[from..];
        let Some(base) = scope.get(name) else {
            continue;
        };
        let mut path = base.clone();
        let mut tail = rest;
        loop {
            let (segment, after) = ident(tail);
            if segment.is_empty() {
                break;
            }
            path.push(segment.to_owned());
            match after.strip_prefix("::") {
                Some(next) => tail = next,
                None => break,
            }
        }
        found.push(path);
    }
    found
}

/// Import edges between the files of one crate.
fn edges(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Module, PathBuf> =
        files.into_iter().map(|f| (module_of(src, &f), f)).collect();
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let targets = graph.entry(module.clone()).or_default();
        let code = code(&text);
        let named = named_paths(&code, module);
        let children: Vec<String> = modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m[..module.len()] == module[..])
            .filter_map(|m| m.last().cloned())
            .collect();
        let bare = bare_paths(&code, module, &named, &children);
        for path in named.into_iter().chain(bare) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|k| path[..k].to_vec())
                .find(|p| modules.contains_key(p))
            else {
                continue;
            };
            // Itself, or one of its ancestors (a child naming its parent).
            if target.len() <= module.len() && module[..target.len()] == target[..] {
                continue;
            }
            targets.insert(target);
        }
    }
    graph
}

/// The sets of files that reach each other (Tarjan's strongly connected components of
/// more than one file).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'g Module, usize>,
        low: BTreeMap<&'g Module, usize>,
        stack: Vec<&'g Module>,
        on_stack: BTreeSet<&'g Module>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(lw));
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low[v];
                s.low.insert(v, lv.min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.join("::"));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn no_source_file_imports_a_file_that_imports_it_back() {
    let root = workspace_root();
    let mut report = Vec::new();
    for krate in CRATES {
        let src = root.join(krate);
        assert!(src.is_dir(), "{} is not a directory", src.display());
        for circle in circles(&edges(&src)) {
            report.push(format!("{krate}: {}", circle.join(" ⇄ ")));
        }
    }
    assert!(
        report.is_empty(),
        "import circles (move what both sides need below both):\n{}",
        report.join("\n")
    );
}

/// Past this a file holds more than one job; split it by what its parts are for.
const MAX_LINES: usize = 800;

#[test]
fn no_rust_file_in_the_workspace_passes_800_lines() {
    let root = workspace_root();
    let mut files = Vec::new();
    for dir in ["ledger-git", "bot", "action", "tests"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} files", files.len());
    let mut long: Vec<String> = files
        .iter()
        .filter(|f| !f.components().any(|c| c.as_os_str() == "target"))
        .filter_map(|f| {
            let lines = std::fs::read_to_string(f).ok()?.lines().count();
            (lines > MAX_LINES).then(|| {
                let rel = f.strip_prefix(&root).unwrap_or(f);
                format!("{} ({lines} lines)", rel.display())
            })
        })
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them by job):\n{}",
        long.join("\n")
    );
}

/// Writes `text` to `rel` under a scratch crate's `src`, making its directories.
fn write_source(src: &Path, rel: &str, text: &str) {
    let path = src.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_circle_finder_sees_a_circle_through_a_group_import_and_not_a_child_naming_its_parent() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let src = dir.path();
    let write = |rel: &str, text: &str| write_source(src, rel, text);
    write("lib.rs", "mod a;\nmod s;\n");
    write("a.rs", "use crate::s::{b::Thing, Session};\n");
    write("s/mod.rs", "mod b;\npub struct Session;\n");
    write(
        "s/b.rs",
        "use super::Session;\npub struct Thing;\nfn f() { crate::a::g() }\n#[cfg(test)]\nmod t { use crate::lib; }\n",
    );
    assert_eq!(circles(&edges(src)), vec![vec!["a", "s::b"]]);
    write(
        "s/b.rs",
        "use super::Session;\npub struct Thing;\n// crate::a::g()\n",
    );
    assert!(circles(&edges(src)).is_empty());
}

#[test]
fn the_circle_finder_follows_a_parents_bare_call_into_its_child_and_a_path_through_a_used_parent() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let src = dir.path();
    let write = |rel: &str, text: &str| write_source(src, rel, text);
    // The ledger's old circle: ops/mod.rs calls its child bare, the child reaches
    // plan/convert.rs through `use crate::plan;`, and convert uses ops.
    write("lib.rs", "mod ops;\nmod plan;\n");
    write(
        "ops/mod.rs",
        "mod mission;\npub fn apply() { mission::run() }\n",
    );
    write(
        "ops/mission.rs",
        "use crate::plan;\npub fn run() { plan::convert::clip() }\n",
    );
    write("plan/mod.rs", "pub mod convert;\n");
    write(
        "plan/convert.rs",
        "use crate::ops;\npub fn clip() {}\nfn g() { ops::apply() }\n",
    );
    assert_eq!(
        circles(&edges(src)),
        vec![vec!["ops", "ops::mission", "plan::convert"]]
    );
    // A longer path that merely ends in the same name is not the child.
    write(
        "ops/mod.rs",
        "mod mission;\npub fn apply() { other::mission::run() }\n",
    );
    assert!(circles(&edges(src)).is_empty());
}

/// Stages of the planner from bottom to top: a file of one stage may name files of its own
/// stage or of those before it, never of a later one.
const PLANNER_STAGES: [&str; 4] = ["detect", "rank", "compose", "external"];

/// Edges of `graph` that run from a stage up to a later one, as "from → to".
fn upward_imports(graph: &BTreeMap<Module, BTreeSet<Module>>, stages: &[&str]) -> Vec<String> {
    let level = |m: &Module| {
        m.first()
            .and_then(|top| stages.iter().position(|s| s == top))
    };
    let mut out = Vec::new();
    for (from, targets) in graph {
        for to in targets {
            if let (Some(a), Some(b)) = (level(from), level(to)) {
                if b > a {
                    out.push(format!("{} → {}", from.join("::"), to.join("::")));
                }
            }
        }
    }
    out
}

#[test]
fn the_planners_stages_import_only_from_the_stages_below_them() {
    let src = workspace_root().join("bot/planner/src");
    for stage in PLANNER_STAGES {
        assert!(
            src.join(stage).is_dir(),
            "planner stage {stage}/ is missing"
        );
    }
    let upward = upward_imports(&edges(&src), &PLANNER_STAGES);
    assert!(
        upward.is_empty(),
        "planner imports that run back up a stage:\n{}",
        upward.join("\n")
    );
}

#[test]
fn an_import_from_detection_up_to_ranking_is_reported() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
    let src = dir.path();
    for (rel, text) in [
        ("lib.rs", "mod detect;\nmod rank;\n"),
        ("detect/mod.rs", "pub mod scan;\n"),
        ("detect/scan.rs", "use crate::rank::query::Query;\n"),
        ("rank/mod.rs", "pub mod query;\n"),
        (
            "rank/query.rs",
            "use crate::detect::scan;\npub struct Query;\n",
        ),
    ] {
        let path = src.join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(src)).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        upward_imports(&edges(src), &["detect", "rank"]),
        vec!["detect::scan → rank::query".to_string()]
    );
}
