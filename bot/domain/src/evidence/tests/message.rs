//! `missing_checks_message`: what a `/done` refusal tells people.

use std::collections::HashMap;

use navin_ledger::model::Validation;

use super::fixture::*;
use crate::evidence::*;

fn required(names: &[&str]) -> EvidencePolicy {
    EvidencePolicy {
        required_checks: HashMap::from([(
            Validation::Test,
            names.iter().map(|s| s.to_string()).collect(),
        )]),
        ..EvidencePolicy::default()
    }
}

#[test]
fn names_missing_running_and_not_green_checks() {
    let task = step(Validation::Test, Some(HEAD));
    let obs = [
        open_run(1, "test", CheckStatus::InProgress, Some(0)),
        done_run(2, "e2e", "skipped", 0, 0),
    ];
    let v = evaluate(&task, &obs, &required(&["test", "lint", "e2e"]), t(3));
    let msg = missing_checks_message(&task, &v);
    assert!(msg.contains("`S1`"), "{msg}");
    assert!(msg.contains("`8f14e45`"), "{msg}");
    assert!(msg.contains("`lint`"), "{msg}");
    assert!(
        msg.contains("[test](https://github.com/o/r/runs/1) (in_progress for 3m 0s)"),
        "{msg}"
    );
    assert!(
        msg.contains("[e2e](https://github.com/o/r/runs/2) (skipped)"),
        "{msg}"
    );
}

#[test]
fn names_failing_checks_with_links() {
    let task = step(Validation::Test, Some(HEAD));
    let v = evaluate(
        &task,
        &[done_run(9, "test", "timed_out", 0, 60)],
        &required(&["test"]),
        t(90),
    );
    let msg = missing_checks_message(&task, &v);
    assert!(msg.contains("failed"), "{msg}");
    assert!(
        msg.contains("[test](https://github.com/o/r/runs/9) (timed\\_out)"),
        "{msg}"
    );
}

#[test]
fn explains_how_to_link_a_pull_request() {
    let task = step(Validation::Test, None);
    let v = evaluate(&task, &[], &required(&["test"]), t(0));
    let msg = missing_checks_message(&task, &v);
    assert!(msg.contains("Navin-Step: S1"), "{msg}");
    assert!(msg.contains("navin/S1-"), "{msg}");
}

#[test]
fn says_when_no_trusted_check_reported() {
    let task = step(Validation::Test, Some(HEAD));
    let v = evaluate(&task, &[], &EvidencePolicy::default(), t(0));
    let msg = missing_checks_message(&task, &v);
    assert!(msg.contains("no check run from a trusted app"), "{msg}");
}

#[test]
fn escapes_hostile_check_names() {
    let task = step(Validation::Test, Some(HEAD));
    let evil = "x](https://evil.example) <!-- @octocat";
    let v = evaluate(
        &task,
        &[done_run(1, evil, "failure", 0, 5)],
        &required(&[evil]),
        t(9),
    );
    let msg = missing_checks_message(&task, &v);
    assert!(!msg.contains("<!-- @octocat"), "{msg}");
    // The bracket that would end the link text is escaped, so the link stays Navin's.
    assert!(
        !msg.replace("\\]", "").contains("](https://evil.example)"),
        "{msg}"
    );
    assert!(msg.contains("](https://github.com/o/r/runs/1)"), "{msg}");
}
