//! Pure conversions into mission steps: an issue's task list, or an approved plan's stages and proposed changes.

use navin_ledger::plan::{Operation as FileOp, Plan};
use navin_ledger::{NewTask, Validation};

/// Longest step title kept; the board is not a place for essays.
const MAX_TITLE: usize = 200;

/// Open items of the issue body's task list (`- [ ] …` or `* [ ] …`, outside code
/// fences) as steps `T1`, `T2`, … in order. Checked items are already done and skipped.
pub fn task_list_steps(body: &str) -> Vec<NewTask> {
    let mut steps = Vec::new();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        let item = trimmed
            .strip_prefix("- [ ] ")
            .or_else(|| trimmed.strip_prefix("* [ ] "))
            .or_else(|| trimmed.strip_prefix("+ [ ] "));
        if let Some(title) = item.map(str::trim).filter(|t| !t.is_empty()) {
            steps.push(NewTask {
                id: format!("T{}", steps.len() + 1),
                title: clip(title),
                ..NewTask::default()
            });
        }
    }
    steps
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
/// commands, each step gets validation `test` and those commands as its acceptance:
/// the pull request that carries the step is done only when its checks pass, which is
/// the only proof Navin accepts. Without commands the steps close by hand (`/done`).
pub fn plan_steps(plan: &Plan) -> Vec<NewTask> {
    let verification: Vec<String> = plan
        .handoff
        .as_ref()
        .map(|h| h.verification.clone())
        .unwrap_or_default();
    let acceptance = (!verification.is_empty())
        .then(|| clip(&format!("CI runs green: {}", verification.join("; "))));
    if !plan.stages.is_empty() {
        return plan
            .stages
            .iter()
            .enumerate()
            .map(|(i, stage)| {
                let checks = !stage.verification.trim().is_empty() || !verification.is_empty();
                NewTask {
                    id: format!("S{}", i + 1),
                    title: clip(&stage.title),
                    description: Some(describe_stage(&stage.files, &stage.verification)),
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
                    command: Some(stage.verification.trim())
                        .filter(|v| !v.is_empty())
                        .or(verification.first().map(|v| v.trim()))
                        .map(str::to_owned),
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
                command: verification.first().cloned(),
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
    if !verification.trim().is_empty() {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("Verification: {}", verification.trim()));
    }
    clip(&text)
}

fn clip(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_TITLE) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use navin_ledger::plan::{FileChange, HandoffBudgets, HandoffContract, Stage};

    #[test]
    fn open_task_list_items_become_steps_in_order() {
        let body = "Intro\n\n- [ ] Write the parser\n- [x] Already done\n* [ ]  Add tests  \n\n```\n- [ ] not a task\n```\n- [ ] Ship it\n";
        let steps = task_list_steps(body);
        let got: Vec<(&str, &str)> = steps
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("T1", "Write the parser"),
                ("T2", "Add tests"),
                ("T3", "Ship it")
            ]
        );
        assert!(steps.iter().all(|s| s.validation == Validation::None));
    }

    #[test]
    fn a_body_without_a_task_list_gives_no_steps() {
        assert!(task_list_steps("Just prose.\n- a plain bullet").is_empty());
    }

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
    fn long_titles_are_clipped_to_one_line() {
        let long = format!("- [ ] {}\n", "word ".repeat(100));
        let steps = task_list_steps(&long);
        assert!(steps[0].title.chars().count() <= MAX_TITLE + 1);
        assert!(steps[0].title.ends_with('…'));
    }
}
