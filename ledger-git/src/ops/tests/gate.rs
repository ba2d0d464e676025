//! The done gate and evidence rules.

use super::*;

#[test]
fn ready_queue_holds_planned_steps_whose_dependencies_are_done() {
    let l = chain();
    assert_eq!(ready_ids(&l), vec!["S1", "S4"]);
    let l = run(&l, Operation::Start { step: "S1".into() }, &agent());
    assert_eq!(ready_ids(&l), vec!["S4"]);
    let a = applied(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert_eq!(ready_ids(&a.ledger), vec!["S2", "S4"]);
    assert!(a.effects.contains(&Effect::NowReady {
        steps: vec!["S2".into()]
    }));
}

#[test]
fn start_refuses_a_step_whose_dependencies_are_not_done() {
    let err = refused(
        Some(&chain()),
        Operation::Start { step: "S3".into() },
        &agent(),
    );
    assert_eq!(
        err,
        RuleError::DependenciesNotDone {
            step: "S3".into(),
            operation: "start",
            pending: vec!["S2".into()]
        }
    );
}

#[test]
fn done_is_refused_without_evidence_for_test_lint_and_verify_steps() {
    for v in [Validation::Test, Validation::Lint, Validation::Verify] {
        let l = mission_with(vec![task("S1", &[], v)]);
        let err = refused(
            Some(&l),
            Operation::Done {
                step: "S1".into(),
                evidence: None,
            },
            &human(),
        );
        assert!(
            matches!(err, RuleError::EvidenceRequired { validation, .. } if validation == v),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains(&format!("S1 has validation '{v}'")),
            "{err}"
        );
    }
}

#[test]
fn done_on_a_test_step_refuses_prose_even_from_a_human() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("I ran it")),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::ProseNotAccepted { .. }), "{err}");
}

#[test]
fn done_on_a_test_step_accepts_green_check_run_or_test_run_but_not_lint_run() {
    for kind in [
        EvidenceKind::CheckRun,
        EvidenceKind::WorkflowRun,
        EvidenceKind::TestRun,
    ] {
        let l = mission_with(vec![task("S1", &[], Validation::Test)]);
        let l = run(
            &l,
            Operation::Done {
                step: "S1".into(),
                evidence: Some(green(kind)),
            },
            &navin(),
        );
        assert_eq!(status(&l, "S1"), TaskStatus::Done, "{kind}");
        let recorded = &l.board.task("S1").expect("S1").evidence[0];
        assert_eq!(recorded.recorded_by, Some(Actor::App("navin".into())));
    }
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(green(EvidenceKind::LintRun)),
        },
        &navin(),
    );
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");
}

#[test]
fn done_refuses_red_evidence() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let red = Evidence::run(EvidenceKind::CheckRun, false, "2 tests failed");
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(red),
        },
        &navin(),
    );
    assert!(matches!(err, RuleError::EvidenceNotGreen { .. }), "{err}");
}

#[test]
fn done_counts_green_evidence_recorded_earlier() {
    let l = mission_with(vec![task("S1", &[], Validation::Lint)]);
    let l = run(
        &l,
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: green(EvidenceKind::CheckRun),
        },
        &navin(),
    );
    let l = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert_eq!(status(&l, "S1"), TaskStatus::Done);
}

#[test]
fn manual_step_closes_with_prose_from_a_human_but_not_from_an_agent() {
    let mut s = task("S1", &[], Validation::Manual);
    s.acceptance = Some("the docs read well".into());
    let l = mission_with(vec![s]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("looks good")),
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::AgentEvidence { .. }), "{err}");
    let done = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("looks good")),
        },
        &human(),
    );
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
}

#[test]
fn acceptance_criteria_require_evidence_even_without_validation() {
    let mut s = task("S1", &[], Validation::None);
    s.acceptance = Some("p99 under 10 ms".into());
    let l = mission_with(vec![s]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &human(),
    );
    assert_eq!(
        err,
        RuleError::AcceptanceEvidenceRequired { step: "S1".into() }
    );
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("fast")),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::ProseNotAccepted { .. }));
    let ok = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: Some(green(EvidenceKind::VerifyRun)),
        },
        &navin(),
    );
    assert_eq!(status(&ok, "S1"), TaskStatus::Done);
}

#[test]
fn step_without_validation_or_acceptance_is_done_without_evidence() {
    let l = run(
        &chain(),
        Operation::Done {
            step: "S4".into(),
            evidence: None,
        },
        &agent(),
    );
    assert_eq!(status(&l, "S4"), TaskStatus::Done);
}

#[test]
fn local_replan_resets_transitive_dependents_and_keeps_upstream_evidence() {
    let l = mission_with(vec![
        task("A", &[], Validation::Test),
        task("B", &["A"], Validation::None),
        task("C", &["B"], Validation::None),
        task("D", &["C"], Validation::None),
        task("E", &[], Validation::None),
    ]);
    let l = run(
        &l,
        Operation::Done {
            step: "A".into(),
            evidence: Some(green(EvidenceKind::CheckRun)),
        },
        &navin(),
    );
    let l = run(
        &l,
        Operation::Done {
            step: "B".into(),
            evidence: None,
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::Done {
            step: "C".into(),
            evidence: None,
        },
        &agent(),
    );
    let a = applied(
        Some(&l),
        Operation::Replan {
            step: "B".into(),
            reason: "wrong approach".into(),
        },
        &human(),
    );
    let l = a.ledger;
    assert_eq!(
        [
            status(&l, "A"),
            status(&l, "B"),
            status(&l, "C"),
            status(&l, "D")
        ],
        [
            TaskStatus::Done,
            TaskStatus::Planned,
            TaskStatus::Planned,
            TaskStatus::Planned
        ]
    );
    assert_eq!(
        l.board.task("A").expect("A").evidence.len(),
        1,
        "upstream evidence kept"
    );
    assert!(a
        .effects
        .iter()
        .any(|e| matches!(e, Effect::Replanned { steps, .. } if steps == &["B", "C", "D"])));
    assert!(l
        .mission
        .history
        .last()
        .expect("h")
        .reason
        .contains("wrong approach"));
    assert_eq!(ready_ids(&l), vec!["B", "E"]);
}

#[test]
fn close_done_needs_every_step_done_and_close_failed_does_not() {
    let l = chain();
    let err = refused(
        Some(&l),
        Operation::Close {
            status: MissionStatus::Done,
            reason: String::new(),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::StepsNotDone { ref pending } if pending.len() == 4));
    let l = run(
        &l,
        Operation::Close {
            status: MissionStatus::Failed,
            reason: "dropped".into(),
        },
        &human(),
    );
    assert_eq!(l.mission.status, MissionStatus::Failed);
    let err = refused(Some(&l), Operation::Start { step: "S1".into() }, &agent());
    assert!(matches!(err, RuleError::Finished { .. }));
}

#[test]
fn linking_a_new_head_drops_runs_for_the_old_head() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let mut old = green(EvidenceKind::CheckRun);
    old.head_sha = Some("aaaa".into());
    let l = run(
        &l,
        Operation::Link {
            step: "S1".into(),
            pr: Some(7),
            head_sha: Some("aaaa".into()),
            branch: None,
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: old,
        },
        &navin(),
    );
    let l = run(
        &l,
        Operation::Link {
            step: "S1".into(),
            pr: Some(7),
            head_sha: Some("bbbb".into()),
            branch: None,
        },
        &agent(),
    );
    assert!(l.board.task("S1").expect("S1").evidence.is_empty());
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::EvidenceRequired { .. }));
}

#[test]
fn a_dispatched_step_keeps_its_first_issue() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let dispatch = |issue| Operation::Dispatched {
        step: "S1".into(),
        issue,
        agent: "workflow".into(),
    };
    let l = run(&l, dispatch(12), &agent());
    assert_eq!(l.board.task("S1").expect("S1").links.issue, Some(12));
    let l = run(&l, dispatch(13), &agent());
    assert_eq!(l.board.task("S1").expect("S1").links.issue, Some(12));
    let err = refused(Some(&l), dispatch_unknown(), &agent());
    assert!(matches!(err, RuleError::UnknownStep { .. }), "{err:?}");
}

fn dispatch_unknown() -> Operation {
    Operation::Dispatched {
        step: "nope".into(),
        issue: 1,
        agent: "workflow".into(),
    }
}

#[test]
fn hand_typed_ci_evidence_without_its_run_is_refused_naming_what_it_lacks() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    for kind in [EvidenceKind::CheckRun, EvidenceKind::WorkflowRun] {
        let typed = Evidence::run(kind, true, "ci/test passed");
        let err = refused(
            Some(&l),
            Operation::Done {
                step: "S1".into(),
                evidence: Some(typed),
            },
            &human(),
        );
        match err {
            RuleError::UntraceableRun { missing, .. } => {
                assert!(
                    missing.contains("app_id") && missing.contains("head_sha"),
                    "{missing}"
                );
                assert!(missing.contains("run_id"), "{missing}");
            }
            other => panic!("{kind}: {other}"),
        }
    }
    // A run without a success conclusion does not prove a step either.
    let mut neutral = green(EvidenceKind::CheckRun);
    neutral.conclusion = Some("neutral".into());
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(neutral),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::UntraceableRun { .. }), "{err}");
}

#[test]
fn untraceable_ci_evidence_recorded_earlier_does_not_open_the_gate() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let l = run(
        &l,
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: Evidence::run(EvidenceKind::CheckRun, true, "typed by hand"),
        },
        &human(),
    );
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");
}
