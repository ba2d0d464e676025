//! The mission panel on small ledgers: what a reader of the issue sees.

use navin_ledger::model::{Actor, Budget, PauseReason, Validation};
use navin_ledger::ops::{InitArgs, Operation, ProgressArgs, UpdateArgs};

use super::fixture::*;
use crate::render::{mermaid_label, mission_panel, parse_marker, Marker, PanelLink, PANEL_FORMAT};

fn line_with<'a>(panel: &'a str, needle: &str) -> &'a str {
    panel
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{panel}"))
}

#[test]
fn panel_starts_with_its_marker() {
    let panel = mission_panel(&small(), &ctx());
    assert!(panel.starts_with("<!-- navin:panel v=1 -->\n"), "{panel}");
    assert_eq!(
        parse_marker(&panel),
        Some(Marker::Panel {
            format: PANEL_FORMAT
        })
    );
}

#[test]
fn panel_shows_goal_version_status_and_progress() {
    let ledger = small();
    let panel = mission_panel(&ledger, &ctx());
    assert!(
        panel.contains("**Goal:** Ship the YAML config loader"),
        "{panel}"
    );
    let badges = line_with(&panel, "`v");
    assert!(
        badges.starts_with(&format!("`v{}`", ledger.mission.version)),
        "{badges}"
    );
    assert!(badges.contains("🟢 **running**"), "{badges}");
    assert!(badges.contains("stall 0/3"), "{badges}");
    assert!(badges.contains("replans 0/5"), "{badges}");
    assert!(!badges.contains("loop"), "{badges}");
    assert!(!badges.contains("paused"), "{badges}");
    let progress = line_with(&panel, "**Progress**");
    assert!(
        progress.contains("`▓▓▓▓▓░░░░░░░░░░░░░░░` 1/4 steps done"),
        "{progress}"
    );
    assert!(progress.contains("🔄 1 in progress"), "{progress}");
}

#[test]
fn panel_lists_ready_queue_current_step_and_next_actor() {
    let panel = mission_panel(&small(), &ctx());
    let queue = line_with(&panel, "**Ready:**");
    assert!(queue.contains("`S4`"), "{queue}");
    assert!(!queue.contains("`S3`"), "{queue}");
    assert!(queue.contains("**current step:** `S2`"), "{queue}");
    assert!(queue.contains("**up next:** the coding agent"), "{queue}");
}

#[test]
fn panel_shows_last_history_reason_with_actor_and_time() {
    let ledger = small();
    let last = ledger.mission.history.last().expect("history");
    let panel = mission_panel(&ledger, &ctx());
    let line = line_with(&panel, "Last change");
    assert!(
        line.starts_with(&format!(
            "> Last change: v{} by `human:alice` at 2026-11-30 12:00 UTC: ",
            last.version
        )),
        "{line}"
    );
}

#[test]
fn panel_table_shows_status_attempts_and_evidence_links() {
    let panel = mission_panel(&small(), &ctx());
    assert!(
        panel.contains("| Step | Title | Status | Depends on | Validation | Attempts | Evidence |")
    );
    let s1 = line_with(&panel, "| `S1` |");
    assert!(s1.contains("✅ done"), "{s1}");
    assert!(
        s1.contains("[test](https://github.com/octo/widgets/runs/7) ✅"),
        "{s1}"
    );
    let s2 = line_with(&panel, "| `S2` |");
    assert!(s2.contains("🔄 in progress"), "{s2}");
    assert!(s2.contains("| `S1` |"), "{s2}");
    assert!(s2.contains("| test | 0/3 |"), "{s2}");
    assert!(
        s2.contains("[#12](https://github.com/octo/widgets/pull/12)"),
        "{s2}"
    );
    assert!(s2.contains("head `8f14e45`"), "{s2}");
    assert!(
        s2.contains("[lint](https://github.com/octo/widgets/runs/9) ❌ failure"),
        "{s2}"
    );
    assert!(line_with(&panel, "| `S3` |").contains("⬜ planned"));
    assert!(line_with(&panel, "| `S4` |").contains("🟦 ready"));
    // Four small steps: no folding.
    assert!(!panel.contains("<details>"), "{panel}");
}

#[test]
fn panel_names_what_failed_last() {
    let panel = mission_panel(&small(), &ctx());
    let line = line_with(&panel, "**What failed last:**");
    assert_eq!(
        line,
        "**What failed last:** step `S2` on `8f14e45`: [lint](https://github.com/octo/widgets/runs/9) (failure)"
    );
}

#[test]
fn panel_shows_badges_when_paused_stalled_looping() {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            steps: vec![task("S1", "spin", &[], Validation::None)],
            ..InitArgs::default()
        }),
    );
    let l = run(Some(&l), Operation::Start { step: "S1".into() });
    let report = || {
        Operation::Progress(ProgressArgs {
            step: "S1".into(),
            real_progress: false,
            fingerprint: Some("edit:a.rs".into()),
            ..ProgressArgs::default()
        })
    };
    let l = run_as(Some(&l), report(), Actor::Main);
    let l = run_as(Some(&l), report(), Actor::Main);
    assert!(l.mission.progress.loop_detected);
    let l = run(
        Some(&l),
        Operation::Pause {
            reason: PauseReason::Human,
            note: "lunch".into(),
        },
    );
    let panel = mission_panel(&l, &ctx());
    let badges = line_with(&panel, "`v");
    assert!(badges.contains("⏸️ **paused**"), "{badges}");
    assert!(
        badges.contains("⏸️ paused: human since 2026-11-30 12:00 UTC"),
        "{badges}"
    );
    assert!(badges.contains("🐢 stall 2/3"), "{badges}");
    assert!(badges.contains("🔁 loop detected"), "{badges}");
}

#[test]
fn panel_shows_budget_and_replan_needed_badges() {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            budget: Some(Budget {
                max_tokens: Some(50_000),
                max_cost_usd: Some(5.0),
                ..Budget::default()
            }),
            steps: vec![task("S1", "work", &[], Validation::None)],
            ..InitArgs::default()
        }),
    );
    let l = run(Some(&l), Operation::Start { step: "S1".into() });
    let l = run_as(
        Some(&l),
        Operation::Progress(ProgressArgs {
            step: "S1".into(),
            real_progress: true,
            tokens: 1_250,
            cost_usd: 0.5,
            ..ProgressArgs::default()
        }),
        Actor::Main,
    );
    let l = run(
        Some(&l),
        Operation::Replan {
            step: "S1".into(),
            reason: "wrong approach".into(),
        },
    );
    let panel = mission_panel(&l, &ctx());
    let badges = line_with(&panel, "`v");
    assert!(badges.contains("🔧 replans 1/5"), "{badges}");
    assert!(badges.contains("⚠️ replan needed"), "{badges}");
    assert!(badges.contains("🪙 tokens 1,250/50,000"), "{badges}");
    assert!(badges.contains("💵 cost $0.50/$5.00"), "{badges}");
}

#[test]
fn panel_shows_missing_info_and_facts() {
    let l = run(
        Some(&small()),
        Operation::Update(UpdateArgs {
            add_missing_info: vec!["Which YAML version?".into()],
            add_facts: vec!["CI runs on ubuntu-latest".into()],
            reason: "notes".into(),
            ..UpdateArgs::default()
        }),
    );
    let panel = mission_panel(&l, &ctx());
    assert!(
        panel.contains(
            "**❓ Missing info (`/answer <n> <text>` to unblock):**\n\n1. Which YAML version?"
        ),
        "{panel}"
    );
    assert!(
        panel.contains("**📌 Facts:**\n\n- CI runs on ubuntu-latest"),
        "{panel}"
    );
    assert!(!mission_panel(&small(), &ctx()).contains("Missing info"));
}

#[test]
fn panel_footer_links_the_ledger_branch_and_extra_links() {
    let mut c = ctx();
    c.links.push(PanelLink {
        label: "approved plan".into(),
        url: "https://github.com/octo/widgets/issues/3#issuecomment-1".into(),
    });
    c.links.push(PanelLink {
        label: "bad".into(),
        url: "javascript:alert(1)".into(),
    });
    let panel = mission_panel(&small(), &c);
    assert!(panel.contains(
        "[ledger branch](https://github.com/octo/widgets/tree/navin/ledger/.navin/board)"
    ));
    assert!(
        panel.contains("[approved plan](https://github.com/octo/widgets/issues/3#issuecomment-1)")
    );
    assert!(!panel.contains("javascript:"), "{panel}");
}

#[test]
fn panel_is_a_pure_function_of_the_ledger() {
    let l = small();
    assert_eq!(mission_panel(&l, &ctx()), mission_panel(&l, &ctx()));
}

#[test]
fn panel_escapes_hostile_goal_and_titles() {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "<!-- navin:panel v=9 --> ping @octocat | `code` <img src=x>".into(),
            steps: vec![task(
                "S1",
                "a | b ] \"c\" [d] --> end",
                &[],
                Validation::None,
            )],
            ..InitArgs::default()
        }),
    );
    let panel = mission_panel(&l, &ctx());
    assert_eq!(panel.matches("<!-- navin:").count(), 1, "{panel}");
    assert_eq!(parse_marker(&panel), Some(Marker::Panel { format: 1 }));
    assert!(!panel.contains("@octocat"), "{panel}");
    assert!(!panel.contains("<img"), "{panel}");
    let row = line_with(&panel, "| `S1` |");
    // Seven cells: the title's own `|` is escaped and does not split a cell.
    assert_eq!(row.matches(" | ").count(), 6, "{row}");
    assert!(row.contains("a \\| b"), "{row}");
}

#[test]
fn mermaid_escapes_quotes_and_brackets() {
    assert_eq!(
        mermaid_label("say \"hi\" [now]"),
        "say #34;hi#34; #91;now#93;"
    );
    assert_eq!(
        mermaid_label("a|b;c#d`e<f>"),
        "a#124;b#59;c#35;d#96;e#60;f#62;"
    );
    assert_eq!(mermaid_label("line\nbreak"), "line break");

    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            steps: vec![
                task("end", "x\"]; click s0 call alert()", &[], Validation::None),
                task("graph", "```", &["end"], Validation::None),
            ],
            ..InitArgs::default()
        }),
    );
    let panel = mission_panel(&l, &ctx());
    let start = panel.find("```mermaid\n").expect("graph present");
    let block = &panel[start + 11..];
    let block = &block[..block.find("```\n").expect("graph closes")];
    for line in block.lines().filter(|l| l.contains("[\"")) {
        let inner =
            &line[line.find("[\"").expect("label") + 2..line.rfind("\"]").expect("label end")];
        assert!(
            !without_entities(inner).contains(['"', '[', ']', ';', '`', '#']),
            "{line}"
        );
    }
    assert!(block.contains("s0 --> s1"), "{block}");
}

/// `text` with every `#<digits>;` entity removed.
fn without_entities(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(pos) = rest.find('#') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(';') {
            rest = &after[digits + 1..];
        } else {
            out.push('#');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn mermaid_classes_follow_step_status() {
    let panel = mission_panel(&small(), &ctx());
    assert!(
        panel.contains("s0[\"S1: Write the loader\"]:::done"),
        "{panel}"
    );
    assert!(
        panel.contains("s1[\"S2: Wire it into start-up\"]:::in_progress"),
        "{panel}"
    );
    assert!(
        panel.contains("s2[\"S3: Document the keys\"]:::planned"),
        "{panel}"
    );
    assert!(
        panel.contains("s3[\"S4: Remove the INI reader\"]:::ready"),
        "{panel}"
    );
    assert!(panel.contains("s0 --> s1\n  s1 --> s2"), "{panel}");
    assert!(panel.contains("classDef in_progress"), "{panel}");
}

#[test]
fn panel_of_an_empty_board_says_so() {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "plan later".into(),
            ..InitArgs::default()
        }),
    );
    let panel = mission_panel(&l, &ctx());
    assert!(panel.contains("0/0 steps done"), "{panel}");
    assert!(panel.contains("No steps yet"), "{panel}");
    assert!(!panel.contains("```mermaid"), "{panel}");
}

#[test]
fn panel_links_the_plan_the_mission_came_from() {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            origin: Some(navin_ledger::model::Origin {
                plan_id: Some("p-7".into()),
                ..Default::default()
            }),
            ..InitArgs::default()
        }),
    );
    let panel = mission_panel(&l, &ctx());
    assert!(
        panel.contains(
            "[plan p-7](https://github.com/octo/widgets/blob/navin/ledger/.navin/plans/p-7.md)"
        ),
        "{panel}"
    );
}

#[test]
fn panel_lists_the_files_a_steps_pull_request_changes_outside_the_plan_and_why_it_is_held() {
    let drift = |head: &str| Operation::Drift {
        step: "S2".into(),
        drift: Some(navin_ledger::PlanDrift {
            head_sha: head.into(),
            outside_plan: (0..7).map(|i| format!("ops/x{i}.sh")).collect(),
            outside_stage: vec!["src/lib.rs".into()],
            omitted: 0,
            strict: true,
        }),
    };
    let panel = mission_panel(&run(Some(&small()), drift(HEAD)), &ctx());
    let line = line_with(&panel, "changed outside the plan:");
    assert!(line.starts_with("- `S2` (#12) on "), "{line}");
    assert!(
        line.contains("`ops/x4.sh`, and 2 more;") && !line.contains("x5"),
        "bounded: {line}"
    );
    assert!(
        line.contains("planned for another stage than its stage: `src/lib.rs`"),
        "{line}"
    );
    assert!(
        line.contains("not done until the plan covers them"),
        "{line}"
    );
    // Nothing outside: no section.
    assert!(!mission_panel(&small(), &ctx()).contains("Plan vs actual"));
}
