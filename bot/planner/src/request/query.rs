//! Reading a request: search terms with weights, a conventional-commit type and scope, and what it focuses on.

use crate::text;

const MAX_TERMS: usize = 32;
/// A scope-only term's weight once the scope resolved to a directory (see [`Query::narrow_to_area`]).
const SCOPE_IN_AREA_WEIGHT: f64 = 0.5;

/// The kind of work a request asks for, from a conventional-commit prefix
/// (`fix(parser): …`) or its leading words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Feature,
    Fix,
    Docs,
    Ci,
    Dependencies,
    Tests,
    Chore,
    Release,
    Other,
}

/// A parsed request.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub terms: Vec<String>,
    /// One weight per term: a conventional-commit scope counts more.
    pub weights: Vec<f64>,
    pub kind: Kind,
    /// Documentation is the subject (docs prefix, README, typo, …).
    pub docs: bool,
    pub ci: bool,
    pub tests: bool,
    pub deps: bool,
    /// The module or area a `scope:` prefix names (`axum-extra: …`, `fix(cli): …`).
    pub area: Option<String>,
    /// Per term: it comes only from the scope, not from the request's sentence.
    pub scope_only: Vec<bool>,
    /// Some file lies in `area` (set by [`Query::narrow_to_area`]).
    pub area_resolved: bool,
}

impl Query {
    /// True when the request asks for a behaviour change users would notice,
    /// the kind of change projects record in a changelog.
    pub fn changes_behaviour(&self) -> bool {
        matches!(self.kind, Kind::Feature | Kind::Fix | Kind::Other)
            && !self.docs
            && !self.ci
            && !self.deps
            && !self.tests
    }
}

/// Splits `type(scope)!: subject` into its parts.
fn conventional(request: &str) -> Option<(String, Option<String>, &str)> {
    let line = request.lines().next()?.trim();
    let (head, rest) = line.split_once(':')?;
    let head = head.trim().trim_end_matches('!');
    let (ty, scope) = match head.split_once('(') {
        Some((t, s)) => (t, Some(s.trim_end_matches(')').to_string())),
        None => (head, None),
    };
    if ty.is_empty()
        || ty.len() > 30
        || !ty
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/' | '.'))
    {
        return None;
    }
    Some((ty.to_ascii_lowercase(), scope, rest))
}

pub fn parse(request: &str) -> Query {
    let conv = conventional(request);
    let (ty, scope) = match &conv {
        Some((t, s, _)) => (Some(t.as_str()), s.clone()),
        None => (None, None),
    };
    let area = match &conv {
        Some((t, s, _)) if is_known_type(t) => s.clone().filter(|s| s != "deps"),
        Some((t, _, _)) => Some(t.clone()),
        None => None,
    }
    .map(|a| a.trim().to_ascii_lowercase())
    .filter(|a| !a.is_empty());
    let body = match &conv {
        Some((_, _, rest)) => *rest,
        None => request,
    };
    // The words that scope the request: `(scope)` after a known type, or an
    // area prefix of its own (`globset: …`).
    let scope_words = match &conv {
        Some((t, s, _)) if is_known_type(t) => s.clone(),
        Some((t, _, _)) => Some(t.clone()),
        None => None,
    };
    let words: Vec<String> = request
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map(|w| w.trim_matches('.').to_ascii_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    let has_word = |ws: &[&str]| words.iter().any(|w| ws.contains(&w.as_str()));
    // The sentence's own first word: after a `type(scope):` or `area:` prefix,
    // else the request's first ("Fix typo" is a fix, "axum: add X" a feature).
    let first = body
        .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map(|w| w.trim_matches('.').to_ascii_lowercase())
        .find(|w| !w.is_empty())
        .unwrap_or_default();

    let mut kind = match ty {
        Some("feat" | "feature") => Kind::Feature,
        Some("fix" | "bugfix" | "hotfix" | "perf") => Kind::Fix,
        Some("docs" | "doc") => Kind::Docs,
        Some("ci") => Kind::Ci,
        Some("test" | "tests") => Kind::Tests,
        Some("build" | "chore" | "deps")
            if scope.as_deref() == Some("deps") || ty == Some("deps") =>
        {
            Kind::Dependencies
        }
        Some("chore" | "style" | "refactor" | "build") => Kind::Chore,
        Some("release") => Kind::Release,
        _ => Kind::Other,
    };
    if kind == Kind::Other {
        kind = match first.as_str() {
            "fix" | "fixes" | "fixed" | "correct" | "handle" | "prevent" | "avoid" => Kind::Fix,
            "add" | "adds" | "added" | "implement" | "support" | "introduce" | "allow" => {
                Kind::Feature
            }
            "document" | "docs" | "doc" => Kind::Docs,
            "bump" | "upgrade" | "update"
                if has_word(&["from", "dependencies", "deps", "dependency"]) =>
            {
                Kind::Dependencies
            }
            "release" | "prepare" | "version" => Kind::Release,
            "bump" if has_word(&["version"]) => Kind::Release,
            // A subject that is only a version ("3.2.0", "v14.0.3") cuts that release.
            v if is_version(v) && words.len() == 1 => Kind::Release,
            _ => Kind::Other,
        };
    }
    let docs = kind == Kind::Docs
        || has_word(&[
            "readme",
            "readme.md",
            "docs",
            "documentation",
            "document",
            "documented",
            "typo",
            "typos",
            "docstring",
            "docstrings",
            "changelog",
            "tutorial",
            "guide",
            "wording",
            "spelling",
        ]);
    let ci = kind == Kind::Ci
        || has_word(&[
            "ci",
            "workflow",
            "workflows",
            "github-actions",
            "pipeline",
            "pre-commit",
        ]);
    let tests =
        kind == Kind::Tests || has_word(&["test", "tests", "testing", "spec", "specs", "testcase"]);
    let deps = kind == Kind::Dependencies
        || has_word(&["dependencies", "dependency", "deps", "bump", "upgrade"]);

    let mut terms: Vec<String> = Vec::new();
    let mut weights: Vec<f64> = Vec::new();
    let push = |t: &str, w: f64, terms: &mut Vec<String>, weights: &mut Vec<f64>| {
        if let Some(i) = terms.iter().position(|x| x == t) {
            weights[i] = weights[i].max(w);
        } else if terms.len() < MAX_TERMS {
            terms.push(t.to_string());
            weights.push(w);
        }
    };
    if let Some(scope) = &scope_words {
        for t in text::terms(scope) {
            if !text::is_stopword(&t) && t != "dep" && t != "deps" {
                push(&t, 1.5, &mut terms, &mut weights);
            }
        }
    }
    let scoped = terms.len();
    let all = text::terms(body);
    for t in &all {
        // Version numbers and hex ids say nothing about location.
        let hex_id = t.chars().all(|c| c.is_ascii_hexdigit())
            && (t.len() >= 12 || t.chars().any(|c| c.is_ascii_digit()));
        if !text::is_stopword(t) && !hex_id {
            push(t, 1.0, &mut terms, &mut weights);
        }
    }
    if terms.is_empty() {
        for t in all {
            push(&t, 1.0, &mut terms, &mut weights);
        }
    }
    let body_terms: Vec<String> = text::terms(body);
    let scope_only = terms
        .iter()
        .enumerate()
        .map(|(i, t)| i < scoped && !body_terms.contains(t))
        .collect();
    Query {
        scope_only,
        area_resolved: false,
        terms,
        weights,
        kind,
        docs,
        ci,
        tests,
        deps,
        area,
    }
}

impl Query {
    /// When the scope names a directory or package that exists, it narrows
    /// the ranking (see `rank::prior`) more than it matches as a word: at full
    /// weight a scope-only term matches every file under that directory by
    /// path and floods the plan with them. It keeps a small weight, since a
    /// short request (`pkg/brew: update tap`) may have little else to go by.
    pub fn narrow_to_area<'a>(&mut self, mut paths: impl Iterator<Item = &'a str>) {
        self.area_resolved =
            self.area.is_some() && paths.any(|p| self.in_area(&p.to_ascii_lowercase()));
        if !self.area_resolved {
            return;
        }
        for (w, &scope_only) in self.weights.iter_mut().zip(&self.scope_only) {
            if scope_only {
                *w = SCOPE_IN_AREA_WEIGHT;
            }
        }
    }

    /// True when `path` lies in the area the request's prefix names: a
    /// directory or file called like it, or a package suffixed with it
    /// (`macros` matches `axum-macros/`).
    pub fn in_area(&self, lower_path: &str) -> bool {
        let Some(area) = &self.area else { return false };
        if area.contains('/') {
            return lower_path.starts_with(area.as_str())
                || lower_path.contains(&format!("/{area}"));
        }
        let parts: Vec<&str> = lower_path.split('/').collect();
        let last = parts.len() - 1;
        parts.iter().enumerate().any(|(i, c)| {
            let c = if i == last {
                c.split('.').next().unwrap_or(c)
            } else {
                c
            };
            c == area || c.ends_with(&format!("-{area}")) || c.ends_with(&format!("_{area}"))
        })
    }
}

fn is_version(w: &str) -> bool {
    let w = w.strip_prefix('v').unwrap_or(w);
    let parts: Vec<&str> = w.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn is_known_type(t: &str) -> bool {
    matches!(
        t,
        "feat"
            | "feature"
            | "fix"
            | "bugfix"
            | "hotfix"
            | "perf"
            | "docs"
            | "doc"
            | "ci"
            | "test"
            | "tests"
            | "build"
            | "chore"
            | "style"
            | "refactor"
            | "release"
            | "deps"
            | "revert"
    )
}
