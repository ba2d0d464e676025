//! Unknown commands and the wording of refusals.

use super::{one, results};
use crate::command::CommandError;

#[test]
fn unknown_command_suggests_nearest() {
    assert_eq!(
        one("/aprove"),
        Err(CommandError::UnknownCommand {
            name: "aprove".into(),
            did_you_mean: Some("approve")
        })
    );
    assert_eq!(
        one("/stats"),
        Err(CommandError::UnknownCommand {
            name: "stats".into(),
            did_you_mean: Some("status")
        })
    );
}

#[test]
fn transposed_letters_count_as_one_typo() {
    assert!(matches!(
        one("/apporve"),
        Err(CommandError::UnknownCommand {
            did_you_mean: Some("approve"),
            ..
        })
    ));
    assert!(matches!(
        one("/retyr S1"),
        Err(CommandError::UnknownCommand {
            did_you_mean: Some("retry"),
            ..
        })
    ));
}

#[test]
fn trailing_punctuation_is_a_typo_not_silence() {
    assert_eq!(
        one("/approve!"),
        Err(CommandError::UnknownCommand {
            name: "approve!".into(),
            did_you_mean: Some("approve")
        })
    );
}

#[test]
fn subcommand_alone_points_to_its_command() {
    assert!(matches!(
        one("/close"),
        Err(CommandError::UnknownCommand {
            did_you_mean: Some("mission close"),
            ..
        })
    ));
    assert!(matches!(
        one("/edit"),
        Err(CommandError::UnknownCommand {
            did_you_mean: Some("plan edit"),
            ..
        })
    ));
}

#[test]
fn words_far_from_any_command_are_not_errors() {
    assert!(results("/shrug\n/giphy cat\n/lgtm\n/assign @me\n/foo-bar").is_empty());
}

#[test]
fn unknown_command_message_names_the_nearest_command() {
    let err = one("/aprove").expect_err("typo");
    assert_eq!(
        err.to_string(),
        "Unknown command `/aprove`. Did you mean `/approve`? `/help` lists every command."
    );
}

#[test]
fn missing_argument_message_shows_the_usage() {
    let err = one("/done").expect_err("no step");
    assert_eq!(
        err.to_string(),
        "`/done` needs a step id: type `/done <step> [evidence]`."
    );
}

#[test]
fn plan_message_shows_both_plan_forms() {
    let err = one("/plan").expect_err("no request");
    let text = err.to_string();
    assert!(text.contains("/plan <request>"), "{text}");
    assert!(text.contains("/plan edit"), "{text}");
}

#[test]
fn plan_edit_with_text_explains_the_double_dash() {
    let err = one("/plan edit the docs").expect_err("text after edit");
    assert!(err.to_string().contains("/plan -- edit"), "{err}");
}

#[test]
fn missing_plan_block_says_how_to_write_it() {
    let err = one("/plan edit").expect_err("no block");
    assert!(err.to_string().contains("```markdown"), "{err}");
}

#[test]
fn invalid_step_message_says_what_an_id_looks_like() {
    let err = one("/retry #3").expect_err("bad id");
    let text = err.to_string();
    assert!(text.contains("`#3` is not a step id"), "{text}");
    assert!(text.contains("like `S3`"), "{text}");
    assert!(text.contains("/retry <step>"), "{text}");
}

#[test]
fn unknown_flag_message_suggests_the_flag() {
    let err = one("/mission --replcae go").expect_err("typo flag");
    assert_eq!(
        err,
        CommandError::UnknownFlag {
            command: "mission",
            flag: "--replcae".into(),
            did_you_mean: Some("--replace")
        }
    );
    assert!(
        err.to_string().contains("Did you mean `--replace`?"),
        "{err}"
    );
}

#[test]
fn every_error_names_its_command() {
    assert_eq!(one("/done").expect_err("x").command(), Some("done"));
    assert_eq!(
        one("/plan edit").expect_err("x").command(),
        Some("plan edit")
    );
    assert_eq!(one("/aprove").expect_err("x").command(), None);
}
