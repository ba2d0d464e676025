//! The import graph where it is cheap to resolve: Rust modules, Python imports, JS/TS relative imports, Go packages.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::lang;
use super::scan::Scanned;

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
    let mut imports: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (i, f) in scanned.files.iter().enumerate() {
        let Some(text) = f.text.as_deref() else {
            continue;
        };
        let targets = match f.language {
            Some("Rust") => ctx.rust(&f.path, text),
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

    /// The longest prefix of `segments` that names a module file under `root`.
    fn rust_path(&self, root: &str, segments: &[&str]) -> Option<usize> {
        for k in (1..=segments.len()).rev() {
            let base = lang::join(root, &segments[..k].join("/"));
            if let Some(i) = self.rust_module_file(&base) {
                return Some(i);
            }
        }
        None
    }

    fn rust(&self, path: &str, text: &str) -> Vec<usize> {
        let dir = lang::parent_dir(path);
        let name = lang::file_name(path);
        // Children of this module live in `dir` for mod.rs/lib.rs/main.rs,
        // else in `dir/<stem>`.
        let child_dir = if matches!(name, "mod.rs" | "lib.rs" | "main.rs") {
            dir.to_string()
        } else {
            lang::join(dir, lang::stem(path))
        };
        let crate_src = rust_crate_src(path);
        let mut out = Vec::new();
        for line in text.lines() {
            let t = line.trim_start();
            let t = t
                .strip_prefix("pub ")
                .or_else(|| t.strip_prefix("pub(crate) "))
                .unwrap_or(t);
            if let Some(rest) = t.strip_prefix("mod ") {
                let m = rest.trim_end().trim_end_matches(';');
                if rest.trim_end().ends_with(';') && is_ident(m) {
                    out.extend(self.rust_module_file(&lang::join(&child_dir, m)));
                }
            } else if let Some(rest) = t.strip_prefix("use ") {
                let segs: Vec<&str> = rest
                    .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .next()
                    .unwrap_or("")
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .collect();
                match segs.first().copied() {
                    Some("crate") => {
                        if let Some(src) = &crate_src {
                            out.extend(self.rust_path(src, &segs[1..]));
                        }
                    }
                    Some("super") => {
                        let parent = if matches!(name, "mod.rs") {
                            lang::parent_dir(dir)
                        } else {
                            dir
                        };
                        out.extend(self.rust_path(parent, &segs[1..]));
                    }
                    Some("self") => out.extend(self.rust_path(&child_dir, &segs[1..])),
                    Some(krate) => {
                        if let Some(src) = self.rust_crates.get(krate) {
                            match self.rust_path(src, &segs[1..]) {
                                Some(i) => out.push(i),
                                None => out.extend(self.idx(&format!("{src}/lib.rs"))),
                            }
                        }
                    }
                    None => {}
                }
            }
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

/// The `src` directory of the crate a Rust file belongs to.
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
