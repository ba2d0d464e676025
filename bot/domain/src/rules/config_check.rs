//! The `navin/config` check's verdict: whether a pull request changes `.github/navin.yml`, and what Navin's own parser says about the file at its head.
//!
//! The App reads the file from the default branch only, so a broken edit would go
//! unnoticed until it is merged and every command is refused. This check shows the
//! problem on the pull request instead, at the offending line.

use navin_ledger::plan::policy::{ChangedFile, FileStatus};

use crate::check::{CheckAnnotation, CheckState, PlanCheck};
use crate::config::CONFIG_PATH;
use crate::config::{parse_repo_config, RepoConfigError};

/// The check's name; branch protection can require it.
pub const CHECK_NAME: &str = "navin/config";

/// How a pull request touches `.github/navin.yml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigChange {
    /// Added or edited (or renamed into place): the head has a file to check.
    Changed,
    /// Removed (or renamed away): once merged, every key takes its default.
    Removed,
}

/// Whether `files` (the pull request's files list) touch `.github/navin.yml`; `None`
/// for a pull request that leaves it alone, which gets no `navin/config` check.
pub fn config_change(files: &[ChangedFile]) -> Option<ConfigChange> {
    let mut change = None;
    for file in files {
        if file.path == CONFIG_PATH {
            return Some(match file.status {
                FileStatus::Removed => ConfigChange::Removed,
                _ => ConfigChange::Changed,
            });
        }
        if file.previous_path.as_deref() == Some(CONFIG_PATH) {
            change = Some(ConfigChange::Removed);
        }
    }
    change
}

/// What the file at the head holds: its text, or why it cannot be read as text
/// (absent, a directory, over the contents API's 1 MB, not UTF-8).
pub type HeadFile<'a> = Result<&'a str, &'a str>;

/// The check for a pull request that touches the file. `default_branch` is where the
/// App reads its configuration from, named in the summary.
pub fn config_check(
    change: ConfigChange,
    head: HeadFile<'_>,
    head_sha: &str,
    default_branch: &str,
) -> PlanCheck {
    let at: String = head_sha.chars().take(7).collect();
    let applies = format!(
        "Navin reads its configuration from the default branch (`{default_branch}`), so the file there still applies until this pull request is merged."
    );
    let text = match (change, head) {
        (ConfigChange::Removed, _) => {
            return PlanCheck {
                verdict: CheckState::Approved,
                title: format!("{CONFIG_PATH} removed"),
                summary: format!(
                    "This pull request removes `{CONFIG_PATH}` at {at}: once merged, every key takes its default (docs/config.md). {applies}"
                ),
                annotations: Vec::new(),
                actions: Vec::new(),
            }
        }
        (ConfigChange::Changed, Err(unreadable)) => {
            return broken(&at, unreadable, None, default_branch);
        }
        (ConfigChange::Changed, Ok(text)) => text,
    };
    match parse_repo_config(text) {
        Ok(_) => PlanCheck {
            verdict: CheckState::Approved,
            title: format!("{CONFIG_PATH} is valid"),
            summary: format!(
                "`{CONFIG_PATH}` at {at} is valid: Navin's parser accepts every key. {applies}"
            ),
            annotations: Vec::new(),
            actions: Vec::new(),
        },
        Err(e) => {
            let line = e
                .line
                .or_else(|| e.key.as_deref().and_then(|k| key_line(text, k)));
            broken(&at, &problem(&e), Some(line.unwrap_or(1)), default_branch)
        }
    }
}

/// The parser's error without the file name: the key, then what is wrong (and where,
/// when YAML said).
fn problem(e: &RepoConfigError) -> String {
    let full = e.in_file(CONFIG_PATH);
    full.strip_prefix(CONFIG_PATH)
        .map(|rest| rest.trim_start_matches([' ', ':']).to_owned())
        .unwrap_or(full)
}

fn broken(at: &str, problem: &str, line: Option<usize>, default_branch: &str) -> PlanCheck {
    PlanCheck {
        verdict: CheckState::Broken,
        title: format!("{CONFIG_PATH} is not valid"),
        summary: format!(
            "`{CONFIG_PATH}` at {at} is not valid: {problem}.\n\nThe file on the default branch (`{default_branch}`) still applies until this is fixed: nothing of this version would be used once merged, and every command would be refused until the file is fixed. Fix it and push again; `navin config validate` runs the same parser locally."
        ),
        annotations: line
            .map(|line| CheckAnnotation {
                path: CONFIG_PATH.to_owned(),
                line,
                level: "failure",
                title: "Not a valid Navin configuration".to_owned(),
                message: format!("{problem}. See docs/config.md for every key."),
            })
            .into_iter()
            .collect(),
        actions: Vec::new(),
    }
}

/// The line of a dotted `key` (`approval.required_approvals`) in `text`, for errors
/// the parser names by key alone (a value out of range): each segment is looked for
/// below the previous one, indented deeper. List indexes (`[2]`) are skipped.
pub fn key_line(text: &str, key: &str) -> Option<usize> {
    let segments = key
        .split('.')
        .map(|s| s.split('[').next().unwrap_or(s))
        .filter(|s| !s.is_empty());
    let lines: Vec<&str> = text.lines().collect();
    let (mut from, mut indent, mut found) = (0, None::<usize>, None);
    for segment in segments {
        let hit = lines.iter().enumerate().skip(from).find(|(_, line)| {
            let body = line.trim_start();
            let depth = line.len() - body.len();
            let deeper = indent.is_none_or(|i| depth > i);
            deeper
                && body
                    .strip_prefix(segment)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })?;
        let (index, line) = hit;
        indent = Some(line.len() - line.trim_start().len());
        from = index + 1;
        found = Some(index + 1);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(path: &str, status: FileStatus, previous: Option<&str>) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            status,
            previous_path: previous.map(str::to_owned),
            additions: 0,
            deletions: 0,
        }
    }

    #[test]
    fn only_a_pull_request_that_touches_the_file_gets_a_check() {
        let code = changed("src/lib.rs", FileStatus::Modified, None);
        assert_eq!(config_change(std::slice::from_ref(&code)), None);
        let edit = changed(CONFIG_PATH, FileStatus::Modified, None);
        assert_eq!(
            config_change(&[code.clone(), edit]),
            Some(ConfigChange::Changed)
        );
        let gone = changed(CONFIG_PATH, FileStatus::Removed, None);
        assert_eq!(config_change(&[gone]), Some(ConfigChange::Removed));
        let moved = changed(".github/old.yml", FileStatus::Renamed, Some(CONFIG_PATH));
        assert_eq!(config_change(&[moved]), Some(ConfigChange::Removed));
        let into = changed(CONFIG_PATH, FileStatus::Renamed, Some(".github/x.yml"));
        assert_eq!(config_change(&[into]), Some(ConfigChange::Changed));
    }

    #[test]
    fn a_valid_file_passes_and_says_the_default_branch_still_applies() {
        let check = config_check(
            ConfigChange::Changed,
            Ok("approval:\n  required_approvals: 2\n"),
            "0123456789",
            "main",
        );
        assert_eq!(check.conclusion(), "success");
        assert!(
            check.summary.contains("at 0123456 is valid"),
            "{}",
            check.summary
        );
        assert!(check.annotations.is_empty());
    }

    #[test]
    fn an_unknown_key_fails_with_an_annotation_at_its_line_naming_the_key() {
        let text = "approval:\n  required_approvals: 2\nevidence:\n  trusted_app: [1]\n";
        let check = config_check(ConfigChange::Changed, Ok(text), "abcdef0123", "trunk");
        assert_eq!(check.conclusion(), "failure");
        let mark = &check.annotations[0];
        assert_eq!(
            (mark.path.as_str(), mark.line, mark.level),
            (CONFIG_PATH, 4, "failure")
        );
        assert!(
            mark.message.contains("`evidence.trusted_app`"),
            "{}",
            mark.message
        );
        assert!(mark.message.contains("unknown field"), "{}", mark.message);
        assert!(
            check
                .summary
                .contains("default branch (`trunk`) still applies until this is fixed"),
            "{}",
            check.summary
        );
    }

    #[test]
    fn a_value_out_of_range_is_marked_at_its_key() {
        let text =
            "# settings\napproval:\n  allow_author_approval: true\n  required_approvals: 0\n";
        let check = config_check(ConfigChange::Changed, Ok(text), "abc", "main");
        assert_eq!(check.conclusion(), "failure");
        assert_eq!(check.annotations[0].line, 4, "{:?}", check.annotations);
        assert!(check.annotations[0]
            .message
            .contains("approval.required_approvals"));
    }

    #[test]
    fn an_unreadable_or_removed_file_is_told_apart() {
        let unreadable = config_check(ConfigChange::Changed, Err("not UTF-8"), "abc", "main");
        assert_eq!(unreadable.conclusion(), "failure");
        assert!(unreadable.summary.contains("not UTF-8"));
        assert!(unreadable.annotations.is_empty());
        let removed = config_check(ConfigChange::Removed, Err("absent"), "abc", "main");
        assert_eq!(removed.conclusion(), "success");
        assert!(removed.summary.contains("default"), "{}", removed.summary);
    }

    #[test]
    fn key_lines_follow_the_indentation() {
        let text = "limits:\n  max_text_bytes: 1\napproval:\n  required_approvals: 0\n";
        assert_eq!(key_line(text, "approval.required_approvals"), Some(4));
        assert_eq!(key_line(text, "limits"), Some(1));
        assert_eq!(key_line(text, "approval.nothing"), None);
    }
}
