//! The prompt for a chat model: the plan format, the read-only rule, the request and the repository summary, within a byte budget.

use navin_ledger::plan::{
    render, FileChange, HandoffBudgets, HandoffContract, Operation, Plan, PlanError, Question,
    READ_ONLY_PERSONA,
};

use super::summary::RepoSummary;

/// The request is the user's own text; a few KB is plenty and keeps room
/// for the repository summary.
const MAX_REQUEST_BYTES: usize = 4 * 1024;

/// The two opening messages of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub system: String,
    pub user: String,
}

/// A skeleton plan whose every field says what belongs there. It is a
/// valid plan (a unit test checks), so a model copying its shape writes
/// something the parser accepts.
pub(crate) fn example_plan() -> Plan {
    Plan {
        title: "<one-line summary of the change>".to_owned(),
        persona: READ_ONLY_PERSONA.to_owned(),
        goal: "<2-4 sentences: what the user asked for and what the change will deliver.>"
            .to_owned(),
        architecture: "<Entry points, package/config files, frameworks, services, folder structure and module boundaries that matter here.>".to_owned(),
        capabilities: "<What the application does programmatically, grouped by business or runtime domain.>".to_owned(),
        data_flow: "<How data moves from the UI/CLI/API boundary through domain modules, providers and storage.>".to_owned(),
        target_state: "<The technical architecture required to satisfy the request.>".to_owned(),
        impact_isolation: "<The precise files/modules expected to change, and the areas intentionally left untouched.>".to_owned(),
        changes: vec![
            FileChange {
                path: "src/existing_module.rs".to_owned(),
                operation: Operation::Edit,
                change: "<one-line description of the edit>".to_owned(),
                rationale: "<why this file must change>".to_owned(), optional: false,
            },
            FileChange {
                path: "tests/new_behaviour_test.rs".to_owned(),
                operation: Operation::Create,
                change: "<one-line description of the new file>".to_owned(),
                rationale: "<why it is needed>".to_owned(), optional: false,
            },
        ],
        new_dependencies: vec![],
        risks: vec![
            "<a breaking change that could happen>".to_owned(),
            "<a performance impact>".to_owned(),
            "<a security consideration>".to_owned(),
        ],
        next_steps: vec![
            "<first step, e.g. write the failing test>".to_owned(),
            "<run the project's test command and check the property that proves the change>"
                .to_owned(),
        ],
        questions: vec![Question {
            question: "<a clarifying question for the user?>".to_owned(),
            default: "<what will be assumed if nobody answers>".to_owned(),
            answer: None,
        }],
        handoff: Some(HandoffContract {
            objective: "<the objective of a follow-up mission>".to_owned(),
            completion_criteria: vec!["<a checkable criterion>".to_owned()],
            budgets: HandoffBudgets::default(),
            allowed_tools: vec!["read_file".to_owned(), "edit_file".to_owned()],
            scope: vec!["src/existing_module.rs".to_owned()],
            verification: vec!["<the project's test command>".to_owned()],
        }),
        stages: vec![],
    }
}

const RULES: &str = "\
Rules the plan must follow (it is checked by a strict parser; a plan that breaks a rule is rejected):
1. The first line is \"# Plan: <one-line summary>\". Then every \"##\" section of the example, spelled exactly as shown and in the same order. No other \"#\" or \"##\" headings anywhere; inside a section use \"###\" or deeper, and close every code fence.
2. \"## System Persona\" is exactly the sentence shown in the example.
3. \"## Proposed Changes\" has one \"### File: <path>\" block per file with exactly the three bullets \"- **Operation:** edit|create|delete\", \"- **Change:** ...\", \"- **Rationale:** ...\", each on one line, plus \"- **Optional:** yes\" on a file that may change but need not (a caller, a doc page, a file you are unsure of): the step is complete without it. Paths are relative to the repository root, use /, never start with / and never contain \"..\"; list each file once. Only edit or delete files that exist in the repository summary; use create for new files. Write \"None.\" if nothing changes.
4. \"## New dependencies\": one \"- \" bullet per new package or tool, or \"None.\".
5. \"## Risks\": 3 to 5 \"- \" bullets.
6. \"## Actionable Next Steps\": a numbered checklist (\"1. [ ] ...\"), at least one step, each on one line; include the tests to run.
7. \"## Risks And Assumptions\": numbered questions, each followed by \"   - **Default:** ...\" and \"   - **Answer:**\" lines, or \"None.\".
8. \"## Optional Goal Handoff Contract\": the fields of the example (budgets are whole numbers named max_retries, max_replans, max_stalls; verification commands in backticks and containing no backtick), or \"None.\".
9. An optional last section \"## Stages\" may split the work: \"### Stage 1: <title>\" blocks listing \"- File: <path>\" lines (each path also in Proposed Changes) and one \"- Verification: ...\" line.";

const READ_ONLY_RULE: &str = "\
You are a read-only software architect writing a plan for review. You cannot and must not run anything: no file writes, dependency installs, migrations, service mutations, git mutations or destructive commands. Propose commands in the plan; never claim to have run them. Plan against the repository summary you are given; do not invent files that should already exist.";

const REPLY_RULE: &str = "\
Reply with the complete plan inside one ```markdown fenced block and nothing else.";

const TOOLS_RULE: &str = "\
You have read-only tools over the exact commit being planned: read_file, list_dir, grep, glob, find_symbol and repo_map. Use them to find where the requested change belongs: read the files you propose to edit, find the definitions you name, check where flags and commands are wired, and look for the nearest existing tests. Name the functions, types and flags each change touches. Tools cannot write; any helper you imagine is bound by the same read-only rule. The tool budget is limited: read ranges of large files rather than whole files. When you know enough, stop calling tools and reply with the plan.";

/// The prompt of the tool-using planner: the read-only rule, how to use
/// the tools, the plan format, then the request with the built-in map and
/// ranked candidates, within `max_bytes` so the whole prompt stays within `max_bytes`
/// (unless the fixed text alone is larger).
pub(crate) fn build(request: &str, summary: &RepoSummary, max_bytes: usize) -> Prompt {
    let example = render(&example_plan());
    let system = format!(
        "{READ_ONLY_RULE}\n\n{TOOLS_RULE}\n\nThe plan format, as an example whose <...> placeholders you replace:\n\n```markdown\n{example}```\n\n{RULES}\n\n{REPLY_RULE}\n"
    );
    let request = clip_bytes(request.trim(), MAX_REQUEST_BYTES);
    let head = format!("Request:\n{request}\n\nRepository map and the files Navin's built-in planner ranked for the request (a starting point; check it with the tools):\n");
    let tail = "\nExplore with the tools as needed, then write the plan for this request and this commit.\n";
    let used = system.len() + head.len() + tail.len();
    let summary_text = summary.to_text(max_bytes.saturating_sub(used));
    Prompt {
        system,
        user: format!("{head}{summary_text}{tail}"),
    }
}

/// The last turn's message once a budget is spent: tools are gone, the plan is due.
pub(crate) fn budget_message(what: &str) -> String {
    format!("The {what} budget is spent and no more tools can be called. Reply now with the complete plan, based on what you have read.")
}

/// The follow-up message after a rejected plan.
pub(crate) fn feedback_message(error: &PlanError) -> String {
    format!("Your plan failed validation: {error}; reply with the corrected full plan.")
}

fn clip_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use navin_ledger::plan::PlanDocument;

    fn summary() -> RepoSummary {
        RepoSummary {
            files: 3,
            scan_truncated: false,
            languages: vec!["Rust (3 files)".to_owned()],
            ranked_files: vec![],
            builtin_changes: vec![],
            modules: vec!["x".repeat(100); 500],
            manifests: vec![],
            entry_points: vec![],
            frameworks: vec![],
            commands: vec![],
            test_conventions: vec![],
            ci: vec![],
            migration_dirs: vec![],
            most_imported: vec![],
        }
    }

    #[test]
    fn example_in_the_prompt_is_a_valid_plan() {
        let text = render(&example_plan());
        let doc = PlanDocument::parse(&text).expect("example plan must validate");
        assert_eq!(doc.plan().persona, READ_ONLY_PERSONA);
    }

    #[test]
    fn prompt_carries_format_rule_request_and_summary_within_budget() {
        let request = "Add retries to the webhook client ".repeat(400);
        let prompt = build(&request, &summary(), 24 * 1024);
        assert!(prompt.system.len() + prompt.user.len() <= 24 * 1024);
        assert!(prompt.system.contains("# Plan: <one-line summary"));
        assert!(prompt.system.contains("## Optional Goal Handoff Contract"));
        assert!(prompt.system.contains(READ_ONLY_PERSONA));
        assert!(prompt.system.contains("must not run anything"));
        assert!(prompt
            .user
            .starts_with("Request:\nAdd retries to the webhook client"));
        assert!(prompt.user.contains("Languages: Rust (3 files)"));
        assert!(prompt.user.contains("… (summary truncated)"));
    }

    #[test]
    fn feedback_names_line_and_section() {
        let err =
            PlanDocument::parse("# Plan: x\n\n## System Persona\n\n").expect_err("incomplete plan");
        let msg = feedback_message(&err);
        assert!(msg.starts_with("Your plan failed validation: line "));
        assert!(msg.ends_with("reply with the corrected full plan."));
    }

    #[test]
    fn clip_bytes_respects_char_boundaries() {
        assert_eq!(clip_bytes("héllo", 2), "h");
        assert_eq!(clip_bytes("abc", 10), "abc");
    }
}
