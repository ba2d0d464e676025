//! The dashboard in a real headless Chromium: sign-in through the fake GitHub's OAuth endpoints, the missions page, a repository's step graph, a plan page, an edit whose problem is shown at its line, and a save. Screenshots are kept under `target/test-artifacts/`.

use std::time::Duration;

use navin_e2e::browser::Browser;

use crate::engine_support::{OWNER, REPO};
use crate::world::World;

const PANEL: &str = "<!-- navin:panel";
const UI: Duration = Duration::from_secs(15);

/// A world with a mission of two steps and a plan on issue 1, seen by alice.
pub async fn world_with_mission_and_plan() -> (World, u64) {
    let mut w = World::with_dashboard().await;
    let issue = w.issue("Greetings in every locale", "");
    w.comment(issue, "alice", "/plan add a greeting for every locale")
        .await;
    let plan_comment = w.reply().await;
    assert!(
        plan_comment.starts_with("<!-- navin:plan"),
        "{plan_comment}"
    );
    let mission = w.issue("Mission", "");
    w.comment(
        mission,
        "alice",
        "/mission configurable greetings\n/step add S1 \"Greeting table\" --validation manual\n/step add S2 \"Locale files\" --after S1 --validation manual",
    )
    .await;
    assert!(w.reply().await.starts_with(PANEL));
    (w, issue)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_signs_in_reads_missions_and_plans_and_edits_a_plan_in_a_real_browser() {
    let (w, issue) = world_with_mission_and_plan().await;
    let base = w.dashboard_url();
    let plan_id = format!("issue-{issue}");
    let b = Browser::start("dashboard_writer").await.unwrap();

    // Signed out: the home page offers GitHub sign-in; the fake signs this browser in as alice.
    b.goto(&w.fake().sign_in_url("alice")).await.unwrap();
    b.goto(&base).await.unwrap();
    b.wait_for("#sign-in", UI).await.unwrap();
    b.screenshot("01-sign-in").await.unwrap();
    b.click("#sign-in").await.unwrap();
    b.wait_for("#missions", UI).await.unwrap();
    let url = b.current_url().await.unwrap();
    assert!(url.starts_with(&format!("{base}/missions")), "{url}");
    let session = b
        .cookies()
        .await
        .unwrap()
        .into_iter()
        .find(|c| c.name == "navin_session")
        .expect("a session cookie");
    assert!(session.http_only && session.secure, "{session:?}");
    assert_eq!(session.same_site.as_deref(), Some("Lax"));
    let missions = b.text("#missions").await.unwrap();
    assert!(missions.contains(&format!("{OWNER}/{REPO}")), "{missions}");
    assert!(missions.contains("configurable greetings"), "{missions}");
    assert!(missions.contains("0/2"), "progress: {missions}");
    b.screenshot("02-missions").await.unwrap();

    // The repository: the step graph drawn in the page, and the table behind it.
    b.click(&format!("#missions a[href='/r/{OWNER}/{REPO}']"))
        .await
        .unwrap();
    b.wait_for("svg.dag", UI).await.unwrap();
    let steps = b.text("#steps").await.unwrap();
    assert!(
        steps.contains("Greeting table") && steps.contains("Locale files"),
        "{steps}"
    );
    let plans = b.text("#plans").await.unwrap();
    assert!(
        plans.contains(&plan_id) && plans.contains("pending"),
        "{plans}"
    );
    b.screenshot("03-repository").await.unwrap();

    // The plan, rendered, with its conversation on GitHub.
    b.goto(&format!("{base}/r/{OWNER}/{REPO}/plans/{plan_id}"))
        .await
        .unwrap();
    b.wait_for("#plan-document", UI).await.unwrap();
    let doc = b.text("#plan-document").await.unwrap();
    assert!(doc.contains("Goal"), "{doc}");
    let comments = b.text("#comment-count").await.unwrap();
    assert!(comments.parse::<u64>().unwrap() >= 2, "{comments}");
    b.screenshot("04-plan").await.unwrap();

    // The editor: a broken heading is reported at its line, as `navin plan validate` says.
    b.click("#edit").await.unwrap();
    b.wait_for_text("#validation", "Valid plan", UI)
        .await
        .unwrap();
    let text = b.value("#plan-text").await.unwrap();
    let goal_line = text.lines().position(|l| l == "## Goal").unwrap() + 1;
    let broken = text.replacen("## Goal\n", "## Goals\n", 1);
    b.set_value("#plan-text", &broken).await.unwrap();
    b.wait_for("#validation[data-state='error']", UI)
        .await
        .unwrap();
    let problem = b.text("#validation").await.unwrap();
    let expected = navin_ledger::plan::PlanDocument::parse(&broken)
        .unwrap_err()
        .to_string();
    assert_eq!(problem, expected);
    assert!(
        problem.starts_with(&format!("line {goal_line}")),
        "{problem}"
    );
    b.screenshot("05-editor-problem").await.unwrap();

    // Fixed and changed, then saved: the plan page says so and the ledger has alice's edit.
    let edited = text.replacen(
        "## Goal\n",
        "## Goal\n\nGreet people in their own language, starting with French.\n\n",
        1,
    );
    b.set_value("#plan-text", &edited).await.unwrap();
    b.wait_for_text("#validation", "Valid plan", UI)
        .await
        .unwrap();
    let preview = b.text("#preview").await.unwrap();
    assert!(preview.contains("starting with French"), "{preview}");
    b.click("#save").await.unwrap();
    b.wait_for("#flash", UI).await.unwrap();
    let flash = b.text("#flash").await.unwrap();
    assert!(flash.starts_with("Saved"), "{flash}");
    b.screenshot("06-saved").await.unwrap();
    let record = w.plan_record(&plan_id).unwrap();
    let edit = record.edits.last().expect("an edit");
    assert_eq!(edit.by, "alice");
    let stored = w
        .ledger_text(&format!(".navin/plans/{plan_id}.md"))
        .unwrap();
    assert!(stored.contains("starting with French"), "{stored}");

    let errors = b.console_errors().await.unwrap();
    assert!(
        errors.is_empty(),
        "script errors or CSP violations: {errors:?}"
    );
    b.close().await.unwrap();
}
