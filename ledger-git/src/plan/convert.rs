//! An approved plan as a mission: its goal, and its stages or proposed changes as steps.
//!
//! Every front end (`/mission` and `/cruise` on GitHub, `navin mission start --from-plan`
//! locally) converts through here, so a plan becomes the same board wherever it is
//! started.

use chrono::{DateTime, Utc};

use crate::model::{MissionMode, PendingDefault, StagePolicy};
use crate::ops::{InitArgs, NewTask};
use crate::plan::{Operation as FileOp, Plan};
use crate::Validation;

/// The repository's say in how a plan becomes a mission (`.github/navin.yml`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Knobs {
    /// `stages:`: whether a finished stage waits for `/continue`.
    pub stages: StagePolicy,
    /// `questions.default_after`: how long an unanswered question's default waits before
    /// it stands, with the wait as written (`48h`). `None`: defaults stand at once.
    pub default_after: Option<(chrono::Duration, String)>,
}

/// An approved plan as the mission to start: goal, steps, knowledge, stage policy and
/// pending defaults. The front end adds the origin, the budget and `replace`.
pub fn plan_init(plan: &Plan, mode: MissionMode, knobs: &Knobs, now: DateTime<Utc>) -> InitArgs {
    let steps = plan_steps(plan);
    let steps = match mode {
        MissionMode::Cruise => single_stage(steps),
        MissionMode::Staged => steps,
    };
    let knowledge = plan_knowledge(plan, knobs.default_after.as_ref(), now);
    let (constraints, acceptance_criteria) = plan_contract(plan);
    InitArgs {
        goal: plan_goal(plan),
        constraints,
        acceptance_criteria,
        facts: knowledge.facts,
        missing_info: knowledge.missing,
        pending_defaults: knowledge.pending,
        steps,
        mode,
        stages: knobs.stages,
        ..InitArgs::default()
    }
}

/// The hand-off contract's terms as the mission's constraints (allowed tools, scope)
/// and acceptance criteria (completion criteria), so execution is held to what was
/// approved. A plan without a contract adds none.
pub fn plan_contract(plan: &Plan) -> (Vec<String>, Vec<String>) {
    let Some(h) = &plan.handoff else {
        return (Vec::new(), Vec::new());
    };
    let mut constraints = Vec::new();
    if !h.allowed_tools.is_empty() {
        constraints.push(clip(&format!(
            "Allowed tools: {}",
            h.allowed_tools.join(", ")
        )));
    }
    if !h.scope.is_empty() {
        constraints.push(clip(&format!(
            "Scope: only {}; anything else needs a replan",
            h.scope.join(", ")
        )));
    }
    let acceptance = h
        .completion_criteria
        .iter()
        .map(|c| clip(c.trim()))
        .filter(|c| !c.is_empty())
        .collect();
    (constraints, acceptance)
}

/// The mission's budget: the configured one, tightened by the contract's ceilings
/// (a plan may ask for fewer retries, replans or stalls, never for more).
pub fn plan_budget(plan: &Plan, configured: crate::model::Budget) -> crate::model::Budget {
    let Some(h) = &plan.handoff else {
        return configured;
    };
    crate::model::Budget {
        max_retries: configured.max_retries.min(h.budgets.max_retries),
        max_replans: configured.max_replans.min(h.budgets.max_replans),
        max_stalls: configured.max_stalls.min(h.budgets.max_stalls),
        ..configured
    }
}

/// What a plan's questions tell the mission (see [`plan_knowledge`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Knowledge {
    pub facts: Vec<String>,
    pub missing: Vec<String>,
    /// Questions in `missing` whose default stands after the wait.
    pub pending: Vec<PendingDefault>,
}

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

/// The plan's questions as the mission's knowledge: an answered question is a fact
/// (`question → answer`); one with a default is a fact too (`… (default)`), unless
/// `default_after` gives people time to answer: then it is missing info whose default
/// stands at `now + wait`. One with neither is missing info a person must give
/// (`/answer`). In the plan's order.
pub fn plan_knowledge(
    plan: &Plan,
    default_after: Option<&(chrono::Duration, String)>,
    now: DateTime<Utc>,
) -> Knowledge {
    let mut k = Knowledge::default();
    for q in &plan.questions {
        let question = q.question.trim();
        let answer = q.answer.as_deref().map(str::trim).filter(|a| !a.is_empty());
        let default = Some(q.default.trim()).filter(|d| !d.is_empty());
        match (answer, default, default_after) {
            (Some(a), _, _) => k.facts.push(clip(&format!("{question} → {a}"))),
            (None, Some(d), Some((wait, after))) => {
                let question = clip(question);
                k.pending.push(PendingDefault {
                    question: question.clone(),
                    default: clip(d),
                    due_at: now + *wait,
                    after: after.clone(),
                });
                k.missing.push(question);
            }
            (None, Some(d), None) => k.facts.push(clip(&format!("{question} → {d} (default)"))),
            (None, None, _) => k.missing.push(clip(question)),
        }
    }
    k
}

/// The same steps as one stage: no step waits for another, so every one is ready (and
/// handed out) at once. What `/cruise` makes of a plan's stages.
pub fn single_stage(mut steps: Vec<NewTask>) -> Vec<NewTask> {
    for step in &mut steps {
        step.depends_on.clear();
        step.stage = None;
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
                let destructive =
                    destructive(plan, stage.files.iter().map(String::as_str), &stage.title);
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
                    stage: Some(u32::try_from(i + 1).unwrap_or(u32::MAX)),
                    destructive,
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
                destructive: destructive(plan, [change.path.as_str()], ""),
                ..NewTask::default()
            }
        })
        .collect()
}

/// Manifests whose change under a plan with new dependencies adds them.
const MANIFESTS: [&str; 10] = [
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "requirements.txt",
    "go.mod",
    "Gemfile",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "composer.json",
];

/// Why a step touching `files` (or titled `title`) is destructive, seed-wise: it deletes
/// a file, adds a dependency, or migrates data. Navin checkpoints before it starts.
fn destructive<'a>(
    plan: &Plan,
    files: impl IntoIterator<Item = &'a str>,
    title: &str,
) -> Option<String> {
    let mut why: Vec<String> = Vec::new();
    let migration = |text: &str| text.to_ascii_lowercase().contains("migrat");
    let mut migrates = migration(title);
    for file in files {
        let op = plan
            .changes
            .iter()
            .find(|c| c.path == file)
            .map(|c| c.operation);
        if op == Some(FileOp::Delete) {
            why.push(format!("deletes {file}"));
        }
        let name = file.rsplit('/').next().unwrap_or(file);
        if !plan.new_dependencies.is_empty() && MANIFESTS.contains(&name) {
            why.push(format!("adds dependencies in {file}"));
        }
        migrates |= migration(file);
    }
    if migrates {
        why.push("runs a migration".to_owned());
    }
    (!why.is_empty()).then(|| clip(&why.join(", ")))
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
        let now = chrono::Utc::now();
        let k = plan_knowledge(&p, None, now);
        assert_eq!(
            k.facts,
            [
                "Which locale first? → fr",
                "Keep the old flag? → Yes (default)"
            ]
        );
        assert_eq!(k.missing, ["Who signs off?"]);
        assert!(k.pending.is_empty());
        let wait = (chrono::Duration::hours(48), "48h".to_owned());
        let k = plan_knowledge(&p, Some(&wait), now);
        assert_eq!(k.facts, ["Which locale first? → fr"]);
        assert_eq!(k.missing, ["Keep the old flag?", "Who signs off?"]);
        assert_eq!(k.pending.len(), 1);
        assert_eq!(k.pending[0].question, "Keep the old flag?");
        assert_eq!(k.pending[0].default, "Yes");
        assert_eq!(k.pending[0].due_at, now + chrono::Duration::hours(48));
    }

    #[test]
    fn deletes_new_dependencies_and_migrations_are_destructive_steps() {
        let mut p = plan(vec![], vec![]);
        p.changes[1].operation = FileOp::Delete;
        p.changes.push(FileChange {
            path: "Cargo.toml".into(),
            operation: FileOp::Edit,
            change: "add serde".into(),
            rationale: "r".into(),
        });
        p.changes.push(FileChange {
            path: "db/migrations/001_add.sql".into(),
            operation: FileOp::Create,
            change: "c".into(),
            rationale: "r".into(),
        });
        let why = |p: &Plan| -> Vec<Option<String>> {
            plan_steps(p).into_iter().map(|s| s.destructive).collect()
        };
        assert_eq!(
            why(&p),
            [
                None,
                Some("deletes src/b.rs".to_owned()),
                None,
                Some("runs a migration".to_owned())
            ]
        );
        p.new_dependencies = vec!["serde 1".into()];
        assert_eq!(
            why(&p)[2].as_deref(),
            Some("adds dependencies in Cargo.toml")
        );
        p.stages = vec![Stage {
            title: "Migrate read paths".into(),
            files: vec!["src/a.rs".into()],
            verification: String::new(),
        }];
        assert_eq!(why(&p)[0].as_deref(), Some("runs a migration"));
    }

    #[test]
    fn stage_steps_carry_their_stage_number_and_cruise_drops_it() {
        let stage = |t: &str| Stage {
            title: t.into(),
            files: vec![],
            verification: String::new(),
        };
        let p = plan(vec![stage("a"), stage("b")], vec![]);
        let stages: Vec<Option<u32>> = plan_steps(&p).iter().map(|s| s.stage).collect();
        assert_eq!(stages, [Some(1), Some(2)]);
        let init = plan_init(
            &p,
            MissionMode::Cruise,
            &Knobs::default(),
            chrono::Utc::now(),
        );
        assert!(init
            .steps
            .iter()
            .all(|s| s.stage.is_none() && s.depends_on.is_empty()));
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

    #[test]
    fn the_contracts_terms_become_constraints_acceptance_and_a_tighter_budget() {
        let mut p = plan(vec![], vec!["cargo test".into()]);
        if let Some(h) = p.handoff.as_mut() {
            h.completion_criteria = vec!["`cargo test` passes".into(), " ".into()];
            h.allowed_tools = vec!["read_file".into(), "edit_file".into()];
            h.scope = vec!["src/a.rs".into(), "src/b.rs".into()];
            h.budgets.max_retries = 1;
            h.budgets.max_stalls = 9;
        }
        let init = plan_init(
            &p,
            MissionMode::Staged,
            &Knobs::default(),
            chrono::Utc::now(),
        );
        assert_eq!(init.acceptance_criteria, ["`cargo test` passes"]);
        assert_eq!(
            init.constraints,
            [
                "Allowed tools: read_file, edit_file",
                "Scope: only src/a.rs, src/b.rs; anything else needs a replan"
            ]
        );
        let budget = plan_budget(&p, crate::model::Budget::default());
        assert_eq!(budget.max_retries, 1, "the plan tightens");
        assert_eq!(budget.max_stalls, 3, "but never loosens");
        p.handoff = None;
        assert_eq!(plan_contract(&p), (vec![], vec![]));
    }
}
