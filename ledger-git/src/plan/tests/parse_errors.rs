//! Every parse error: the first problem, its line, its section and a message that says what to fix.

use super::fixture::sample_text;
use crate::plan::*;

/// 1-based line of the first line containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{needle:?} not in text"))
}

fn edited(from: &str, to: &str) -> String {
    let text = sample_text();
    assert!(text.contains(from), "{from:?} not in sample");
    text.replacen(from, to, 1)
}

fn error(text: &str) -> PlanError {
    parse(text).expect_err("the edited plan should be rejected")
}

#[test]
fn rejects_empty_document() {
    assert_eq!(error("").kind, PlanErrorKind::EmptyDocument);
    assert_eq!(error("\n\n  \n").kind, PlanErrorKind::EmptyDocument);
}

#[test]
fn rejects_document_that_does_not_start_with_the_title_line() {
    let text = format!("Here is the plan you asked for.\n\n{}", sample_text());
    let err = error(&text);
    assert_eq!(err.line, Some(1));
    assert_eq!(
        err.to_string(),
        "line 1: expected the title line \"# Plan: <one-line summary>\", found \"Here is the plan you asked for.\""
    );
}

#[test]
fn rejects_empty_title() {
    let err = error(&edited("# Plan: Add a YAML config loader", "# Plan:   "));
    assert_eq!((err.line, err.section), (Some(1), Some(Section::Title)));
    assert_eq!(err.kind, PlanErrorKind::EmptyTitle);
}

#[test]
fn rejects_text_between_title_and_first_section() {
    let text = edited("\n## System Persona", "Some preamble.\n\n## System Persona");
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "Some preamble.")));
    assert!(matches!(
        err.kind,
        PlanErrorKind::TextBeforeFirstSection { .. }
    ));
}

#[test]
fn rejects_plan_with_missing_data_flow_section_naming_the_section_before_it() {
    let text = sample_text();
    let start = text.find("## Data Flow").expect("has data flow");
    let end = text.find("## Target State").expect("has target state");
    let text = format!("{}{}", &text[..start], &text[end..]);
    let err = error(&text);
    let line = line_of(&text, "## Target State");
    assert_eq!(
        err.to_string(),
        format!("line {line}: missing section \"Data Flow\" (expected after \"Functional Capabilities\")")
    );
    assert_eq!(
        err.kind,
        PlanErrorKind::MissingSection {
            missing: Section::DataFlow,
            after: Section::FunctionalCapabilities
        }
    );
}

#[test]
fn rejects_plan_that_ends_before_the_required_sections() {
    let text = sample_text();
    let end = text
        .find("## Optional Goal Handoff Contract")
        .expect("has contract");
    let text = &text[..end];
    let err = error(text);
    assert_eq!(err.line, Some(text.lines().count()));
    assert_eq!(
        err.kind,
        PlanErrorKind::MissingSection {
            missing: Section::OptionalGoalHandoffContract,
            after: Section::RisksAndAssumptions
        }
    );
}

#[test]
fn rejects_sections_out_of_order() {
    let text = sample_text();
    let persona = text.find("## System Persona").expect("persona");
    let goal = text.find("## Goal").expect("goal");
    let arch = text.find("## Repository Architecture").expect("arch");
    let swapped = format!(
        "{}{}{}{}",
        &text[..persona],
        &text[goal..arch],
        &text[persona..goal],
        &text[arch..]
    );
    let err = error(&swapped);
    assert_eq!(err.line, Some(line_of(&swapped, "## Goal")));
    assert_eq!(
        err.to_string(),
        format!(
            "line {}: missing section \"System Persona\" (expected after the title line)",
            line_of(&swapped, "## Goal")
        )
    );
}

#[test]
fn rejects_unknown_section_and_says_which_was_expected() {
    let text = edited("## Repository Architecture", "## Approach");
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "## Approach")));
    assert_eq!(
        err.to_string(),
        format!(
            "line {}: unknown section \"Approach\" (expected \"Repository Architecture\" here)",
            line_of(&text, "## Approach")
        )
    );
}

#[test]
fn rejects_a_section_that_appears_twice() {
    let text = edited("## Target State", "## Goal\n\nAgain.\n\n## Target State");
    let err = error(&text);
    assert_eq!(
        err.kind,
        PlanErrorKind::DuplicateSection {
            section: Section::Goal
        }
    );
    assert_eq!(err.line, Some(line_of(&text, "Again.") - 2));
}

#[test]
fn rejects_any_section_after_stages() {
    let text = format!("{}\n## Notes\n\nLater.\n", sample_text());
    let err = error(&text);
    assert_eq!(
        err.kind,
        PlanErrorKind::UnknownSection {
            found: "Notes".to_owned(),
            expected: None
        }
    );
    assert!(err.to_string().contains("no section may follow \"Stages\""));
}

#[test]
fn rejects_a_second_level_one_heading_outside_code_fences() {
    let text = edited("keeps the ledger.", "keeps the ledger.\n\n# Capabilities");
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "# Capabilities")));
    assert!(matches!(err.kind, PlanErrorKind::StrayTitle { .. }));
}

#[test]
fn rejects_a_code_fence_that_never_closes() {
    let text = edited("A `Config` struct", "```rust\nA `Config` struct");
    let err = error(&text);
    let line = line_of(&text, "```rust");
    assert_eq!(
        (err.line, err.section),
        (Some(line), Some(Section::TargetState))
    );
    assert_eq!(err.kind, PlanErrorKind::UnclosedFence { opened_at: line });
}

#[test]
fn rejects_an_empty_free_text_section() {
    let text = edited(
        "Parses commands, writes plans, keeps the ledger.\n",
        "<!-- -->\n",
    )
    .replacen("<!-- -->\n", "", 1);
    let err = error(&text);
    assert_eq!(err.section, Some(Section::FunctionalCapabilities));
    assert_eq!(err.line, Some(line_of(&text, "## Functional Capabilities")));
    assert_eq!(err.kind, PlanErrorKind::EmptySection);
}

#[test]
fn rejects_unknown_operation_and_lists_the_allowed_ones() {
    let text = edited("- **Operation:** edit", "- **Operation:** modify");
    let err = error(&text);
    let line = line_of(&text, "modify");
    assert_eq!(
        err.to_string(),
        format!(
            "line {line}, section \"Proposed Changes\": unknown operation \"modify\"; allowed operations are edit, create, delete"
        )
    );
}

#[test]
fn rejects_the_template_placeholder_as_an_operation() {
    let err = error(&edited(
        "- **Operation:** edit",
        "- **Operation:** edit | create | delete",
    ));
    assert_eq!(
        err.kind,
        PlanErrorKind::UnknownOperation {
            found: "edit | create | delete".to_owned()
        }
    );
}

#[test]
fn rejects_file_block_without_operation() {
    let text = edited("- **Operation:** edit\n", "");
    let err = error(&text);
    assert_eq!(
        err.line,
        Some(line_of(&text, "### File: bot/src/config.rs"))
    );
    assert_eq!(
        err.to_string(),
        format!(
            "line {}, section \"Proposed Changes\": file \"bot/src/config.rs\" has no \"Operation\" line",
            err.line.unwrap_or_default()
        )
    );
}

#[test]
fn rejects_file_block_with_a_field_twice() {
    let text = edited(
        "- **Rationale:** Typos in config must fail loudly.",
        "- **Rationale:** Typos in config must fail loudly.\n- **Rationale:** Again.",
    );
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "Again.")));
    assert!(matches!(
        err.kind,
        PlanErrorKind::DuplicateField {
            field: "Rationale",
            ..
        }
    ));
}

#[test]
fn rejects_unknown_field_in_a_file_block() {
    let text = edited("- **Rationale:** Typos", "- **Reason:** Typos");
    let err = error(&text);
    assert_eq!(
        err.kind,
        PlanErrorKind::UnknownField {
            found: "reason".to_owned(),
            item: "file \"bot/src/config.rs\"".to_owned(),
            allowed: "Operation, Change, Rationale, Optional"
        }
    );
}

#[test]
fn rejects_empty_change_description() {
    let text = edited("- **Change:** Add serde_yaml.", "- **Change:**");
    let err = error(&text);
    assert_eq!(
        err.line,
        Some(line_of(&text, "### File: bot/Cargo.toml") + 3)
    );
    assert!(matches!(
        err.kind,
        PlanErrorKind::EmptyField {
            field: "Change",
            ..
        }
    ));
}

#[test]
fn rejects_paths_outside_the_repository_or_not_relative() {
    let cases = [
        ("/etc/passwd", "is absolute"),
        ("C:/work/x.rs", "is absolute"),
        ("~/x.rs", "is absolute"),
        ("src/../../x.rs", "contains \"..\""),
        ("src\\lib.rs", "backslashes"),
        ("src/", "names a folder"),
        ("src//lib.rs", "empty or \".\" part"),
    ];
    for (path, reason) in cases {
        let text = edited("### File: bot/src/config.rs", &format!("### File: {path}"));
        let err = error(&text);
        assert_eq!(err.section, Some(Section::ProposedChanges), "{path}");
        assert!(err.to_string().contains(reason), "{path}: {err}");
    }
}

#[test]
fn rejects_duplicate_file_paths_pointing_at_the_first() {
    let text = edited("### File: bot/Cargo.toml", "### File: bot/src/config.rs");
    let err = error(&text);
    let first = line_of(&text, "### File: bot/src/config.rs");
    assert_eq!(
        err.kind,
        PlanErrorKind::DuplicatePath {
            path: "bot/src/config.rs".to_owned(),
            first_line: Some(first)
        }
    );
    assert!(err.line > Some(first));
}

#[test]
fn rejects_text_where_a_file_block_is_expected() {
    let text = edited(
        "### File: bot/src/config.rs",
        "Some prose.\n\n### File: bot/src/config.rs",
    );
    let err = error(&text);
    assert!(matches!(
        err.kind,
        PlanErrorKind::ExpectedFileHeading { .. }
    ));
    assert_eq!(err.line, Some(line_of(&text, "Some prose.")));
}

#[test]
fn rejects_a_heading_that_is_not_a_file_block() {
    let err = error(&edited("### File: bot/Cargo.toml", "### Cargo.toml"));
    assert!(matches!(
        err.kind,
        PlanErrorKind::ExpectedFileHeading { .. }
    ));
}

#[test]
fn rejects_two_risks_with_count_and_line() {
    let text = edited("- Error messages might leak secret values.\n", "");
    let err = error(&text);
    let line = line_of(&text, "## Risks");
    assert_eq!(
        err.to_string(),
        format!("line {line}, section \"Risks\": expected 3 to 5 risk bullets, found 2")
    );
}

#[test]
fn rejects_six_risks_at_the_sixth_bullet() {
    let text = edited(
        "- Error messages might leak secret values.\n",
        "- Error messages might leak secret values.\n- r4\n- r5\n- r6\n",
    );
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "- r6")));
    assert_eq!(err.kind, PlanErrorKind::RiskCount { found: 6 });
}

#[test]
fn rejects_a_paragraph_in_a_bullet_section() {
    let text = edited(
        "- serde_yaml 0.9 (YAML parsing)\n",
        "- serde_yaml 0.9 (YAML parsing)\n\nAlso maybe more.\n",
    );
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "Also maybe more.")));
    assert_eq!(
        err.kind,
        PlanErrorKind::ExpectedListItem {
            found: "Also maybe more.".to_owned(),
            none_allowed: true
        }
    );
}

#[test]
fn rejects_an_empty_bullet() {
    let text = edited("- YAML anchors", "-\n- YAML anchors");
    let err = error(&text);
    assert_eq!(err.kind, PlanErrorKind::EmptyItem { what: "risk" });
    assert_eq!(err.line, Some(line_of(&text, "- YAML anchors") - 1));
}

#[test]
fn rejects_a_code_block_in_a_list_section() {
    let text = edited("- YAML anchors", "```\nx\n```\n- YAML anchors");
    let err = error(&text);
    assert_eq!(err.kind, PlanErrorKind::CodeBlockNotAllowed);
    assert_eq!(err.section, Some(Section::Risks));
}

#[test]
fn rejects_a_subheading_in_a_list_section() {
    let err = error(&edited("- YAML anchors", "### More risks\n- YAML anchors"));
    assert!(matches!(err.kind, PlanErrorKind::UnexpectedHeading { .. }));
}

#[test]
fn rejects_plan_without_next_steps() {
    let text = edited(
        "1. [ ] Write the loader and its unit tests.\n2. [ ] Run `cargo test -p navin-bot config`.\n",
        "",
    );
    let err = error(&text);
    assert_eq!(err.kind, PlanErrorKind::NoNextSteps);
    assert_eq!(err.line, Some(line_of(&text, "## Actionable Next Steps")));
}

#[test]
fn rejects_a_next_step_that_is_only_a_checkbox() {
    let err = error(&edited(
        "1. [ ] Write the loader and its unit tests.",
        "1. [ ]",
    ));
    assert_eq!(err.kind, PlanErrorKind::EmptyItem { what: "step" });
}

#[test]
fn rejects_question_without_default() {
    let text = edited("   - **Default:** No; INI support is removed now.\n", "");
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "1. Should INI files")));
    assert_eq!(
        err.to_string(),
        format!(
            "line {}, section \"Risks And Assumptions\": question \"Should INI files still be read for one release?\" has no default; add \"- **Default:** <what happens if nobody answers>\" below it",
            line_of(&text, "1. Should INI files")
        )
    );
}

#[test]
fn rejects_question_with_empty_default() {
    let err = error(&edited(
        "**Default:** No; INI support is removed now.",
        "**Default:**",
    ));
    assert!(matches!(
        err.kind,
        PlanErrorKind::EmptyField {
            field: "Default",
            ..
        }
    ));
}

#[test]
fn rejects_default_line_before_any_question() {
    let text = edited(
        "1. Should INI files",
        "- **Default:** stray\n1. Should INI files",
    );
    let err = error(&text);
    assert!(matches!(err.kind, PlanErrorKind::ExpectedQuestion { .. }));
    assert_eq!(err.line, Some(line_of(&text, "stray")));
}

#[test]
fn rejects_a_second_answer_for_one_question() {
    let text = edited(
        "   - **Answer:**\n",
        "   - **Answer:** yes\n   - **Answer:** no\n",
    );
    let err = error(&text);
    assert!(matches!(
        err.kind,
        PlanErrorKind::DuplicateField {
            field: "Answer",
            ..
        }
    ));
}

#[test]
fn rejects_contract_without_objective() {
    let text = edited(
        "- **Objective:** Config is read from YAML and typos are rejected.\n",
        "",
    );
    let err = error(&text);
    assert_eq!(
        err.line,
        Some(line_of(&text, "## Optional Goal Handoff Contract"))
    );
    assert_eq!(
        err.kind,
        PlanErrorKind::MissingField {
            field: "Objective",
            item: "the handoff contract".to_owned()
        }
    );
}

#[test]
fn rejects_contract_without_verification_commands() {
    let text = edited(
        "- **Verification commands:**\n  - `cargo test -p navin-bot config`\n",
        "",
    );
    let err = error(&text);
    assert!(matches!(
        err.kind,
        PlanErrorKind::MissingField {
            field: "Verification commands",
            ..
        }
    ));
}

#[test]
fn rejects_contract_with_empty_completion_criteria() {
    let text = edited(
        "- **Completion criteria:**\n  - Loader tests pass.\n",
        "- **Completion criteria:** None.\n",
    );
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "Completion criteria")));
    assert!(matches!(
        err.kind,
        PlanErrorKind::EmptyField {
            field: "Completion criteria",
            ..
        }
    ));
}

#[test]
fn rejects_unknown_contract_field_and_lists_the_known_ones() {
    let err = error(&edited(
        "- **Scope:**",
        "- **Deadline:** friday\n- **Scope:**",
    ));
    assert!(err.to_string().contains("unknown field \"deadline\" in the handoff contract; expected one of: Objective, Completion criteria, Budgets, Allowed tools, Scope, Verification commands"), "{err}");
}

#[test]
fn rejects_budget_that_is_not_a_number() {
    let text = edited("  - max_retries: 3", "  - max_retries: three");
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "three")));
    assert_eq!(
        err.kind,
        PlanErrorKind::BadBudget {
            key: "max_retries".to_owned(),
            found: "three".to_owned()
        }
    );
}

#[test]
fn rejects_unknown_budget() {
    let err = error(&edited("  - max_stalls: 3", "  - max_tokens: 3"));
    assert!(matches!(err.kind, PlanErrorKind::UnknownBudget { .. }));
}

#[test]
fn rejects_verification_command_with_a_backtick() {
    let text = edited("  - `cargo test -p navin-bot config`", "  - echo `date`");
    let err = error(&text);
    assert_eq!(
        err.kind,
        PlanErrorKind::BacktickInCommand {
            command: "echo `date`".to_owned()
        }
    );
}

#[test]
fn rejects_stage_file_missing_from_proposed_changes() {
    let text = edited("- File: bot/Cargo.toml", "- File: bot/src/main.rs");
    let err = error(&text);
    assert_eq!(err.line, Some(line_of(&text, "- File: bot/src/main.rs")));
    assert_eq!(
        err.to_string(),
        format!(
            "line {}, section \"Stages\": stage 1 lists \"bot/src/main.rs\", which is not in Proposed Changes",
            line_of(&text, "- File: bot/src/main.rs")
        )
    );
}

#[test]
fn rejects_misnumbered_stage() {
    let err = error(&edited(
        "### Stage 2: Remove INI",
        "### Stage 3: Remove INI",
    ));
    assert_eq!(
        err.kind,
        PlanErrorKind::StageNumber {
            expected: 2,
            found: "3".to_owned()
        }
    );
}

#[test]
fn rejects_stage_heading_in_another_shape() {
    let err = error(&edited("### Stage 2: Remove INI", "### Phase two"));
    assert!(matches!(
        err.kind,
        PlanErrorKind::ExpectedStageHeading { .. }
    ));
}

#[test]
fn rejects_stage_without_files() {
    let err = error(&edited("- File: bot/src/legacy_config.rs\n", ""));
    assert_eq!(err.kind, PlanErrorKind::StageWithoutFiles { stage: 2 });
}

#[test]
fn rejects_stage_without_verification() {
    let err = error(&edited("- Verification: the workspace builds\n", ""));
    assert!(matches!(
        err.kind,
        PlanErrorKind::MissingField {
            field: "Verification",
            ..
        }
    ));
}

#[test]
fn reports_the_first_problem_when_there_are_several() {
    let text = edited("- **Operation:** edit", "- **Operation:** modify").replacen(
        "- Error messages might leak secret values.\n",
        "",
        1,
    );
    let err = error(&text);
    assert_eq!(err.section, Some(Section::ProposedChanges));
}

#[test]
fn error_fields_are_inspectable_and_comparable() {
    let a = error(&edited("- **Operation:** edit", "- **Operation:** modify"));
    let b = error(&edited("- **Operation:** edit", "- **Operation:** modify"));
    assert_eq!(a, b);
    assert_eq!(a.section, Some(Section::ProposedChanges));
    assert!(a.line.is_some());
}

#[test]
fn an_optional_line_must_say_yes_or_no() {
    let text = edited(
        "- **Rationale:** Typos in config must fail loudly.",
        "- **Rationale:** Typos in config must fail loudly.\n- **Optional:** maybe",
    );
    let err = error(&text);
    assert_eq!(
        err.kind,
        PlanErrorKind::UnknownOptional {
            found: "maybe".to_owned(),
            item: "file \"bot/src/config.rs\"".to_owned(),
        }
    );
    assert!(err.to_string().contains("write yes or no"), "{err}");
}

#[test]
fn an_optional_file_round_trips_and_a_file_without_the_line_must_change() {
    let text = edited(
        "- **Rationale:** Typos in config must fail loudly.",
        "- **Rationale:** Typos in config must fail loudly.\n- **Optional:** yes",
    );
    let plan = crate::plan::parse(&text).expect("a plan with an Optional line parses");
    let optional: Vec<bool> = plan.changes.iter().map(|c| c.optional).collect();
    assert!(
        optional.contains(&true) && optional.contains(&false),
        "{optional:?}"
    );
    let again = crate::plan::parse(&crate::plan::render(&plan)).expect("its rendering parses");
    assert_eq!(again, plan);
}
