//! Checks a typed plan against every rule the parser enforces, in document order.

use super::error::{PlanError, PlanErrorKind};
use super::model::Plan;
use super::rules;
use super::section::Section;
use std::collections::HashSet;

/// Checks a plan built in code (by a planner or from JSON) before it can be
/// rendered, stored or approved. The rules are the parser's, so a plan that
/// passes renders to text that parses back; the first problem in document
/// order is returned, with `line: None` since a typed plan has no lines.
pub fn validate(plan: &Plan) -> Result<(), PlanError> {
    let in_section = PlanError::in_section;
    rules::check_title(&plan.title).map_err(|k| in_section(Section::Title, k))?;

    let free = [
        (Section::SystemPersona, &plan.persona),
        (Section::Goal, &plan.goal),
        (Section::RepositoryArchitecture, &plan.architecture),
        (Section::FunctionalCapabilities, &plan.capabilities),
        (Section::DataFlow, &plan.data_flow),
        (Section::TargetState, &plan.target_state),
        (Section::ImpactIsolation, &plan.impact_isolation),
    ];
    for (section, body) in free {
        rules::check_free_text(body).map_err(|k| in_section(section, k))?;
    }

    let changes = |k| in_section(Section::ProposedChanges, k);
    let mut paths = HashSet::with_capacity(plan.changes.len());
    for change in &plan.changes {
        rules::check_path(&change.path).map_err(changes)?;
        let item = rules::file_item(&change.path);
        rules::check_field("Change", &item, &change.change).map_err(changes)?;
        rules::check_field("Rationale", &item, &change.rationale).map_err(changes)?;
        if !paths.insert(change.path.as_str()) {
            return Err(changes(PlanErrorKind::DuplicatePath {
                path: change.path.clone(),
                first_line: None,
            }));
        }
    }

    for dependency in &plan.new_dependencies {
        rules::check_item("dependency", dependency)
            .map_err(|k| in_section(Section::NewDependencies, k))?;
    }

    for risk in &plan.risks {
        rules::check_item("risk", risk).map_err(|k| in_section(Section::Risks, k))?;
    }
    rules::check_risk_count(plan.risks.len()).map_err(|k| in_section(Section::Risks, k))?;

    let steps = |k| in_section(Section::ActionableNextSteps, k);
    if plan.next_steps.is_empty() {
        return Err(steps(PlanErrorKind::NoNextSteps));
    }
    for step in &plan.next_steps {
        rules::check_item("step", step).map_err(steps)?;
    }

    let questions = |k| in_section(Section::RisksAndAssumptions, k);
    for q in &plan.questions {
        rules::check_question_text(&q.question).map_err(questions)?;
        rules::check_field("Default", &rules::question_item(&q.question), &q.default)
            .map_err(questions)?;
        if let Some(answer) = &q.answer {
            rules::single_line("an answer", answer).map_err(questions)?;
        }
    }

    if let Some(contract) = &plan.handoff {
        let handoff = |k| in_section(Section::OptionalGoalHandoffContract, k);
        let item = rules::HANDOFF_ITEM;
        rules::check_field("Objective", item, &contract.objective).map_err(handoff)?;
        let required = |field, items: &[String]| {
            if items.is_empty() {
                Err(handoff(PlanErrorKind::EmptyField {
                    field,
                    item: item.to_owned(),
                }))
            } else {
                Ok(())
            }
        };
        required("Completion criteria", &contract.completion_criteria)?;
        for criterion in &contract.completion_criteria {
            rules::check_item("completion criterion", criterion).map_err(handoff)?;
        }
        for tool in &contract.allowed_tools {
            rules::check_item("allowed tool", tool).map_err(handoff)?;
        }
        for entry in &contract.scope {
            rules::check_item("scope", entry).map_err(handoff)?;
        }
        required("Verification commands", &contract.verification)?;
        for command in &contract.verification {
            rules::check_item("verification command", command).map_err(handoff)?;
            rules::check_command(command).map_err(handoff)?;
        }
    }

    let stages = |k| in_section(Section::Stages, k);
    for (index, stage) in plan.stages.iter().enumerate() {
        let number = index + 1;
        let item = rules::stage_item(number);
        rules::check_field("title", &item, &stage.title).map_err(stages)?;
        if stage.files.is_empty() {
            return Err(stages(PlanErrorKind::StageWithoutFiles { stage: number }));
        }
        for file in &stage.files {
            rules::check_path(file).map_err(stages)?;
            if !paths.contains(file.as_str()) {
                return Err(stages(PlanErrorKind::StageFileNotInChanges {
                    stage: number,
                    path: file.clone(),
                }));
            }
        }
        rules::check_field("Verification", &item, &stage.verification).map_err(stages)?;
    }
    Ok(())
}
