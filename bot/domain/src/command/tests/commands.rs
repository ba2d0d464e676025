//! The grammar of each command except `/step add`.

use super::{one, results, step};
use crate::command::{CloseOutcome, Command, CommandError};

#[test]
fn plan_takes_the_rest_of_the_line_as_request() {
    assert_eq!(
        one("/plan add a `--json` flag to export"),
        Ok(Command::Plan {
            request: "add a `--json` flag to export".into()
        })
    );
}

#[test]
fn plan_requires_a_request() {
    assert_eq!(
        one("/plan   "),
        Err(CommandError::MissingArgument {
            command: "plan",
            argument: "a request"
        })
    );
}

#[test]
fn plan_with_double_dash_asks_for_a_plan_about_editing() {
    assert_eq!(
        one("/plan -- edit the README"),
        Ok(Command::Plan {
            request: "edit the README".into()
        })
    );
}

#[test]
fn plan_edit_takes_the_fenced_block() {
    let body = "/plan edit\n\nNew version:\n\n```markdown\n# Plan\n\n1. Do it\n```\n";
    assert_eq!(
        one(body),
        Ok(Command::PlanEdit {
            plan: "# Plan\n\n1. Do it\n".into()
        })
    );
}

#[test]
fn plan_edit_accepts_md_and_longer_fences_holding_code() {
    let body = "/PLAN Edit\n````md\n# Plan\n```sh\ncargo test\n```\n````";
    assert_eq!(
        one(body),
        Ok(Command::PlanEdit {
            plan: "# Plan\n```sh\ncargo test\n```\n".into()
        })
    );
}

#[test]
fn plan_edit_skips_blocks_in_other_languages() {
    let body = "/plan edit\n```json\n{}\n```\n```markdown\n# Plan\n```";
    assert_eq!(
        one(body),
        Ok(Command::PlanEdit {
            plan: "# Plan\n".into()
        })
    );
}

#[test]
fn plan_edit_without_block_is_refused() {
    assert_eq!(one("/plan edit"), Err(CommandError::MissingPlanBlock));
    assert_eq!(
        one("/plan edit\n```\n# untagged\n```"),
        Err(CommandError::MissingPlanBlock)
    );
}

#[test]
fn plan_edit_ignores_a_block_before_it() {
    assert_eq!(
        one("```markdown\n# Plan\n```\n/plan edit"),
        Err(CommandError::MissingPlanBlock)
    );
}

#[test]
fn plan_edit_ignores_a_block_after_the_next_command() {
    assert_eq!(
        results("/plan edit\n/approve\n```markdown\n# Plan\n```"),
        vec![Err(CommandError::MissingPlanBlock), Ok(Command::Approve)]
    );
}

#[test]
fn plan_edit_ignores_a_quoted_block() {
    assert_eq!(
        one("/plan edit\n> ```markdown\n> # Their plan\n> ```"),
        Err(CommandError::MissingPlanBlock)
    );
}

#[test]
fn plan_edit_with_text_on_its_line_is_refused() {
    assert_eq!(
        one("/plan edit the README"),
        Err(CommandError::UnexpectedArgument {
            command: "plan edit",
            value: "the README".into()
        })
    );
}

#[test]
fn approve_takes_nothing() {
    assert_eq!(one("/approve"), Ok(Command::Approve));
    assert_eq!(
        one("/approve LGTM"),
        Err(CommandError::UnexpectedArgument {
            command: "approve",
            value: "LGTM".into()
        })
    );
}

#[test]
fn names_are_case_insensitive() {
    assert_eq!(one("/Approve"), Ok(Command::Approve));
    assert_eq!(one("/STATUS"), Ok(Command::Status));
}

#[test]
fn reject_feedback_is_optional() {
    assert_eq!(one("/reject"), Ok(Command::Reject { feedback: None }));
    assert_eq!(
        one("/reject too broad, don't touch the CLI"),
        Ok(Command::Reject {
            feedback: Some("too broad, don't touch the CLI".into())
        })
    );
}

#[test]
fn free_text_wrapped_in_quotes_loses_them() {
    assert_eq!(
        one("/reject \"too broad\""),
        Ok(Command::Reject {
            feedback: Some("too broad".into())
        })
    );
    assert_eq!(
        one("/pause “release freeze”"),
        Ok(Command::Pause {
            reason: Some("release freeze".into())
        })
    );
}

#[test]
fn free_text_with_inner_quotes_is_kept_as_written() {
    assert_eq!(
        one("/reject \"a\" and \"b\""),
        Ok(Command::Reject {
            feedback: Some("\"a\" and \"b\"".into())
        })
    );
}

#[test]
fn mission_goal_is_optional() {
    assert_eq!(
        one("/mission"),
        Ok(Command::Mission {
            replace: false,
            goal: None
        })
    );
    assert_eq!(
        one("/mission ship the export flag"),
        Ok(Command::Mission {
            replace: false,
            goal: Some("ship the export flag".into())
        })
    );
}

#[test]
fn cruise_takes_missions_grammar_and_close_is_a_goal_word_there() {
    assert_eq!(
        one("/cruise --replace tidy the errors"),
        Ok(Command::Cruise {
            replace: true,
            goal: Some("tidy the errors".into())
        })
    );
    assert_eq!(
        one("/cruise"),
        Ok(Command::Cruise {
            replace: false,
            goal: None
        })
    );
    // `/cruise close` is not a subcommand: missions are closed with `/mission close`.
    assert_eq!(
        one("/cruise close the gaps"),
        Ok(Command::Cruise {
            replace: false,
            goal: Some("close the gaps".into())
        })
    );
    assert!(
        one("/cruise --replcae x").is_err(),
        "unknown flags are refused"
    );
}

#[test]
fn mission_replace_flag_comes_before_the_goal() {
    assert_eq!(
        one("/mission --replace ship it"),
        Ok(Command::Mission {
            replace: true,
            goal: Some("ship it".into())
        })
    );
    assert_eq!(
        one("/mission --replace"),
        Ok(Command::Mission {
            replace: true,
            goal: None
        })
    );
}

#[test]
fn mission_flags_after_the_goal_are_goal_text() {
    assert_eq!(
        one("/mission fix --replace handling"),
        Ok(Command::Mission {
            replace: false,
            goal: Some("fix --replace handling".into())
        })
    );
}

#[test]
fn em_dash_from_phone_keyboards_counts_as_double_dash() {
    assert_eq!(
        one("/mission —replace ship it"),
        Ok(Command::Mission {
            replace: true,
            goal: Some("ship it".into())
        })
    );
}

#[test]
fn mission_double_dash_starts_a_goal_that_begins_with_close() {
    assert_eq!(
        one("/mission -- close the leaking handles"),
        Ok(Command::Mission {
            replace: false,
            goal: Some("close the leaking handles".into())
        })
    );
}

#[test]
fn mission_close_takes_outcome_and_reason() {
    assert_eq!(
        one("/mission close failed superseded by #42"),
        Ok(Command::MissionClose {
            outcome: Some(CloseOutcome::Failed),
            reason: Some("superseded by #42".into())
        })
    );
    assert_eq!(
        one("/mission close DONE"),
        Ok(Command::MissionClose {
            outcome: Some(CloseOutcome::Done),
            reason: None
        })
    );
}

#[test]
fn mission_close_without_outcome_keeps_the_whole_reason() {
    assert_eq!(
        one("/mission close"),
        Ok(Command::MissionClose {
            outcome: None,
            reason: None
        })
    );
    assert_eq!(
        one("/mission close the goal moved"),
        Ok(Command::MissionClose {
            outcome: None,
            reason: Some("the goal moved".into())
        })
    );
}

#[test]
fn read_only_commands_take_nothing() {
    assert_eq!(one("/status"), Ok(Command::Status));
    assert_eq!(one("/next"), Ok(Command::Next));
    assert_eq!(one("/help"), Ok(Command::Help));
    assert_eq!(
        one("/help me"),
        Err(CommandError::UnexpectedArgument {
            command: "help",
            value: "me".into()
        })
    );
}

#[test]
fn pause_reason_is_optional_and_resume_takes_nothing() {
    assert_eq!(one("/pause"), Ok(Command::Pause { reason: None }));
    assert_eq!(one("/resume"), Ok(Command::Resume));
    assert_eq!(
        one("/resume now please"),
        Err(CommandError::UnexpectedArgument {
            command: "resume",
            value: "now please".into()
        })
    );
}

#[test]
fn done_takes_step_and_evidence() {
    assert_eq!(
        one("/done S3 checked by hand on staging"),
        Ok(Command::Done {
            step: step("S3"),
            evidence: Some("checked by hand on staging".into())
        })
    );
    assert_eq!(
        one("/done build.v2-fix_1"),
        Ok(Command::Done {
            step: step("build.v2-fix_1"),
            evidence: None
        })
    );
}

#[test]
fn done_requires_step_id() {
    assert_eq!(
        one("/done"),
        Err(CommandError::MissingArgument {
            command: "done",
            argument: "a step id"
        })
    );
}

#[test]
fn done_rejects_an_id_the_ledger_would_refuse() {
    let Err(CommandError::InvalidArgument {
        command,
        argument,
        value,
        ..
    }) = one("/done S3: green")
    else {
        panic!("S3: must be refused");
    };
    assert_eq!(
        (command, argument, value.as_str()),
        ("done", "a step id", "S3:")
    );
    let long = format!("/done {}", "a".repeat(101));
    assert!(matches!(
        one(&long),
        Err(CommandError::InvalidArgument { .. })
    ));
    let longest = format!("/done {}", "a".repeat(100));
    assert!(one(&longest).is_ok());
}

#[test]
fn retry_takes_exactly_one_step() {
    assert_eq!(one("/retry S3"), Ok(Command::Retry { step: step("S3") }));
    assert_eq!(
        one("/retry S3 S4"),
        Err(CommandError::UnexpectedArgument {
            command: "retry",
            value: "S4".into()
        })
    );
    assert!(matches!(
        one("/retry"),
        Err(CommandError::MissingArgument {
            command: "retry",
            ..
        })
    ));
}

#[test]
fn replan_takes_step_and_reason() {
    assert_eq!(
        one("/replan S3 the API changed"),
        Ok(Command::Replan {
            step: step("S3"),
            reason: Some("the API changed".into())
        })
    );
    assert_eq!(
        one("/replan S3"),
        Ok(Command::Replan {
            step: step("S3"),
            reason: None
        })
    );
}

#[test]
fn quoted_step_id_is_accepted() {
    assert_eq!(
        one("/retry \"S3\""),
        Ok(Command::Retry { step: step("S3") })
    );
}

#[test]
fn mutating_and_read_only_commands_are_told_apart() {
    let read_only = ["/status", "/next", "/help"];
    for line in read_only {
        let command = one(line).expect("valid");
        assert!(!command.is_mutating(), "{line} must not need write access");
    }
    for line in [
        "/approve",
        "/resume",
        "/pause",
        "/mission",
        "/retry S1",
        "/plan x",
    ] {
        let command = one(line).expect("valid");
        assert!(command.is_mutating(), "{line} must need write access");
    }
}

#[test]
fn names_include_the_subcommand() {
    assert_eq!(one("/mission close").map(|c| c.name()), Ok("mission close"));
    assert_eq!(one("/step add S1 Title").map(|c| c.name()), Ok("step add"));
    assert_eq!(one("/done S1").map(|c| c.name()), Ok("done"));
}

#[test]
fn step_of_a_command_names_its_step() {
    let done = one("/done S2").expect("valid");
    assert_eq!(done.step().map(|s| s.as_str()), Some("S2"));
    assert_eq!(one("/status").expect("valid").step(), None);
}

#[test]
fn plan_edit_with_an_empty_block_is_refused() {
    assert_eq!(
        one("/plan edit\n```markdown\n\n```"),
        Err(CommandError::MissingPlanBlock)
    );
}

#[test]
fn plan_edit_block_may_sit_in_a_details_section() {
    let body = "/plan edit\n<details>\n\n```markdown\n# Plan\n```\n\n</details>";
    assert_eq!(
        one(body),
        Ok(Command::PlanEdit {
            plan: "# Plan\n".into()
        })
    );
}

#[test]
fn two_plan_edits_each_take_their_own_block() {
    let body = "/plan edit\n```md\n# A\n```\n/plan edit\n```md\n# B\n```";
    assert_eq!(
        results(body),
        vec![
            Ok(Command::PlanEdit {
                plan: "# A\n".into()
            }),
            Ok(Command::PlanEdit {
                plan: "# B\n".into()
            })
        ]
    );
}

#[test]
fn update_names_what_it_edits_then_takes_the_rest_of_the_line() {
    use crate::command::UpdateField;
    for (line, field, text) in [
        (
            "/update goal ship the parser first",
            UpdateField::Goal,
            "ship the parser first",
        ),
        (
            "/update Fact the API is frozen",
            UpdateField::Fact,
            "the API is frozen",
        ),
        (
            "/update constraint no new deps",
            UpdateField::Constraint,
            "no new deps",
        ),
        (
            "/update missing which locale?",
            UpdateField::Missing,
            "which locale?",
        ),
    ] {
        assert_eq!(
            one(line),
            Ok(Command::Update {
                field,
                text: text.into()
            }),
            "{line}"
        );
    }
}

#[test]
fn update_without_a_field_or_text_or_with_another_word_is_refused_naming_the_choices() {
    let err = one("/update").expect_err("refused");
    assert!(
        err.to_string()
            .contains("goal, fact, constraint or missing"),
        "{err}"
    );
    let err = one("/update goal").expect_err("refused");
    assert!(err.to_string().contains("needs the text"), "{err}");
    let err = one("/update status done").expect_err("refused");
    assert!(
        err.to_string().contains("`status`") && err.to_string().contains("`missing`"),
        "{err}"
    );
}

#[test]
fn rollback_takes_a_version_as_the_panel_shows_it() {
    assert_eq!(one("/rollback v3"), Ok(Command::Rollback { version: 3 }));
    assert_eq!(one("/rollback 12"), Ok(Command::Rollback { version: 12 }));
    for bad in [
        "/rollback",
        "/rollback v0",
        "/rollback latest",
        "/rollback v2 now",
    ] {
        assert!(one(bad).is_err(), "{bad}");
    }
}

#[test]
fn answer_takes_the_question_number_then_the_answer() {
    assert_eq!(
        one("/answer 2 French first"),
        Ok(Command::Answer {
            number: 2,
            text: "French first".into()
        })
    );
    assert_eq!(
        one("/answer #1: yes"),
        Ok(Command::Answer {
            number: 1,
            text: "yes".into()
        })
    );
    for bad in ["/answer", "/answer 0 no", "/answer first yes", "/answer 3"] {
        assert!(one(bad).is_err(), "{bad}");
    }
}
