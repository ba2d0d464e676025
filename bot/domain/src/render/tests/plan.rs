//! The plan comment: header per status, draft mission, edit diff, folding and the size limit.

use navin_ledger::plan::{diff, PlanDocument};

use super::fixture::*;
use crate::render::{
    parse_marker, plan_comment, Marker, PlanApproval, PlanCommentInfo, PlanStatus, RepoRef,
    COMMENT_LIMIT,
};

fn info(status: PlanStatus) -> PlanCommentInfo {
    PlanCommentInfo {
        plan_id: "p-7".into(),
        source: "built-in planner".into(),
        status,
        diff: None,
        repo: Some(RepoRef::new("octo/widgets", "https://github.com")),
        run: None,
        owner_notes: Vec::new(),
    }
}

fn approved(doc: &PlanDocument) -> PlanStatus {
    PlanStatus::Approved {
        approvals: vec![PlanApproval {
            approver: "bob".into(),
            plan_hash: doc.hash().into(),
            review_id: Some(81),
            at: t0(),
        }],
    }
}

#[test]
fn plan_comment_starts_with_marker_naming_plan_and_hash() {
    let doc = plan(3, 100);
    let body = plan_comment(&doc, &info(PlanStatus::Pending { stale: None }));
    assert_eq!(
        parse_marker(&body),
        Some(Marker::Plan {
            id: "p-7".into(),
            hash: doc.hash().into()
        })
    );
}

#[test]
fn pending_plan_says_how_to_approve_and_why_an_approval_went_stale() {
    let doc = plan(3, 100);
    let body = plan_comment(&doc, &info(PlanStatus::Pending { stale: None }));
    let header = body.lines().nth(1).expect("header");
    assert!(
        header.starts_with(
            "**📋 Navin plan `p-7`** · source: built-in planner · ⏳ **pending approval**"
        ),
        "{header}"
    );
    assert!(!body.contains("stale"));
    assert!(!body.contains("Draft mission"));

    let body = plan_comment(
        &doc,
        &info(PlanStatus::Pending {
            stale: Some("the plan text changed in commit abc1234".into()),
        }),
    );
    assert!(
        body.contains("⚠️ An earlier approval is stale: the plan text changed in commit abc1234")
    );
}

#[test]
fn approved_plan_names_approver_hash_and_draft_mission() {
    let doc = plan(3, 100);
    let body = plan_comment(&doc, &info(approved(&doc)));
    let short: String = doc.hash().chars().take(19).collect();
    assert!(
        body.contains(&format!(
            "✅ **approved** by `bob` (review 81) at 2026-11-30 12:00 UTC for `{short}…`"
        )),
        "{body}"
    );
    assert!(!body.contains("different plan hash"));
    assert!(body.contains("#### 🚀 Draft mission"));
    assert!(body.contains("**Objective:** Config is read from YAML and typos are rejected."));
    assert!(body.contains("**Completion criteria:**\n- Loader tests pass."));
    assert!(body.contains("**Budgets:** retries 3 · replans 5 · stalls 3"));
    assert!(body.contains("**Verification:**\n- `cargo test -p navin-bot config`"));
    assert!(body.contains("Start it with `/mission`."));
}

#[test]
fn approval_for_another_hash_is_flagged() {
    let doc = plan(3, 100);
    let status = PlanStatus::Approved {
        approvals: vec![PlanApproval {
            approver: "bob".into(),
            plan_hash: "sha256:0000".into(),
            review_id: None,
            at: t0(),
        }],
    };
    assert!(plan_comment(&doc, &info(status)).contains("different plan hash"));
}

#[test]
fn rejected_and_superseded_plans_say_so() {
    let doc = plan(3, 100);
    let body = plan_comment(
        &doc,
        &info(PlanStatus::Rejected {
            by: "carol".into(),
            feedback: Some("split the loader first".into()),
        }),
    );
    assert!(body.contains("🚫 **rejected** by `carol`: split the loader first"));
    let body = plan_comment(
        &doc,
        &info(PlanStatus::Superseded {
            by_plan: Some("p-8".into()),
        }),
    );
    assert!(body.contains("🗄️ **superseded** by plan `p-8`"));
}

#[test]
fn plan_text_is_shown_with_mentions_defused_outside_code() {
    let doc = plan(3, 100);
    let body = plan_comment(&doc, &info(PlanStatus::Pending { stale: None }));
    assert!(body.contains("## Proposed Changes"));
    assert!(body.contains("Ask @<!-- -->octocat if unsure."), "{body}");
    assert!(body.contains("@not-a-mention stays in code"), "{body}");
    assert!(
        !body.contains("Show section"),
        "a short plan's sections are not folded"
    );
}

#[test]
fn the_summary_comes_first_and_the_whole_plan_is_folded_below_without_a_second_title() {
    let doc = plan(3, 100);
    let body = plan_comment(&doc, &info(PlanStatus::Pending { stale: None }));
    let summary_at = body
        .find("### Load the config from YAML")
        .expect("title heading");
    let full_at = body
        .find("<details><summary>📄 The full plan (")
        .expect("folded plan");
    assert!(summary_at < full_at);
    assert!(!body.contains("# Plan:"), "no duplicated H1: {body}");
    assert!(body.trim_end().ends_with("</details>"), "{body}");
    let summary = &body[..full_at];
    assert!(
        summary.contains("**Files to change** (3)\n\n| File | | Change |"),
        "{summary}"
    );
    assert!(summary.contains("| `bot/src/config/part_0.rs` | edit | Rewrite the parsing loop"));
    assert!(summary.contains("**Risks**\n- Existing INI configs stop loading."));
    assert!(summary.contains("1. Keep INI for one release? · default: No."));
    assert!(
        summary.contains("**To approve:** comment `/approve` (a writer)"),
        "{summary}"
    );
    assert!(
        !summary.contains("review"),
        "an issue has no review to approve with"
    );
    assert!(!summary.contains("score"));
    // On a pull request a review approves it too.
    let mut on_pr = info(PlanStatus::Pending { stale: None });
    on_pr.plan_id = "pr-4".into();
    let body = plan_comment(&doc, &on_pr);
    assert!(
        body.contains("**To approve:** approve this pull request in a review"),
        "{body}"
    );
    assert!(
        body.contains("click “Approve plan” on its `navin/plan` check"),
        "{body}"
    );
    // Once approved, no instructions to approve.
    let body = plan_comment(&doc, &info(approved(&doc)));
    assert!(!body.contains("**To approve:**"));
}

#[test]
fn a_fallback_plan_says_why_the_configured_planner_failed() {
    let doc = plan(1, 100);
    let mut i = info(PlanStatus::Pending { stale: None });
    i.run = Some(navin_ledger::plan::record::PlannerRun {
        source: "builtin".into(),
        commit: "0123456789abcdef".into(),
        turns: 0,
        tokens: 0,
        attempts: 1,
        tool_calls: vec![],
        fallback: Some("the endpoint answered HTTP 429".into()),
        owners: vec![navin_ledger::plan::record::FileOwners {
            path: "bot/src/config/part_0.rs".into(),
            owners: vec!["@octo-org/config".into(), "@alice".into()],
        }],
    });
    let body = plan_comment(&doc, &i);
    assert!(body.contains("planned at `0123456`"), "{body}");
    assert!(body.contains("⚠️ The configured planner failed, so this is the built-in plan: the endpoint answered HTTP 429."), "{body}");
    // Owners are named as code, so the comment pings nobody.
    assert!(
        body.contains("**Code owners:** `@octo-org/config` (`bot/src/config/part_0.rs`) · `@alice` (`bot/src/config/part_0.rs`)"),
        "{body}"
    );
}

#[test]
fn stored_edit_diff_is_shown() {
    let original = plan(3, 100);
    let mut edited = original.plan().clone();
    edited
        .risks
        .push("Config reload races with requests.".into());
    let edited = PlanDocument::from_plan(&edited).expect("valid edit");
    let d = diff(original.plan(), edited.plan());
    let mut i = info(PlanStatus::Pending { stale: None });
    i.diff = Some(d.clone());
    let body = plan_comment(&edited, &i);
    assert!(body.contains("<details><summary>✏️ Edits to the original plan</summary>"));
    assert!(body.contains("Config reload races with requests."));
    let first_diff_line = d
        .to_markdown()
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(body.contains(&first_diff_line), "{first_diff_line}");
}

#[test]
fn plan_of_200_kb_stays_under_the_comment_limit() {
    let doc = plan(1_600, 130);
    assert!(doc.text().len() > 200_000, "{} bytes", doc.text().len());
    let original = plan(3, 100);
    let mut i = info(approved(&doc));
    i.diff = Some(diff(original.plan(), doc.plan()));
    let body = plan_comment(&doc, &i);

    assert!(body.len() < COMMENT_LIMIT, "{} bytes", body.len());
    assert!(body.encode_utf16().count() < COMMENT_LIMIT);
    assert!(matches!(parse_marker(&body), Some(Marker::Plan { .. })));
    assert!(
        body.contains("the full plan is on the ledger branch at [.navin/plans/p-7.md](https://github.com/octo/widgets/blob/navin/ledger/.navin/plans/p-7.md)"),
        "no pointer to the full plan"
    );
    assert!(body.contains("<details><summary>Show section ("));
    assert_eq!(
        body.matches("<details>").count(),
        body.matches("</details>").count()
    );
    assert_eq!(body.matches("\n```").count() % 2, 0, "unbalanced fences");
    // Every heading and the status survive; only bodies are cut.
    for heading in [
        "## Goal",
        "## Proposed Changes",
        "## Risks",
        "## Optional Goal Handoff Contract",
    ] {
        assert!(body.contains(heading), "{heading} lost");
    }
    assert!(body.contains("✅ **approved**"));
    assert!(body.contains("#### 🚀 Draft mission"));
    assert!(body.contains("the full diff is stored with the plan at [.navin/plans/p-7.json]"));
    // Short sections are kept whole; only the long ones were cut.
    assert!(body.contains("Existing INI configs stop loading."));
}

#[test]
fn plan_comment_without_repo_names_the_path_as_code() {
    let doc = plan(1_600, 130);
    let mut i = info(PlanStatus::Pending { stale: None });
    i.repo = None;
    let body = plan_comment(&doc, &i);
    assert!(body.len() < COMMENT_LIMIT);
    assert!(body.contains("the full plan is on the ledger branch at `.navin/plans/p-7.md`"));
}

#[test]
fn fitting_cuts_the_longest_parts_evenly_and_closes_what_they_opened() {
    use crate::render::fold::{fit, Part};
    let long_code = format!("```rust\n{}", "let x = 1;\n".repeat(500));
    let parts = vec![
        Part::new("## A\n", "short body\n".into(), ""),
        Part::new("## B\n<details>\n", long_code, "</details>\n"),
        Part::new("## C\n", "<!-- note ".to_owned() + &"y".repeat(5000), ""),
    ];
    let out = fit(parts, 3000, "\n_cut_\n");
    assert!(out.len() <= 3000, "{} bytes", out.len());
    assert!(
        out.contains("## A\nshort body\n## B"),
        "short part kept whole"
    );
    assert_eq!(out.matches("_cut_").count(), 2);
    assert!(
        out.contains("let x = 1;\n\n```\n\n_cut_"),
        "fence closed before the note"
    );
    assert!(out.contains("</details>"));
    assert!(
        out.contains(" -->\n\n_cut_"),
        "comment closed before the note"
    );
    let b = out.find("## B").unwrap_or(0);
    let c = out.find("## C").unwrap_or(0);
    assert!((c - b).abs_diff(out.len() - c) < 200, "cuts are even");
}
