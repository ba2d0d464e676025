//! The intent classifier behind `plan_mode.auto_threshold`: how non-trivial a request reads, from its text alone, deterministically.
//!
//! Points add up from signals a reviewer would look for before letting work
//! start without a plan: files it names, a dependency or schema change, a
//! deletion, breadth (refactors, renames, "every"), and length. The same text
//! always scores the same; the threshold is the repository's choice.

/// One signal and what it adds.
const SIGNALS: &[(&str, u32, &[&str])] = &[
    (
        "schema or data migration",
        3,
        &[
            "migration",
            "migrate the",
            "schema",
            "database",
            "column",
            "table",
        ],
    ),
    (
        "dependency change",
        2,
        &["dependency", "dependencies", "upgrade", "bump ", "replace "],
    ),
    (
        "deletion",
        2,
        &["remove ", "delete ", "drop ", "deprecate", "get rid of"],
    ),
    (
        "broad change",
        2,
        &[
            "refactor",
            "rename",
            "rewrite",
            "across",
            "every ",
            "all the ",
            "architecture",
        ],
    ),
    (
        "security-sensitive",
        2,
        &["auth", "token", "secret", "permission", "password"],
    ),
];

/// A request's score and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Score {
    pub points: u32,
    pub signals: Vec<String>,
}

/// Scores `text` (a title and body).
pub fn score(text: &str) -> Score {
    let lower = text.to_lowercase();
    let mut points = 0;
    let mut signals = Vec::new();
    for (name, add, words) in SIGNALS {
        if words.iter().any(|w| lower.contains(w)) {
            points += add;
            signals.push((*name).to_owned());
        }
    }
    // Paths it names (`src/a.rs`, `docs/x.md`): each two beyond the first add one, up to 3.
    let paths = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| "`'\"(),.:;".contains(c)))
        .filter(|w| w.contains('/') && !w.starts_with("http") && w.len() > 2)
        .count() as u32;
    if paths > 1 {
        let add = ((paths - 1).div_ceil(2)).min(3);
        points += add;
        signals.push(format!("names {paths} paths"));
    }
    let words = text.split_whitespace().count();
    if words > 150 {
        points += 2;
        signals.push(format!("{words} words"));
    } else if words > 60 {
        points += 1;
        signals.push(format!("{words} words"));
    }
    Score { points, signals }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_fix_scores_nothing_and_a_schema_migration_with_a_rename_scores_high() {
        assert_eq!(score("Fix a typo in the README").points, 0);
        let s = score("Rename the users table column `name` to `full_name` and migrate the data in db/migrate/ and src/models/user.rs");
        assert!(s.points >= 5, "{s:?}");
        assert!(s.signals.iter().any(|x| x == "schema or data migration"));
        assert!(s.signals.iter().any(|x| x == "broad change"));
        assert_eq!(s, score("Rename the users table column `name` to `full_name` and migrate the data in db/migrate/ and src/models/user.rs"), "deterministic");
    }

    #[test]
    fn named_paths_and_length_add_up_in_steps() {
        let one = score("Tweak src/a.rs");
        assert_eq!(one.points, 0);
        let five = score("Touch src/a.rs src/b.rs src/c.rs src/d.rs src/e.rs");
        assert_eq!(five.points, 2, "{five:?}");
        let long = "word ".repeat(200);
        assert_eq!(score(&long).points, 2);
    }
}
