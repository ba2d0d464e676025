//! Questions: agents ask and never answer; a question pauses the mission until a person answers it.

use super::*;
use crate::model::{MissionStatus, PauseReason};

fn ask(question: &str, step: Option<&str>) -> Operation {
    Operation::Ask {
        question: question.into(),
        step: step.map(Into::into),
    }
}

fn answer(question: &str, text: &str) -> Operation {
    Operation::Update(UpdateArgs {
        answers: vec![(question.into(), text.into())],
        reason: "answered".into(),
        ..UpdateArgs::default()
    })
}

#[test]
fn an_agent_may_not_add_facts_answer_questions_or_change_goal_and_budget() {
    let l = chain();
    let q = "Which locale ships first?";
    let l = run(&l, ask(q, None), &agent());
    let forbidden = [
        (
            UpdateArgs {
                add_facts: vec!["the API returns UTC".into()],
                ..UpdateArgs::default()
            },
            "facts",
        ),
        (
            UpdateArgs {
                resolve_missing_info: vec![q.into()],
                ..UpdateArgs::default()
            },
            "missing info (answering it)",
        ),
        (
            UpdateArgs {
                answers: vec![(q.into(), "en-GB".into())],
                ..UpdateArgs::default()
            },
            "missing info (answering it)",
        ),
        (
            UpdateArgs {
                goal: Some("something easier".into()),
                ..UpdateArgs::default()
            },
            "the goal",
        ),
    ];
    for (mut args, field) in forbidden {
        args.reason = "the agent tried".into();
        let err = refused(Some(&l), Operation::Update(args), &agent());
        assert_eq!(err.code(), "agent_update");
        assert!(
            matches!(&err, RuleError::AgentUpdate { field: f, .. } if *f == field),
            "{err:?}"
        );
        assert!(err.to_string().contains("only a person"), "{err}");
    }
    assert_eq!(l.mission.missing_info, vec![q.to_owned()]);
    assert!(l.mission.facts.is_empty());
    // What an agent may add: a constraint and another question.
    let ok = Operation::Update(UpdateArgs {
        add_constraints: vec!["no new dependencies".into()],
        add_missing_info: vec!["Is the old endpoint still used?".into()],
        reason: "found while reading".into(),
        ..UpdateArgs::default()
    });
    let after = run(&l, ok, &agent());
    assert_eq!(after.mission.constraints, vec!["no new dependencies"]);
    assert_eq!(after.mission.missing_info.len(), 2);
}

#[test]
fn a_question_pauses_the_mission_for_a_person_and_the_agent_cannot_resume_it() {
    let l = chain();
    let q = "Which locale ships first?";
    let asked = applied(Some(&l), ask(q, Some("S1")), &agent());
    let l = asked.ledger;
    assert_eq!(l.mission.status, MissionStatus::Paused);
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Human));
    assert_eq!(l.mission.missing_info, vec![q.to_owned()]);
    assert_eq!(l.open_asks(), vec![q]);
    assert!(!l.answered());
    let err = refused(
        Some(&l),
        Operation::Resume {
            note: "I guessed".into(),
        },
        &agent(),
    );
    assert_eq!(err.code(), "resume_needs_human");
    // A second question waits with the first, without a second pause.
    let l = run(&l, ask("Keep the old flag?", None), &agent());
    assert_eq!(l.open_asks().len(), 2);
    // One answer is not enough; both are.
    let l = run(&l, answer(q, "en-GB"), &human());
    assert!(!l.answered(), "one question is still open");
    let l = run(&l, answer("Keep the old flag?", "no"), &human());
    assert!(l.answered());
    assert!(l.mission.facts.iter().any(|f| f.contains("en-GB")));
}

#[test]
fn a_question_names_an_existing_step_and_is_not_empty() {
    let l = chain();
    assert_eq!(
        refused(Some(&l), ask("  ", None), &agent()).code(),
        "empty_question"
    );
    assert_eq!(
        refused(Some(&l), ask("Which one?", Some("S9")), &agent()).code(),
        "unknown_step"
    );
    assert_eq!(l.mission.status, MissionStatus::Running);
}

#[test]
fn a_manual_pause_is_not_taken_for_an_answered_question() {
    let l = chain();
    let l = run(
        &l,
        Operation::Pause {
            reason: PauseReason::Manual,
            note: "wait".into(),
        },
        &agent(),
    );
    assert!(!l.answered());
}

#[test]
fn open_questions_are_numbered_from_one_and_a_wrong_number_lists_them() {
    let l = chain();
    assert_eq!(l.open_question(1), Err("nothing is missing".to_owned()));
    let l = run(&l, ask("Which locale?", None), &agent());
    let l = run(&l, ask("Keep v1?", None), &agent());
    assert_eq!(l.open_question(2), Ok("Keep v1?"));
    assert_eq!(
        l.open_question(3),
        Err("1. Which locale?; 2. Keep v1?".to_owned())
    );
    assert_eq!(l.open_question(0).ok(), None);
    assert_eq!(l.question_number("Keep v1?"), 2);
    assert_eq!(l.question_number("  Which locale? "), 1);
}
