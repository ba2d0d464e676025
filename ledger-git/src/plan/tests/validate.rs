//! Rules on typed plans, and the PlanDocument that can only hold a plan that passed them.

use super::fixture::{sample_plan, sample_text};
use crate::plan::*;

fn rejected(plan: &Plan) -> PlanError {
    validate(plan).expect_err("the plan should be rejected")
}

#[test]
fn accepts_the_sample_plan() {
    assert_eq!(validate(&sample_plan()), Ok(()));
}

#[test]
fn rejects_empty_title_and_goal() {
    let mut plan = sample_plan();
    plan.title = "  ".to_owned();
    assert_eq!(rejected(&plan).kind, PlanErrorKind::EmptyTitle);
    let mut plan = sample_plan();
    plan.goal = "\n".to_owned();
    let err = rejected(&plan);
    assert_eq!((err.line, err.section), (None, Some(Section::Goal)));
    assert_eq!(err.to_string(), "section \"Goal\": the section is empty");
}

#[test]
fn rejects_free_text_with_a_line_that_would_start_a_section() {
    let mut plan = sample_plan();
    plan.target_state = "Intro\n## Approach\nmore".to_owned();
    assert!(matches!(
        rejected(&plan).kind,
        PlanErrorKind::HeadingInText { .. }
    ));
    plan.target_state = "Intro\n```\n## Approach\n```".to_owned();
    assert_eq!(validate(&plan), Ok(()));
}

#[test]
fn rejects_free_text_with_an_unclosed_fence() {
    let mut plan = sample_plan();
    plan.data_flow = "a\n```\nb".to_owned();
    assert_eq!(
        rejected(&plan).kind,
        PlanErrorKind::UnclosedFence { opened_at: 2 }
    );
}

#[test]
fn rejects_multi_line_items() {
    let mut plan = sample_plan();
    plan.risks[1] = "two\nlines".to_owned();
    assert_eq!(
        rejected(&plan).kind,
        PlanErrorKind::MultiLine { field: "risk" }
    );
    let mut plan = sample_plan();
    plan.title = "a\nb".to_owned();
    assert_eq!(rejected(&plan).section, Some(Section::Title));
}

#[test]
fn rejects_fewer_than_three_or_more_than_five_risks() {
    let mut plan = sample_plan();
    plan.risks.truncate(2);
    assert_eq!(rejected(&plan).kind, PlanErrorKind::RiskCount { found: 2 });
    plan.risks = (0..6).map(|i| format!("risk {i}")).collect();
    assert_eq!(rejected(&plan).kind, PlanErrorKind::RiskCount { found: 6 });
}

#[test]
fn rejects_question_with_empty_default() {
    let mut plan = sample_plan();
    plan.questions[1].default = String::new();
    assert!(matches!(
        rejected(&plan).kind,
        PlanErrorKind::EmptyField {
            field: "Default",
            ..
        }
    ));
}

#[test]
fn rejects_question_that_reads_like_a_field_line() {
    let mut plan = sample_plan();
    plan.questions[0].question = "Default: keep INI?".to_owned();
    assert!(matches!(
        rejected(&plan).kind,
        PlanErrorKind::QuestionLooksLikeField { .. }
    ));
}

#[test]
fn rejects_unsafe_and_duplicate_paths() {
    for path in ["", "../x", "/abs", "a/./b", " a.rs"] {
        let mut plan = sample_plan();
        plan.changes[0].path = path.to_owned();
        plan.stages.clear();
        let err = rejected(&plan);
        assert_eq!(err.section, Some(Section::ProposedChanges), "{path:?}");
    }
    let mut plan = sample_plan();
    plan.changes[1].path = plan.changes[0].path.clone();
    assert!(matches!(
        rejected(&plan).kind,
        PlanErrorKind::DuplicatePath {
            first_line: None,
            ..
        }
    ));
}

#[test]
fn rejects_stage_files_not_in_proposed_changes() {
    let mut plan = sample_plan();
    plan.stages[1].files.push("README.md".to_owned());
    assert_eq!(
        rejected(&plan).kind,
        PlanErrorKind::StageFileNotInChanges {
            stage: 2,
            path: "README.md".to_owned()
        }
    );
}

#[test]
fn rejects_contract_without_verification_or_with_backticks() {
    let mut plan = sample_plan();
    if let Some(c) = plan.handoff.as_mut() {
        c.verification.clear();
    }
    assert!(matches!(
        rejected(&plan).kind,
        PlanErrorKind::EmptyField {
            field: "Verification commands",
            ..
        }
    ));
    let mut plan = sample_plan();
    if let Some(c) = plan.handoff.as_mut() {
        c.verification = vec!["echo `x`".to_owned()];
    }
    assert!(matches!(
        rejected(&plan).kind,
        PlanErrorKind::BacktickInCommand { .. }
    ));
}

#[test]
fn plan_document_from_plan_stores_the_normalised_plan_and_its_text() {
    let mut plan = sample_plan();
    plan.risks[0] = "  Existing INI configs stop loading.  ".to_owned();
    plan.goal = format!("\n{}\n\n\n", plan.goal);
    let doc = PlanDocument::from_plan(&plan).expect("valid plan");
    assert_eq!(doc.plan(), &sample_plan());
    assert_eq!(doc.text(), sample_text());
    assert_eq!(doc.hash(), content_hash(&sample_text()));
}

#[test]
fn plan_document_refuses_an_invalid_plan() {
    let mut plan = sample_plan();
    plan.risks.clear();
    assert_eq!(
        PlanDocument::from_plan(&plan).map(|_| ()),
        Err(PlanError {
            line: None,
            section: Some(Section::Risks),
            kind: PlanErrorKind::RiskCount { found: 0 }
        })
    );
}

#[test]
fn plan_document_parsed_from_variant_text_has_the_canonical_text_and_hash() {
    let variant = sample_text()
        .replace("- YAML anchors", "* YAML anchors")
        .replace('\n', "\r\n");
    let doc = PlanDocument::parse(&variant).expect("variant parses");
    assert_eq!(doc.text(), sample_text());
    assert_eq!(
        doc.hash(),
        PlanDocument::parse(&sample_text()).expect("parses").hash()
    );
}

#[test]
fn plan_document_serializes_as_its_text_and_is_revalidated_when_read() {
    let doc = PlanDocument::parse(&sample_text()).expect("parses");
    let json = serde_json::to_string(&doc).expect("serializes");
    assert_eq!(json, serde_json::to_string(&sample_text()).expect("string"));
    let back: PlanDocument = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, doc);
    let broken =
        serde_json::to_string(&sample_text().replace("## Goal", "## Gaol")).expect("string");
    let err = serde_json::from_str::<PlanDocument>(&broken).expect_err("invalid text");
    assert!(
        err.to_string().contains("unknown section \"Gaol\""),
        "{err}"
    );
}

#[test]
fn everything_the_parser_accepts_passes_validate() {
    let plan = parse(&sample_text()).expect("parses");
    assert_eq!(validate(&plan), Ok(()));
}
