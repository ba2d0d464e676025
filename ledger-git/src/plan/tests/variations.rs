//! What people and models write instead of the canonical form, and that it reads as the same plan.

use super::fixture::{sample_plan, sample_text};
use crate::plan::*;

fn parses_as_sample(text: &str) {
    match parse(text) {
        Ok(plan) => assert_eq!(plan, sample_plan()),
        Err(err) => panic!("{err}\n---\n{text}"),
    }
}

#[test]
fn accepts_crlf_line_endings() {
    parses_as_sample(&sample_text().replace('\n', "\r\n"));
}

#[test]
fn accepts_trailing_spaces_and_extra_blank_lines() {
    let spaced = sample_text()
        .replace("\n\n## ", "\n\n\n\n## ")
        .replace("\n\n### ", "\n\n\n### ");
    assert!(spaced.contains("\n\n\n\n## Goal"));
    let text: String = spaced.lines().map(|l| format!("{l}   \n")).collect();
    parses_as_sample(&format!("\n\n{text}\n\n\n"));
}

#[test]
fn accepts_star_and_plus_bullets() {
    let text = sample_text()
        .replace("- **Operation:**", "* **Operation:**")
        .replace("- Existing INI", "+ Existing INI")
        .replace("- YAML anchors", "* YAML anchors")
        .replace("- serde_yaml", "* serde_yaml")
        .replace("- File: ", "* File: ");
    parses_as_sample(&text);
}

#[test]
fn accepts_headings_in_any_case_with_numbers_and_colons() {
    let text = sample_text()
        .replace("## Goal", "## 2. goal")
        .replace("## Data Flow", "## DATA FLOW:")
        .replace("## New dependencies", "## New Dependencies")
        .replace("## Risks And Assumptions", "## Open Questions")
        .replace("# Plan: ", "# PLAN: ");
    parses_as_sample(&text);
}

#[test]
fn keeps_hash_lines_inside_code_fences_as_text() {
    let plan = parse(&sample_text()).expect("sample parses");
    assert!(plan.data_flow.contains("## not a heading\n# nor this"));
}

#[test]
fn accepts_tilde_fences_and_fences_inside_list_items() {
    let text = sample_text().replace(
        "Parses commands, writes plans, keeps the ledger.",
        "Parses commands:\n\n- run:\n    ```sh\n    ## still code\n    ```\n\n~~~\n# code too\n```\n~~~",
    );
    let plan = parse(&text).expect("fences are respected");
    assert!(plan.capabilities.contains("    ## still code"));
    assert!(plan.capabilities.ends_with("~~~\n# code too\n```\n~~~"));
}

#[test]
fn accepts_field_spelling_variations() {
    let text = sample_text()
        .replace(
            "- **Operation:** edit\n- **Change:** Add serde_yaml.",
            "- **Operation**: `Edit`\n- Change: Add serde_yaml.",
        )
        .replace(
            "### File: bot/src/config.rs",
            "### File: `./bot/src/config.rs`",
        )
        .replace("- **Rationale:** Needed", "- **rationale:** Needed");
    parses_as_sample(&text);
}

#[test]
fn joins_wrapped_lines_of_one_item() {
    let text = sample_text()
        .replace(
            "- YAML anchors allow very large documents.",
            "- YAML anchors allow\n  very large documents.",
        )
        .replace(
            "- **Change:** Remove the old INI reader.",
            "- **Change:** Remove the old\n  INI reader.",
        );
    parses_as_sample(&text);
}

#[test]
fn accepts_next_steps_without_or_with_ticked_checkboxes() {
    let text = sample_text()
        .replace("1. [ ] Write", "1. Write")
        .replace("2. [ ] Run", "- [x] Run");
    parses_as_sample(&text);
}

#[test]
fn reads_an_answer_written_after_the_answer_label() {
    let text = sample_text().replace(
        "   - **Answer:**\n",
        "   - **Answer:** Yes, for one release.\n",
    );
    let plan = parse(&text).expect("answered plan parses");
    assert_eq!(
        plan.questions[0].answer.as_deref(),
        Some("Yes, for one release.")
    );
}

#[test]
fn reads_an_answer_written_on_the_lines_below_the_label() {
    let text = sample_text().replace(
        "   - **Answer:**\n",
        "   - **Answer:**\n\n   Yes, keep INI\n   for one release.\n",
    );
    let plan = parse(&text).expect("answered plan parses");
    assert_eq!(
        plan.questions[0].answer.as_deref(),
        Some("Yes, keep INI for one release.")
    );
}

#[test]
fn accepts_flat_question_fields_and_no_hint() {
    let text = sample_text()
        .replace(&format!("{ANSWER_HINT}\n\n"), "")
        .replace("   - **Default:**", "- Default:")
        .replace("   - **Answer:**", "- Answer:");
    parses_as_sample(&text);
}

#[test]
fn treats_empty_or_missing_answer_as_unanswered() {
    let text = sample_text().replace("   - **Answer:**\n", "");
    parses_as_sample(&text);
}

#[test]
fn accepts_verification_commands_in_a_code_fence() {
    let text = sample_text().replace(
        "- **Verification commands:**\n  - `cargo test -p navin-bot config`\n",
        "- **Verification commands:**\n\n  ```sh\n  cargo test -p navin-bot config\n  ```\n",
    );
    parses_as_sample(&text);
}

#[test]
fn accepts_budgets_on_one_line() {
    let text = sample_text().replace(
        "- **Budgets:**\n  - max_retries: 3\n  - max_replans: 5\n  - max_stalls: 3\n",
        "- **Budgets:** max retries 3, max_replans: 5\n",
    );
    parses_as_sample(&text);
}

#[test]
fn accepts_none_written_in_several_ways() {
    let mut plan = sample_plan();
    plan.new_dependencies.clear();
    plan.handoff = None;
    let text = render(&plan)
        .replace(
            "## New dependencies\n\nNone.",
            "## New dependencies\n\n_None._",
        )
        .replace(
            "## Optional Goal Handoff Contract\n\nNone.",
            "## Optional Goal Handoff Contract\n\n**none**",
        );
    assert_eq!(parse(&text), Ok(plan));
}

#[test]
fn accepts_empty_optional_sections() {
    let mut plan = sample_plan();
    plan.new_dependencies.clear();
    plan.handoff = None;
    let text = render(&plan)
        .replace("## New dependencies\n\nNone.\n", "## New dependencies\n")
        .replace(
            "## Optional Goal Handoff Contract\n\nNone.\n",
            "## Optional Goal Handoff Contract\n",
        );
    assert_eq!(parse(&text), Ok(plan));
}

#[test]
fn ignores_html_comments_around_the_title_and_in_lists() {
    let text = format!(
        "<!-- navin:plan -->\n{}",
        sample_text().replace(
            "- YAML anchors",
            "<!-- reviewer note\nspanning lines -->\n- YAML anchors"
        )
    );
    parses_as_sample(&text);
}

#[test]
fn accepts_a_byte_order_mark() {
    parses_as_sample(&format!("\u{feff}{}", sample_text()));
}

#[test]
fn reports_the_same_line_numbers_with_crlf() {
    let broken = sample_text().replace("- **Operation:** edit", "- **Operation:** modify");
    let lf = parse(&broken).expect_err("bad operation");
    let crlf = parse(&broken.replace('\n', "\r\n")).expect_err("bad operation");
    assert_eq!(lf, crlf);
}
