//! The engine end to end, in the World DSL: plans on issues, missions from task lists and
//! approved plans, refusals, redeliveries and retries, edited comments and bursts of
//! commands, read back from the replies, the typed ledger and the fake's request log.

use navin_ledger::model::{MissionStatus, TaskStatus};
use navin_ledger::plan::record::{text_path, RecordStatus};

use crate::world::World;

const PANEL: &str = "<!-- navin:panel";
const PLAN: &str = "<!-- navin:plan";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_approve_mission_done_on_an_issue() {
    let mut w = World::new().await;
    let issue = w.issue("Greeting", "Make greetings configurable.");
    w.clear_requests();

    // /plan: one plan comment, the plan recorded on the ledger branch, no mission yet.
    let asked = w
        .comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let plan = w.reply().await;
    assert!(plan.starts_with("<!-- navin:plan id=issue-"), "{plan}");
    assert!(plan.contains("**Files to change**"), "{plan}");
    assert!(
        plan.contains("**To approve:** comment `/approve`"),
        "{plan}"
    );
    assert!(
        plan.contains("<details><summary>📄 The full plan ("),
        "{plan}"
    );
    assert!(w.reactions(asked).contains(&"+1".to_owned()));
    w.requests("/plan");
    let id = format!("issue-{issue}");
    let record = w.plan_record(&id).expect("plan record");
    assert_eq!(record.status, RecordStatus::Pending);
    assert_eq!(record.request, "make the greeting configurable");
    let text = w.ledger_text(&text_path(&id)).expect("the plan's text");
    assert!(text.starts_with("# Plan:"), "{text}");
    assert!(w.ledger().is_none(), "no mission yet");

    // /approve: the same comment is edited to approved and shows the draft mission.
    let approve = w.comment(issue, "maya", "/approve").await;
    assert!(w.reactions(approve).contains(&"+1".to_owned()));
    let edited = w.edited(PLAN);
    assert!(edited.contains("Draft mission"), "{edited}");
    w.requests("/approve");
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    assert_eq!(record.approvals[0].approver, "maya");
    assert_eq!(record.approvals[0].plan_hash, record.hash);

    // /mission with no goal: a mission from the approved plan, and its panel.
    let mission = w.comment(issue, "alice", "/mission").await;
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");
    assert!(w.reactions(mission).contains(&"+1".to_owned()));
    w.requests("/mission (from plan)");
    let ledger = w.ledger().unwrap();
    assert_eq!(ledger.mission.status, MissionStatus::Running);
    let origin = ledger
        .mission
        .origin
        .as_ref()
        .expect("the mission's origin");
    assert_eq!(origin.plan_id.as_deref(), Some(id.as_str()));
    assert_eq!(origin.issue, Some(issue));
    assert!(!ledger.steps().is_empty(), "{ledger:#?}");

    // /status by a reader: allowed, read-only; the panel is unchanged so nothing is edited.
    let status = w.comment(issue, "bob", "/status").await;
    assert!(w.reactions(status).contains(&"eyes".to_owned()));
    w.requests("/status");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mission_from_a_task_list_done_refusals_and_idempotence() {
    let mut w = World::new().await;
    let issue = w.issue(
        "Ship it",
        "Steps:\n\n- [ ] Write the docs\n- [ ] Announce\n",
    );
    w.clear_requests();

    // An unauthorized /mission changes nothing and gets a refusal.
    w.comment(issue, "bob", "/mission ship it").await;
    let refusal = w.reply().await;
    assert!(
        refusal.starts_with("<!-- navin:reply kind=refusal"),
        "{refusal}"
    );
    assert!(refusal.contains("write access"), "{refusal}");
    assert_eq!(w.ledger_commits(), 0);
    w.requests("/mission (refused, reader)");

    // A command inside a code block is ignored.
    let quoted = w
        .comment(issue, "alice", "Try this:\n\n```\n/mission ship it\n```\n")
        .await;
    w.no_reply().await;
    assert!(w.reactions(quoted).is_empty());
    assert_eq!(w.ledger_commits(), 0);
    w.clear_requests();

    // A person's comment that imitates the panel marker is never taken for the panel.
    let decoy = w.stored_comment(issue, "alice", "<!-- navin:panel v=1 -->\nmine");

    // /mission GOAL: steps from the task list, panel posted.
    let mission = w.comment(issue, "alice", "/mission ship it").await;
    let first = w.last_delivery();
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");
    assert!(w.reactions(mission).contains(&"+1".to_owned()));
    w.requests("/mission GOAL");
    let ledger = w.ledger().unwrap();
    assert_eq!(ledger.mission.goal, "ship it");
    let ids: Vec<String> = ledger.steps().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["T1", "T2"]);
    assert!(w.fake().bot_comment_edits().iter().all(|c| c.id != decoy));
    let commits = w.ledger_commits();
    assert_eq!(commits, 1);

    // The same delivery again: no second comment, no second ledger commit.
    assert_eq!(w.redeliver(&first).await, 202);
    w.no_reply().await;
    assert_eq!(w.ledger_commits(), commits);

    // A second /mission while this one is live names the mission's issue.
    w.comment(issue, "alice", "/mission another goal").await;
    let live = w.reply().await;
    assert!(live.contains(&format!("octo-org/hello#{issue}")), "{live}");
    w.clear_requests();

    // /done on a none-validation step: panel edited in place.
    let edits_before = w.fake().bot_comment_edits().len();
    let done = w.comment(issue, "alice", "/done T1 docs are live").await;
    assert!(w.reactions(done).contains(&"+1".to_owned()));
    assert!(w.fake().bot_comment_edits().len() > edits_before);
    w.edited(PANEL);
    w.requests("/done");
    assert_eq!(w.step("T1").status, TaskStatus::Done);

    // A test step cannot be closed by a comment: the refusal names the missing checks.
    let add = "/step add CI \"Run the tests\" --validation test";
    let added = w.comment(issue, "alice", add).await;
    assert!(w.reactions(added).contains(&"+1".to_owned()));
    w.comment(issue, "alice", "/done CI it passed locally")
        .await;
    let refused = w.reply().await;
    assert!(refused.contains("has validation"), "{refused}");
    assert!(refused.contains("ci/test"), "{refused}");
    assert_ne!(w.step("CI").status, TaskStatus::Done);
    w.clear_requests();

    // /pause, then /resume; /next lists ready steps.
    let pause = w.comment(issue, "alice", "/pause waiting for legal").await;
    assert!(w.reactions(pause).contains(&"+1".to_owned()));
    w.requests("/pause");
    assert_eq!(w.ledger().unwrap().mission.status, MissionStatus::Paused);
    let resume = w.comment(issue, "alice", "/resume").await;
    assert!(w.reactions(resume).contains(&"+1".to_owned()));
    w.comment(issue, "bob", "/next").await;
    let next = w.reply().await;
    assert!(next.contains("T2"), "{next}");
    w.requests("/resume + /next");

    // An unknown command gets the parser's suggestion.
    w.comment(issue, "alice", "/statuss").await;
    let unknown = w.reply().await;
    assert!(unknown.contains("/status"), "{unknown}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_delivery_applies_nothing_twice() {
    let mut w = World::new().await;
    let issue = w.issue("Ship", "- [ ] Write\n- [ ] Ship\n");
    let both = w
        .comment(issue, "alice", "/mission ship it\n/done T1 written")
        .await;
    let first = w.last_delivery();
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");
    // Both commands ran: the mission started and T1 is done (two ledger commits).
    assert_eq!(w.ledger_commits(), 2);
    assert_eq!(w.step("T1").status, TaskStatus::Done);
    assert!(w.reactions(both).contains(&"+1".to_owned()));
    let commits = w.ledger_commits();
    let edits = w.fake().bot_comment_edits().len();

    // The worker runs the same delivery again (attempt 2, as after a crash before "done").
    w.rerun(&first).await;
    assert_eq!(w.ledger_commits(), commits, "no second ledger commit");
    assert_eq!(
        w.fake().bot_comment_edits().len(),
        edits,
        "the panel is already current"
    );
    w.no_reply().await;
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_edited_comments_and_close() {
    let mut w = World::new().await;
    let issue = w.issue("Idea", "No task list here.");

    // /reject with feedback: the plan is regenerated with the feedback appended to the
    // request; the record keeps the rejection and the superseded text's hash.
    w.comment(issue, "alice", "/plan add a farewell function")
        .await;
    w.reply().await;
    w.requests("/plan");
    let feedback = "too broad, only touch greet.rs";
    let reject = w
        .comment(issue, "alice", &format!("/reject {feedback}"))
        .await;
    assert!(w.reactions(reject).contains(&"+1".to_owned()));
    w.edited(PLAN);
    let record = w.plan_record(&format!("issue-{issue}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    let rejection = &record.rejections[0];
    assert_eq!(rejection.feedback.as_deref(), Some(feedback));
    assert!(record.request.ends_with(feedback), "{}", record.request);
    assert_eq!(record.superseded[0].hash, rejection.plan_hash);
    w.requests("/reject (regenerates)");

    // /mission with no goal needs an approved plan.
    w.comment(issue, "alice", "/mission").await;
    let refusal = w.reply().await;
    assert!(refusal.contains("approved plan"), "{refusal}");

    // An edited comment runs only the commands it newly gained.
    let next = w.comment(issue, "alice", "/next").await;
    let nothing = w.reply().await;
    assert!(nothing.contains("no mission"), "{nothing}");
    w.edit_comment(next, "/next\n/mission edited goal").await;
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");
    assert_eq!(w.ledger().unwrap().mission.goal, "edited goal");

    // /mission close with every (zero) step done closes it as done.
    let close = w.comment(issue, "alice", "/mission close").await;
    assert!(w.reactions(close).contains(&"+1".to_owned()));
    assert_eq!(w.ledger().unwrap().mission.status, MissionStatus::Done);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_commands_on_one_repository_lose_no_update() {
    let mut w = World::new().await;
    let issue = w.issue("Race", "No task list.");
    let mission = w.comment(issue, "alice", "/mission survive a burst").await;
    assert!(w.reactions(mission).contains(&"+1".to_owned()));
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");

    // Twenty writers comment at once; each delivery is acknowledged independently.
    let bodies: Vec<String> = (0..20)
        .map(|i| format!("/step add R{i} burst step {i}"))
        .collect();
    let sent = w.comments_at_once(issue, "alice", &bodies).await;
    for id in sent {
        assert!(w.reactions(id).contains(&"+1".to_owned()), "comment {id}");
    }
    let ledger = w.ledger().unwrap();
    let ids: Vec<String> = ledger.steps().into_iter().map(|s| s.id).collect();
    for i in 0..20 {
        assert!(ids.contains(&format!("R{i}")), "R{i} lost: {ids:?}");
    }
    assert_eq!(ids.len(), 20);
    // One init plus one commit per command: nothing lost, nothing doubled.
    assert_eq!(w.ledger_commits(), 21);
    assert_eq!(ledger.mission.version, 21);
    w.finish().await;
}
