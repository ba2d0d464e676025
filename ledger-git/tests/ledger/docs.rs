//! The examples in docs/ are real: the minimal plan in docs/plan.md validates, and its hash is the one the text quotes.

use navin_ledger::plan::PlanDocument;

#[test]
fn the_minimal_plan_in_the_plan_format_doc_is_valid_and_has_the_quoted_hash() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/plan.md"))
        .expect("docs/plan.md");
    let section = doc
        .split("## 5. A minimal valid plan")
        .nth(1)
        .expect("section 5 of docs/plan.md");
    let example = section
        .split("```markdown\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("a markdown example in section 5");
    let plan = PlanDocument::parse(example).unwrap_or_else(|e| panic!("docs/plan.md: {e}"));
    assert!(
        section.contains(plan.hash()),
        "section 5 quotes another hash than {}",
        plan.hash()
    );
}
