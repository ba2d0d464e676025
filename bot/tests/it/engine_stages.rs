//! Stages, missing info and automatic checkpoints on GitHub, end to end: a staged plan's
//! next stage waits for `/continue`; a ready step that names an open question pauses the
//! mission and is asked about once, `/answer` (or the wait) resumes it; a destructive step
//! is checkpointed before it starts and the panel lists the checkpoints `/rollback` takes.

use navin_ledger::model::{Actor, MissionStatus, PauseReason, TaskStatus};

use crate::world::World;

const PANEL: &str = "<!-- navin:panel";

/// An approved plan for `issue`, edited by a writer with `extra` appended (a `## Stages`
/// section) and its questions section replaced by `questions` when given.
pub(crate) async fn approved_plan(w: &mut World, issue: u64, extra: &str, questions: Option<&str>) {
    w.comment(
        issue,
        "alice",
        "/plan make the greeting configurable in src/greet.rs and src/lib.rs",
    )
    .await;
    w.reply().await;
    let id = format!("issue-{issue}");
    let text = w
        .ledger_text(&navin_ledger::plan::record::text_path(&id))
        .expect("the plan text");
    let mut edited = text.trim_end().to_owned();
    if let Some(questions) = questions {
        let start = edited
            .find("## Risks And Assumptions")
            .expect("a questions section");
        let end = start
            + edited[start..]
                .find("## Optional Goal Handoff Contract")
                .expect("the contract follows");
        edited.replace_range(
            start..end,
            &format!("## Risks And Assumptions\n\n{questions}\n\n"),
        );
    }
    edited.push_str(extra);
    let c = w
        .comment(
            issue,
            "alice",
            &format!("/plan edit\n\n````markdown\n{edited}\n````\n"),
        )
        .await;
    assert!(
        w.reactions(c).contains(&"+1".to_owned()),
        "the edit is valid: {}",
        w.reply().await
    );
    w.comment(issue, "maya", "/approve").await;
}

pub(crate) const STAGES: &str = "\n\n## Stages\n\n### Stage 1: The greeting\n\n- File: src/greet.rs\n- Verification: cargo test\n\n### Stage 2: The library root\n\n- File: src/lib.rs\n- Verification: cargo test\n";

/// Opens the step's pull request, turns CI and the stage's own verification
/// (`navin/verify`) green and merges it.
pub(crate) async fn land(w: &mut World, step: &str) {
    let (pr, head) = w.open_pr(step, &format!("navin/{step}-work")).await;
    w.ci(&head, "ci/test", "success").await;
    w.ci(&head, "navin/verify", "success").await;
    w.merge(pr).await;
}

pub(crate) fn ready(w: &World) -> Vec<String> {
    let ledger = w.ledger().expect("a mission");
    ledger.ready().iter().map(|t| t.id.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_stage_waits_for_a_writers_continue_and_an_early_continue_changes_nothing() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    approved_plan(&mut w, issue, STAGES, None).await;
    w.comment(issue, "alice", "/mission").await;
    assert!(w.reply().await.starts_with(PANEL));
    assert_eq!(ready(&w), ["S1"]);
    let panel = w.latest(PANEL);
    assert!(panel.contains("**Stage:** 1/2 The greeting"), "{panel}");

    // Too early: stage 1 is not done, so nothing is released.
    let commits = w.ledger_commits();
    w.comment(issue, "alice", "/continue").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("stage 1 is not done yet") && refusal.contains("S1"),
        "{refusal}"
    );
    assert_eq!(
        w.ledger_commits(),
        commits,
        "a refused command changes nothing"
    );

    // CI alone is not enough: the stage's own verification is its required check.
    let (pr, head) = w.open_pr("S1", "navin/S1-work").await;
    w.ci(&head, "ci/test", "success").await;
    w.merge(pr).await;
    assert_eq!(
        w.step("S1").status,
        TaskStatus::InProgress,
        "merged with ci/test green, but navin/verify has not run"
    );
    w.ci(&head, "navin/verify", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    assert!(ready(&w).is_empty(), "stage 2 is held for a person");
    let ledger = w.ledger().expect("ledger");
    assert_eq!(
        ledger.mission.status,
        MissionStatus::Running,
        "waiting, not blocked"
    );
    let panel = w.latest(PANEL);
    assert!(
        panel.contains("`/continue` releases stage 2 (The library root: `S2`)"),
        "{panel}"
    );
    // A pull request opened for the held stage is noted, not started.
    let (early, _) = w.open_pr("S2", "navin/S2-early").await;
    assert_eq!(w.step("S2").status, TaskStatus::Planned);
    assert!(w.step("S2").links.prs.contains(&early));

    // A reader cannot release it; a writer can.
    w.comment(issue, "mallory", "/continue").await;
    assert!(w.reply().await.contains("write access"));
    let c = w
        .comment(
            issue,
            "alice",
            "/continue looked at the greeting on staging",
        )
        .await;
    assert!(w.reactions(c).contains(&"+1".to_owned()));
    assert_eq!(ready(&w), ["S2"]);
    let last = w
        .ledger()
        .expect("ledger")
        .mission
        .history
        .last()
        .cloned()
        .expect("history");
    assert_eq!(last.actor, Actor::Human("alice".into()));
    assert!(
        last.reason.starts_with("stage 2 released: S2"),
        "{}",
        last.reason
    );
    let panel = w.latest(PANEL);
    assert!(panel.contains("**Stage:** 2/2 The library root"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_run_all_the_next_stage_starts_as_soon_as_the_previous_is_merged() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", "stages: run-all\n")]);
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    approved_plan(&mut w, issue, STAGES, None).await;
    w.comment(issue, "alice", "/mission").await;
    w.reply().await;
    land(&mut w, "S1").await;
    assert_eq!(ready(&w), ["S2"]);
    w.finish().await;
}

const QUESTION: &str = "1. Which locale should src/greet.rs fall back to?\n   - **Default:** English\n   - **Answer:**";

/// A staged mission started from a plan whose one question names S1's file, under
/// `config`: Navin asks on the issue (the first reply), then posts the panel.
async fn asked(config: &str) -> (World, u64) {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", config)]);
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    approved_plan(&mut w, issue, STAGES, Some(QUESTION)).await;
    w.comment(issue, "alice", "/mission").await;
    let ask = w.reply().await;
    assert!(ask.contains("Navin needs an answer"), "{ask}");
    assert!(w.reply().await.starts_with(PANEL));
    (w, issue)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ready_step_that_names_an_open_question_pauses_the_mission_asks_once_and_an_answer_resumes_it(
) {
    let (mut w, issue) = asked("questions:\n  default_after: 48h\n").await;
    let ledger = w.ledger().expect("ledger");
    let m = &ledger.mission;
    assert_eq!(
        m.missing_info,
        ["Which locale should src/greet.rs fall back to?"]
    );
    assert_eq!(m.pending_defaults.len(), 1, "the default waits 48h");
    assert_eq!(
        m.status,
        MissionStatus::Paused,
        "S1 names the open question"
    );
    assert_eq!(m.pause_reason, Some(PauseReason::Human));
    let asks: Vec<String> = w
        .fake()
        .bot_comments()
        .into_iter()
        .map(|c| c.body)
        .filter(|b| b.contains("Navin needs an answer"))
        .collect();
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert!(
        asks[0].contains("`S1`") && asks[0].contains("**1.** Which locale should src/greet.rs"),
        "{}",
        asks[0]
    );
    let panel = w.latest(PANEL);
    assert!(
        panel.contains("default \"English\" applies from"),
        "{panel}"
    );

    // More events while paused ask nothing again.
    w.comment(issue, "alice", "/update fact greetings are one line")
        .await;
    let asks = w
        .fake()
        .bot_comments()
        .into_iter()
        .filter(|c| c.body.contains("Navin needs an answer"))
        .count();
    assert_eq!(asks, 1);

    w.comment(issue, "alice", "/answer 1 French").await;
    let ledger = w.ledger().expect("ledger");
    let m = &ledger.mission;
    assert_eq!(m.status, MissionStatus::Running, "answered, so resumed");
    assert!(m.missing_info.is_empty());
    assert!(m.pending_defaults.is_empty());
    assert!(m
        .facts
        .iter()
        .any(|f| f == "Which locale should src/greet.rs fall back to? → French"));
    let resumed = m.history.last().expect("history");
    assert_eq!(resumed.actor, Actor::Human("alice".into()));
    assert_eq!(ready(&w), ["S1"]);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_written_into_the_plan_records_the_fact_and_resumes_the_mission() {
    let (mut w, issue) = asked("questions:\n  default_after: 48h\n").await;
    assert_eq!(
        w.ledger().expect("ledger").mission.status,
        MissionStatus::Paused
    );
    let id = format!("issue-{issue}");
    let text = w
        .ledger_text(&navin_ledger::plan::record::text_path(&id))
        .expect("the plan");
    let answered = text.replacen("   - **Answer:**", "   - **Answer:** German", 1);
    assert_ne!(answered, text, "the plan has the answer line");
    // GitHub stamps comments to the second: one written in the same second as the
    // plan's last change cannot be told to come after it. A person reads first.
    let into_second = u64::from(chrono::Utc::now().timestamp_subsec_millis());
    tokio::time::sleep(std::time::Duration::from_millis(1001 - into_second)).await;
    w.comment(
        issue,
        "alice",
        &format!("/plan edit\n\n````markdown\n{answered}\n````\n"),
    )
    .await;
    let m = w.ledger().expect("ledger").mission;
    assert_eq!(m.status, MissionStatus::Running, "{:?}", m.history.last());
    assert!(m
        .facts
        .iter()
        .any(|f| f == "Which locale should src/greet.rs fall back to? → German"));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_default_whose_wait_is_over_becomes_a_fact_and_the_mission_goes_on() {
    let (mut w, issue) = asked("questions:\n  default_after: 1s\n").await;
    assert_eq!(
        w.ledger().expect("ledger").mission.status,
        MissionStatus::Paused
    );
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    w.comment(issue, "alice", "/update fact greetings are one line")
        .await;
    let m = w.ledger().expect("ledger").mission;
    assert!(m
        .facts
        .iter()
        .any(|f| f == "Which locale should src/greet.rs fall back to? → English (default)"));
    assert!(m
        .history
        .iter()
        .any(|h| h.reason == "default applied after 1s" && h.actor == Actor::App("navin".into())));
    assert_eq!(m.status, MissionStatus::Running, "{:#?}", m.history);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_destructive_step_is_checkpointed_before_it_starts_and_the_panel_lists_it_for_rollback() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    w.comment(
        issue,
        "alice",
        "/plan make the greeting configurable in src/greet.rs and src/lib.rs",
    )
    .await;
    w.reply().await;
    let id = format!("issue-{issue}");
    let text = w
        .ledger_text(&navin_ledger::plan::record::text_path(&id))
        .expect("the plan");
    let block = text
        .find("### File: src/lib.rs")
        .expect("a change to src/lib.rs");
    let op = block
        + text[block..]
            .find("- **Operation:** ")
            .expect("its operation");
    let end = op + text[op..].find('\n').expect("a line");
    let mut edited = text.clone();
    edited.replace_range(op..end, "- **Operation:** delete");
    w.comment(
        issue,
        "alice",
        &format!("/plan edit\n\n````markdown\n{edited}\n````\n"),
    )
    .await;
    w.comment(issue, "maya", "/approve").await;
    w.comment(issue, "alice", "/mission").await;
    assert!(w.reply().await.starts_with(PANEL));
    let ledger = w.ledger().expect("ledger");
    // A two-file plan is one step, which the delete makes destructive.
    let step = ledger
        .board
        .tasks
        .iter()
        .find(|t| {
            t.description
                .as_deref()
                .is_some_and(|d| d.contains("Delete `src/lib.rs`"))
        })
        .map(|t| t.id.clone())
        .expect("the delete is in a step");
    assert_eq!(
        w.step(&step).destructive.as_deref(),
        Some("deletes src/lib.rs")
    );
    let start = ledger.mission.checkpoints.clone();
    assert_eq!(start.len(), 1, "the mission start: {start:?}");
    let before = ledger.mission.version;

    w.open_pr(&step, &format!("navin/{step}-drop")).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(w.step(&step).status, TaskStatus::InProgress);
    let mark = ledger.mission.checkpoints.last().cloned().expect("a mark");
    // The pull request's files outside the plan are recorded after the claim.
    let claimed = ledger
        .mission
        .history
        .iter()
        .rev()
        .find(|h| h.operation == "claim")
        .map(|h| h.version)
        .expect("the claim");
    assert_eq!(
        mark.version,
        claimed - 1,
        "the state just before it started"
    );
    assert!(mark.version > before, "{mark:?}");
    assert_eq!(
        mark.reason,
        format!("before {step}, which deletes src/lib.rs")
    );
    let before = mark.version;
    let panel = w.latest(PANEL);
    assert!(
        panel.contains(&format!(
            "`v{before}` before {step}, which deletes src/lib.rs"
        )) && panel.contains("mission start"),
        "{panel}"
    );
    assert!(
        w.ledger_ref(&format!("refs/navin/checkpoints/v{before}")),
        "the checkpoint ref is pushed"
    );

    w.comment(issue, "alice", &format!("/rollback v{before}"))
        .await;
    assert_eq!(
        w.step(&step).status,
        TaskStatus::Planned,
        "back before it started"
    );
    w.finish().await;
}
