//! Two people editing one plan at once: edits to different sections both land, edits to one section merge line by line, overlapping edits come back as a conflict with all three texts.

use super::fixture::sample_plan;
use crate::plan::*;

fn doc(plan: &Plan) -> PlanDocument {
    PlanDocument::from_plan(plan).expect("a valid plan")
}

fn merged(outcome: MergeOutcome) -> (Plan, Vec<Section>) {
    match outcome {
        MergeOutcome::Merged {
            document,
            merged_sections,
        } => (document.into_plan(), merged_sections),
        other => panic!("expected a merge, got {other:#?}"),
    }
}

/// The sample plan with a data flow of five separate lines, so edits can be apart.
fn five_line_base() -> Plan {
    Plan {
        data_flow: "Webhook in.\nQueue stores it.\nWorker leases it.\nEngine handles it.\nLedger records it."
            .to_owned(),
        ..sample_plan()
    }
}

#[test]
fn edits_to_different_sections_both_land() {
    let base = sample_plan();
    let ours = Plan {
        goal: "Load the config from YAML, and say which key is unknown.".to_owned(),
        ..base.clone()
    };
    let mut theirs = base.clone();
    theirs.risks.push("A YAML bomb exhausts memory.".to_owned());

    let (plan, merged_sections) = merged(merge(&doc(&base), &doc(&ours), &doc(&theirs)));
    assert_eq!(plan.goal, ours.goal);
    assert_eq!(plan.risks, theirs.risks);
    assert!(merged_sections.is_empty(), "{merged_sections:?}");
}

#[test]
fn edits_to_different_lines_of_one_section_merge_line_by_line() {
    let base = five_line_base();
    let ours = Plan {
        data_flow: base
            .data_flow
            .replace("Webhook in.", "A signed webhook comes in."),
        ..base.clone()
    };
    let theirs = Plan {
        data_flow: base
            .data_flow
            .replace("Ledger records it.", "The ledger branch records it."),
        ..base.clone()
    };

    let (plan, merged_sections) = merged(merge(&doc(&base), &doc(&ours), &doc(&theirs)));
    assert_eq!(
        plan.data_flow,
        "A signed webhook comes in.\nQueue stores it.\nWorker leases it.\nEngine handles it.\nThe ledger branch records it."
    );
    assert_eq!(merged_sections, [Section::DataFlow]);
}

#[test]
fn edits_to_the_same_line_are_a_conflict_carrying_all_three_texts() {
    let base = sample_plan();
    let ours = Plan {
        goal: "Load YAML.".to_owned(),
        ..base.clone()
    };
    let theirs = Plan {
        goal: "Load TOML.".to_owned(),
        title: "Add a TOML config loader".to_owned(),
        ..base.clone()
    };

    let outcome = merge(&doc(&base), &doc(&ours), &doc(&theirs));
    let MergeOutcome::Conflict {
        conflicts, invalid, ..
    } = outcome
    else {
        panic!("expected a conflict, got {outcome:#?}");
    };
    assert_eq!(invalid, None);
    assert_eq!(
        conflicts,
        [SectionConflict {
            section: Section::Goal,
            base: format!("{}\n", base.goal),
            ours: "Load YAML.\n".to_owned(),
            theirs: "Load TOML.\n".to_owned(),
        }],
        "only the goal conflicts; the title changed on one side only"
    );
}

#[test]
fn a_title_change_lands_beside_a_section_edit_and_two_title_changes_conflict() {
    let base = sample_plan();
    let ours = Plan {
        title: "Add a YAML config loader with key checks".to_owned(),
        ..base.clone()
    };
    let theirs = Plan {
        impact_isolation: "Only `bot/src/config.rs` changes.".to_owned(),
        ..base.clone()
    };
    let (plan, _) = merged(merge(&doc(&base), &doc(&ours), &doc(&theirs)));
    assert_eq!(plan.title, ours.title);
    assert_eq!(plan.impact_isolation, theirs.impact_isolation);

    let retitled = Plan {
        title: "Read config from YAML".to_owned(),
        ..base.clone()
    };
    let outcome = merge(&doc(&base), &doc(&ours), &doc(&retitled));
    let MergeOutcome::Conflict { conflicts, .. } = outcome else {
        panic!("expected a conflict, got {outcome:#?}");
    };
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].section, Section::Title);
    assert_eq!(conflicts[0].ours, ours.title);
    assert_eq!(conflicts[0].theirs, retitled.title);
}

#[test]
fn edits_that_combine_into_an_invalid_plan_are_a_conflict_naming_the_rule() {
    // Three risks; one side adds two at the top, the other one at the bottom: each edit
    // is valid, together they make six.
    let base = sample_plan();
    let mut ours = base.clone();
    ours.risks.insert(0, "Startup gets slower.".to_owned());
    ours.risks.insert(0, "Docs go out of date.".to_owned());
    let mut theirs = base.clone();
    theirs.risks.push("A YAML bomb exhausts memory.".to_owned());
    let theirs = Plan {
        goal: "Load YAML config.".to_owned(),
        ..theirs
    };

    let outcome = merge(&doc(&base), &doc(&ours), &doc(&theirs));
    let MergeOutcome::Conflict {
        conflicts, invalid, ..
    } = outcome
    else {
        panic!("expected a conflict, got {outcome:#?}");
    };
    let invalid = invalid.expect("the parser's problem");
    assert_eq!(invalid.kind, PlanErrorKind::RiskCount { found: 6 });
    let sections: Vec<Section> = conflicts.iter().map(|c| c.section).collect();
    assert_eq!(
        sections,
        [Section::Goal, Section::Risks],
        "every part either side changed is shown"
    );
}

#[test]
fn one_side_adding_stages_keeps_them() {
    let base = Plan {
        stages: Vec::new(),
        ..sample_plan()
    };
    let ours = sample_plan();
    let theirs = Plan {
        goal: "Load YAML config.".to_owned(),
        ..base.clone()
    };
    let (plan, _) = merged(merge(&doc(&base), &doc(&ours), &doc(&theirs)));
    assert_eq!(plan.stages, ours.stages);
    assert_eq!(plan.goal, theirs.goal);
}
