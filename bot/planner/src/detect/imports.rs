//! The import graph where it is cheap to resolve: Rust modules, `use` trees and `pub use` re-exports, Python imports, JS/TS relative imports, Go packages.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::detect::scan::Scanned;
use crate::lang;

/// File-level import edges, by index into `Scanned::files`.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    pub imports: Vec<Vec<usize>>,
    pub imported_by: Vec<Vec<usize>>,
}

impl Graph {
    pub fn edge_count(&self) -> usize {
        self.imports.iter().map(Vec::len).sum()
    }
}

pub fn build_graph(scanned: &Scanned) -> Graph {
    let n = scanned.files.len();
    let ctx = Context::new(scanned);
    let uses: Vec<Vec<UseItem>> = scanned
        .files
        .iter()
        .map(|f| match (f.language, f.text.as_deref()) {
            (Some("Rust"), Some(text)) => rust_uses(text),
            _ => Vec::new(),
        })
        .collect();
    // `pub use` re-exports per file (name to the file it comes from), two
    // rounds so that a re-export of a re-export resolves too.
    let mut reexports: Vec<HashMap<String, usize>> = vec![HashMap::new(); n];
    for _ in 0..2 {
        let mut next: Vec<HashMap<String, usize>> = vec![HashMap::new(); n];
        for (i, items) in uses.iter().enumerate() {
            for u in items.iter().filter(|u| u.public && u.name != "*") {
                if let Some(t) = ctx.resolve_rust(&scanned.files[i].path, &u.segs, &reexports) {
                    if t != i {
                        next[i].insert(u.name.clone(), t);
                    }
                }
            }
        }
        reexports = next;
    }
    let mut imports: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (i, f) in scanned.files.iter().enumerate() {
        let Some(text) = f.text.as_deref() else {
            continue;
        };
        let targets = match f.language {
            Some("Rust") => ctx.rust(&f.path, text, &uses[i], &reexports),
            Some("Python") => ctx.python(&f.path, text),
            Some("JavaScript" | "TypeScript" | "Vue" | "Svelte") => ctx.js(&f.path, text),
            Some("Go") => ctx.go(&f.path, text),
            _ => Vec::new(),
        };
        for t in targets {
            if t != i {
                imports[i].insert(t);
            }
        }
    }
    let mut imported_by = vec![Vec::new(); n];
    for (i, targets) in imports.iter().enumerate() {
        for &t in targets {
            imported_by[t].push(i);
        }
    }
    Graph {
        imports: imports
            .into_iter()
            .map(|s| s.into_iter().collect())
            .collect(),
        imported_by,
    }
}

struct Context<'a> {
    scanned: &'a Scanned,
    /// Rust crate name (underscored) to its `src` directory.
    rust_crates: HashMap<String, String>,
    /// Python dotted module name to file index.
    py_modules: HashMap<String, usize>,
    /// Go module path and its directory.
    go_modules: Vec<(String, String)>,
    /// Directory to the indices of non-test Go files in it.
    go_dirs: HashMap<String, Vec<usize>>,
}

impl<'a> Context<'a> {
    fn new(scanned: &'a Scanned) -> Self {
        let mut rust_crates = HashMap::new();
        let mut go_modules = Vec::new();
        let mut go_dirs: HashMap<String, Vec<usize>> = HashMap::new();
        let mut py_modules = HashMap::new();
        for (i, f) in scanned.files.iter().enumerate() {
            let name = lang::file_name(&f.path);
            let dir = lang::parent_dir(&f.path);
            let text = f.text.as_deref().unwrap_or("");
            if name == "Cargo.toml" {
                if let Some(crate_name) = cargo_package_name(text) {
                    rust_crates.insert(crate_name.replace('-', "_"), lang::join(dir, "src"));
                }
            } else if name == "go.mod" {
                if let Some(line) = text.lines().find(|l| l.trim_start().starts_with("module ")) {
                    let module = line.trim_start()["module ".len()..]
                        .trim()
                        .trim_matches('"')
                        .to_string();
                    go_modules.push((module, dir.to_string()));
                }
            } else if f.language == Some("Go") && !name.ends_with("_test.go") {
                go_dirs.entry(dir.to_string()).or_default().push(i);
            } else if f.language == Some("Python") && name.ends_with(".py") {
                for dotted in python_names(scanned, &f.path) {
                    py_modules.entry(dotted).or_insert(i);
                }
            }
        }
        // Longest module path first, so nested modules win.
        go_modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        Self {
            scanned,
            rust_crates,
            py_modules,
            go_modules,
            go_dirs,
        }
    }

    fn idx(&self, path: &str) -> Option<usize> {
        self.scanned.index_of(path)
    }

    /// `a/b` as a Rust module file: `a/b.rs` or `a/b/mod.rs`.
    fn rust_module_file(&self, base: &str) -> Option<usize> {
        self.idx(&format!("{base}.rs"))
            .or_else(|| self.idx(&format!("{base}/mod.rs")))
    }

    /// The longest prefix of `segments` that names a module file under
    /// `root`, and how many segments it used.
    fn rust_path(&self, root: &str, segments: &[&str]) -> Option<(usize, usize)> {
        for k in (1..=segments.len()).rev() {
            let base = lang::join(root, &segments[..k].join("/"));
            if let Some(i) = self.rust_module_file(&base) {
                return Some((i, k));
            }
        }
        None
    }

    /// The file a `use` path leads to: the deepest module file it names, or,
    /// when the next name is re-exported there (`pub use self::routing::Router`
    /// in `lib.rs`), the file the re-export points at.
    fn resolve_rust(
        &self,
        path: &str,
        segs: &[String],
        reexports: &[HashMap<String, usize>],
    ) -> Option<usize> {
        let dir = lang::parent_dir(path);
        let name = lang::file_name(path);
        let child_dir = rust_child_dir(path);
        let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
        let rest = segs.get(1..).unwrap_or(&[]);
        // Where the path starts, and the file standing for that root when no
        // module file matches (only re-exports from it count then).
        let (root, root_file, link_root): (String, Option<usize>, bool) = match *segs.first()? {
            "crate" => {
                let src = rust_crate_src(path)?;
                let root_file = self
                    .idx(&format!("{src}/lib.rs"))
                    .or_else(|| self.idx(&format!("{src}/main.rs")));
                (src, root_file, false)
            }
            "super" => {
                let parent = if name == "mod.rs" {
                    lang::parent_dir(dir)
                } else {
                    dir
                };
                (parent.to_string(), None, false)
            }
            "self" => (child_dir, self.idx(path), false),
            krate => {
                let src = self.rust_crates.get(krate)?;
                (src.clone(), self.idx(&format!("{src}/lib.rs")), true)
            }
        };
        let (mut cur, k) = match self.rust_path(&root, rest) {
            Some(found) => found,
            None => (root_file?, 0),
        };
        let mut hopped = false;
        if let Some(next) = rest.get(k) {
            for _ in 0..3 {
                match reexports.get(cur).and_then(|m| m.get(*next)) {
                    Some(&t) if t != cur => {
                        cur = t;
                        hopped = true;
                    }
                    _ => break,
                }
            }
        }
        // A path into the crate root that no re-export explains says nothing
        // about which file it needs (except another crate's `lib.rs`).
        if k == 0 && !hopped && !link_root {
            return None;
        }
        Some(cur)
    }

    fn rust(
        &self,
        path: &str,
        text: &str,
        uses: &[UseItem],
        reexports: &[HashMap<String, usize>],
    ) -> Vec<usize> {
        let child_dir = rust_child_dir(path);
        let mut out = Vec::new();
        for line in text.lines() {
            let (_, t) = strip_visibility(line.trim_start());
            if let Some(rest) = t.strip_prefix("mod ") {
                let m = rest.trim_end().trim_end_matches(';');
                if rest.trim_end().ends_with(';') && is_ident(m) {
                    out.extend(self.rust_module_file(&lang::join(&child_dir, m)));
                }
            }
        }
        for u in uses {
            out.extend(self.resolve_rust(path, &u.segs, reexports));
        }
        out
    }

    fn python(&self, path: &str, text: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let dir = lang::parent_dir(path);
        for line in text.lines() {
            let t = line.trim_start();
            let (module, names): (&str, &str) = if let Some(rest) = t.strip_prefix("from ") {
                match rest.split_once(" import ") {
                    Some((m, n)) => (m.trim(), n),
                    None => continue,
                }
            } else if let Some(rest) = t.strip_prefix("import ") {
                (rest.split([' ', ',']).next().unwrap_or(""), "")
            } else {
                continue;
            };
            if let Some(rel) = module.strip_prefix('.') {
                // Relative import: each extra dot climbs one package.
                let mut base = dir.to_string();
                let mut rest = rel;
                while let Some(r) = rest.strip_prefix('.') {
                    base = lang::parent_dir(&base).to_string();
                    rest = r;
                }
                let base = if rest.is_empty() {
                    base
                } else {
                    lang::join(&base, &rest.replace('.', "/"))
                };
                let found = self
                    .idx(&format!("{base}.py"))
                    .or_else(|| self.idx(&format!("{base}/__init__.py")));
                out.extend(found);
                for n in import_names(names) {
                    out.extend(self.idx(&format!("{base}/{n}.py")));
                }
                continue;
            }
            if let Some(&i) = self.py_modules.get(module) {
                out.push(i);
            }
            for n in import_names(names) {
                if let Some(&i) = self.py_modules.get(&format!("{module}.{n}")) {
                    out.push(i);
                }
            }
        }
        out
    }

    fn js(&self, path: &str, text: &str) -> Vec<usize> {
        let dir = lang::parent_dir(path);
        let mut out = Vec::new();
        for line in text.lines() {
            let t = line.trim_start();
            if !(t.starts_with("import")
                || t.starts_with("export")
                || t.contains("require(")
                || t.contains("import(")
                || t.starts_with("} from"))
            {
                continue;
            }
            for spec in quoted_specs(t) {
                if !(spec.starts_with("./") || spec.starts_with("../")) {
                    continue;
                }
                let Some(base) = normalize(dir, spec) else {
                    continue;
                };
                out.extend(self.resolve_js(&base));
            }
        }
        out
    }

    fn resolve_js(&self, base: &str) -> Option<usize> {
        const EXTS: &[&str] = &[
            "ts", "tsx", "js", "jsx", "mjs", "cjs", "vue", "svelte", "mts",
        ];
        if let Some(i) = self.idx(base) {
            return Some(i);
        }
        // TypeScript sources imported with a `.js` suffix.
        let stripped = base.strip_suffix(".js").unwrap_or(base);
        EXTS.iter()
            .find_map(|e| self.idx(&format!("{stripped}.{e}")))
            .or_else(|| {
                EXTS.iter()
                    .find_map(|e| self.idx(&format!("{base}/index.{e}")))
            })
    }

    fn go(&self, path: &str, text: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut in_block = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("func ") || t.starts_with("type ") {
                break;
            }
            let spec = if t.starts_with("import (") {
                in_block = true;
                continue;
            } else if in_block && t.starts_with(')') {
                in_block = false;
                continue;
            } else if let Some(rest) = t.strip_prefix("import ") {
                rest
            } else if in_block {
                t
            } else {
                continue;
            };
            let Some(imp) = quoted_specs(spec).into_iter().next() else {
                continue;
            };
            for (module, dir) in &self.go_modules {
                if imp == module || imp.starts_with(&format!("{module}/")) {
                    let rel = imp[module.len()..].trim_start_matches('/');
                    if let Some(files) = self.go_dirs.get(&lang::join(dir, rel)) {
                        out.extend(
                            files
                                .iter()
                                .copied()
                                .filter(|&i| self.scanned.files[i].path != path)
                                .take(30),
                        );
                    }
                    break;
                }
            }
        }
        out
    }
}

fn cargo_package_name(text: &str) -> Option<String> {
    let mut in_package = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_package = t == "[package]";
        } else if in_package {
            if let Some(v) = t.strip_prefix("name") {
                let v = v.trim_start().strip_prefix('=')?.trim();
                return Some(v.trim_matches('"').to_string());
            }
        }
    }
    None
}

/// A Rust `use` tree (`a::{b, c::{d as e, self}}`) expanded into one path per
/// imported name, each with the name it binds (`e`, `c`; `*` for a glob).
fn use_paths(tree: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    expand_use(&[], tree, &mut out);
    out
}

fn expand_use(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
    for item in split_top(tree) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if let Some(open) = item.find('{') {
            let head = item[..open].trim().trim_end_matches("::");
            let inner = item[open + 1..].trim_end().trim_end_matches('}');
            let mut p = prefix.to_vec();
            p.extend(segments(head));
            expand_use(&p, inner, out);
            continue;
        }
        let (path, alias) = match item.split_once(" as ") {
            Some((p, a)) => (p.trim(), Some(a.trim())),
            None => (item, None),
        };
        let mut p = prefix.to_vec();
        p.extend(segments(path));
        if p.last().is_some_and(|s| s == "self") {
            p.pop();
        }
        let Some(last) = p.last().cloned() else {
            continue;
        };
        out.push((p, alias.map_or(last, str::to_string)));
    }
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Splits at commas outside braces.
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// One name a Rust `use` statement brings in.
struct UseItem {
    /// `pub use` (any visibility): a re-export.
    public: bool,
    segs: Vec<String>,
    /// The name it binds (the alias after `as`, else the last segment).
    name: String,
}

/// Longest `use` statement gathered across lines; longer means an unclosed
/// statement in text the line scanner misread, and it is dropped.
const MAX_USE: usize = 4096;

/// `pub`, `pub(crate)`, `pub(super)`, `pub(in …)` stripped, and whether one was there.
fn strip_visibility(t: &str) -> (bool, &str) {
    if let Some(rest) = t.strip_prefix("pub ") {
        return (true, rest.trim_start());
    }
    if let Some(rest) = t.strip_prefix("pub(") {
        if let Some(i) = rest.find(')') {
            return (true, rest[i + 1..].trim_start());
        }
    }
    (false, t)
}

/// Every `use` statement of a Rust file, including multi-line `use {…}` blocks.
fn rust_uses(text: &str) -> Vec<UseItem> {
    let mut out = Vec::new();
    let mut pending: Option<(bool, String)> = None;
    let emit = |public: bool, stmt: &str, out: &mut Vec<UseItem>| {
        let stmt = stmt.split(';').next().unwrap_or("");
        for (segs, name) in use_paths(stmt) {
            out.push(UseItem { public, segs, name });
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if let Some((public, mut buf)) = pending.take() {
            buf.push(' ');
            buf.push_str(t);
            if t.contains(';') {
                emit(public, &buf, &mut out);
            } else if buf.len() < MAX_USE {
                pending = Some((public, buf));
            }
            continue;
        }
        let (public, t) = strip_visibility(t);
        if let Some(rest) = t.strip_prefix("use ") {
            if rest.contains(';') {
                emit(public, rest, &mut out);
            } else {
                pending = Some((public, rest.to_string()));
            }
        }
    }
    out
}

/// The `src` directory of the crate a Rust file belongs to.
/// Where the children of the Rust module in `path` live: beside it for `mod.rs`, `lib.rs`
/// and `main.rs`, else in the folder named after it.
fn rust_child_dir(path: &str) -> String {
    let dir = lang::parent_dir(path);
    if matches!(lang::file_name(path), "mod.rs" | "lib.rs" | "main.rs") {
        dir.to_string()
    } else {
        lang::join(dir, lang::stem(path))
    }
}

fn rust_crate_src(path: &str) -> Option<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let i = parts.iter().rposition(|c| *c == "src")?;
    Some(parts[..=i].join("/"))
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

fn import_names(names: &str) -> impl Iterator<Item = &str> {
    names
        .split([',', '(', ')'])
        .map(|n| n.split_whitespace().next().unwrap_or(""))
        .filter(|n| is_ident(n))
}

/// Dotted names under which a Python file can be imported: from the repo
/// root, and from the parent of its top-level package (src layouts).
fn python_names(scanned: &Scanned, path: &str) -> Vec<String> {
    let no_ext = path.trim_end_matches(".py");
    let no_init = no_ext.strip_suffix("/__init__").unwrap_or(no_ext);
    let parts: Vec<&str> = no_init.split('/').collect();
    let mut out = vec![parts.join(".")];
    // Climb while the directory is a package; the first non-package parent is a root.
    let mut k = parts.len() - 1;
    while k > 0 {
        let pkg_dir = parts[..k].join("/");
        if !scanned.exists(&format!("{pkg_dir}/__init__.py")) {
            break;
        }
        k -= 1;
    }
    if k > 0 && k < parts.len() {
        out.push(parts[k..].join("."));
    }
    if parts.len() > 1 && matches!(parts[0], "src" | "lib" | "python") {
        out.push(parts[1..].join("."));
    }
    out
}

/// String literals on a line ('…', "…", `…`).
fn quoted_specs(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find(['"', '\'', '`']) {
        let q = rest.as_bytes()[start] as char;
        let after = &rest[start + 1..];
        let Some(end) = after.find(q) else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// Joins a relative import onto a directory, resolving `.` and `..`.
fn normalize(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dir.is_empty() {
        Vec::new()
    } else {
        dir.split('/').collect()
    };
    for c in rel.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(parts.join("/"))
}

/// Module dependency counts between directories, for the data-flow summary.
pub fn dir_edges(
    scanned: &Scanned,
    graph: &Graph,
    depth: usize,
) -> BTreeMap<(String, String), usize> {
    let key = |p: &str| -> String {
        let d = lang::parent_dir(p);
        d.split('/').take(depth).collect::<Vec<_>>().join("/")
    };
    let mut out: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, targets) in graph.imports.iter().enumerate() {
        let from = key(&scanned.files[i].path);
        for &t in targets {
            let to = key(&scanned.files[t].path);
            if from != to {
                *out.entry((from.clone(), to)).or_default() += 1;
            }
        }
    }
    out
}
