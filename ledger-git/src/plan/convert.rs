//! An approved plan as a mission: its goal, and its stages or proposed changes as steps.
//!
//! Every front end (`/mission` and `/cruise` on GitHub, `navin mission start --from-plan`
//! locally) converts through here, so a plan becomes the same board wherever it is
//! started.

use crate::ops::NewTask;
use crate::plan::{Operation as FileOp, Plan};
use crate::Validation;

/// Longest step title kept; the board is not a place for essays.
pub const MAX_TITLE: usize = 200;

/// The mission's goal: the hand-off contract's objective (what execution is held to),
/// else the plan's goal.
pub fn plan_goal(plan: &Plan) -> String {
    plan.handoff
        .as_ref()
        .map(|h| h.objective.trim())
        .filter(|o| !o.is_empty())
        .map_or_else(|| plan.goal.clone(), str::to_owned)
}

/// The plan's questions as the mission's knowledge: an answered question, or one whose
/// default stands, is a fact (`question → answer`); one with neither is missing info
/// a person must give (`/answer`). Returns (facts, missing info), in the plan's order.
pub fn plan_knowledge(plan: &Plan) -> (Vec<String>, Vec<String>) {
    let mut facts = Vec::new();
    let mut missing = Vec::new();
    for q in &plan.questions {
        let question = q.question.trim();
        let answer = q.answer.as_deref().map(str::trim).filter(|a| !a.is_empty());
        let default = Some(q.default.trim()).filter(|d| !d.is_empty());
        match (answer, default) {
            (Some(a), _) => facts.push(clip(&format!("{question} → {a}"))),
            (None, Some(d)) => facts.push(clip(&format!("{question} → {d} (default)"))),
            (None, None) => missing.push(clip(question)),
        }
    }
    (facts, missing)
}

/// The same steps as one stage: no step waits for another, so every one is ready (and
/// handed out) at once. What `/cruise` makes of a plan's stages.
pub fn single_stage(mut steps: Vec<NewTask>) -> Vec<NewTask> {
    for step in &mut steps {
        step.depends_on.clear();
    }
    steps
}

/// An approved plan as steps. With stages: `S1…Sn`, each after the previous one.
/// Without: one `C<i>` step per proposed change. When the plan names verification
/// commands, each step gets validation `test`, those commands (all of them, in order)
/// and an acceptance naming them: the step is done only when they pass, in CI on its
/// pull request or in a run Navin recorded itself. A stage's own verification comes
/// first. Without commands the steps close by hand.
pub fn plan_steps(plan: &Plan) -> Vec<NewTask> {
    let verification: Vec<String> = plan
        .handoff
        .as_ref()
        .map(|h| {
            h.verification
                .iter()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let acceptance = (!verification.is_empty())
        .then(|| clip(&format!("CI runs green: {}", verification.join("; "))));
    if !plan.stages.is_empty() {
        return plan
            .stages
            .iter()
            .enumerate()
            .map(|(i, stage)| {
                let own = stage.verification.trim();
                let mut commands: Vec<String> = Vec::new();
                if !own.is_empty() {
                    commands.push(own.to_owned());
                }
                for v in &verification {
                    if !commands.contains(v) {
                        commands.push(v.clone());
                    }
                }
                let checks = !commands.is_empty();
                NewTask {
                    id: format!("S{}", i + 1),
                    title: clip(&stage.title),
                    description: Some(describe_stage(&stage.files, own)),
                    depends_on: if i == 0 {
                        Vec::new()
                    } else {
                        vec![format!("S{i}")]
                    },
                    validation: if checks {
                        Validation::Test
                    } else {
                        Validation::None
                    },
                    acceptance: acceptance.clone().filter(|_| checks),
                    commands,
                    ..NewTask::default()
                }
            })
            .collect();
    }
    plan.changes
        .iter()
        .enumerate()
        .map(|(i, change)| {
            let verb = match change.operation {
                FileOp::Edit => "Edit",
                FileOp::Create => "Create",
                FileOp::Delete => "Delete",
            };
            NewTask {
                id: format!("C{}", i + 1),
                title: clip(&format!("{verb} {}", change.path)),
                description: Some(clip(&change.change)),
                validation: if acceptance.is_some() {
                    Validation::Test
                } else {
                    Validation::None
                },
                acceptance: acceptance.clone(),
                commands: verification.clone(),
                ..NewTask::default()
            }
        })
        .collect()
}

fn describe_stage(files: &[String], verification: &str) -> String {
    let mut text = String::new();
    if !files.is_empty() {
        text.push_str(&format!("Files: {}.", files.join(", ")));
    }
    if !verification.is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("Verification: {verification}"));
    }
    clip(&text)
}

/// `text` on one line, at most [`MAX_TITLE`] characters (an ellipsis marks a cut).
pub fn clip(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_TITLE) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use crate::plan::{FileChange, HandoffBudgets, HandoffContract, Stage};

    fn plan(stages: Vec<Stage>, verification: Vec<String>) -> Plan {
        let change = |path: &str, operation| FileChange {
            path: path.to_owned(),
            operation,
            change: "Do it.".to_owned(),
            rationale: "Because.".to_owned(),
        };
        Plan {
            title: "t".into(),
            persona: "p".into(),
            goal: "g".into(),
            architecture: "a".into(),
            capabilities: "c".into(),
            data_flow: "d".into(),
            target_state: "t".into(),
            impact_isolation: "i".into(),
            changes: vec![
                change("src/a.rs", FileOp::Edit),
                change("src/b.rs", FileOp::Create),
            ],
            new_dependencies: vec![],
            risks: vec![],
            next_steps: vec![],
            questions: vec![],
            handoff: Some(HandoffContract {
                objective: "o".into(),
                completion_criteria: vec![],
                budgets: HandoffBudgets::default(),
                allowed_tools: vec![],
                scope: vec![],
                verification,
            }),
            stages,
        }
    }

    #[test]
    fn plan_changes_become_test_steps_proven_by_ci_when_commands_verify() {
        let steps = plan_steps(&plan(vec![], vec!["cargo test".into()]));
        let got: Vec<(&str, &str, Validation, Option<&str>)> = steps
            .iter()
            .map(|s| {
                (
                    s.id.as_str(),
                    s.title.as_str(),
                    s.validation,
                    s.acceptance.as_deref(),
                )
            })
            .collect();
        let ci = Some("CI runs green: cargo test");
        assert_eq!(
            got,
            [
                ("C1", "Edit src/a.rs", Validation::Test, ci),
                ("C2", "Create src/b.rs", Validation::Test, ci),
            ]
        );
        let unverified = plan_steps(&plan(vec![], vec![]));
        assert_eq!(unverified.len(), 2);
        assert!(unverified
            .iter()
            .all(|s| s.validation == Validation::None && s.acceptance.is_none()));
    }

    #[test]
    fn plan_stages_become_a_chain_of_steps() {
        let stage = |title: &str, verification: &str| Stage {
            title: title.to_owned(),
            files: vec!["src/a.rs".to_owned()],
            verification: verification.to_owned(),
        };
        let steps = plan_steps(&plan(
            vec![stage("Parser", "cargo test -p parser"), stage("Docs", "")],
            vec![],
        ));
        assert_eq!(steps[0].id, "S1");
        assert!(steps[0].depends_on.is_empty());
        assert_eq!(steps[0].validation, Validation::Test);
        assert_eq!(steps[1].depends_on, ["S1"]);
        assert_eq!(steps[1].validation, Validation::None);
    }

    #[test]
    fn every_verification_command_is_carried_into_the_steps_in_order() {
        let steps = plan_steps(&plan(
            vec![],
            vec!["cargo test".into(), " cargo clippy ".into(), "".into()],
        ));
        assert_eq!(steps[0].commands, ["cargo test", "cargo clippy"]);
        let stage = Stage {
            title: "Parser".into(),
            files: vec![],
            verification: "cargo test -p parser".into(),
        };
        let staged = plan_steps(&plan(vec![stage], vec!["cargo test".into()]));
        assert_eq!(staged[0].commands, ["cargo test -p parser", "cargo test"]);
    }

    #[test]
    fn the_goal_is_the_handoff_objective_else_the_plans_goal() {
        let mut p = plan(vec![], vec![]);
        assert_eq!(plan_goal(&p), "o");
        p.handoff.as_mut().unwrap().objective = "  ".into();
        assert_eq!(plan_goal(&p), "g");
        p.handoff = None;
        assert_eq!(plan_goal(&p), "g");
    }

    #[test]
    fn answered_questions_and_defaults_are_facts_and_the_rest_is_missing_info() {
        use crate::plan::Question;
        let mut p = plan(vec![], vec![]);
        let q = |question: &str, default: &str, answer: Option<&str>| Question {
            question: question.into(),
            default: default.into(),
            answer: answer.map(str::to_owned),
        };
        p.questions = vec![
            q("Which locale first?", "en", Some("fr")),
            q("Keep the old flag?", "Yes", None),
            q("Who signs off?", "", Some("  ")),
        ];
        let (facts, missing) = plan_knowledge(&p);
        assert_eq!(
            facts,
            [
                "Which locale first? → fr",
                "Keep the old flag? → Yes (default)"
            ]
        );
        assert_eq!(missing, ["Who signs off?"]);
    }

    #[test]
    fn cruise_drops_every_dependency() {
        let stage = |t: &str| Stage {
            title: t.into(),
            files: vec![],
            verification: String::new(),
        };
        let steps = single_stage(plan_steps(&plan(vec![stage("a"), stage("b")], vec![])));
        assert!(steps.iter().all(|s| s.depends_on.is_empty()));
    }
}
