//! The plan-file convention: which files of a pull request carry its plan, and which of them present themselves as one.

use navin_ledger::plan::policy::{ChangedFile, FileStatus};

/// Whether `path` follows the plan-file convention: a `.md` file named `*.plan.md` or
/// lying under a directory called `plans` at any depth (case-insensitive).
pub fn is_plan_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if !lower.ends_with(".md") {
        return false;
    }
    if lower.ends_with(".plan.md") {
        return true;
    }
    let mut parts: Vec<&str> = lower.split('/').collect();
    parts.pop();
    parts.contains(&"plans")
}

/// The pull request's plan file: the first changed file, in the files list's order, that
/// follows the convention. A removed file carries no plan.
pub fn plan_file_of(files: &[ChangedFile]) -> Option<&str> {
    plan_file_candidates(files).next()
}

/// Every changed (not removed) file whose path makes it a plan candidate, in list order.
pub fn plan_file_candidates(files: &[ChangedFile]) -> impl Iterator<Item = &str> {
    files
        .iter()
        .filter(|f| f.status != FileStatus::Removed)
        .map(|f| f.path.as_str())
        .filter(|p| is_plan_path(p))
}

/// Whether a markdown file presents itself as a plan: its first non-blank line is the
/// `# Plan: …` title every plan document starts with.
pub fn looks_like_plan(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| {
            l.get(..7)
                .is_some_and(|head| head.eq_ignore_ascii_case("# plan:"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(path: &str, status: FileStatus) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            status,
            previous_path: None,
            additions: 0,
            deletions: 0,
        }
    }

    #[test]
    fn plan_files_are_plan_md_names_or_markdown_under_a_plans_directory() {
        assert!(is_plan_path("docs/plans/greeting.plan.md"));
        assert!(is_plan_path("greeting.plan.md"));
        assert!(is_plan_path("docs/plans/greeting.md"));
        assert!(is_plan_path("plans/a/b/deep.md"));
        assert!(is_plan_path("Docs/Plans/Greeting.MD"));
        assert!(!is_plan_path("plans.md"));
        assert!(!is_plan_path("docs/plans/notes.txt"));
        assert!(!is_plan_path("docs/myplans/greeting.md"));
        assert!(!is_plan_path("README.md"));
    }

    #[test]
    fn the_first_plan_file_that_is_not_removed_is_the_plan() {
        let files = vec![
            changed("src/greet.rs", FileStatus::Modified),
            changed("plans/old.md", FileStatus::Removed),
            changed("docs/plans/greeting.plan.md", FileStatus::Added),
            changed("plans/second.md", FileStatus::Modified),
        ];
        assert_eq!(plan_file_of(&files), Some("docs/plans/greeting.plan.md"));
        assert_eq!(plan_file_of(&files[..2]), None);
    }

    #[test]
    fn only_a_file_titled_as_a_plan_is_taken_for_one() {
        assert!(looks_like_plan("\u{feff}\n# Plan: Configurable greeting\n"));
        assert!(looks_like_plan("  # PLAN: x"));
        assert!(!looks_like_plan("# Release plans for 2027\n"));
        assert!(!looks_like_plan("Notes\n# Plan: later\n"));
        assert!(!looks_like_plan(""));
    }
}
