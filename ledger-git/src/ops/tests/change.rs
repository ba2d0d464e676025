//! A step needs its change: closing a code step from a checkout needs a commit that changes something since the step's base, inside its scope.

use super::agents::recorded;
use super::*;

const BASE: &str = "1111111111111111111111111111111111111111";
const HEAD: &str = "2222222222222222222222222222222222222222";

fn codex() -> Ctx {
    Ctx::new(t0(), Actor::Subagent("codex".into()))
}

fn from(ctx: Ctx, head: &str, change: Option<(&str, &[&str])>) -> Ctx {
    let ctx = ctx.with_checkout(Checkout {
        head: head.into(),
        dirty: false,
    });
    match change {
        Some((base, files)) => ctx.with_change(Change {
            base: base.into(),
            head: head.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
            from: ChangeFrom::Checkout,
        }),
        None => ctx,
    }
}

fn scoped_step(validation: Validation) -> Ledger {
    mission_with(vec![NewTask {
        scope: vec!["src/parse.rs".into(), "tests/".into()],
        ..task("S1", &[], validation)
    }])
}

/// S1 started by the agent at BASE, with a green recorded run at HEAD.
fn started_and_verified(l: &Ledger) -> Ledger {
    let l = run(
        l,
        Operation::Start { step: "S1".into() },
        &from(codex(), BASE, None),
    );
    run(
        &l,
        Operation::RecordRun {
            step: "S1".into(),
            evidence: recorded(EvidenceKind::TestRun, 0, HEAD, false),
        },
        &codex(),
    )
}

fn done_s1() -> Operation {
    Operation::Done {
        step: "S1".into(),
        evidence: None,
    }
}

#[test]
fn a_step_started_from_a_checkout_starts_at_its_head() {
    let l = run(
        &scoped_step(Validation::Test),
        Operation::Start { step: "S1".into() },
        &from(codex(), BASE, None),
    );
    assert_eq!(l.board.task("S1").expect("S1").base.as_deref(), Some(BASE));
}

#[test]
fn a_mission_from_a_plan_starts_every_step_at_the_plans_commit() {
    let l = applied(
        None,
        Operation::Init(InitArgs {
            goal: "ship it".into(),
            base: Some(BASE.into()),
            steps: vec![
                task("S1", &[], Validation::Test),
                task("S2", &["S1"], Validation::Test),
            ],
            ..InitArgs::default()
        }),
        &human(),
    )
    .ledger;
    assert_eq!(l.board.task("S1").expect("S1").base.as_deref(), Some(BASE));
    // S2 starts from wherever S1 leaves the code: its start records that.
    assert_eq!(l.board.task("S2").expect("S2").base, None);
    // Starting later from another commit keeps the plan's base.
    let l = run(
        &l,
        Operation::Start { step: "S1".into() },
        &from(codex(), HEAD, None),
    );
    assert_eq!(l.board.task("S1").expect("S1").base.as_deref(), Some(BASE));
}

#[test]
fn a_step_verified_on_the_tree_it_was_handed_does_not_close() {
    let l = started_and_verified(&scoped_step(Validation::Test));
    let e = refused(Some(&l), done_s1(), &from(codex(), HEAD, Some((BASE, &[]))));
    assert_eq!(e.code(), "no_change");
    assert!(
        e.to_string()
            .contains("nothing changed between the step's base 111111111111"),
        "{e}"
    );
    // A human's done from the checkout is held to the same rule.
    let human_done = Operation::Done {
        step: "S1".into(),
        evidence: Some(recorded(EvidenceKind::TestRun, 0, HEAD, false)),
    };
    let e = refused(
        Some(&l),
        human_done,
        &from(human(), HEAD, Some((BASE, &[]))),
    );
    assert_eq!(e.code(), "no_change");
}

#[test]
fn a_change_inside_the_scope_closes_the_step_with_nothing_to_report() {
    let l = started_and_verified(&scoped_step(Validation::Test));
    let files: &[&str] = &["src/parse.rs", "tests/parse_dates.rs"];
    let a = applied(
        Some(&l),
        done_s1(),
        &from(codex(), HEAD, Some((BASE, files))),
    );
    assert_eq!(status(&a.ledger, "S1"), TaskStatus::Done);
    assert!(!a.reason.contains("outside"), "{}", a.reason);
}

#[test]
fn files_outside_the_scope_are_named_and_refused_only_under_refuse() {
    let l = started_and_verified(&scoped_step(Validation::Test));
    let files: &[&str] = &[
        "src/parse.rs",
        "src/unrelated.rs",
        ".github/workflows/ci.yml",
    ];
    let warned = applied(
        Some(&l),
        done_s1(),
        &from(codex(), HEAD, Some((BASE, files))),
    );
    assert_eq!(status(&warned.ledger, "S1"), TaskStatus::Done);
    let history = &warned.ledger.mission.history.last().expect("entry").changes;
    assert!(
        history.iter().any(|c| c
            == "S1 changed files outside its scope: src/unrelated.rs, .github/workflows/ci.yml"),
        "{history:?}"
    );
    let strict = from(codex(), HEAD, Some((BASE, files))).with_scope_policy(ScopePolicy::Refuse);
    let e = refused(Some(&l), done_s1(), &strict);
    assert_eq!(e.code(), "out_of_scope");
    assert!(e.to_string().contains("src/unrelated.rs"), "{e}");
    assert_eq!(status(&l, "S1"), TaskStatus::InProgress, "nothing changed");
}

#[test]
fn a_change_measured_from_another_base_or_not_at_all_proves_nothing() {
    let l = started_and_verified(&scoped_step(Validation::Test));
    let other: &[&str] = &["src/parse.rs"];
    let e = refused(
        Some(&l),
        done_s1(),
        &from(codex(), HEAD, Some((HEAD, other))),
    );
    assert_eq!(e.code(), "change_unmeasured");
    let e = refused(Some(&l), done_s1(), &from(codex(), HEAD, None));
    assert_eq!(e.code(), "change_unmeasured");
}

#[test]
fn an_agent_cannot_close_a_step_it_never_started() {
    let l = run(
        &scoped_step(Validation::Test),
        Operation::RecordRun {
            step: "S1".into(),
            evidence: recorded(EvidenceKind::TestRun, 0, HEAD, false),
        },
        &codex(),
    );
    let e = refused(Some(&l), done_s1(), &from(codex(), HEAD, None));
    assert_eq!(e.code(), "not_started");
}

#[test]
fn a_manual_step_needs_no_change() {
    let l = run(
        &scoped_step(Validation::Manual),
        Operation::Start { step: "S1".into() },
        &from(human(), BASE, None),
    );
    let done = Operation::Done {
        step: "S1".into(),
        evidence: Some(Evidence::prose("legal signed off")),
    };
    let l = run(&l, done, &from(human(), BASE, Some((BASE, &[]))));
    assert_eq!(status(&l, "S1"), TaskStatus::Done);
}

#[test]
fn close_step_returns_the_change_the_files_outside_the_scope_and_the_proof() {
    let l = started_and_verified(&scoped_step(Validation::Test));
    let task = l.board.task("S1").expect("S1");
    let ctx = from(
        codex(),
        HEAD,
        Some((BASE, &["src/parse.rs", "tests/parse.rs", "README.md"])),
    );
    let verdict = close_step(task, None, &ctx).expect("S1 closes");
    assert_eq!(verdict.step, "S1");
    assert_eq!(verdict.outside_scope, ["README.md"]);
    assert!(verdict.baseline().is_none() && verdict.fail_to_pass().is_empty());
    let change = verdict.change.expect("the change");
    assert_eq!((change.base.as_str(), change.files.len()), (BASE, 3));
    let proof = verdict.proof.expect("the recorded run proves it");
    assert_eq!(proof.kind, EvidenceKind::TestRun);
    assert!(proof.run.is_some(), "the proof carries its run record");
}

fn pull(files: &[&str]) -> Ctx {
    navin().with_change(Change {
        base: BASE.into(),
        head: HEAD.into(),
        files: files.iter().map(|f| f.to_string()).collect(),
        from: ChangeFrom::PullRequest {
            number: 7,
            changed_files: files.len() as u64,
        },
    })
}

#[test]
fn on_github_the_pull_request_is_the_change_whatever_the_steps_recorded_base() {
    // Never started from a checkout: no recorded base, and none is needed.
    let l = scoped_step(Validation::Test);
    let task = l.board.task("S1").expect("S1");
    let ci = green(EvidenceKind::CheckRun);
    let e = close_step(task, Some(&ci), &pull(&[])).expect_err("an empty pull request");
    assert_eq!(e.code(), "no_change");
    assert!(e.to_string().contains("#7 changes no file"), "{e}");

    let verdict = close_step(task, Some(&ci), &pull(&["src/parse.rs", "docs/x.md"]))
        .expect("a pull request with the change");
    assert_eq!(verdict.outside_scope, ["docs/x.md"]);
    assert_eq!(verdict.proof.map(|e| e.check_run_id), Some(Some(41)));

    let strict = pull(&["docs/x.md"]).with_scope_policy(ScopePolicy::Refuse);
    let e = close_step(task, Some(&ci), &strict).expect_err("outside the scope");
    assert_eq!(e.code(), "out_of_scope");
    let l = run(&l, Operation::Start { step: "S1".into() }, &navin());
    let e = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(ci),
        },
        &pull(&[]),
    );
    assert_eq!(e.code(), "no_change", "the ledger's done is the same rule");
}

#[test]
fn a_pull_request_that_skips_a_required_file_is_reported_or_refused_and_optional_files_may_stay() {
    // The plan says src/parse.rs must change; README.md is in scope but optional.
    let l = mission_with(vec![NewTask {
        scope: vec!["src/parse.rs".into(), "README.md".into()],
        required: vec!["src/parse.rs".into()],
        ..task("S1", &[], Validation::Test)
    }]);
    let task = l.board.task("S1").expect("S1");
    let ci = green(EvidenceKind::CheckRun);

    let verdict = close_step(task, Some(&ci), &pull(&["src/parse.rs"])).expect("closes");
    assert!(verdict.untouched_required.is_empty() && verdict.outside_scope.is_empty());

    let verdict = close_step(task, Some(&ci), &pull(&["README.md"])).expect("warn closes");
    assert_eq!(verdict.untouched_required, ["src/parse.rs"]);

    let strict = pull(&["README.md"]).with_scope_policy(ScopePolicy::Refuse);
    let e = close_step(task, Some(&ci), &strict).expect_err("the required file is untouched");
    assert_eq!(e.code(), "required_untouched");
    assert!(e.to_string().contains("src/parse.rs"), "{e}");
    assert!(e.to_string().contains("Optional: yes"), "{e}");

    // Under warn the step closes and the ledger's history says what was left.
    let l = run(&l, Operation::Start { step: "S1".into() }, &navin());
    let done = Operation::Done {
        step: "S1".into(),
        evidence: Some(ci),
    };
    let applied = applied(Some(&l), done, &pull(&["README.md"]));
    assert_eq!(status(&applied.ledger, "S1"), TaskStatus::Done);
    let history = &applied
        .ledger
        .mission
        .history
        .last()
        .expect("entry")
        .changes;
    assert!(
        history
            .iter()
            .any(|c| c == "S1 left files the plan says must change untouched: src/parse.rs"),
        "{history:?}"
    );
}
