//! The panel stays a valid GitHub comment for any board size and any text.

use std::collections::HashSet;

use navin_ledger::model::Validation;
use navin_ledger::ops::{InitArgs, Operation, UpdateArgs};

use super::fixture::*;
use crate::render::{mission_panel, parse_marker, Marker, COMMENT_LIMIT, MAX_GRAPH_NODES};

/// `n` steps, each after the one before and the one seven back, with long
/// titles full of characters escaping expands.
fn big(n: usize, done: usize) -> navin_ledger::model::Ledger {
    let steps = (0..n)
        .map(|i| {
            let mut deps = Vec::new();
            if i > 0 {
                deps.push(format!("S{}", i - 1));
            }
            if i >= 7 {
                deps.push(format!("S{}", i - 7));
            }
            navin_ledger::ops::NewTask {
                id: format!("S{i}"),
                title: format!("Step {i}: migrate @team's <module> & tests | part [{i}] ")
                    .repeat(4),
                depends_on: deps,
                validation: Validation::Test,
                ..Default::default()
            }
        })
        .collect();
    let mut l = run(
        None,
        Operation::Init(InitArgs {
            goal: "Migrate everything".into(),
            steps,
            ..InitArgs::default()
        }),
    );
    for i in 0..done {
        let id = format!("S{i}");
        l = run(Some(&l), Operation::Start { step: id.clone() });
        l = run(
            Some(&l),
            Operation::Done {
                step: id,
                evidence: Some(check_evidence(i as u64, "test", true, "success")),
            },
        );
    }
    run(
        Some(&l),
        Operation::Start {
            step: format!("S{done}"),
        },
    )
}

fn assert_fits(panel: &str) {
    assert!(panel.len() < COMMENT_LIMIT, "{} bytes", panel.len());
    assert!(panel.chars().count() < COMMENT_LIMIT);
    assert!(panel.encode_utf16().count() < COMMENT_LIMIT);
    assert_eq!(parse_marker(panel), Some(Marker::Panel { format: 1 }));
    assert_eq!(
        panel.matches("<details>").count(),
        panel.matches("</details>").count()
    );
    assert_eq!(panel.matches("```").count() % 2, 0, "unbalanced fences");
}

#[test]
fn panel_with_5000_steps_stays_under_the_comment_limit() {
    let ledger = big(5000, 40);
    let panel = mission_panel(&ledger, &ctx());
    assert_fits(&panel);

    // Table and graph are folded, and the rows left out are counted.
    assert!(
        panel.contains("<details><summary>Steps (5000 total, "),
        "table not folded"
    );
    assert!(panel.contains("<details><summary>Step graph (5000 steps)</summary>"));
    let rows = panel.lines().filter(|l| l.starts_with("| `S")).count();
    assert!(rows > 50, "only {rows} rows fit");
    let note = format!("…and {} more steps not shown", 5000 - rows);
    assert!(panel.contains(&note), "missing {note:?}");

    // The step in progress and the ready one are shown before old done steps.
    assert!(panel.contains("| `S40` |"), "in-progress step missing");
    let nodes = panel
        .lines()
        .filter(|l| l.contains("[\"") && l.contains(":::"))
        .count();
    assert_eq!(nodes, MAX_GRAPH_NODES);
    assert!(panel.contains("_Showing 80 of 5000 steps, unfinished first"));
    assert!(panel.contains(":::in_progress"));
}

#[test]
fn panel_folds_past_a_screenful_of_steps_but_shows_them_all() {
    let panel = mission_panel(&big(60, 3), &ctx());
    assert_fits(&panel);
    assert!(panel.contains("<details><summary>Steps (60 total, 60 shown)</summary>"));
    assert!(!panel.contains("more steps not shown"));
    let ids: HashSet<&str> = panel
        .lines()
        .filter(|l| l.starts_with("| `S"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert_eq!(ids.len(), 60);
}

#[test]
fn panel_with_hostile_long_text_stays_under_the_limit() {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "@a&<".repeat(50_000),
            steps: vec![task("S1", &"@x&".repeat(10_000), &[], Validation::None)],
            ..InitArgs::default()
        }),
    );
    let l = run(
        Some(&l),
        Operation::Update(UpdateArgs {
            add_missing_info: (0..200)
                .map(|i| format!("{i} {}", "@q&".repeat(3000)))
                .collect(),
            add_facts: (0..200)
                .map(|i| format!("{i} {}", "&@".repeat(3000)))
                .collect(),
            reason: "@r&".repeat(5000),
            ..UpdateArgs::default()
        }),
    );
    let panel = mission_panel(&l, &ctx());
    assert_fits(&panel);
    assert!(panel.contains("| `S1` |"), "the step table survives");
}
