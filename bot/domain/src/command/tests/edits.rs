//! Edited comments run only what is new; bot comments never run anything.

use super::step;
use crate::command::{is_bot_author, new_commands, Command, CommandError};

fn new_results(old: &str, new: &str) -> Vec<Result<Command, CommandError>> {
    new_commands(old, new)
        .into_iter()
        .map(|p| p.result)
        .collect()
}

#[test]
fn edited_comment_runs_only_new_commands() {
    assert_eq!(
        new_results("/approve", "/approve\n/done S1"),
        vec![Ok(Command::Done {
            step: step("S1"),
            evidence: None
        })]
    );
}

#[test]
fn edit_of_prose_around_commands_runs_nothing() {
    assert!(new_results("Thanks!\n/approve", "Thanks a lot!\n\n/approve\n").is_empty());
}

#[test]
fn edit_that_only_changes_case_or_spacing_runs_nothing() {
    assert!(new_results("/approve", "  /Approve  ").is_empty());
}

#[test]
fn repeated_command_added_by_an_edit_runs_once_more() {
    assert_eq!(
        new_results("/retry S1", "/retry S1\n/retry S1"),
        vec![Ok(Command::Retry { step: step("S1") })]
    );
}

#[test]
fn fixed_typo_runs_the_corrected_command() {
    assert_eq!(
        new_results("/aprove", "/approve"),
        vec![Ok(Command::Approve)]
    );
}

#[test]
fn old_error_is_not_reported_again() {
    assert!(new_results("/done", "/done\nsorry").is_empty());
}

#[test]
fn changed_plan_block_is_a_new_plan_edit() {
    let old = "/plan edit\n```markdown\n# A\n```";
    let new = "/plan edit\n```markdown\n# B\n```";
    assert_eq!(
        new_results(old, new),
        vec![Ok(Command::PlanEdit {
            plan: "# B\n".into()
        })]
    );
}

#[test]
fn command_moved_into_a_code_block_by_an_edit_runs_nothing() {
    assert!(new_results("/approve", "```\n/approve\n```").is_empty());
}

#[test]
fn removed_commands_are_not_reported() {
    assert!(new_results("/approve\n/status", "/status").is_empty());
}

#[test]
fn bot_type_is_a_bot() {
    assert!(is_bot_author("renovate", "Bot", "navin"));
}

#[test]
fn bot_suffix_is_a_bot() {
    assert!(is_bot_author("dependabot[bot]", "User", "navin"));
}

#[test]
fn the_app_itself_is_a_bot() {
    assert!(is_bot_author("navin[bot]", "Bot", "navin"));
    assert!(is_bot_author("Navin[bot]", "", "navin"));
}

#[test]
fn people_are_not_bots() {
    assert!(!is_bot_author("octocat", "User", "navin"));
    assert!(!is_bot_author("navin", "User", "navin"));
    assert!(!is_bot_author("robot", "Organization", ""));
}
