//! What the request implies beyond file edits: new dependencies, schema migrations, CI changes.

use crate::detect::map::{RepoMap, FRAMEWORKS};
use crate::request::{Kind, Request};
use crate::text;

/// The parts of a request that trigger special proposed changes and risks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Intent {
    /// Packages the request names that no manifest declares yet.
    pub new_dependencies: Vec<String>,
    /// The request talks about dependencies (add, bump, replace a package).
    pub touches_dependencies: bool,
    /// The request implies a schema change.
    pub schema_change: bool,
    /// The request is about CI configuration.
    pub touches_ci: bool,
    /// Declared dependencies the request names (a bump or replacement).
    pub bumped: Vec<String>,
    /// The request is only about dependencies (`build(deps): bump x`).
    pub dependency_only: bool,
    /// The request changes behaviour users notice (a changelog entry is due).
    pub changes_behaviour: bool,
    /// The request cuts a release (version bump, changelog).
    pub release: bool,
}

const PACKAGE_NOUNS: &[&str] = &[
    "crate",
    "library",
    "lib",
    "package",
    "dependency",
    "gem",
    "module",
    "plugin",
];

pub fn analyze(request: &Request, map: &RepoMap) -> Intent {
    let words = &request.package_words;
    let q = &request.query;
    let terms = &request.terms;
    let has = |t: &str| terms.iter().any(|x| x == t);
    let declared = |name: &str| map.manifests.iter().any(|m| m.has_dep(name));

    let mut candidates: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let next_is_noun = words
            .get(i + 1)
            .is_some_and(|n| PACKAGE_NOUNS.contains(&n.trim_end_matches('s')));
        let prev_is_noun = i > 0 && PACKAGE_NOUNS.contains(&words[i - 1].as_str());
        let prev_is_verb = i > 0
            && matches!(
                words[i - 1].as_str(),
                "add" | "adopt" | "introduce" | "install"
            );
        let plausible = w.len() >= 2
            && !text::is_stopword(w)
            && !PACKAGE_NOUNS.contains(&w.as_str())
            && !matches!(
                w.as_str(),
                "a" | "the" | "new" | "our" | "this" | "that" | "external" | "third-party"
            );
        // A module the request creates is the repository's own, not a package.
        let own = request
            .new
            .modules
            .iter()
            .any(|m| m.eq_ignore_ascii_case(w));
        if plausible && !own && (next_is_noun || (prev_is_noun && prev_is_verb)) {
            candidates.push(w.clone());
        }
        if FRAMEWORKS.iter().any(|(dep, _, _)| dep == w)
            && !matches!(
                w.as_str(),
                "next"
                    | "click"
                    | "react"
                    | "express"
                    | "rocket"
                    | "warp"
                    | "koa"
                    | "rails"
                    | "phoenix"
                    | "flutter"
                    | "torch"
            )
        {
            candidates.push(w.clone());
        }
    }
    let mut new_dependencies: Vec<String> = Vec::new();
    for c in candidates {
        if !declared(&c) && !new_dependencies.contains(&c) {
            new_dependencies.push(c);
        }
    }
    let touches_dependencies = !new_dependencies.is_empty()
        || q.deps
        || words
            .iter()
            .any(|w| matches!(w.as_str(), "crate" | "npm" | "pip" | "library"));
    let mut bumped: Vec<String> = Vec::new();
    if touches_dependencies {
        for w in words {
            if w.len() >= 2 && !text::is_stopword(w) && declared(w) && !bumped.contains(w) {
                bumped.push(w.clone());
            }
        }
    }
    let dependency_only = q.kind == Kind::Dependencies
        || (!bumped.is_empty()
            && words
                .first()
                .is_some_and(|w| matches!(w.as_str(), "bump" | "upgrade" | "update")));
    let schema_change = ["migration", "schema", "column", "databas", "tabl"]
        .iter()
        .any(|t| has(t))
        || words
            .iter()
            .any(|w| matches!(w.as_str(), "migrations" | "columns" | "tables" | "sql"));
    Intent {
        new_dependencies,
        touches_dependencies,
        schema_change,
        touches_ci: q.ci,
        bumped,
        dependency_only,
        changes_behaviour: q.changes_behaviour(),
        release: q.kind == Kind::Release,
    }
}
