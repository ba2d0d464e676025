//! What an agent may do: report, pause and resume its own pause, and close a step only on
//! proof Navin recorded itself.

use super::*;

const HEAD: &str = "1111111111111111111111111111111111111111";
const OTHER: &str = "2222222222222222222222222222222222222222";

fn sub(name: &str) -> Ctx {
    Ctx::new(t0(), Actor::Subagent(name.into()))
}

fn at(ctx: Ctx, head: &str, dirty: bool) -> Ctx {
    ctx.with_checkout(Checkout {
        head: head.into(),
        dirty,
    })
}

pub(super) fn recorded(kind: EvidenceKind, exit: i32, head: &str, dirty: bool) -> Evidence {
    let mut e = Evidence::run(kind, exit == 0, format!("cargo test exited {exit}"));
    e.run = Some(RunRecord {
        command: vec!["cargo".into(), "test".into()],
        source: CommandSource::Config,
        exit_code: Some(exit),
        started_at: t0(),
        finished_at: t0(),
        duration_ms: 1200,
        output_sha256: "ab".repeat(32),
        output_tail: "test result: ok".into(),
        head: head.into(),
        dirty,
        timed_out: false,
        baseline: None,
    });
    e
}

fn verified(l: &Ledger, kind: EvidenceKind, exit: i32, head: &str, dirty: bool) -> Ledger {
    run(
        l,
        Operation::RecordRun {
            step: "S1".into(),
            evidence: recorded(kind, exit, head, dirty),
        },
        &sub("codex"),
    )
}

fn done_s1() -> Operation {
    Operation::Done {
        step: "S1".into(),
        evidence: None,
    }
}

/// S1 taken up by an agent outside any checkout (so no base is recorded: these tests
/// are about which runs prove a step; the change a step needs is `change.rs`'s).
fn started() -> Ledger {
    run(
        &test_step(),
        Operation::Start { step: "S1".into() },
        &sub("codex"),
    )
}

fn test_step() -> Ledger {
    mission_with(vec![task("S1", &[], Validation::Test)])
}

#[test]
fn an_agent_cannot_hand_in_evidence_through_any_operation() {
    let l = run(
        &test_step(),
        Operation::Start { step: "S1".into() },
        &agent(),
    );
    let forged = recorded(EvidenceKind::TestRun, 0, HEAD, false);
    let ci = super::green(EvidenceKind::CheckRun);
    let ops = [
        Operation::Done {
            step: "S1".into(),
            evidence: Some(forged.clone()),
        },
        Operation::Done {
            step: "S1".into(),
            evidence: Some(ci.clone()),
        },
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: ci.clone(),
        },
        Operation::Progress(ProgressArgs {
            step: "S1".into(),
            real_progress: true,
            evidence: Some(forged.clone()),
            ..ProgressArgs::default()
        }),
        Operation::Fail {
            step: "S1".into(),
            evidence: Some(ci),
            reason: "flaky".into(),
            outcome: AttemptOutcome::Failed,
        },
    ];
    for op in ops {
        for ctx in [at(agent(), HEAD, false), at(sub("claude"), HEAD, false)] {
            let err = refused(Some(&l), op.clone(), &ctx);
            assert!(
                matches!(err, RuleError::AgentEvidence { .. }),
                "{}: {err}",
                op.name()
            );
            assert!(err.to_string().contains("cannot hand in evidence"), "{err}");
        }
    }
    // A prose note on progress is a report, not proof, and is kept.
    let l = run(
        &l,
        Operation::Progress(ProgressArgs {
            step: "S1".into(),
            real_progress: true,
            evidence: Some(Evidence::prose("wrote the parser")),
            ..ProgressArgs::default()
        }),
        &agent(),
    );
    let err = refused(Some(&l), done_s1(), &at(agent(), HEAD, false));
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");
}

#[test]
fn an_agent_closes_a_test_step_on_a_green_recorded_run_for_the_clean_head() {
    let l = verified(&started(), EvidenceKind::TestRun, 0, HEAD, false);
    let done = run(&l, done_s1(), &at(sub("codex"), HEAD, false));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
    let shown = done.mission.progress.last_evidence.expect("last evidence");
    assert_eq!(shown.run.expect("run record").head, HEAD);
}

#[test]
fn a_red_run_after_a_green_one_on_the_same_commit_keeps_the_step_open() {
    // The first of two commands passed, the second failed: the newest run speaks.
    let green = verified(&started(), EvidenceKind::TestRun, 0, HEAD, false);
    let red = verified(&green, EvidenceKind::TestRun, 1, HEAD, false);
    let err = refused(Some(&red), done_s1(), &at(sub("codex"), HEAD, false));
    assert!(matches!(err, RuleError::RedRun { .. }), "{err}");
    assert_eq!(err.code(), "red_run");
    assert!(err.to_string().contains("exited 1"), "{err}");
    // A red run on another commit says nothing about this one.
    let elsewhere = verified(&green, EvidenceKind::TestRun, 1, OTHER, false);
    let done = run(&elsewhere, done_s1(), &at(sub("codex"), HEAD, false));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
    // Fixed and verified again on the same commit: green is the newest.
    let again = verified(&red, EvidenceKind::TestRun, 0, HEAD, false);
    let done = run(&again, done_s1(), &at(sub("codex"), HEAD, false));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
}

#[test]
fn an_agent_is_told_why_a_recorded_run_does_not_count() {
    let l = verified(&started(), EvidenceKind::TestRun, 0, HEAD, false);
    let err = refused(Some(&l), done_s1(), &at(agent(), OTHER, false));
    assert!(matches!(err, RuleError::StaleRun { .. }), "{err}");
    assert!(
        err.to_string().contains("111111111111") && err.to_string().contains("222222222222"),
        "{err}"
    );
    let err = refused(Some(&l), done_s1(), &at(agent(), HEAD, true));
    assert!(matches!(err, RuleError::DirtyRun { .. }), "{err}");
    // No checkout (a front end that cannot see one): a local run proves nothing.
    let err = refused(Some(&l), done_s1(), &agent());
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");

    let dirty = verified(&started(), EvidenceKind::TestRun, 0, HEAD, true);
    let err = refused(Some(&dirty), done_s1(), &at(agent(), HEAD, false));
    assert!(
        matches!(err, RuleError::DirtyRun { .. }) && err.to_string().contains("uncommitted"),
        "{err}"
    );
}

#[test]
fn red_wrong_kind_and_typed_runs_never_prove_an_agents_step() {
    let red = verified(&started(), EvidenceKind::TestRun, 1, HEAD, false);
    let err = refused(Some(&red), done_s1(), &at(agent(), HEAD, false));
    assert!(matches!(err, RuleError::RedRun { .. }), "{err}");
    let lint = verified(&started(), EvidenceKind::LintRun, 0, HEAD, false);
    let err = refused(Some(&lint), done_s1(), &at(agent(), HEAD, false));
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");
    // A test_run a human typed in proves the step for that human, not for an agent.
    let typed = run(
        &test_step(),
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: Evidence::run(EvidenceKind::TestRun, true, "ran it"),
        },
        &human(),
    );
    let err = refused(Some(&typed), done_s1(), &at(agent(), HEAD, false));
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");
    assert_eq!(
        status(&run(&typed, done_s1(), &human()), "S1"),
        TaskStatus::Done
    );
}

#[test]
fn ci_evidence_navin_recorded_closes_an_agents_step_anywhere() {
    let l = run(
        &test_step(),
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: super::green(EvidenceKind::CheckRun),
        },
        &navin(),
    );
    assert_eq!(
        status(&run(&l, done_s1(), &agent()), "S1"),
        TaskStatus::Done
    );
}

#[test]
fn a_recorded_run_must_be_a_local_run_with_its_record_and_an_honest_ok() {
    let l = test_step();
    let mut lying = recorded(EvidenceKind::TestRun, 1, HEAD, false);
    lying.ok = true;
    let mut bare = recorded(EvidenceKind::TestRun, 0, HEAD, false);
    bare.run = None;
    let mut ci = recorded(EvidenceKind::CheckRun, 0, HEAD, false);
    ci.kind = EvidenceKind::CheckRun;
    for e in [lying, bare, ci] {
        let err = refused(
            Some(&l),
            Operation::RecordRun {
                step: "S1".into(),
                evidence: e,
            },
            &human(),
        );
        assert!(matches!(err, RuleError::NotARecordedRun { .. }), "{err}");
    }
    let err = refused(
        Some(&l),
        Operation::RecordRun {
            step: "S9".into(),
            evidence: recorded(EvidenceKind::TestRun, 0, HEAD, false),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::UnknownStep { .. }), "{err}");
}

#[test]
fn an_agent_resumes_only_a_manual_pause_it_made_itself() {
    let pause = |reason| Operation::Pause {
        reason,
        note: "waiting".into(),
    };
    let resume = || Operation::Resume {
        note: String::new(),
    };
    let own = run(&test_step(), pause(PauseReason::Manual), &sub("claude"));
    assert_eq!(
        own.mission.paused_by,
        Some(Actor::Subagent("claude".into()))
    );
    let err = refused(Some(&own), resume(), &sub("codex"));
    assert!(matches!(err, RuleError::ResumeNeedsHuman { .. }), "{err}");
    assert!(err.to_string().contains("by subagent:claude"), "{err}");
    let back = run(&own, resume(), &sub("claude"));
    assert_eq!(back.mission.status, MissionStatus::Running);
    assert_eq!(back.mission.paused_by, None);

    let human_pause = run(&test_step(), pause(PauseReason::Human), &human());
    let err = refused(Some(&human_pause), resume(), &agent());
    assert!(matches!(err, RuleError::ResumeNeedsHuman { .. }), "{err}");
    assert_eq!(
        run(&human_pause, resume(), &human()).mission.status,
        MissionStatus::Running
    );

    // A stall pause the agent's own reports caused still needs a person.
    let mut l = run(
        &test_step(),
        Operation::Start { step: "S1".into() },
        &agent(),
    );
    for _ in 0..20 {
        if l.mission.status == MissionStatus::Paused {
            break;
        }
        l = run(&l, progress("S1", false, None), &agent());
        if l.board
            .task("S1")
            .is_some_and(|t| t.status == TaskStatus::Planned)
        {
            l = run(&l, Operation::Start { step: "S1".into() }, &agent());
        }
    }
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Stall));
    let err = refused(Some(&l), resume(), &agent());
    assert!(matches!(err, RuleError::ResumeNeedsHuman { .. }), "{err}");
}

#[test]
fn an_agent_pauses_only_with_reason_manual() {
    for reason in [
        PauseReason::Human,
        PauseReason::Budget,
        PauseReason::Stall,
        PauseReason::Loop,
    ] {
        let err = refused(
            Some(&test_step()),
            Operation::Pause {
                reason,
                note: String::new(),
            },
            &agent(),
        );
        assert_eq!(err, RuleError::AgentPauseReason { reason });
    }
}

#[test]
fn a_run_of_a_command_typed_after_the_dashes_is_kept_but_proves_the_step_to_nobody() {
    let mut given = recorded(EvidenceKind::TestRun, 0, HEAD, false);
    if let Some(run) = given.run.as_mut() {
        run.command = vec!["true".into()];
        run.source = CommandSource::Given;
    }
    let l = run(
        &started(),
        Operation::RecordRun {
            step: "S1".into(),
            evidence: given,
        },
        &human(),
    );
    assert_eq!(l.board.task("S1").map(|t| t.evidence.len()), Some(1));
    for ctx in [at(sub("codex"), HEAD, false), at(human(), HEAD, false)] {
        let err = refused(Some(&l), done_s1(), &ctx);
        assert_eq!(err.code(), "given_command_run", "{err}");
        assert!(err.to_string().contains("proves nothing"), "{err}");
    }
    // The step's own command, run after, proves it.
    let own = verified(&l, EvidenceKind::TestRun, 0, HEAD, false);
    let done = run(&own, done_s1(), &at(sub("codex"), HEAD, false));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
}

/// A red run of S1 on `HEAD` held against its base, which failed `old` already.
fn against_base(head_failed: &[&str], pre_existing: &[&str], runner: Option<&str>) -> Evidence {
    let mut e = recorded(EvidenceKind::TestRun, 1, HEAD, false);
    let run = e.run.as_mut().expect("a run record");
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    run.baseline = Some(crate::model::BaseRun {
        base: OTHER.into(),
        exit_code: Some(1),
        output_sha256: "cd".repeat(32),
        cached: false,
        runner: runner.map(str::to_owned),
        new_failures: ids(head_failed),
        pre_existing: ids(pre_existing),
        fail_to_pass: ids(&["tests/test_x.py::test_new"]),
    });
    e.ok = run.passed();
    e
}

#[test]
fn a_red_run_whose_failures_all_fail_on_the_base_closes_the_step() {
    let e = against_base(&[], &["tests/test_old.py::test_broken"], Some("pytest"));
    assert!(e.ok, "only pre-existing failures: green");
    let l = run(
        &started(),
        Operation::RecordRun {
            step: "S1".into(),
            evidence: e,
        },
        &sub("codex"),
    );
    let done = run(&l, done_s1(), &at(sub("codex"), HEAD, false));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
    let proof = done.mission.progress.last_evidence.expect("evidence");
    let base = proof.run.and_then(|r| r.baseline).expect("the base run");
    assert_eq!(base.fail_to_pass, vec!["tests/test_x.py::test_new"]);
}

#[test]
fn a_new_failure_or_an_unread_output_keeps_a_red_run_red_whatever_it_claims() {
    for e in [
        against_base(
            &["tests/test_y.py::test_regressed"],
            &["t::old"],
            Some("pytest"),
        ),
        // Exit codes only: the base failing too says nothing about which failures are new.
        against_base(&[], &["t::old"], None),
        // Nothing failed by name: the exit status has some other cause.
        against_base(&[], &[], Some("pytest")),
    ] {
        assert!(!e.ok);
        let mut lying = e.clone();
        lying.ok = true;
        let err = refused(
            Some(&started()),
            Operation::RecordRun {
                step: "S1".into(),
                evidence: lying,
            },
            &sub("codex"),
        );
        assert!(matches!(err, RuleError::NotARecordedRun { .. }), "{err}");
        let l = run(
            &started(),
            Operation::RecordRun {
                step: "S1".into(),
                evidence: e,
            },
            &sub("codex"),
        );
        let err = refused(Some(&l), done_s1(), &at(sub("codex"), HEAD, false));
        assert!(matches!(err, RuleError::RedRun { .. }), "{err}");
    }
}

#[test]
fn with_fail_to_pass_required_a_test_step_needs_a_test_the_change_repaired() {
    let required = |ctx: Ctx| ctx.with_fail_to_pass(crate::model::FailToPass::Required);
    let recorded_with = |repaired: &[&str]| {
        let mut e = against_base(&[], &["t::old"], Some("pytest"));
        let record = e.run.as_mut().expect("run");
        if let Some(b) = record.baseline.as_mut() {
            b.fail_to_pass = repaired.iter().map(|s| s.to_string()).collect();
        }
        run(
            &started(),
            Operation::RecordRun {
                step: "S1".into(),
                evidence: e,
            },
            &sub("codex"),
        )
    };
    let none = recorded_with(&[]);
    let err = refused(
        Some(&none),
        done_s1(),
        &required(at(sub("codex"), HEAD, false)),
    );
    assert!(matches!(err, RuleError::NoFailToPass { .. }), "{err}");
    assert_eq!(err.code(), "no_fail_to_pass");
    // Under `auto` (the default) a step its plan did not pair with a test closes.
    let done = run(&none, done_s1(), &at(sub("codex"), HEAD, false));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
    // One it did pair needs the repaired test, unless fail_to_pass is off.
    let mut paired = none.clone();
    let mut s1 = (*paired.board.tasks[0]).clone();
    s1.fail_to_pass = true;
    paired.board.tasks[0] = std::sync::Arc::new(s1);
    let err = refused(Some(&paired), done_s1(), &at(sub("codex"), HEAD, false));
    assert!(matches!(err, RuleError::NoFailToPass { .. }), "{err}");
    let off = at(sub("codex"), HEAD, false).with_fail_to_pass(crate::model::FailToPass::Off);
    let done = run(&paired, done_s1(), &off);
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
    // A repaired test named: done.
    let some = recorded_with(&["t::test_parses"]);
    let done = run(&some, done_s1(), &required(at(sub("codex"), HEAD, false)));
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
}
