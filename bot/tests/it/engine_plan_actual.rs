//! Plan against actual for mission steps, and plans for issues the classifier finds
//! non-trivial, end to end: a step's pull request is held to the plan its mission came
//! from and to the step's stage (the `navin/plan` check, its annotations and the panel
//! say which files are outside, and how); `plan.scope: strict` keeps green CI from
//! closing the step until `/plan edit` covers them. An issue opened by a writer that
//! scores at least `plan_mode.auto_threshold` gets a plan without `/plan`, once.

use navin_e2e::fake::PullSpec;
use navin_ledger::model::TaskStatus;

use crate::world::World;

const PANEL: &str = "<!-- navin:panel";

const STAGES: &str = "\n\n## Stages\n\n### Stage 1: The greeting\n\n- File: src/greet.rs\n- Verification: cargo test\n\n### Stage 2: The library root\n\n- File: src/lib.rs\n- Verification: cargo test\n";

/// A writer's `/plan edit` of issue `issue`'s plan with `edit` applied to its text.
async fn edit_plan(w: &mut World, issue: u64, edit: impl Fn(&str) -> String) {
    let text = w
        .ledger_text(&navin_ledger::plan::record::text_path(&format!(
            "issue-{issue}"
        )))
        .expect("the plan text");
    let edited = edit(text.trim_end());
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
}

/// A running staged mission (`S1` greeting, `S2` library root) from issue `issue`'s
/// approved plan, under `config`.
async fn staged_mission(w: &mut World, config: &str) -> u64 {
    w.commit(&[(".github/navin.yml", config)]);
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    w.comment(
        issue,
        "alice",
        "/plan make the greeting configurable in src/greet.rs and src/lib.rs",
    )
    .await;
    w.reply().await;
    edit_plan(w, issue, |text| format!("{text}{STAGES}")).await;
    w.comment(issue, "maya", "/approve").await;
    w.comment(issue, "alice", "/mission").await;
    assert!(w.reply().await.starts_with(PANEL));
    issue
}

/// Step S1's pull request: its own stage's file, stage 2's file and a file no stage
/// and no proposed change names.
async fn drifting_pr(w: &mut World) -> (u64, String) {
    let spec = PullSpec::new("navin/S1-work")
        .author("alice")
        .title("The greeting")
        .body("Navin-Step: S1\n")
        .file(
            "src/greet.rs",
            "pub fn greet() -> &'static str { \"hi\" }\n",
        )
        .file("src/lib.rs", "pub mod greet;\n")
        .file("ops/deploy.sh", "#!/bin/sh\necho deploy\n");
    w.open_pull(spec).await
}

fn summary(run: &navin_e2e::fake::model::CheckRun) -> String {
    run.output["summary"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `(path, level, title)` of each annotation, in order.
fn marks(run: &navin_e2e::fake::model::CheckRun) -> Vec<(String, String, String)> {
    run.output["annotations"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|m| {
                    let s = |k: &str| m[k].as_str().unwrap_or_default().to_owned();
                    (s("path"), s("annotation_level"), s("title"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steps_pull_request_is_told_which_files_are_outside_the_plan_and_which_outside_its_stage()
{
    let mut w = World::new().await;
    staged_mission(&mut w, "evidence:\n  done_on: green\n").await;
    let (_, head) = drifting_pr(&mut w).await;

    let run = w.plan_check(&head);
    assert_eq!(
        run.conclusion.as_deref(),
        Some("success"),
        "advisory: {run:#?}"
    );
    let text = summary(&run);
    assert!(
        text.contains("carries step `S1` (stage 1) of the mission started from plan `issue-"),
        "{text}"
    );
    assert!(
        text.contains("**Outside the plan** (1 file): `ops/deploy.sh`."),
        "{text}"
    );
    assert!(
        text.contains("**Outside stage 1** (1 file): `src/lib.rs` (stage 2)."),
        "{text}"
    );
    assert_eq!(
        marks(&run),
        [
            (
                "ops/deploy.sh".into(),
                "warning".into(),
                "Not in the plan".into()
            ),
            (
                "src/lib.rs".into(),
                "warning".into(),
                "Not in stage 1".into()
            ),
        ]
    );
    let panel = w.latest(PANEL);
    assert!(
        panel.contains("changed outside the plan: `ops/deploy.sh`; planned for another stage than stage 1: `src/lib.rs`"),
        "{panel}"
    );
    assert!(!panel.contains("not done until"), "advisory holds nothing");

    // Advisory: green CI closes the step all the same.
    w.ci(&head, "ci/test", "success").await;
    w.ci(&head, "navin/verify", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_scope_fails_the_check_and_holds_the_green_step_until_the_plan_edit_covers_the_files(
) {
    let mut w = World::new().await;
    let issue = staged_mission(
        &mut w,
        "evidence:\n  done_on: green\nplan:\n  scope: strict\n",
    )
    .await;
    let (_, head) = drifting_pr(&mut w).await;

    let run = w.plan_check(&head);
    assert_eq!(run.conclusion.as_deref(), Some("failure"), "{run:#?}");
    assert!(
        run.output["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("2 files changed outside plan issue-")),
        "{run:#?}"
    );
    let levels: Vec<String> = marks(&run).into_iter().map(|m| m.1).collect();
    assert_eq!(levels, ["failure", "failure"]);

    w.ci(&head, "ci/test", "success").await;
    w.ci(&head, "navin/verify", "success").await;
    assert_eq!(
        w.step("S1").status,
        TaskStatus::InProgress,
        "green, but held by the files outside the plan"
    );
    let panel = w.latest(PANEL);
    assert!(
        panel.contains("changed outside the plan: `ops/deploy.sh`")
            && panel.contains("not done until the plan covers them (`/plan edit`) or they are reverted (`plan.scope: strict`)"),
        "{panel}"
    );

    // The plan now proposes the script, and stage 1 takes both files: the check passes
    // on the same head and the green runs already there close the step.
    edit_plan(&mut w, issue, |text| {
        text.replacen(
            "## New dependencies",
            "### File: ops/deploy.sh\n\n- **Operation:** create\n- **Change:** A deploy script.\n- **Rationale:** The greeting ships with it.\n\n## New dependencies",
            1,
        )
        .replacen(
            "- File: src/greet.rs\n",
            "- File: src/greet.rs\n- File: src/lib.rs\n- File: ops/deploy.sh\n",
            1,
        )
    })
    .await;
    let run = w.plan_check(&head);
    assert_eq!(run.conclusion.as_deref(), Some("success"), "{run:#?}");
    assert!(marks(&run).is_empty(), "{run:#?}");
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    assert!(!w.latest(PANEL).contains("Plan vs actual"));
    w.finish().await;
}

/// Migration + rename: 5 points.
const RISKY: &str = "Rename the greetings table column and migrate the data";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_issue_a_writer_opens_above_the_threshold_gets_one_plan_and_nothing_else_does() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", "plan_mode:\n  auto_threshold: 3\n")]);
    w.grant("carol", "write");
    let (issue, guid) = w.open_issue("carol", RISKY, "The column is `name`.").await;
    let plan = w.reply().await;
    assert!(
        plan.starts_with(&format!("<!-- navin:plan id=issue-{issue} ")),
        "{plan}"
    );
    let record = w
        .plan_record(&format!("issue-{issue}"))
        .expect("a plan record");
    assert_eq!(record.request, RISKY);
    assert_eq!(record.requested_by, "carol");
    assert!(!record.pull_request);

    // GitHub's "Redeliver" and a worker's retry of the same delivery: still one plan.
    let commits = w.ledger_commits();
    w.redeliver(&guid).await;
    w.rerun(&guid).await;
    w.no_reply().await;
    let again = w
        .plan_record(&format!("issue-{issue}"))
        .expect("the record");
    assert_eq!(again.op_ids, record.op_ids, "planned once");
    assert_eq!(w.ledger_commits(), commits);

    // A reader's risky issue and a writer's trivial one spend no planner.
    let (by_reader, _) = w.open_issue("bob", RISKY, "").await;
    let (trivial, _) = w.open_issue("carol", "Fix a typo", "").await;
    w.no_reply().await;
    assert!(w.plan_record(&format!("issue-{by_reader}")).is_none());
    assert!(w.plan_record(&format!("issue-{trivial}")).is_none());
    assert_eq!(w.ledger_commits(), commits, "no ledger write");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_threshold_an_opened_issue_gets_no_plan() {
    let mut w = World::new().await;
    let commits = w.ledger_commits();
    let (issue, _) = w.open_issue("alice", RISKY, "").await;
    w.no_reply().await;
    assert!(w.plan_record(&format!("issue-{issue}")).is_none());
    assert_eq!(w.ledger_commits(), commits, "no ledger write");
    w.finish().await;
}
