//! The descriptive plan sections: architecture, capabilities, data flow and target state, all drawn from the map.

use std::collections::{BTreeMap, BTreeSet};

use navin_ledger::plan::Operation;

use crate::compose::chosen::Chosen;
use crate::detect::commands::DetectedCommand;
use crate::detect::imports::{self, Graph};
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::lang;
use crate::request::Request;

fn list<T>(items: &[T], max: usize, show: impl Fn(&T) -> String) -> String {
    let mut parts: Vec<String> = items.iter().take(max).map(show).collect();
    if items.len() > max {
        parts.push(format!("and {} more", items.len() - max));
    }
    parts.join(", ")
}

pub fn architecture(map: &RepoMap) -> String {
    let mut lines = Vec::new();
    let code: Vec<_> = map
        .languages
        .iter()
        .filter(|l| lang::is_code_language(&l.language))
        .collect();
    if !code.is_empty() {
        lines.push(format!(
            "- Languages: {}.",
            list(&code, 6, |l| format!("{} ({} files)", l.language, l.files))
        ));
    }
    if !map.manifests.is_empty() {
        lines.push(format!(
            "- Package and build files: {}.",
            list(&map.manifests, 10, |m| {
                let mut d = format!("`{}` ({}", m.path, m.tool);
                if let Some(n) = &m.name {
                    d.push_str(&format!(" `{n}`"));
                }
                if !m.workspace_members.is_empty() {
                    d.push_str(&format!(", workspace: {}", m.workspace_members.join(", ")));
                }
                d.push(')');
                d
            })
        ));
    }
    if !map.modules.is_empty() {
        lines.push(format!(
            "- Module boundaries: {}.",
            list(&map.modules, 12, |m| {
                let at = if m.path.is_empty() {
                    "(root)".to_string()
                } else {
                    format!("`{}`", m.path)
                };
                format!(
                    "{at} ({} `{}`{}, {} files)",
                    m.kind,
                    m.name,
                    m.language
                        .as_deref()
                        .map(|l| format!(", {l}"))
                        .unwrap_or_default(),
                    m.files
                )
            })
        ));
    }
    if !map.entry_points.is_empty() {
        lines.push(format!(
            "- Entry points: {}.",
            list(&map.entry_points, 8, |e| format!(
                "`{}` ({})",
                e.path, e.kind
            ))
        ));
    }
    if !map.frameworks.is_empty() {
        lines.push(format!(
            "- Frameworks and key libraries: {}.",
            list(&map.frameworks, 10, |f| format!(
                "{} ({}, from `{}`)",
                f.name, f.category, f.evidence
            ))
        ));
    }
    if !map.ci.is_empty() {
        lines.push(format!(
            "- CI: {}.",
            list(&map.ci, 6, |c| format!("`{}` ({})", c.path, c.system))
        ));
    }
    if !map.test_conventions.is_empty() {
        lines.push(format!(
            "- Tests: {}.",
            list(&map.test_conventions, 4, |t| format!(
                "{} `{}` ({} files)",
                t.language, t.pattern, t.files
            ))
        ));
    }
    if !map.migration_dirs.is_empty() {
        lines.push(format!(
            "- Schema migrations: {}.",
            list(&map.migration_dirs, 4, |d| format!("`{d}`"))
        ));
    }
    let s = &map.stats;
    let mut scan = format!(
        "- Scanned {} files ({} read, {} KiB); skipped {} vendored, {} binary or lockfiles, {} over the size limit",
        s.files,
        s.read_files,
        s.read_bytes / 1024,
        s.skipped_vendored,
        s.skipped_binary,
        s.skipped_large
    );
    if s.truncated {
        scan.push_str(&format!(
            ", {} beyond the read budget (partial scan)",
            s.skipped_budget
        ));
    }
    scan.push('.');
    lines.push(scan);
    lines.join("\n")
}

/// Names a file defines at top level (functions, types, classes), in order.
fn top_definitions(text: &str, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.peek() {
            if matches!(
                *w,
                "pub"
                    | "pub(crate)"
                    | "export"
                    | "default"
                    | "async"
                    | "public"
                    | "final"
                    | "abstract"
                    | "static"
            ) {
                words.next();
            } else {
                break;
            }
        }
        let Some(kw) = words.next() else { continue };
        if !matches!(
            kw,
            "fn" | "struct"
                | "enum"
                | "trait"
                | "def"
                | "class"
                | "func"
                | "function"
                | "interface"
                | "type"
        ) {
            continue;
        }
        let Some(name) = words.next() else { continue };
        // Go methods: `func (r *T) Name(`.
        let name = if kw == "func" && name.starts_with('(') {
            let rest: Vec<&str> = line.splitn(2, ')').collect();
            rest.get(1).map(|r| r.trim_start()).unwrap_or("")
        } else {
            name
        };
        let ident: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.len() >= 3 && !ident.starts_with('_') && ident != "main" && !out.contains(&ident) {
            out.push(ident);
            if out.len() >= max {
                break;
            }
        }
    }
    out
}

pub fn capabilities(scanned: &Scanned, map: &RepoMap, graph: &Graph) -> String {
    let mut lines = Vec::new();
    let by_category: BTreeMap<&str, Vec<&str>> =
        map.frameworks.iter().fold(BTreeMap::new(), |mut acc, f| {
            acc.entry(f.category.as_str())
                .or_insert_with(Vec::new)
                .push(f.name.as_str());
            acc
        });
    if !by_category.is_empty() {
        let parts: Vec<String> = by_category
            .iter()
            .map(|(cat, names)| format!("{cat} ({})", names.join(", ")))
            .collect();
        lines.push(format!(
            "- Runtime capabilities from dependencies: {}.",
            parts.join("; ")
        ));
    }
    // Per module: the names its most-imported (else first) source files define.
    let mut modules: Vec<_> = map
        .modules
        .iter()
        .filter(|m| m.language.is_some())
        .collect();
    modules.sort_by(|a, b| b.files.cmp(&a.files).then(a.path.cmp(&b.path)));
    for m in modules.into_iter().take(8) {
        let prefix = if m.path.is_empty() {
            String::new()
        } else {
            format!("{}/", m.path)
        };
        let mut files: Vec<(usize, usize)> = scanned
            .files
            .iter()
            .enumerate()
            .filter(|(_, f)| {
                f.path.starts_with(&prefix)
                    && !f.is_test
                    && f.language.is_some_and(lang::is_code_language)
            })
            .map(|(i, _)| (i, graph.imported_by[i].len()))
            .collect();
        files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut names: Vec<String> = Vec::new();
        let mut from: Vec<String> = Vec::new();
        for (i, _) in files.iter().take(12) {
            let Some(text) = scanned.files[*i].text.as_deref() else {
                continue;
            };
            let defs = top_definitions(text, 3);
            if !defs.is_empty() {
                from.push(format!("`{}`", scanned.files[*i].path));
            }
            for d in defs {
                if names.len() < 6 && !names.contains(&d) {
                    names.push(d);
                }
            }
            if names.len() >= 6 {
                break;
            }
        }
        let at = if m.path.is_empty() {
            "(root)".to_string()
        } else {
            format!("`{}`", m.path)
        };
        if names.is_empty() {
            lines.push(format!(
                "- {at} ({} `{}`): {} files.",
                m.kind, m.name, m.files
            ));
        } else {
            lines.push(format!(
                "- {at} ({} `{}`): defines {} (in {}).",
                m.kind,
                m.name,
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                from.into_iter().take(3).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if lines.is_empty() {
        lines.push("- No modules or frameworks were detected; the repository holds no recognised source code.".to_string());
    }
    lines.join("\n")
}

pub fn data_flow(scanned: &Scanned, map: &RepoMap, graph: &Graph) -> String {
    let mut lines = Vec::new();
    for e in map.entry_points.iter().take(4) {
        let Some(i) = scanned.index_of(&e.path) else {
            continue;
        };
        let direct: Vec<&str> = graph.imports[i]
            .iter()
            .map(|&j| scanned.files[j].path.as_str())
            .collect();
        if direct.is_empty() {
            continue;
        }
        let mut second: BTreeSet<&str> = BTreeSet::new();
        for &j in &graph.imports[i] {
            for &k in &graph.imports[j] {
                if k != i && !graph.imports[i].contains(&k) {
                    second.insert(scanned.files[k].path.as_str());
                }
            }
        }
        let second: Vec<&str> = second.into_iter().collect();
        let mut line = format!(
            "- `{}` ({}) calls into {}",
            e.path,
            e.kind,
            list(&direct, 6, |p| format!("`{p}`"))
        );
        if !second.is_empty() {
            line.push_str(&format!(
                ", which reach {}",
                list(&second, 5, |p| format!("`{p}`"))
            ));
        }
        line.push('.');
        lines.push(line);
    }
    let mut edges: Vec<((String, String), usize)> =
        imports::dir_edges(scanned, graph, 2).into_iter().collect();
    edges.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if !edges.is_empty() {
        lines.push(format!(
            "- Strongest dependencies between directories: {}.",
            list(&edges, 6, |((from, to), n)| {
                let show = |d: &String| {
                    if d.is_empty() {
                        "(root)".to_string()
                    } else {
                        format!("`{d}`")
                    }
                };
                format!("{} → {} ({n} imports)", show(from), show(to))
            })
        ));
    }
    if !map.most_imported.is_empty() {
        lines.push(format!(
            "- Shared hubs most files import: {}.",
            list(&map.most_imported, 5, |h| format!(
                "`{}` ({} importers)",
                h.path, h.imported_by
            ))
        ));
    }
    let io: Vec<String> = map
        .frameworks
        .iter()
        .filter(|f| {
            matches!(
                f.category.as_str(),
                "web server"
                    | "web framework"
                    | "HTTP"
                    | "HTTP client"
                    | "gRPC"
                    | "RPC"
                    | "CLI"
                    | "ORM"
                    | "database"
                    | "task queue"
                    | "git"
                    | "GitHub API client"
                    | "API"
            )
        })
        .map(|f| format!("{} ({})", f.name, f.category))
        .collect();
    if !io.is_empty() {
        lines.push(format!(
            "- Boundaries where data enters or leaves: {}.",
            io.join(", ")
        ));
    }
    if lines.is_empty() {
        lines.push(
            "- No import edges could be resolved cheaply; data flow is inferred from the entry points and module layout above."
                .to_string(),
        );
    }
    lines.join("\n")
}

pub fn target_state(
    request: &Request,
    map: &RepoMap,
    chosen: &[Chosen],
    tests: &[&DetectedCommand],
) -> String {
    let edits: Vec<&Chosen> = chosen
        .iter()
        .filter(|c| c.change.operation == Operation::Edit)
        .collect();
    let creates: Vec<&Chosen> = chosen
        .iter()
        .filter(|c| c.change.operation == Operation::Create)
        .collect();
    let mut s = format!(
        "The repository satisfies \u{201c}{}\u{201d} with the existing architecture kept as it is.",
        crate::text::one_line(request.text(), 200)
    );
    let code = |c: &&&Chosen| !lang::is_test_path(&c.change.path);
    if let Some(first) = edits.iter().find(code) {
        let m = map
            .module_of(&first.change.path)
            .filter(|m| !m.path.is_empty())
            .map(|m| format!(" (`{}`)", m.path))
            .unwrap_or_default();
        let path = &first.change.path;
        if first.symbols.is_empty() {
            s.push_str(&format!(" The behaviour lives in `{path}`{m}"));
        } else {
            // Name what carries the behaviour: the definitions the request points at.
            let names: Vec<String> = first
                .symbols
                .iter()
                .map(|sym| format!("`{}` ({})", sym.name, sym.kind))
                .collect();
            s.push_str(&format!(
                " {} in `{path}`{m} {} the new behaviour",
                and_list(&names),
                if names.len() == 1 { "carries" } else { "carry" }
            ));
        }
        let others: Vec<String> = edits
            .iter()
            .filter(|c| c.change.path != *path && code(c))
            .take(6)
            .map(|c| match c.symbols.first() {
                Some(sym) => format!("`{}` in `{}`", sym.name, c.change.path),
                None => format!("`{}`", c.change.path),
            })
            .collect();
        if !others.is_empty() {
            s.push_str(&format!(", with supporting edits to {}", and_list(&others)));
        }
        s.push('.');
    }
    if !creates.is_empty() {
        s.push_str(&format!(
            " New files: {}.",
            list(&creates, 6, |c| format!("`{}`", c.change.path))
        ));
    }
    let test_files: Vec<&str> = chosen
        .iter()
        .filter(|c| lang::is_test_path(&c.change.path))
        .map(|c| c.change.path.as_str())
        .take(2)
        .collect();
    let cases = if test_files.is_empty() {
        "tests that exercise the new behaviour".to_string()
    } else {
        format!(
            "cases in {} that fail without the change",
            crate::text::backticked(&test_files)
        )
    };
    match tests.first() {
        Some(t) => s.push_str(&format!(" `{}` passes with {cases}.", t.command)),
        None => s.push_str(" The behaviour is demonstrated by a documented manual check, since no test command exists."),
    }
    s
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
