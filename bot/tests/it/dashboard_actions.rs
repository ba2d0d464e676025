//! Acting from the dashboard: a writer pauses, resumes, answers, retries, approves and releases the next stage from a repository page in a real headless Chromium, and rejects with feedback over HTTP; each action runs as its slash command, changes the ledger once and is recorded on the issue; a person without write access is refused and changes nothing, even with a form the page showed them before their access was taken away.

use std::time::Duration;

use navin_e2e::browser::Browser;
use navin_ledger::model::{MissionStatus, TaskStatus};
use navin_ledger::plan::record::RecordStatus;

use crate::dashboard_support::WebUser;
use crate::engine_support::{OWNER, REPO};
use crate::world::World;

const PANEL: &str = "<!-- navin:panel";
const UI: Duration = Duration::from_secs(15);

/// A plan pending on issue 1 (asked for by alice), and a mission on issue 2 whose `S3`
/// failed its CI and which has one open question; maya may write.
async fn world() -> (World, u64, u64) {
    let mut w = World::with_dashboard().await;
    w.grant("maya", "write");
    let plan_issue = w.issue("Greetings in every locale", "");
    w.comment(plan_issue, "alice", "/plan add a greeting for every locale")
        .await;
    assert!(w.reply().await.starts_with("<!-- navin:plan"));
    let mission = w.issue("Mission", "");
    w.comment(
        mission,
        "alice",
        "/mission configurable greetings\n/step add S1 \"Greeting table\" --validation manual\n/step add S3 \"Tested greetings\" --validation test\n/update missing Which locale ships first?",
    )
    .await;
    assert!(w.reply().await.starts_with(PANEL));
    let (_, head) = w.open_pr("S3", "navin/S3-tested").await;
    w.ci(&head, "ci/test", "failure").await;
    assert_eq!(w.step("S3").status, TaskStatus::Failed);
    (w, plan_issue, mission)
}

/// Bodies of the bot's replies on `issue` that record a dashboard action.
fn dashboard_replies(w: &World, issue: u64) -> Vec<String> {
    w.fake()
        .comments(OWNER, REPO, issue)
        .into_iter()
        .filter(|c| c.via_api && c.body.contains("from the Navin dashboard"))
        .map(|c| c.body)
        .collect()
}

/// Takes the `n` replies the actions posted (checked above by their bodies), then
/// asserts there is nothing more.
async fn read_replies(w: &mut World, n: usize) {
    for _ in 0..n {
        let reply = w.reply().await;
        assert!(reply.contains("from the Navin dashboard"), "{reply}");
    }
    w.no_reply().await;
}

fn status(w: &World) -> MissionStatus {
    w.ledger().unwrap().mission.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_acts_from_the_repository_page_and_each_action_is_recorded_once_on_the_issue() {
    let (mut w, plan_issue, mission) = world().await;
    let base = w.dashboard_url();
    let repo_page = format!("{base}/r/{OWNER}/{REPO}");
    let b = Browser::start("dashboard_actions_writer").await.unwrap();
    b.goto(&w.fake().sign_in_url("maya")).await.unwrap();
    b.goto(&format!("{base}/login")).await.unwrap();
    b.wait_for("#missions", UI).await.unwrap();
    b.goto(&repo_page).await.unwrap();
    b.wait_for("#mission-acts", UI).await.unwrap();
    b.screenshot("01-repository-with-actions").await.unwrap();

    // Pause, with a reason: the mission is paused and the issue says who did it.
    let commits = w.ledger_commits();
    b.fill("#act-pause input[name=text]", "waiting for the freeze")
        .await
        .unwrap();
    b.click("#act-pause button").await.unwrap();
    b.wait_for_text("#flash", "Done: /pause waiting for the freeze", UI)
        .await
        .unwrap();
    assert_eq!(status(&w), MissionStatus::Paused);
    assert_eq!(w.ledger_commits(), commits + 1, "one ledger commit");
    let replies = dashboard_replies(&w, mission);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(
        replies[0].contains("maya") && replies[0].contains("`/pause waiting for the freeze`"),
        "{}",
        replies[0]
    );
    b.screenshot("02-paused").await.unwrap();

    // Resume.
    b.click("#act-resume button").await.unwrap();
    b.wait_for_text("#flash", "Done: /resume", UI)
        .await
        .unwrap();
    assert_ne!(status(&w), MissionStatus::Paused);

    // Answer the open question.
    b.fill("#act-answer-1 input[name=text]", "French first")
        .await
        .unwrap();
    b.click("#act-answer-1 button").await.unwrap();
    b.wait_for_text("#flash", "Done: /answer 1 French first", UI)
        .await
        .unwrap();
    let known = w.ledger().unwrap().mission;
    assert!(
        known.facts.iter().any(|f| f.contains("French first")),
        "the answer is a fact now: {known:?}"
    );

    // Retry the failed step: its next attempt, out of failed.
    b.click("#act-retry-S3 button").await.unwrap();
    b.wait_for_text("#flash", "Done: /retry S3", UI)
        .await
        .unwrap();
    assert_ne!(w.step("S3").status, TaskStatus::Failed);

    // Approve alice's plan (maya is another writer), recorded as an approval by maya.
    let plan_id = format!("issue-{plan_issue}");
    b.click(&format!("#act-approve-{plan_id} button"))
        .await
        .unwrap();
    b.wait_for_text("#flash", "Done: /approve", UI)
        .await
        .unwrap();
    let record = w.plan_record(&plan_id).unwrap();
    assert_eq!(record.status, RecordStatus::Approved, "{record:?}");
    assert!(
        record.approvals.iter().any(|a| a.approver == "maya"),
        "{:?}",
        record.approvals
    );
    b.screenshot("03-approved").await.unwrap();
    assert_eq!(dashboard_replies(&w, mission).len(), 4);
    assert_eq!(dashboard_replies(&w, plan_issue).len(), 1);
    read_replies(&mut w, 5).await;

    let errors = b.console_errors().await.unwrap();
    assert!(
        errors.is_empty(),
        "script errors or CSP violations: {errors:?}"
    );
    b.close().await.unwrap();
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_shown_to_a_writer_whose_access_was_then_taken_is_refused_and_changes_nothing() {
    let (w, _, mission) = world().await;
    let base = w.dashboard_url();
    let b = Browser::start("dashboard_actions_demoted").await.unwrap();
    b.goto(&w.fake().sign_in_url("maya")).await.unwrap();
    b.goto(&format!("{base}/login")).await.unwrap();
    b.wait_for("#missions", UI).await.unwrap();
    b.goto(&format!("{base}/r/{OWNER}/{REPO}")).await.unwrap();
    b.wait_for("#act-pause", UI).await.unwrap();

    // The page was drawn for a writer; GitHub says otherwise by the time she clicks.
    w.grant("maya", "read");
    let commits = w.ledger_commits();
    b.click("#act-pause button").await.unwrap();
    b.wait_for("#flash.bad", UI).await.unwrap();
    let flash = b.text("#flash").await.unwrap();
    assert!(
        flash.starts_with("Nothing changed")
            && flash.contains("write access")
            && flash.contains("role is read")
            && !flash.contains('`'),
        "{flash}"
    );
    b.screenshot("01-refused").await.unwrap();
    assert_eq!(w.ledger_commits(), commits, "nothing written");
    assert_ne!(status(&w), MissionStatus::Paused);
    assert!(dashboard_replies(&w, mission).is_empty(), "nothing posted");
    b.close().await.unwrap();
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_sees_no_forms_and_a_forged_post_is_refused_and_a_resent_form_acts_once() {
    let (mut w, plan_issue, mission) = world().await;
    let base = w.dashboard_url();
    let repo_path = format!("/r/{OWNER}/{REPO}");
    let act = format!("{repo_path}/act");

    // A reader: the page has no forms; a hand-made post with her own token is refused.
    w.grant("rita", "read");
    let mut rita = WebUser::new(&base, "rita");
    rita.sign_in().await;
    let page = rita.get(&repo_path).await;
    assert_eq!(page.status, 200);
    assert!(!page.body.contains("act-pause"), "no forms for a reader");
    let csrf = WebUser::csrf_of(&page.body);
    let commits = w.ledger_commits();
    for (action, extra) in [
        ("pause", ("text", "mine now")),
        ("retry", ("step", "S3")),
        ("approve", ("plan", "issue-1")),
    ] {
        let answer = rita
            .post_form(
                &act,
                &[
                    ("csrf", &csrf),
                    ("act_id", &format!("forged-{action}")),
                    ("action", action),
                    extra,
                ],
            )
            .await;
        // A key the server did not sign for this form: refused before anything runs.
        assert_eq!(answer.status, 400, "{action}: {}", answer.body);
        assert!(answer.body.contains("damaged"), "{}", answer.body);
    }
    assert_eq!(w.ledger_commits(), commits, "nothing written");
    assert_eq!(w.step("S3").status, TaskStatus::Failed);
    assert!(dashboard_replies(&w, mission).is_empty());
    assert!(dashboard_replies(&w, plan_issue).is_empty());

    // Without the page's token nothing is even tried.
    let mut maya = WebUser::new(&base, "maya");
    maya.sign_in().await;
    let page = maya.get(&repo_path).await;
    let csrf = WebUser::csrf_of(&page.body);
    let forged = maya
        .post_form(
            &act,
            &[
                ("csrf", "not-the-token"),
                ("act_id", "x-1"),
                ("action", "pause"),
            ],
        )
        .await;
    assert_eq!(forged.status, 400, "{}", forged.body);
    // Nor with a key the page did not write.
    let damaged = maya
        .post_form(
            &act,
            &[
                ("csrf", csrf.as_str()),
                ("act_id", "x\n/approve"),
                ("action", "pause"),
            ],
        )
        .await;
    assert_eq!(damaged.status, 400, "{}", damaged.body);
    assert!(damaged.body.contains("damaged"), "{}", damaged.body);
    assert_ne!(status(&w), MissionStatus::Paused);

    // The pause form's key, sent with another action (resume), is refused: the key is
    // bound to its action, so it cannot pass for "already done".
    let pause_key = WebUser::act_id_of(&page.body, "pause");
    let misused = maya
        .post_form(
            &act,
            &[
                ("csrf", csrf.as_str()),
                ("act_id", pause_key.as_str()),
                ("action", "resume"),
            ],
        )
        .await;
    assert_eq!(misused.status, 400, "{}", misused.body);

    // A writer's form sent twice (a double click, a reload) pauses once and replies once.
    let fields = [
        ("csrf", csrf.as_str()),
        ("act_id", pause_key.as_str()),
        ("action", "pause"),
    ];
    for _ in 0..2 {
        let answer = maya.post_form(&act, &fields).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert!(answer.body.contains("Done: /pause"), "{}", answer.body);
    }
    assert_eq!(status(&w), MissionStatus::Paused);
    assert_eq!(w.ledger_commits(), commits + 1, "one commit for two sends");
    assert_eq!(
        dashboard_replies(&w, mission).len(),
        1,
        "one reply for two sends"
    );

    // A refusal by the rules (resuming a running mission) is shown, not posted. Two
    // page views give two resume forms with their own keys.
    let first = maya.get(&repo_path).await;
    let second = maya.get(&repo_path).await;
    let resume_key = WebUser::act_id_of(&first.body, "resume");
    let resume = [
        ("csrf", csrf.as_str()),
        ("act_id", resume_key.as_str()),
        ("action", "resume"),
    ];
    assert_eq!(maya.post_form(&act, &resume).await.status, 200);
    let resume_again = WebUser::act_id_of(&second.body, "resume");
    let again = [
        ("csrf", csrf.as_str()),
        ("act_id", resume_again.as_str()),
        ("action", "resume"),
    ];
    let refused = maya.post_form(&act, &again).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(refused.body.contains("Nothing changed"), "{}", refused.body);
    assert_eq!(
        dashboard_replies(&w, mission).len(),
        2,
        "the refusal is not posted"
    );

    // Rejecting alice's plan with feedback: recorded as maya's rejection, and said on #1.
    let plan = format!("issue-{plan_issue}");
    let page = maya.get(&repo_path).await;
    let reject_key = WebUser::act_id_of(&page.body, &format!("reject-{plan}"));
    let reject = [
        ("csrf", csrf.as_str()),
        ("act_id", reject_key.as_str()),
        ("action", "reject"),
        ("plan", plan.as_str()),
        ("text", "too broad,\nleave the CLI alone"),
    ];
    let answer = maya.post_form(&act, &reject).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    // As `/reject` with feedback: the rejection is maya's, and a new plan is drawn up.
    let record = w.plan_record(&plan).unwrap();
    let rejection = record.rejections.last().expect("a rejection");
    assert_eq!(rejection.by, "maya");
    assert_eq!(
        rejection.feedback.as_deref(),
        Some("too broad, leave the CLI alone")
    );
    assert_eq!(record.status, RecordStatus::Pending, "the new plan waits");
    assert_eq!(dashboard_replies(&w, plan_issue).len(), 1);
    read_replies(&mut w, 3).await;
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_releases_the_next_stage_from_the_repository_page_once() {
    use crate::engine_stages::{approved_plan, land, ready, STAGES};
    let mut w = World::with_dashboard().await;
    w.grant("maya", "write");
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    approved_plan(&mut w, issue, STAGES, None).await;
    w.comment(issue, "alice", "/mission").await;
    assert!(w.reply().await.starts_with(PANEL));
    land(&mut w, "S1").await;
    assert!(ready(&w).is_empty(), "stage 2 is held for a person");

    let base = w.dashboard_url();
    let b = Browser::start("dashboard_actions_continue").await.unwrap();
    b.goto(&w.fake().sign_in_url("maya")).await.unwrap();
    b.goto(&format!("{base}/login")).await.unwrap();
    b.wait_for("#missions", UI).await.unwrap();
    b.goto(&format!("{base}/r/{OWNER}/{REPO}")).await.unwrap();
    b.wait_for("#act-continue", UI).await.unwrap();
    let commits = w.ledger_commits();
    b.fill("#act-continue input[name=text]", "stage 1 looks right")
        .await
        .unwrap();
    b.click("#act-continue button").await.unwrap();
    b.wait_for_text("#flash", "Done: /continue stage 1 looks right", UI)
        .await
        .unwrap();
    assert_eq!(ready(&w), ["S2"], "stage 2 is released");
    assert_eq!(w.ledger_commits(), commits + 1, "one ledger commit");
    let replies = dashboard_replies(&w, issue);
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(
        replies[0].contains("maya") && replies[0].contains("`/continue stage 1 looks right`"),
        "{}",
        replies[0]
    );
    // The stage is released: the page no longer offers to continue.
    b.goto(&format!("{base}/r/{OWNER}/{REPO}")).await.unwrap();
    b.wait_for("#mission-acts", UI).await.unwrap();
    let acts = b.text("#mission-acts").await.unwrap();
    assert!(
        !acts.contains("Continue to the next stage"),
        "the Continue form is gone once the stage is released: {acts}"
    );
    let errors = b.console_errors().await.unwrap();
    assert!(
        errors.is_empty(),
        "script errors or CSP violations: {errors:?}"
    );
    read_replies(&mut w, 1).await;
    b.close().await.unwrap();
    w.finish().await;
}
