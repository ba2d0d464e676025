//! Risk rules: security paths, migrations, public API, dependencies, CI, widely imported modules.

use navin_ledger::plan::Operation;

use crate::compose::chosen::Chosen;
use crate::detect::commands::RepoCommandKind;
use crate::detect::imports::Graph;
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::detect::symbols::Symbol;
use crate::lang;
use crate::rank::intent::Intent;
use crate::text;

/// The plan format asks for 3 to 5 risks (docs/plan.md).
const MIN_RISKS: usize = 3;
const MAX_RISKS: usize = 5;
/// A file imported by at least this many others is a hub.
const HUB_IMPORTERS: usize = 5;

fn paths(items: &[&str]) -> String {
    text::backticked(items.iter().take(3))
}

/// The declaration of `sym` as written (`pub fn history`), when it is
/// visible outside its package by the language's rules.
fn public_item(path: &str, source: &str, sym: &Symbol) -> Option<String> {
    let line = source
        .lines()
        .nth((sym.line as usize).checked_sub(1)?)?
        .trim();
    let public = match lang::language_of(path)? {
        "Rust" => line.starts_with("pub "),
        "JavaScript" | "TypeScript" => line.starts_with("export "),
        "Python" => !sym.name.starts_with('_') && matches!(sym.kind, "def" | "class"),
        "Go" => sym.name.starts_with(|c: char| c.is_ascii_uppercase()),
        _ => false,
    };
    if !public || matches!(sym.kind, "flag" | "command" | "mod") {
        return None;
    }
    let end = line.find(sym.name.as_str())? + sym.name.len();
    let decl = &line[..end];
    (decl.len() <= 80).then(|| format!("`{decl}`"))
}

/// A risk naming the public definitions the change touches in a library
/// and the packages of this repository that depend on it.
fn public_api(scanned: &Scanned, map: &RepoMap, chosen: &[Chosen]) -> Option<String> {
    for c in chosen
        .iter()
        .filter(|c| c.change.operation == Operation::Edit)
    {
        let path = c.change.path.as_str();
        let Some(source) = scanned
            .index_of(path)
            .and_then(|i| scanned.files[i].text.as_deref())
        else {
            continue;
        };
        let items: Vec<String> = c
            .symbols
            .iter()
            .filter_map(|s| public_item(path, source, s))
            .take(2)
            .collect();
        let Some(pkg) = map.module_of(path).filter(|m| match m.kind.as_str() {
            "crate" => scanned.exists(&lang::join(&m.path, "src/lib.rs")),
            "npm package" | "python project" | "python package" | "go module" | "jvm module" => {
                true
            }
            _ => false,
        }) else {
            continue;
        };
        if items.is_empty() {
            continue;
        }
        let mut dependents: Vec<&str> = map
            .manifests
            .iter()
            .filter_map(|m| m.name.as_deref().filter(|_| m.has_dep(&pkg.name)))
            .filter(|n| *n != pkg.name)
            .collect();
        dependents.sort_unstable();
        dependents.dedup();
        let items = items.join(" and ");
        return Some(if dependents.is_empty() {
            format!(
                "Public API: {items} in `{path}` is public in the library `{}`; code outside the repository may \
                 call it, so keep it compatible or record the break in the changelog.",
                pkg.name
            )
        } else {
            let more = dependents.len().saturating_sub(4);
            format!(
                "Public API: changing {items} in the library `{}` affects its dependents {}{}; update them in \
                 the same change or keep the old signature working.",
                pkg.name,
                text::backticked(dependents.iter().take(4)),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            )
        });
    }
    None
}

/// Risks that rules fire for this plan, most serious first, padded with
/// sound generic ones to at least three and capped at five.
pub fn risks(
    scanned: &Scanned,
    map: &RepoMap,
    graph: &Graph,
    chosen: &[Chosen],
    intent: &Intent,
    no_match: bool,
    staged: bool,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let changed: Vec<&str> = chosen.iter().map(|c| c.change.path.as_str()).collect();

    let security: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|p| lang::is_security_sensitive(p))
        .collect();
    if !security.is_empty() {
        out.push(format!(
            "Security: {} sit on an authentication, secret or signature path; a mistake can expose data or \
             let unauthenticated calls through, so review them with their owner and add negative tests.",
            paths(&security)
        ));
    }
    let migrations: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|p| lang::is_migration_path(p))
        .collect();
    let has_orm = map
        .frameworks
        .iter()
        .any(|f| matches!(f.category.as_str(), "ORM" | "database" | "migrations"));
    if !migrations.is_empty()
        || (intent.schema_change && (has_orm || !map.migration_dirs.is_empty()))
    {
        out.push(format!(
            "Schema change: {} alter stored data; it must be reversible, tested on a copy of real data, and \
             deployed before code that reads the new shape.",
            if migrations.is_empty() { "the requested change would".to_string() } else { paths(&migrations) }
        ));
    }
    if !intent.new_dependencies.is_empty()
        || changed
            .iter()
            .any(|p| crate::detect::scan::is_manifest_name(lang::file_name(p)))
    {
        out.push(
            "Dependencies: changing a manifest moves the lockfile and the build; check licence, maintenance \
             and transitive size of anything added, and pin versions."
                .to_string(),
        );
    }
    // Public API: library roots, or files other modules import.
    let mut public: Vec<&str> = Vec::new();
    let mut hubs: Vec<(&str, usize)> = Vec::new();
    for p in &changed {
        let Some(i) = scanned.index_of(p) else {
            continue;
        };
        let name = lang::file_name(p);
        let own = map.module_of(p).map(|m| m.path.as_str());
        let foreign = graph.imported_by[i]
            .iter()
            .filter(|&&j| {
                map.module_of(&scanned.files[j].path)
                    .map(|m| m.path.as_str())
                    != own
            })
            .count();
        if matches!(
            name,
            "lib.rs" | "index.ts" | "index.js" | "__init__.py" | "mod.ts"
        ) || foreign > 0
        {
            public.push(p);
        }
        let n = graph.imported_by[i].len();
        if n >= HUB_IMPORTERS {
            hubs.push((p, n));
        }
    }
    if let Some(named) = public_api(scanned, map, chosen) {
        out.push(named);
    } else if !public.is_empty() {
        out.push(format!(
            "Public API: {} expose interfaces other modules use; renamed or re-typed items break callers, so \
             keep old names working or update every caller in the same change.",
            paths(&public)
        ));
    }
    if let Some((p, n)) = hubs.iter().max_by_key(|(p, n)| (*n, std::cmp::Reverse(*p))) {
        out.push(format!(
            "Wide blast radius: `{p}` is imported by {n} files; a behaviour change there ripples through all of \
             them, so run the whole test suite, not just nearby tests."
        ));
    }
    let ci: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|p| lang::ci_system(p).is_some())
        .collect();
    if !ci.is_empty() || intent.touches_ci {
        out.push(format!(
            "CI configuration: editing {} can silently skip or weaken required checks; confirm every required \
             check still runs on the pull request.",
            if ci.is_empty() { "the workflows".to_string() } else { paths(&ci) }
        ));
    }
    let entries: Vec<&str> = changed
        .iter()
        .copied()
        .filter(|p| map.entry_points.iter().any(|e| e.path == *p))
        .collect();
    if !entries.is_empty() {
        out.push(format!(
            "Startup path: {} run on every invocation; argument, configuration or initialisation changes there \
             affect all users at once.",
            paths(&entries)
        ));
    }
    if map.commands_of(RepoCommandKind::Test).is_empty() {
        out.push(
            "No test command was detected: regressions would go unnoticed by CI, so verification relies on review \
             and manual checks."
                .to_string(),
        );
    }
    if no_match {
        out.push(
            "Location guess: no file shares vocabulary with the request, so the proposed files are a starting \
             point, not a diagnosis; confirm them before approving."
                .to_string(),
        );
    }
    if staged {
        out.push(format!(
            "Size: {} files across several areas; land and verify the stages one at a time so each can be \
             reverted on its own.",
            chosen.len()
        ));
    }
    let top = match chosen.first() {
        Some(c) => match c.symbols.first() {
            Some(sym) => format!("`{}` in `{}`", sym.name, c.change.path),
            None => format!("`{}`", c.change.path),
        },
        None => "the changed code".to_string(),
    };
    let generic = [
        format!(
            "Behaviour change: callers and users may rely on what {top} does today; keep it compatible or \
             document the break."
        ),
        "Test gaps: existing tests may not exercise the changed path; write a test that fails before the change \
         so the fix is proven rather than assumed."
            .to_string(),
        "Scope drift: files were chosen by lexical ranking and the import graph; a relevant file with different \
         vocabulary may be missing, so replan if execution needs files outside Proposed Changes."
            .to_string(),
        "Performance: the change may add work on a hot path; compare timings before and after if it runs per \
         request or per file."
            .to_string(),
    ];
    for g in generic {
        if out.len() >= MIN_RISKS {
            break;
        }
        out.push(g);
    }
    out.truncate(MAX_RISKS);
    out
}
