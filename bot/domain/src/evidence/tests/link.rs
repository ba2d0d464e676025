//! `step_from_pr`: the `Navin-Step:` line and `navin/<step>` branches.

use navin_ledger::model::Validation;
use navin_ledger::ops::{InitArgs, NewTask, Operation};

use super::fixture::apply_ok;
use crate::evidence::{step_from_pr, step_from_pr_in};

#[test]
fn reads_navin_step_line_in_any_case() {
    let body = "Implements the loader.\n\nnavin-STEP: S3\n";
    assert_eq!(step_from_pr(body, "feature/x"), Some("S3".into()));
    assert_eq!(
        step_from_pr("Navin-Step:S3.1_b\r\nmore", ""),
        Some("S3.1_b".into())
    );
}

#[test]
fn ignores_step_lines_in_code_blocks_quotes_and_indents() {
    let body = "```\nNavin-Step: S1\n```\n> Navin-Step: S2\n    Navin-Step: S3\n<!-- Navin-Step: S4 -->\n~~~md\nNavin-Step: S5\n~~~\n";
    assert_eq!(step_from_pr(body, "main"), None);
    let after_fence = format!("{body}Navin-Step: S6\n");
    assert_eq!(step_from_pr(&after_fence, "main"), Some("S6".into()));
}

#[test]
fn ignores_template_placeholders_and_prose_after_the_id() {
    assert_eq!(step_from_pr("Navin-Step: <step id>", "main"), None);
    assert_eq!(step_from_pr("Navin-Step: S3 and S4", "main"), None);
    assert_eq!(step_from_pr("Navin-Step:", "main"), None);
}

#[test]
fn first_valid_step_line_wins() {
    assert_eq!(
        step_from_pr(
            "Navin-Step: <id>\nNavin-Step: S2\nNavin-Step: S9",
            "navin/S7"
        ),
        Some("S2".into())
    );
}

#[test]
fn reads_navin_branch_names() {
    assert_eq!(step_from_pr("", "navin/S3"), Some("S3".into()));
    assert_eq!(step_from_pr("", "navin/S3-add-loader"), Some("S3".into()));
    assert_eq!(
        step_from_pr("", "refs/heads/navin/S3/part-2"),
        Some("S3".into())
    );
    assert_eq!(step_from_pr("", "feature/navin/S3"), None);
    assert_eq!(step_from_pr("", "navin/"), None);
    assert_eq!(step_from_pr("", "navin/zzz\";echo${IFS}hi;#"), None);
}

#[test]
fn body_line_wins_over_branch() {
    assert_eq!(
        step_from_pr("Navin-Step: S5", "navin/S3-x"),
        Some("S5".into())
    );
}

#[test]
fn board_resolves_hyphenated_ids_and_unknown_steps() {
    let ledger = apply_ok(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            steps: ["fix", "fix-db", "S1"]
                .iter()
                .map(|id| NewTask {
                    id: (*id).into(),
                    title: format!("do {id}"),
                    validation: Validation::Test,
                    ..NewTask::default()
                })
                .collect(),
            ..InitArgs::default()
        }),
    );
    let board = &ledger.board;
    assert_eq!(
        step_from_pr_in("", "navin/fix-db-retry", board),
        Some("fix-db".into())
    );
    assert_eq!(
        step_from_pr_in("", "navin/fix-typo", board),
        Some("fix".into())
    );
    assert_eq!(
        step_from_pr_in("", "navin/fix-db", board),
        Some("fix-db".into())
    );
    assert_eq!(step_from_pr_in("", "navin/ledger", board), None);
    assert_eq!(step_from_pr_in("Navin-Step: S9", "navin/S1", board), None);
    assert_eq!(
        step_from_pr_in("Navin-Step: S1", "main", board),
        Some("S1".into())
    );
}
