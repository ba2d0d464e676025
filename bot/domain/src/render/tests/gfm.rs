//! Every kind of comment Navin writes, rendered as GitHub renders it (CommonMark with the
//! GFM tables, strikethrough and task lists): commands and keys show as code, never as
//! literal backticks, and no heading is written twice.

use navin_ledger::model::{Ledger, Validation};
use navin_ledger::ops::{InitArgs, Operation, UpdateArgs};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::fixture::*;
use crate::command::help_text;
use crate::render::reply::{
    accepted, agent_question, error, given_up, help, read_only, refusal, refusal_rendered,
};
use crate::render::{
    mission_panel, plan_comment, step_brief, PlanCommentInfo, PlanStatus, RepoRef,
};

/// What a reader sees outside code (blocks and spans), and the headings' texts.
fn rendered(markdown: &str) -> (String, Vec<String>) {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut prose = String::new();
    let mut headings = Vec::new();
    let mut in_code_block = false;
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Text(t) if !in_code_block => {
                prose.push_str(&t);
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Code(c) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&c);
                }
            }
            _ => {}
        }
    }
    (prose, headings)
}

/// A heading's words, without emoji and punctuation, for spotting a doubled title.
fn words(heading: &str) -> String {
    heading
        .chars()
        .filter(|c| c.is_alphanumeric() || c.is_whitespace())
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn every_kind() -> Vec<(&'static str, String)> {
    let repo = RepoRef::new("octo/widgets", "https://github.com");
    let doc = plan(2, 40);
    let approved = approved_plan_info(&doc);
    let pending = PlanCommentInfo {
        status: PlanStatus::Pending { stale: None },
        ..approved.clone()
    };
    let ledger = run(
        Some(&small()),
        Operation::AddSteps(vec![task("S9", "Document the API", &[], Validation::Test)]),
    );
    let step = ledger.board.task("S9").expect("S9").clone();
    let (_, brief) = step_brief(&ledger, &step, &repo, Default::default());
    let coded = coded();
    let coded_step = coded.board.task("S1").expect("S1").clone();
    let (_, coded_brief) = step_brief(&coded, &coded_step, &repo, Default::default());
    vec![
        ("panel", mission_panel(&small(), &ctx())),
        ("panel, texts with code", mission_panel(&coded, &ctx())),
        ("brief, texts with code", coded_brief),
        ("plan comment, approved", plan_comment(&doc, &approved)),
        ("plan comment, pending", plan_comment(&doc, &pending)),
        ("brief", brief),
        ("help", help(&help_text())),
        (
            "refusal",
            refusal(
                "a mission is already running: close it first.",
                "Close it with `/mission close`, or replace it with `/mission --replace <goal>`.",
            ),
        ),
        (
            "accepted",
            accepted("Started `S2`; `navin board verify S2` proves it."),
        ),
        ("error", error(Some("7f0c2a5e-0001"))),
        (
            "given up",
            given_up(
                "the ledger branch stayed busy or out of reach",
                "7f0c2a5e-0002",
            ),
        ),
        (
            "agent question",
            agent_question("subagent:codex", "Which `locale` first?", 2),
        ),
        (
            "refusal with a link to the failed check",
            refusal_rendered(
                "Step `S1` is not done: required checks failed on `8f14e45`: [test](https://github.com/octo/widgets/runs/7) (failure).",
                "Navin marks the step done when the checks pass.",
            ),
        ),
        (
            "read-only status",
            read_only(
                "the ledger commit 3f2a by mallory was not made by Navin and marks S1 done; comment `/rollback v2` to restore v2",
                "v2 (running), 0/1 steps done.",
            ),
        ),
    ]
}

#[test]
fn every_comment_kind_shows_code_as_code_and_no_heading_twice() {
    for (kind, markdown) in every_kind() {
        let (prose, headings) = rendered(&markdown);
        assert!(
            !prose.contains('`'),
            "{kind}: a literal backtick outside code in {prose:?}\n{markdown}"
        );
        assert!(
            !prose.contains("](") && !prose.contains("\\["),
            "{kind}: literal link syntax in {prose:?}\n{markdown}"
        );
        let mut seen: Vec<String> = Vec::new();
        for heading in &headings {
            let w = words(heading);
            assert!(
                !seen.contains(&w),
                "{kind}: heading {heading:?} twice\n{markdown}"
            );
            seen.push(w);
        }
    }
}

/// A mission whose goal, step titles, stage, acceptance, constraints and facts name code,
/// as plans and people write them.
fn coded() -> Ledger {
    let mut s1 = task(
        "S1",
        "Add `--format json` to `todo export`",
        &[],
        Validation::Test,
    );
    s1.acceptance = Some("`pytest tests/test_export.py` passes".into());
    s1.stage = Some(1);
    let mut s2 = task("S2", "Split rows on `a|b`", &["S1"], Validation::Test);
    s2.stage = Some(2);
    let ledger = run(
        None,
        Operation::Init(InitArgs {
            goal: "Make `todo export` print JSON".into(),
            constraints: vec!["Keep `todo list` as it is".into()],
            steps: vec![s1, s2],
            ..InitArgs::default()
        }),
    );
    run(
        Some(&ledger),
        Operation::Update(UpdateArgs {
            add_facts: vec!["Use `serde_json`, already a dependency".into()],
            reason: "answered".into(),
            ..UpdateArgs::default()
        }),
    )
}

#[test]
fn code_in_goals_titles_stages_acceptance_and_facts_renders_as_code() {
    let coded = coded();
    let repo = RepoRef::new("octo/widgets", "https://github.com");
    let step = coded.board.task("S1").expect("S1").clone();
    let (_, brief) = step_brief(&coded, &step, &repo, Default::default());
    let options = Options::ENABLE_TABLES;
    for (kind, markdown) in [("panel", mission_panel(&coded, &ctx())), ("brief", brief)] {
        let spans: Vec<String> = Parser::new_ext(&markdown, options)
            .filter_map(|e| match e {
                Event::Code(c) => Some(c.into_string()),
                _ => None,
            })
            .collect();
        for wanted in ["todo export", "--format json", "serde_json"] {
            assert!(
                spans.iter().any(|c| c == wanted),
                "{kind}: `{wanted}` is not code: {spans:?}\n{markdown}"
            );
        }
        assert!(
            !markdown.contains("\\`"),
            "{kind}: an escaped backtick\n{markdown}"
        );
    }
    // In the panel's table a `|` inside code stays in its cell.
    let panel = mission_panel(&coded, &ctx());
    let row = panel
        .lines()
        .find(|l| l.starts_with("| `S2`"))
        .expect("S2's row");
    assert!(row.contains("`a\\|b`"), "{row}");
}
