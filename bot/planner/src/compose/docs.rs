//! The documentation a user-facing change must keep true: the README or docs page that already describes the changed definitions, and a JavaScript file's type declarations.
//!
//! A page is proposed only when it already documents the code being changed
//! (it names several of the edited files' definitions, or the flag or
//! identifier the request names) and shares the request's words: a project
//! that documents every option in its README updates it with each new one,
//! while a request that adds nothing a user sees leaves the docs alone.

use std::collections::BTreeSet;

use navin_ledger::plan::Operation;

use crate::compose::chosen::{Chosen, Inputs};
use crate::detect::symbols::definitions;
use crate::lang;
use crate::request::{Kind, Request};
use crate::text;

/// Pages proposed at most, so docs never crowd out code.
const MAX_PAGES: usize = 1;
/// A page names at least this many of the edited files' definitions to count as their docs.
const MIN_DEFINITIONS_NAMED: usize = 3;
/// Definitions shorter than this (`a`, `id`, `run`) say nothing when a page mentions them.
const MIN_NAME_LEN: usize = 4;

/// Words that mark a request as changing what users call or configure.
const SURFACE_WORDS: &[&str] = &[
    "option",
    "flag",
    "argument",
    "parameter",
    "setting",
    "config",
    "export",
    "method",
    "function",
    "command",
    "subcommand",
    "variable",
];

/// True when the request adds something users call, pass or configure: a new
/// feature that names a flag or the kind of thing a reference page lists.
fn user_facing(request: &Request) -> bool {
    let q = &request.query;
    if q.kind != Kind::Feature || q.docs || q.ci || q.deps || q.tests {
        return false;
    }
    let terms = &request.terms;
    !request.flags.is_empty()
        || SURFACE_WORDS
            .iter()
            .any(|w| terms.iter().any(|t| t == text::stem(w)))
}

/// A page a reader looks up: Markdown, reStructuredText or AsciiDoc, not a changelog,
/// licence or a test fixture.
fn is_page(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lang::file_name(&lower);
    matches!(
        lang::extension(name).as_deref(),
        Some("md" | "markdown" | "rst" | "adoc")
    ) && !name.starts_with("changelog")
        && !name.starts_with("changes")
        && !name.starts_with("history")
        && !name.starts_with("license")
        && !name.starts_with("contributing")
        && !name.starts_with("security")
        && !name.starts_with("code_of_conduct")
        && !lang::is_test_path(path)
        && !name.starts_with("migrat")
        && !lower.split('/').any(|c| {
            c == ".github"
                || c.starts_with("fixture")
                || (c.len() <= 4
                    && c.starts_with('v')
                    && c[1..].starts_with(|d: char| d.is_ascii_digit()))
        })
}

/// Adds the pages and type declarations that describe the edited code.
pub fn doc_changes(cx: &Inputs, out: &mut Vec<Chosen>) {
    if !user_facing(cx.request) {
        return;
    }
    let sources: Vec<String> = out
        .iter()
        .filter(|c| {
            c.change.operation != Operation::Delete
                && !lang::is_test_path(&c.change.path)
                && lang::language_of(&c.change.path).is_some_and(lang::is_code_language)
        })
        .map(|c| c.change.path.clone())
        .collect();
    if sources.is_empty() {
        return;
    }
    declarations(cx, out, &sources);
    pages(cx, out, &sources);
}

/// `index.js` changed and `index.d.ts` sits beside it: its types change with it.
fn declarations(cx: &Inputs, out: &mut Vec<Chosen>, sources: &[String]) {
    for source in sources {
        let Some(base) = [".js", ".mjs", ".cjs"]
            .iter()
            .find_map(|ext| source.strip_suffix(ext))
        else {
            continue;
        };
        let dts = format!("{base}.d.ts");
        if !cx.scanned.exists(&dts) || out.iter().any(|c| c.change.path == dts) {
            continue;
        }
        let at = out
            .iter()
            .position(|c| &c.change.path == source)
            .map_or(out.len(), |i| i + 1);
        out.insert(
            at,
            Chosen {
                change: navin_ledger::plan::FileChange {
                    path: dts.clone(),
                    operation: Operation::Edit,
                    change: format!("Declare the types of what changes in `{source}`."),
                    rationale: format!(
                        "`{dts}` declares the types of `{source}`, so users see the change only once it is typed there."
                    ),
                    optional: false,
                },
                rank: None,
                symbols: Vec::new(),
            },
        );
    }
}

/// The pages that document the edited definitions and share the request's words.
fn pages(cx: &Inputs, out: &mut Vec<Chosen>, sources: &[String]) {
    // The edited files' definitions, and what the request spells out itself.
    let mut names: BTreeSet<String> = BTreeSet::new();
    for source in sources {
        let i = cx.scanned.index_of(source);
        let body = i
            .and_then(|i| cx.scanned.files[i].text.as_deref())
            .unwrap_or_default();
        for sym in definitions(source, body) {
            let name = sym.name.trim_start_matches('-').to_string();
            if name.len() >= MIN_NAME_LEN && !text::is_stopword(&name.to_ascii_lowercase()) {
                names.insert(name);
            }
        }
    }
    let spelled = &cx.request.names;
    let flags: Vec<&str> = cx
        .request
        .flags
        .iter()
        .map(String::as_str)
        .filter(|w| w.len() > 3)
        .collect();
    let request_terms: BTreeSet<String> = cx
        .request
        .terms
        .iter()
        .filter(|t| t.len() >= 3 && !text::is_stopword(t))
        .cloned()
        .collect();
    let mut scored: Vec<(usize, usize, String)> = Vec::new();
    for f in &cx.scanned.files {
        if !is_page(&f.path) || out.iter().any(|c| c.change.path == f.path) {
            continue;
        }
        let Some(body) = f.text.as_deref() else {
            continue;
        };
        let documented = names.iter().filter(|n| mentions(body, n)).count();
        let spelled_out =
            spelled.iter().any(|n| mentions(body, n)) || flags.iter().any(|fl| body.contains(fl));
        if documented < MIN_DEFINITIONS_NAMED && !spelled_out {
            continue;
        }
        let mut shared = BTreeSet::new();
        text::for_each_term(body, |t| {
            if request_terms.contains(t) {
                shared.insert(t.to_string());
            }
        });
        if shared.is_empty() {
            continue;
        }
        scored.push((
            shared.len() + usize::from(spelled_out) * 2,
            documented,
            f.path.clone(),
        ));
    }
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    for (_, documented, path) in scored.into_iter().take(MAX_PAGES) {
        out.push(Chosen {
            change: navin_ledger::plan::FileChange {
                path: path.clone(),
                operation: Operation::Edit,
                change: "Document the changed behaviour where the neighbouring options are described."
                    .to_string(),
                rationale: format!(
                    "`{path}` already documents {documented} definitions of the edited files, so it describes this behaviour to users."
                ),
                // Pages describing the change may need it; the code is the step.
                optional: true,
            },
            rank: None,
            symbols: Vec::new(),
        });
    }
}

/// `name` appears in `body` as a whole word.
fn mentions(body: &str, name: &str) -> bool {
    let mut rest = body;
    while let Some(at) = rest.find(name) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + name.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if edge(before) && edge(after) {
            return true;
        }
        rest = &rest[at + name.len()..];
    }
    false
}
