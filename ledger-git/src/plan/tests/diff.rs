//! Edits to a plan come out as a section-aware diff, in JSON and in markdown.

use super::fixture::{sample_plan, sample_text};
use crate::plan::*;

#[test]
fn identical_plans_have_an_empty_diff() {
    let d = diff(&sample_plan(), &sample_plan());
    assert!(d.is_empty());
    assert_eq!(serde_json::to_string(&d).expect("json"), "{}");
    assert_eq!(
        d.to_markdown(),
        "No edits: the edited plan is the same as the original.\n"
    );
}

#[test]
fn answer_filled_into_the_text_shows_as_an_answered_question() {
    let edited_text = sample_text().replacen(
        "   - **Answer:**\n",
        "   - **Answer:** Yes, for one release.\n",
        1,
    );
    let edited = parse(&edited_text).expect("edited plan parses");
    let d = diff(&sample_plan(), &edited);
    assert_eq!(
        d.questions_answered,
        vec![AnsweredQuestion {
            question: "Should INI files still be read for one release?".to_owned(),
            default: "No; INI support is removed now.".to_owned(),
            answer: "Yes, for one release.".to_owned(),
            previous_answer: None,
        }]
    );
    assert_eq!(
        d,
        PlanDiff {
            questions_answered: d.questions_answered.clone(),
            ..PlanDiff::default()
        }
    );
}

#[test]
fn withdrawn_answers_changed_defaults_and_new_questions_are_reported() {
    let mut edited = sample_plan();
    edited.questions[1].answer = None;
    edited.questions[0].default = "Yes, keep INI.".to_owned();
    edited.questions.push(Question {
        question: "Log the loaded path?".to_owned(),
        default: "Yes".to_owned(),
        answer: None,
    });
    let d = diff(&sample_plan(), &edited);
    assert_eq!(d.answers_withdrawn, vec![edited.questions[1].clone()]);
    assert_eq!(d.defaults_changed.len(), 1);
    assert_eq!(d.defaults_changed[0].after, "Yes, keep INI.");
    assert_eq!(d.questions_added, vec![edited.questions[2].clone()]);
    assert!(d.questions_removed.is_empty());
}

#[test]
fn file_entries_added_removed_and_changed_are_listed_by_path() {
    let mut edited = sample_plan();
    edited.changes.remove(2);
    edited.stages.pop();
    edited.changes[0].operation = Operation::Create;
    edited.changes[0].rationale = "New file.".to_owned();
    edited.changes.push(FileChange {
        path: "docs/config.md".to_owned(),
        operation: Operation::Create,
        change: "Document the keys.".to_owned(),
        rationale: "People need the list.".to_owned(),
        optional: false,
    });
    let d = diff(&sample_plan(), &edited);
    assert_eq!(d.files_added, vec![edited.changes[2].clone()]);
    assert_eq!(d.files_removed, vec![sample_plan().changes[2].clone()]);
    assert_eq!(
        d.files_changed,
        vec![FileEdit {
            path: "bot/src/config.rs".to_owned(),
            fields: vec![
                FieldEdit {
                    field: FileField::Operation,
                    before: "edit".to_owned(),
                    after: "create".to_owned()
                },
                FieldEdit {
                    field: FileField::Rationale,
                    before: "Typos in config must fail loudly.".to_owned(),
                    after: "New file.".to_owned()
                },
            ]
        }]
    );
    assert!(matches!(
        d.stages.as_slice(),
        [StageEdit::Removed { number: 2, .. }]
    ));
}

#[test]
fn rewritten_free_text_sections_are_named() {
    let mut edited = sample_plan();
    edited.goal = "Load TOML instead.".to_owned();
    edited.target_state.push_str(" Reload on SIGHUP.");
    let d = diff(&sample_plan(), &edited);
    let sections: Vec<Section> = d.sections.iter().map(|s| s.section).collect();
    assert_eq!(sections, vec![Section::Goal, Section::TargetState]);
    assert_eq!(d.sections[0].after, "Load TOML instead.");
}

#[test]
fn list_items_added_removed_and_reordered() {
    let mut edited = sample_plan();
    edited.risks[2] = "Startup gets slower.".to_owned();
    edited.next_steps.reverse();
    edited.new_dependencies.clear();
    let d = diff(&sample_plan(), &edited);
    assert_eq!(d.risks.added, vec!["Startup gets slower."]);
    assert_eq!(
        d.risks.removed,
        vec!["Error messages might leak secret values."]
    );
    assert!(!d.risks.reordered);
    assert!(d.next_steps.reordered && d.next_steps.added.is_empty());
    assert_eq!(
        d.new_dependencies.removed,
        vec!["serde_yaml 0.9 (YAML parsing)"]
    );
}

#[test]
fn contract_and_stage_edits_name_the_fields() {
    let mut edited = sample_plan();
    if let Some(c) = edited.handoff.as_mut() {
        c.budgets.max_retries = 1;
        c.scope.push("docs/".to_owned());
    }
    edited.stages[0].files.pop();
    edited.stages[0].verification = "tests pass".to_owned();
    let d = diff(&sample_plan(), &edited);
    let handoff = d.handoff.clone().expect("contract changed");
    assert_eq!(
        handoff.fields,
        vec![ContractField::Budgets, ContractField::Scope]
    );
    assert_eq!(
        d.stages,
        vec![StageEdit::Changed {
            number: 1,
            title: None,
            files_added: vec![],
            files_removed: vec!["bot/Cargo.toml".to_owned()],
            verification: Some(TextEdit {
                before: "cargo test -p navin-bot config passes".to_owned(),
                after: "tests pass".to_owned()
            }),
        }]
    );
    let mut removed = sample_plan();
    removed.handoff = None;
    let d = diff(&sample_plan(), &removed);
    assert_eq!(d.handoff.map(|h| h.after), Some(None));
}

#[test]
fn diff_serializes_to_json_without_empty_parts_and_reads_back() {
    let mut edited = sample_plan();
    edited.changes[1].change = "Add serde_yaml 0.9.".to_owned();
    edited.stages.push(Stage {
        title: "Docs".to_owned(),
        files: vec!["bot/src/config.rs".to_owned()],
        verification: "reviewed".to_owned(),
    });
    let d = diff(&sample_plan(), &edited);
    let json = serde_json::to_value(&d).expect("json");
    assert_eq!(
        json,
        serde_json::json!({
            "files_changed": [{
                "path": "bot/Cargo.toml",
                "fields": [{"field": "change", "before": "Add serde_yaml.", "after": "Add serde_yaml 0.9."}]
            }],
            "stages": [{
                "kind": "added",
                "number": 3,
                "stage": {"title": "Docs", "files": ["bot/src/config.rs"], "verification": "reviewed"}
            }]
        })
    );
    let back: PlanDiff = serde_json::from_value(json).expect("reads back");
    assert_eq!(back, d);
}

#[test]
fn diff_renders_as_markdown_for_people() {
    let mut edited = sample_plan();
    edited.goal = "Load TOML.".to_owned();
    edited.changes[1].operation = Operation::Delete;
    edited.risks.push("Breaks CI.".to_owned());
    edited.questions[0].answer = Some("Yes".to_owned());
    let expected = "\
#### Goal

Before:

> Load `.navin/config.yaml` at start-up. Unknown keys are rejected with the key's name.

After:

> Load TOML.

#### Proposed Changes

- Changed `bot/Cargo.toml`: operation \"edit\" → \"delete\"

#### Risks

- Added: Breaks CI.

#### Risks And Assumptions

- Answered \"Should INI files still be read for one release?\": Yes (instead of the default: No; INI support is removed now.)
";
    assert_eq!(diff(&sample_plan(), &edited).to_markdown(), expected);
}
