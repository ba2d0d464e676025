//! What a verdict does to a step, which step a run is for, and the policy read from the config.

use std::time::Duration;

use navin_ledger::model::{Ledger, Validation};
use navin_ledger::ops::{InitArgs, NewTask, Operation};

use super::fixture::{apply_ok, done_run, t, HEAD, OLD_HEAD};
use crate::config::{parse_repo_config, RepoConfig};
use crate::evidence::{
    decide, evaluate, find_step, policy_from, steps_on_head, CheckObservation, Decision,
    EvidencePolicy, RunKind,
};

fn new_step(id: &str, deps: &[&str]) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("step {id}"),
        validation: Validation::Test,
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

fn link(ledger: &Ledger, step: &str, head: &str) -> Ledger {
    apply_ok(
        Some(ledger),
        Operation::Link {
            step: step.into(),
            pr: Some(7),
            head_sha: Some(head.into()),
            branch: Some(format!("navin/{step}-work")),
        },
    )
}

/// `S1`, then `S2` after it; `S1` linked to [`HEAD`].
fn ledger() -> Ledger {
    let l = apply_ok(
        None,
        Operation::Init(InitArgs {
            goal: "ship it".into(),
            steps: vec![new_step("S1", &[]), new_step("S2", &["S1"])],
            ..InitArgs::default()
        }),
    );
    link(&l, "S1", HEAD)
}

fn workflow_run(id: u64, sha: &str, conclusion: &str) -> CheckObservation {
    CheckObservation {
        kind: RunKind::WorkflowRun,
        head_sha: sha.into(),
        ..done_run(id, "ci", conclusion, 0, 5)
    }
}

fn decide_for(
    l: &Ledger,
    id: &str,
    runs: &[CheckObservation],
    this: Option<&CheckObservation>,
    policy: &EvidencePolicy,
) -> Decision {
    let task = l.board.task(id).expect("task");
    let verdict = evaluate(task, runs, policy, t(10));
    decide(task, &l.board, this, &verdict, policy)
}

/// The decision when `run` alone has reported and its completion triggered the look.
fn decide_run(l: &Ledger, id: &str, run: &CheckObservation, policy: &EvidencePolicy) -> Decision {
    decide_for(l, id, std::slice::from_ref(run), Some(run), policy)
}

/// `evidence.done_on: green`: green checks close a step at once.
fn on_green() -> EvidencePolicy {
    EvidencePolicy {
        done_on: crate::config::DoneOn::Green,
        ..EvidencePolicy::default()
    }
}

#[test]
fn by_default_a_green_step_waits_for_its_merge_and_is_done_once_merged() {
    let l = ledger();
    let run = workflow_run(42, HEAD, "success");
    let decision = decide_run(&l, "S1", &run, &Default::default());
    let Decision::Record { evidence, why } = &decision else {
        panic!("expected record, got {decision:?}");
    };
    assert_eq!(evidence[0].workflow_run_id, Some(42));
    assert!(why.contains("pull request #7 is merged"), "{why}");
    let mut after = l.clone();
    for op in decision.operations("S1") {
        after = apply_ok(Some(&after), op);
    }
    let merged = apply_ok(
        Some(&after),
        Operation::Merged {
            step: "S1".into(),
            pr: 7,
            head_sha: HEAD.into(),
        },
    );
    let decision = decide_for(
        &merged,
        "S1",
        std::slice::from_ref(&run),
        None,
        &Default::default(),
    );
    let ops = decision.operations("S1");
    assert!(matches!(&ops[..], [Operation::Done { .. }]), "{ops:?}");
}

#[test]
fn finds_the_step_by_linked_head_then_pr_body_then_branch() {
    let l = ledger();
    assert_eq!(
        find_step(&l.board, HEAD, &[], "main").as_deref(),
        Some("S1")
    );
    let prs = vec![("Navin-Step: S2".to_string(), "feature".to_string())];
    assert_eq!(
        find_step(&l.board, OLD_HEAD, &prs, "main").as_deref(),
        Some("S2")
    );
    assert_eq!(
        find_step(&l.board, OLD_HEAD, &[], "navin/S2-db").as_deref(),
        Some("S2")
    );
    assert_eq!(find_step(&l.board, OLD_HEAD, &[], "main"), None);
}

#[test]
fn only_movable_steps_on_the_head_are_found_by_sha_in_any_case() {
    let l = ledger();
    let ids = |sha: &str| -> Vec<String> {
        steps_on_head(&l.board, sha)
            .iter()
            .map(|t| t.id.clone())
            .collect()
    };
    assert_eq!(ids(&HEAD.to_ascii_uppercase()), ["S1"]);
    assert!(ids(OLD_HEAD).is_empty());
    assert!(ids("").is_empty());
}

#[test]
fn green_run_on_the_linked_head_marks_the_step_done_with_its_evidence() {
    let l = ledger();
    let run = workflow_run(42, HEAD, "success");
    let decision = decide_run(&l, "S1", &run, &on_green());
    let Decision::Done { evidence, retry } = &decision else {
        panic!("expected done, got {decision:?}");
    };
    assert!(evidence[0].ok && !retry);
    assert_eq!(evidence[0].workflow_run_id, Some(42));
    let ops = decision.operations("S1");
    assert!(
        matches!(&ops[..], [Operation::Done { evidence: Some(e), .. }] if e.workflow_run_id == Some(42)),
        "{ops:?}"
    );
}

#[test]
fn every_green_check_is_recorded_and_the_triggering_one_closes_the_step() {
    let l = ledger();
    let a = done_run(1, "build", "success", 0, 5);
    let b = done_run(2, "test", "success", 0, 5);
    let decision = decide_for(&l, "S1", &[a, b.clone()], Some(&b), &on_green());
    let ops = decision.operations("S1");
    assert!(
        matches!(&ops[..], [
            Operation::RecordEvidence { evidence: r, .. },
            Operation::Done { evidence: Some(d), .. },
        ] if r.check_run_id == Some(1) && d.check_run_id == Some(2)),
        "{ops:?}"
    );
}

#[test]
fn run_on_another_head_is_ignored() {
    let l = ledger();
    let run = workflow_run(42, OLD_HEAD, "success");
    let Decision::Skip(why) = decide_run(&l, "S1", &run, &Default::default()) else {
        panic!("expected skip");
    };
    assert!(why.contains("linked to head 8f14e45"), "{why}");
}

#[test]
fn red_run_is_a_failed_attempt_once() {
    let l = ledger();
    let run = workflow_run(43, HEAD, "failure");
    let decision = decide_run(&l, "S1", &run, &on_green());
    let Decision::Fail { evidence, reason } = &decision else {
        panic!("expected fail, got {decision:?}");
    };
    assert!(!evidence[0].ok);
    assert!(reason.contains("ci failure"), "{reason}");
    // The same failure seen again (a redelivery, or the suite's event) is recorded already.
    let mut after = l.clone();
    for op in decision.operations("S1") {
        after = apply_ok(Some(&after), op);
    }
    let again = decide_run(&after, "S1", &run, &on_green());
    assert!(matches!(again, Decision::Skip(_)), "{again:?}");

    // A re-run of the check that passes on the same head is the next attempt, and proves it.
    let rerun = CheckObservation {
        started_at: Some(t(20)),
        completed_at: Some(t(25)),
        ..workflow_run(46, HEAD, "success")
    };
    let task = after.board.task("S1").expect("S1");
    let verdict = evaluate(task, &[run, rerun.clone()], &on_green(), t(30));
    let decision = decide(task, &after.board, Some(&rerun), &verdict, &on_green());
    let ops = decision.operations("S1");
    assert!(
        matches!(&ops[..], [Operation::Retry { .. }, Operation::Done { evidence: Some(e), .. }] if e.workflow_run_id == Some(46)),
        "{ops:?}"
    );
    for op in ops {
        after = apply_ok(Some(&after), op);
    }
    let s1 = after.board.task("S1").expect("S1");
    assert_eq!(s1.status, navin_ledger::TaskStatus::Done);
    assert_eq!(s1.retry_count, 1);
}

#[test]
fn green_run_while_another_required_check_is_missing_is_recorded_only() {
    let l = ledger();
    let mut policy = EvidencePolicy::default();
    policy
        .required_checks
        .insert(Validation::Test, vec!["ci".into(), "e2e".into()]);
    let run = workflow_run(44, HEAD, "success");
    match decide_run(&l, "S1", &run, &policy) {
        Decision::Record { evidence, why } => {
            assert_eq!(evidence[0].workflow_run_id, Some(44));
            assert!(why.contains("e2e"), "{why}");
        }
        other => panic!("expected record, got {other:?}"),
    }
    // A green run that is not required, or from an untrusted app, is not kept.
    let other = CheckObservation {
        name: "docs".into(),
        ..workflow_run(45, HEAD, "success")
    };
    assert!(matches!(
        decide_run(&l, "S1", &other, &policy),
        Decision::Skip(_)
    ));
}

#[test]
fn green_step_waits_for_its_dependency_and_keeps_the_runs() {
    let l = link(&ledger(), "S2", OLD_HEAD);
    let run = CheckObservation {
        head_sha: OLD_HEAD.into(),
        ..done_run(9, "test", "success", 0, 5)
    };
    match decide_run(&l, "S2", &run, &Default::default()) {
        Decision::Record { evidence, why } => {
            assert_eq!(evidence[0].check_run_id, Some(9));
            assert!(why.contains("waits for S1"), "{why}");
        }
        other => panic!("expected record, got {other:?}"),
    }
}

#[test]
fn cancelled_and_skipped_runs_change_nothing() {
    let l = ledger();
    for conclusion in ["cancelled", "skipped", "neutral"] {
        let run = workflow_run(45, HEAD, conclusion);
        let decision = decide_run(&l, "S1", &run, &Default::default());
        assert!(
            matches!(decision, Decision::Skip(_)),
            "{conclusion}: {decision:?}"
        );
        assert!(decision.operations("S1").is_empty());
    }
}

#[test]
fn policy_follows_the_config_defaults_and_overrides() {
    let p = policy_from(&RepoConfig::default());
    assert_eq!(p, EvidencePolicy::default());
    let cfg = parse_repo_config(
        "evidence:\n  trusted_apps: [15368, 99]\n  required_checks:\n    test: [ci]\n  min_ci_time: 2m\n",
    )
    .expect("config");
    let p = policy_from(&cfg);
    assert_eq!(p.trusted_app_ids, vec![99, 15368]);
    assert_eq!(p.required_for(Validation::Test), ["ci".to_string()]);
    assert_eq!(p.min_ci_time, Some(Duration::from_secs(120)));
}

/// `plan.scope: strict`: a step whose head changes files outside the mission's plan is
/// not done on green CI; the same green run closes it once the record is cleared (the
/// plan edited) or the head moved on (the files reverted).
#[test]
fn strict_drift_on_the_linked_head_holds_a_green_step_and_nothing_else_does() {
    let drift = |head: &str, strict: bool| Operation::Drift {
        step: "S1".into(),
        drift: Some(navin_ledger::PlanDrift {
            head_sha: head.into(),
            outside_plan: vec!["ops/deploy.sh".into()],
            strict,
            ..Default::default()
        }),
    };
    let run = workflow_run(42, HEAD, "success");
    let held = apply_ok(Some(&ledger()), drift(HEAD, true));
    let decision = decide_run(&held, "S1", &run, &on_green());
    let Decision::Record { why, .. } = &decision else {
        panic!("expected record, got {decision:?}");
    };
    assert!(
        why.contains("1 file changed outside the plan (`plan.scope: strict`)"),
        "{why}"
    );
    // Advisory drift, drift read on another head, or none: done.
    for l in [
        apply_ok(Some(&ledger()), drift(HEAD, false)),
        apply_ok(Some(&ledger()), drift(OLD_HEAD, true)),
        apply_ok(
            Some(&held),
            Operation::Drift {
                step: "S1".into(),
                drift: None,
            },
        ),
    ] {
        let decision = decide_run(&l, "S1", &run, &on_green());
        assert!(matches!(decision, Decision::Done { .. }), "{decision:?}");
    }
}

#[test]
fn only_a_green_step_waiting_for_nothing_but_its_merge_has_a_pull_request_to_merge() {
    use crate::evidence::pr_to_merge;
    let l = ledger();
    let policy = EvidencePolicy::default();
    let merge = |l: &Ledger, id: &str, conclusion: &str, policy: &EvidencePolicy| {
        let task = l.board.task(id).expect("task");
        let run = workflow_run(42, HEAD, conclusion);
        let verdict = evaluate(task, std::slice::from_ref(&run), policy, t(10));
        pr_to_merge(task, &l.board, &verdict, policy)
    };
    assert_eq!(merge(&l, "S1", "success", &policy), Some(7));
    assert_eq!(merge(&l, "S1", "failure", &policy), None, "red");
    assert_eq!(
        merge(&l, "S1", "success", &on_green()),
        None,
        "done_on: green needs no merge"
    );
    // S2 waits for S1: green or not, it is not merged before its dependency is done.
    let s2 = link(&l, "S2", HEAD);
    assert_eq!(merge(&s2, "S2", "success", &policy), None);
    let merged = apply_ok(
        Some(&l),
        Operation::Merged {
            step: "S1".into(),
            pr: 7,
            head_sha: HEAD.into(),
        },
    );
    assert_eq!(
        merge(&merged, "S1", "success", &policy),
        None,
        "merged once"
    );
}
