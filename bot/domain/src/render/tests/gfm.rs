//! Every kind of comment Navin writes, rendered as GitHub renders it (CommonMark with the
//! GFM tables, strikethrough and task lists): commands and keys show as code, never as
//! literal backticks, and no heading is written twice.

use navin_ledger::model::Validation;
use navin_ledger::ops::Operation;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::fixture::*;
use crate::command::help_text;
use crate::render::reply::{accepted, agent_question, error, given_up, help, refusal};
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
    vec![
        ("panel", mission_panel(&small(), &ctx())),
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
