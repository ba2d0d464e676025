//! The "Approve plan" button on a pull request's `navin/plan` check, end to end: the
//! button the check shows while the plan waits, a click (`check_run.requested_action`)
//! by a writer, a reader, the author, on a button drawn for an earlier text, delivered
//! twice, and by someone who approved by review already; read back from the check run,
//! the plan comment, the replies and the typed plan record.

use navin_ledger::plan::record::{text_path, RecordStatus, VIA_CHECK_RUN};

use crate::engine_plans::{carols_pr, conclusion, plan_on_pr, summary, GREETING, PLAN};
use crate::world::World;

/// The button's identifier for the plan's current text: `approve-` and its first 12
/// hex digits.
fn button_for(hash: &str) -> String {
    let hex = hash.strip_prefix("sha256:").unwrap_or(hash);
    format!("approve-{}", &hex[..12])
}

/// carol's pull request with alice's plan on it, waiting; returns its number, head,
/// the `navin/plan` run's id and the button it shows.
async fn waiting_plan(w: &mut World) -> (u64, String, u64, String) {
    let (pr, head) = carols_pr(w, &[GREETING], "Greets differently.").await;
    plan_on_pr(w, pr, &head).await;
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    let button = button_for(&record.hash);
    assert_eq!(w.plan_buttons(&head), std::slice::from_ref(&button));
    assert_eq!(run.actions[0]["label"], "Approve plan");
    assert!(
        summary(&run).contains("“Approve plan” button"),
        "{}",
        summary(&run)
    );
    (pr, head, run.id, button)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writers_click_approves_the_plan_turns_the_check_green_and_removes_the_button() {
    let mut w = World::new().await;
    let (pr, head, run, button) = waiting_plan(&mut w).await;
    w.clear_requests();

    w.click(run, &button, "alice").await;
    let check = w.plan_check(&head);
    assert_eq!(conclusion(&check), "success");
    assert!(check.actions.is_empty(), "{:?}", check.actions);
    assert!(
        summary(&check).contains("@alice (“Approve plan” button)"),
        "{}",
        summary(&check)
    );
    w.requests("check_run.requested_action (writer approves)");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    let approval = &record.approvals[0];
    assert_eq!(approval.approver, "alice");
    assert_eq!(approval.approver_id, Some(w.fake().user_id("alice")));
    assert_eq!(approval.via.as_deref(), Some(VIA_CHECK_RUN));
    assert_eq!(approval.review_id, None);
    assert_eq!(approval.plan_hash, record.hash);
    let message = w.ledger_message();
    assert!(message.contains("Approve plan"), "{message}");
    let comment = w.edited(PLAN);
    assert!(
        comment.contains("approved") && comment.contains("alice"),
        "{comment}"
    );
    w.no_reply().await;

    // A recount of the reviews (none approves) keeps the button's approval.
    w.review(pr, "bob", "commented").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    assert_eq!(
        w.plan_record(&format!("pr-{pr}")).unwrap().status,
        RecordStatus::Approved
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_readers_or_the_authors_click_changes_nothing_and_a_reply_tells_them_why() {
    let mut w = World::new().await;
    let (pr, head, run, button) = waiting_plan(&mut w).await;
    let commits = w.ledger_commits();

    w.click(run, &button, "bob").await;
    let reply = w.reply().await;
    assert!(
        reply.contains("@bob,"),
        "bob is mentioned, so GitHub notifies him: {reply}"
    );
    assert!(reply.contains("Nothing changed"), "{reply}");
    assert!(
        reply.contains("write access") && reply.contains("read"),
        "{reply}"
    );

    // carol opened the pull request; `approval.allow_author_approval` is off.
    w.click(run, &button, "carol").await;
    let reply = w.reply().await;
    assert!(reply.contains("@carol,"), "{reply}");
    assert!(reply.contains("allow"), "{reply}");

    assert_eq!(w.ledger_commits(), commits, "nothing written to the ledger");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(record.approvals.is_empty());
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");
    assert_eq!(w.plan_buttons(&head), [button]);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_on_the_button_for_an_earlier_text_is_refused_and_the_plan_stays_pending() {
    let mut w = World::new().await;
    let (pr, head, run, old_button) = waiting_plan(&mut w).await;
    let id = format!("pr-{pr}");

    // A writer edits the plan: the check now offers the button for the new text.
    let text = w.ledger_text(&text_path(&id)).unwrap();
    let (title, rest) = text.split_once('\n').unwrap();
    let edit = format!("/plan edit\n\n````markdown\n{title} (keep the default)\n{rest}````\n");
    let c = w.comment(pr, "alice", &edit).await;
    assert!(w.reactions(c).contains(&"+1".to_owned()));
    let new_hash = w.plan_record(&id).unwrap().hash;
    let new_button = button_for(&new_hash);
    assert_ne!(new_button, old_button);
    assert_eq!(w.plan_buttons(&head), std::slice::from_ref(&new_button));
    let commits = w.ledger_commits();

    // A page loaded before the edit still shows the old button; its click is refused.
    w.click(run, &old_button, "alice").await;
    let reply = w.reply().await;
    assert!(
        reply.contains("@alice,") && reply.contains("changed since"),
        "{reply}"
    );
    assert_eq!(w.ledger_commits(), commits);
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(record.approvals.is_empty());
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");

    // The button for the text shown now approves it.
    w.click(run, &new_button, "alice").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    assert_eq!(w.plan_record(&id).unwrap().approvals[0].plan_hash, new_hash);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_click_delivered_twice_approves_once() {
    let mut w = World::new().await;
    let (pr, head, run, button) = waiting_plan(&mut w).await;
    let guid = w.click(run, &button, "alice").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    let commits = w.ledger_commits();

    // GitHub's "Redeliver" (same GUID), then a worker running it again after a crash.
    w.redeliver(&guid).await;
    w.rerun(&guid).await;
    assert_eq!(w.ledger_commits(), commits, "nothing applied twice");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.approvals.len(), 1, "{:#?}", record.approvals);
    assert_eq!(record.status, RecordStatus::Approved);
    assert_eq!(w.plan_checks(&head).len(), 1);
    w.no_reply().await;
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_and_a_click_by_the_same_person_count_as_one_approver() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", "approval:\n  required_approvals: 2\n")]);
    let (pr, head, run, button) = waiting_plan(&mut w).await;
    let id = format!("pr-{pr}");

    w.review(pr, "alice", "approved").await;
    assert!(summary(&w.plan_check(&head)).contains("1 of 2 required"));
    w.click(run, &button, "alice").await;
    let reply = w.reply().await;
    assert!(reply.contains("already approved this text"), "{reply}");
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert_eq!(record.approver_count(), 1);
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");

    // dave clicks, then also reviews: two people, two approvers, however many entries.
    w.grant("dave", "write");
    w.click(run, &button, "dave").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    w.review(pr, "dave", "approved").await;
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.approvals.len(), 3);
    assert_eq!(record.approver_count(), 2);
    assert_eq!(record.status, RecordStatus::Approved);
    assert!(w.plan_check(&head).actions.is_empty());
    w.finish().await;
}
