//! Unit tests of the evidence decisions: which step a run is for and what it does to it.

use chrono::{TimeZone, Utc};
use navin_bot::evidence::{evaluate, CheckObservation, CheckStatus, EvidencePolicy, RunKind};
use navin_ledger::model::{Actor, Ledger, Validation};
use navin_ledger::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};

use super::*;

const HEAD: &str = "1111111111111111111111111111111111111111";
const OTHER: &str = "2222222222222222222222222222222222222222";

fn step(id: &str, deps: &[&str]) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("step {id}"),
        validation: Validation::Test,
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

fn applied(ledger: Option<&Ledger>, op: Operation) -> Ledger {
    let ctx = Ctx::new(Utc::now(), Actor::Main);
    match apply(ledger, &op, &ctx).expect("operation applies") {
        Outcome::Applied(a) => a.ledger,
        Outcome::AlreadyApplied { .. } => panic!("not applied"),
    }
}

fn ledger() -> Ledger {
    let l = applied(
        None,
        Operation::Init(InitArgs {
            goal: "ship it".into(),
            steps: vec![step("S1", &[]), step("S2", &["S1"])],
            ..InitArgs::default()
        }),
    );
    applied(
        Some(&l),
        Operation::Link {
            step: "S1".into(),
            pr: Some(7),
            head_sha: Some(HEAD.into()),
            branch: Some("navin/S1-api".into()),
        },
    )
}

fn workflow_run(id: u64, sha: &str, conclusion: &str) -> CheckObservation {
    CheckObservation {
        id,
        kind: RunKind::WorkflowRun,
        name: "ci".into(),
        app_id: Some(15368),
        head_sha: sha.into(),
        status: CheckStatus::Completed,
        conclusion: Some(conclusion.into()),
        started_at: Some(Utc.with_ymd_and_hms(2026, 1, 1, 10, 0, 0).unwrap()),
        completed_at: Some(Utc.with_ymd_and_hms(2026, 1, 1, 10, 5, 0).unwrap()),
        html_url: None,
    }
}

fn decide_for(l: &Ledger, id: &str, run: &CheckObservation, policy: &EvidencePolicy) -> Decision {
    let task = l.board.task(id).expect("task");
    let verdict = evaluate(task, std::slice::from_ref(run), policy, Utc::now());
    decide(task, run, &verdict)
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
        find_step(&l.board, OTHER, &prs, "main").as_deref(),
        Some("S2")
    );
    assert_eq!(
        find_step(&l.board, OTHER, &[], "navin/S2-db").as_deref(),
        Some("S2")
    );
    assert_eq!(find_step(&l.board, OTHER, &[], "main"), None);
}

#[test]
fn green_run_on_the_linked_head_marks_the_step_done_with_its_evidence() {
    let l = ledger();
    let run = workflow_run(42, HEAD, "success");
    match decide_for(&l, "S1", &run, &EvidencePolicy::default()) {
        Decision::Done(Some(e)) => {
            assert!(e.ok);
            assert_eq!(e.workflow_run_id, Some(42));
        }
        other => panic!("expected done, got {other:?}"),
    }
}

#[test]
fn run_on_another_head_is_ignored() {
    let l = ledger();
    let run = workflow_run(42, OTHER, "success");
    let Decision::Skip(why) = decide_for(&l, "S1", &run, &EvidencePolicy::default()) else {
        panic!("expected skip");
    };
    assert!(why.contains("linked to head 1111111"), "{why}");
}

#[test]
fn red_run_is_a_failed_attempt() {
    let l = ledger();
    let run = workflow_run(43, HEAD, "failure");
    match decide_for(&l, "S1", &run, &EvidencePolicy::default()) {
        Decision::Fail { evidence, reason } => {
            assert!(!evidence.ok);
            assert!(reason.contains("ci failure"), "{reason}");
        }
        other => panic!("expected fail, got {other:?}"),
    }
}

#[test]
fn green_run_while_another_required_check_is_missing_is_recorded_only() {
    let l = ledger();
    let mut policy = EvidencePolicy::default();
    policy
        .required_checks
        .insert(Validation::Test, vec!["ci".into(), "e2e".into()]);
    let run = workflow_run(44, HEAD, "success");
    match decide_for(&l, "S1", &run, &policy) {
        Decision::Record(e) => assert_eq!(e.workflow_run_id, Some(44)),
        other => panic!("expected record, got {other:?}"),
    }
}

#[test]
fn cancelled_run_changes_nothing() {
    let l = ledger();
    let run = workflow_run(45, HEAD, "cancelled");
    assert!(matches!(
        decide_for(&l, "S1", &run, &EvidencePolicy::default()),
        Decision::Skip(_)
    ));
}

#[test]
fn policy_follows_the_config_defaults_and_overrides() {
    let p = policy_from(&RepoConfig::default());
    assert_eq!(p, EvidencePolicy::default());
    let cfg = navin_bot::config::parse_repo_config(
        "evidence:\n  trusted_apps: [15368, 99]\n  required_checks:\n    test: [ci]\n  min_ci_time: 2m\n",
    )
    .expect("config");
    let p = policy_from(&cfg);
    assert_eq!(p.trusted_app_ids, vec![99, 15368]);
    assert_eq!(p.required_for(Validation::Test), ["ci".to_string()]);
    assert_eq!(p.min_ci_time, Some(Duration::from_secs(120)));
}
