//! `/step add`: id, title, flags and quoting.

use super::{one, step};
use crate::command::{Command, CommandError, StepAdd, Validation};

fn added(line: &str) -> StepAdd {
    match one(line) {
        Ok(Command::StepAdd(add)) => *add,
        other => panic!("{line:?} should add a step, got {other:?}"),
    }
}

#[test]
fn step_add_takes_id_and_title() {
    assert_eq!(
        added("/step add S7 Document the flag"),
        StepAdd {
            id: step("S7"),
            title: "Document the flag".into(),
            after: vec![],
            validation: None,
            acceptance: None,
        }
    );
}

#[test]
fn step_add_parses_flags_and_quotes() {
    assert_eq!(
        added("/step add S7 \"Write the user's guide\" --after S5,S6 --validation manual --acceptance \"README shows it\""),
        StepAdd {
            id: step("S7"),
            title: "Write the user's guide".into(),
            after: vec![step("S5"), step("S6")],
            validation: Some(Validation::Manual),
            acceptance: Some("README shows it".into()),
        }
    );
}

#[test]
fn step_add_title_keeps_apostrophes_without_quotes() {
    assert_eq!(
        added("/step add S1 Fix the user's cache").title,
        "Fix the user's cache"
    );
}

#[test]
fn step_add_accepts_equals_and_curly_quotes() {
    let add = added("/step add S8 Ship --validation=TEST --acceptance=“tests pass”");
    assert_eq!(add.validation, Some(Validation::Test));
    assert_eq!(add.acceptance.as_deref(), Some("tests pass"));
}

#[test]
fn step_add_after_may_repeat_and_continue_after_a_comma() {
    let add = added("/step add S9 Merge --after S1, S2 --after S3");
    assert_eq!(add.after, vec![step("S1"), step("S2"), step("S3")]);
}

#[test]
fn step_add_quoted_title_may_hold_a_flag_like_word() {
    assert_eq!(added("/step add S1 \"Drop --force\"").title, "Drop --force");
}

#[test]
fn step_add_requires_id_and_title() {
    assert_eq!(
        one("/step add"),
        Err(CommandError::MissingArgument {
            command: "step add",
            argument: "a step id"
        })
    );
    assert_eq!(
        one("/step add S1 --after S0"),
        Err(CommandError::MissingArgument {
            command: "step add",
            argument: "a title"
        })
    );
    assert_eq!(
        one("/step add --after S0"),
        Err(CommandError::MissingArgument {
            command: "step add",
            argument: "a step id"
        })
    );
}

#[test]
fn step_add_rejects_bad_ids_in_after() {
    assert_eq!(
        one("/step add S2 Title --after S1,#3"),
        Err(CommandError::InvalidArgument {
            command: "step add",
            argument: "a step id",
            value: "#3".into(),
            expected: "letters, digits, `-`, `_` or `.` (at most 100), like `S3`"
        })
    );
}

#[test]
fn step_add_rejects_unknown_validation() {
    assert!(matches!(
        one("/step add S2 Title --validation ci"),
        Err(CommandError::InvalidArgument { argument: "a validation", value, .. }) if value == "ci"
    ));
}

#[test]
fn step_add_flag_needs_a_value() {
    assert_eq!(
        one("/step add S2 Title --acceptance"),
        Err(CommandError::MissingArgument {
            command: "step add",
            argument: "a text after `--acceptance`"
        })
    );
    assert_eq!(
        one("/step add S2 Title --after --validation test"),
        Err(CommandError::MissingArgument {
            command: "step add",
            argument: "step ids after `--after`"
        })
    );
}

#[test]
fn step_add_unquoted_multiword_flag_value_is_refused() {
    assert_eq!(
        one("/step add S2 Title --acceptance docs build"),
        Err(CommandError::UnexpectedArgument {
            command: "step add",
            value: "build".into()
        })
    );
}

#[test]
fn step_add_repeated_single_flags_are_refused() {
    assert_eq!(
        one("/step add S2 Title --validation test --validation lint"),
        Err(CommandError::DuplicateFlag {
            command: "step add",
            flag: "--validation"
        })
    );
}

#[test]
fn step_add_unknown_flag_suggests_nearest() {
    assert_eq!(
        one("/step add S2 Title --valdation test"),
        Err(CommandError::UnknownFlag {
            command: "step add",
            flag: "--valdation".into(),
            did_you_mean: Some("--validation")
        })
    );
    assert_eq!(
        one("/step add S2 Title --accept ok"),
        Err(CommandError::UnknownFlag {
            command: "step add",
            flag: "--accept".into(),
            did_you_mean: Some("--acceptance")
        })
    );
}

#[test]
fn step_add_unclosed_quote_is_refused() {
    assert_eq!(
        one("/step add S2 \"Title"),
        Err(CommandError::UnterminatedQuote {
            command: "step add"
        })
    );
}

#[test]
fn step_without_add_is_refused() {
    assert!(matches!(
        one("/step remove S1"),
        Err(CommandError::InvalidArgument { command: "step", value, .. }) if value == "remove"
    ));
    assert!(matches!(
        one("/step"),
        Err(CommandError::MissingArgument {
            command: "step",
            ..
        })
    ));
}

#[test]
fn escaped_quotes_inside_a_quoted_title_are_kept() {
    assert_eq!(
        added(r#"/step add S1 "Say \"hi\" twice""#).title,
        "Say \"hi\" twice"
    );
}
