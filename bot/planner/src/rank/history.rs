//! Where the checkout has history, ranking reads it: files changed together with the best candidates, and the files of past commits whose subjects resemble the request.
//!
//! Both signals only reorder and extend what the request's words found: a
//! history boost is a share of the best lexical score, so history never
//! outranks the file the request names, and a repository without history (a
//! depth-1 fetch, an export) plans exactly as before.

use std::collections::{BTreeMap, BTreeSet};

use crate::detect::history::{History, PastCommit};
use crate::rank::RankedFile;
use crate::request::Request;
use crate::text;

/// How many of the best-ranked files co-change is counted for.
const ANCHORS: usize = 3;
/// A file needs this many commits shared with an anchor to count as its partner.
const MIN_TOGETHER: usize = 2;
/// Past commits whose subjects resemble the request, kept.
const SIMILAR: usize = 5;
/// Boosts, as shares of the best score.
const CO_CHANGE_SHARE: f64 = 0.25;
const SUBJECT_SHARE: f64 = 0.3;

/// Past commits whose subjects share the request's rarer words, best first, with
/// their similarity (a sum of inverse subject frequencies).
fn similar<'h>(history: &'h History, request: &Request) -> Vec<(f64, &'h PastCommit)> {
    let wanted: BTreeSet<&str> = request
        .terms
        .iter()
        .map(String::as_str)
        .filter(|t| t.len() >= 3 && !text::is_stopword(t))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let subjects: Vec<BTreeSet<String>> = history
        .commits
        .iter()
        .map(|c| text::terms(&c.subject).into_iter().collect())
        .collect();
    let n = subjects.len().max(1) as f64;
    let idf = |t: &str| {
        let df = subjects.iter().filter(|s| s.contains(t)).count() as f64;
        (n / (df + 1.0)).ln().max(0.0)
    };
    let weights: BTreeMap<&str, f64> = wanted.iter().map(|t| (*t, idf(t))).collect();
    let mut scored: Vec<(f64, &PastCommit)> = history
        .commits
        .iter()
        .zip(&subjects)
        .filter_map(|(c, s)| {
            let shared: Vec<&&str> = wanted.iter().filter(|t| s.contains(**t)).collect();
            // One shared word is chance; two say the commit was about this.
            (shared.len() >= 2).then(|| (shared.iter().map(|t| weights[**t]).sum::<f64>(), c))
        })
        .filter(|(w, _)| *w > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.truncate(SIMILAR);
    scored
}

/// The ranking with history's signals added (see the module docs). Files that only
/// history found join at the end of what the words found, as lexical-0 neighbours.
pub(crate) fn rerank(
    mut ranked: Vec<RankedFile>,
    history: &History,
    request: &Request,
    exists: impl Fn(&str) -> bool,
) -> Vec<RankedFile> {
    let Some(top) = ranked.first().map(|r| r.score).filter(|s| *s > 0.0) else {
        return ranked;
    };
    let mut bonus: BTreeMap<String, (f64, String)> = BTreeMap::new();
    let mut add = |path: &str, share: f64, why: String| {
        let e = bonus
            .entry(path.to_string())
            .or_insert((0.0, String::new()));
        if share > e.0 {
            *e = (share, why);
        }
    };
    // Co-change with the best candidates.
    for anchor in ranked.iter().take(ANCHORS).filter(|r| r.lexical > 0.0) {
        let mut together: BTreeMap<&str, usize> = BTreeMap::new();
        let mut seen = 0usize;
        for c in &history.commits {
            if !c.files.contains(&anchor.path) {
                continue;
            }
            seen += 1;
            for f in c.files.iter().filter(|f| **f != anchor.path) {
                *together.entry(f.as_str()).or_default() += 1;
            }
        }
        for (f, n) in together {
            if n >= MIN_TOGETHER && exists(f) {
                let share = CO_CHANGE_SHARE * n as f64 / seen.max(1) as f64;
                add(
                    f,
                    share,
                    format!(
                        "changed with `{}` in {n} of its {seen} recent commits",
                        anchor.path
                    ),
                );
            }
        }
    }
    // The files of past commits about the same thing.
    let similar = similar(history, request);
    if let Some(best) = similar.first().map(|(w, _)| *w) {
        for (w, c) in &similar {
            for f in c.files.iter().filter(|f| exists(f)) {
                add(
                    f,
                    SUBJECT_SHARE * w / best,
                    format!(
                        "changed by the past commit \u{201c}{}\u{201d}",
                        text::one_line(&c.subject, 60)
                    ),
                );
            }
        }
    }
    // The file the words ranked first stays first: history adds context, it does not
    // move the change's lead.
    let lead = ranked.first().map(|r| r.path.clone());
    let ceiling = top * (1.0 - f64::EPSILON.sqrt());
    for r in ranked.iter_mut() {
        if let Some((share, why)) = bonus.remove(&r.path) {
            r.score += share * top;
            if Some(&r.path) != lead.as_ref() {
                r.score = r.score.min(ceiling);
            }
            r.reasons.push(why);
        }
    }
    for (path, (share, why)) in bonus {
        ranked.push(RankedFile {
            path,
            score: share * top,
            lexical: 0.0,
            matched: Vec::new(),
            reasons: vec![why],
        });
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(path: &str, score: f64) -> RankedFile {
        RankedFile {
            path: path.into(),
            score,
            lexical: score,
            matched: vec!["export".into()],
            reasons: vec!["path matches `export`".into()],
        }
    }

    fn commit(subject: &str, files: &[&str]) -> PastCommit {
        PastCommit {
            subject: subject.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn a_file_changed_with_the_best_candidate_and_one_a_similar_commit_changed_are_lifted() {
        let history = History {
            commits: vec![
                commit("export: csv quoting", &["src/export.rs", "src/format.rs"]),
                commit("export: tab output", &["src/export.rs", "src/format.rs"]),
                commit(
                    "add json output to list command",
                    &["src/list.rs", "src/json.rs"],
                ),
                commit("bump version", &["Cargo.toml"]),
            ],
        };
        let request = Request::parse("add json output to export");
        let out = rerank(
            vec![ranked("src/export.rs", 1.0), ranked("src/other.rs", 0.5)],
            &history,
            &request,
            |_| true,
        );
        let paths: Vec<&str> = out.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths[0], "src/export.rs",
            "history never outranks the words"
        );
        assert!(paths.contains(&"src/format.rs"), "{paths:?}");
        assert!(paths.contains(&"src/json.rs"), "{paths:?}");
        assert!(!paths.contains(&"Cargo.toml"), "{paths:?}");
        let format = out
            .iter()
            .find(|r| r.path == "src/format.rs")
            .expect("lifted");
        assert_eq!(format.lexical, 0.0);
        assert!(
            format.reasons[0].contains("changed with `src/export.rs`"),
            "{:?}",
            format.reasons
        );
    }

    #[test]
    fn no_history_changes_nothing() {
        let request = Request::parse("add json output to export");
        let before = vec![ranked("src/export.rs", 1.0), ranked("src/other.rs", 0.5)];
        let after = rerank(before.clone(), &History::default(), &request, |_| true);
        assert_eq!(after, before);
    }
}
