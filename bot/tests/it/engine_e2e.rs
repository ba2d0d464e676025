//! The engine end to end: the real `navin serve` server (with the engine as its handler)
//! against the fake GitHub, driven by signed webhooks, checked through the fake's REST
//! state, its request log, and plain git on the fake's ledger branch.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::engine_support;

use engine_support::*;
use navin_bot::queue::Delivery;
use navin_engine::{Engine, EngineConfig};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_approve_mission_done_on_an_issue() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let issue = fake.create_issue(
        OWNER,
        REPO,
        "Greeting",
        "Make greetings configurable.",
        "alice",
    );
    fake.clear_requests();

    // /plan: one plan comment, the plan recorded on the ledger branch, no mission yet.
    let (c1, _) = sc
        .comment(
            OWNER,
            REPO,
            issue,
            "alice",
            "/plan make the greeting configurable",
        )
        .await;
    let plan = sc.next_comment().await;
    assert!(
        plan.body.starts_with("<!-- navin:plan id=issue-"),
        "{}",
        plan.body
    );
    assert!(plan.body.contains("# Plan:"), "{}", plan.body);
    reacted(&fake, c1, "+1").await;
    count_requests(&fake, "/plan");
    let record = ledger_git(
        &fake,
        &[
            "show",
            &format!("navin/ledger:.navin/plans/issue-{issue}.json"),
        ],
    )
    .expect("plan record");
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(record["status"], "pending");
    assert_eq!(record["request"], "make the greeting configurable");
    assert!(ledger_git(
        &fake,
        &[
            "show",
            &format!("navin/ledger:.navin/plans/issue-{issue}.md")
        ]
    )
    .unwrap()
    .starts_with("# Plan:"));

    // /approve: the same comment is edited to approved and shows the draft mission.
    let (c2, _) = sc.comment(OWNER, REPO, issue, "alice", "/approve").await;
    reacted(&fake, c2, "+1").await;
    let edited = latest_edit(&fake, "<!-- navin:plan").expect("plan comment edited");
    assert_eq!(edited.id, plan.id);
    assert!(edited.body.contains("Draft mission"), "{}", edited.body);
    count_requests(&fake, "/approve");
    let record = ledger_git(
        &fake,
        &[
            "show",
            &format!("navin/ledger:.navin/plans/issue-{issue}.json"),
        ],
    )
    .unwrap();
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(record["status"], "approved");
    assert_eq!(record["approvals"][0]["approver"], "alice");
    assert_eq!(record["approvals"][0]["plan_hash"], record["hash"]);

    // /mission with no goal: a mission from the approved plan, and its panel.
    let (c3, _) = sc.comment(OWNER, REPO, issue, "alice", "/mission").await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);
    reacted(&fake, c3, "+1").await;
    count_requests(&fake, "/mission (from plan)");
    let mission = mission_json(&fake);
    assert_eq!(mission["status"], "running");
    assert_eq!(mission["origin"]["plan_id"], format!("issue-{issue}"));
    assert_eq!(mission["origin"]["issue"], issue);
    let steps = mission["steps"].as_array().unwrap();
    assert!(!steps.is_empty(), "{mission}");

    // /status by a reader: allowed, read-only; the panel is unchanged so nothing is edited.
    let (c4, _) = sc.comment(OWNER, REPO, issue, "bob", "/status").await;
    reacted(&fake, c4, "eyes").await;
    count_requests(&fake, "/status");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mission_from_a_task_list_done_refusals_and_idempotence() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let issue = fake.create_issue(
        OWNER,
        REPO,
        "Ship it",
        "Steps:\n\n- [ ] Write the docs\n- [ ] Announce\n",
        "alice",
    );
    fake.clear_requests();

    // An unauthorized /mission changes nothing and gets a refusal.
    let (_, _) = sc
        .comment(OWNER, REPO, issue, "bob", "/mission ship it")
        .await;
    let refusal = sc.next_comment().await;
    assert!(
        refusal.body.starts_with("<!-- navin:reply kind=refusal"),
        "{}",
        refusal.body
    );
    assert!(refusal.body.contains("write access"), "{}", refusal.body);
    assert_eq!(ledger_commits(&fake), 0);
    count_requests(&fake, "/mission (refused, reader)");

    // A command inside a code block is ignored.
    let (c0, _) = sc
        .comment(
            OWNER,
            REPO,
            issue,
            "alice",
            "Try this:\n\n```\n/mission ship it\n```\n",
        )
        .await;
    sc.assert_no_comment(Duration::from_millis(1500)).await;
    assert!(fake.reactions(c0).is_empty());
    assert_eq!(ledger_commits(&fake), 0);
    fake.clear_requests();

    // A person's comment that imitates the panel marker is never taken for the panel.
    let decoy = fake.add_comment(
        OWNER,
        REPO,
        issue,
        "alice",
        "<!-- navin:panel v=1 -->\nmine",
    );

    // /mission GOAL: steps from the task list, panel posted.
    let body = "/mission ship it";
    let (c1, first) = sc.comment(OWNER, REPO, issue, "alice", body).await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);
    reacted(&fake, c1, "+1").await;
    count_requests(&fake, "/mission GOAL");
    let mission = mission_json(&fake);
    assert_eq!(mission["goal"], "ship it");
    let ids: Vec<&str> = mission["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["T1", "T2"]);
    assert!(fake.bot_comment_edits().iter().all(|c| c.id != decoy));
    let commits = ledger_commits(&fake);
    assert_eq!(commits, 1);

    // The same delivery again: no second comment, no second ledger commit.
    let payload = sc.comment_payload(OWNER, REPO, issue, "alice", body, c1);
    let again = sc
        .sender()
        .send_with_guid(payload.event(), payload.json(), &first.guid)
        .await
        .unwrap();
    assert_eq!(again.status, 202);
    sc.assert_no_comment(Duration::from_millis(1500)).await;
    assert_eq!(ledger_commits(&fake), commits);

    // A second /mission while this one is live names the mission's issue.
    let (_, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/mission another goal")
        .await;
    let live = sc.next_comment().await;
    assert!(
        live.body.contains(&format!("{OWNER}/{REPO}#{issue}")),
        "{}",
        live.body
    );
    fake.clear_requests();

    // /done on a none-validation step: panel edited in place.
    let edits_before = fake.bot_comment_edits().len();
    let (c2, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/done T1 docs are live")
        .await;
    reacted(&fake, c2, "+1").await;
    assert!(fake.bot_comment_edits().len() > edits_before);
    let edited = latest_edit(&fake, "<!-- navin:panel").unwrap();
    assert_eq!(edited.id, panel.id);
    count_requests(&fake, "/done");
    let mission = mission_json(&fake);
    assert_eq!(mission["steps"][0]["status"], "done");

    // A test step cannot be closed by a comment: the refusal names the missing checks.
    let (c3, _) = sc
        .comment(
            OWNER,
            REPO,
            issue,
            "alice",
            "/step add CI \"Run the tests\" --validation test",
        )
        .await;
    reacted(&fake, c3, "+1").await;
    let (_, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/done CI it passed locally")
        .await;
    let refused = sc.next_comment().await;
    assert!(refused.body.contains("has validation"), "{}", refused.body);
    assert!(refused.body.contains("ci/test"), "{}", refused.body);
    assert_ne!(mission_json(&fake)["steps"][2]["status"], "done");
    fake.clear_requests();

    // /pause, then /done is refused by the ledger; /resume; /next lists ready steps.
    let (c4, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/pause waiting for legal")
        .await;
    reacted(&fake, c4, "+1").await;
    count_requests(&fake, "/pause");
    assert_eq!(mission_json(&fake)["status"], "paused");
    let (c5, _) = sc.comment(OWNER, REPO, issue, "alice", "/resume").await;
    reacted(&fake, c5, "+1").await;
    let (_, _) = sc.comment(OWNER, REPO, issue, "bob", "/next").await;
    let next = sc.next_comment().await;
    assert!(next.body.contains("T2"), "{}", next.body);
    count_requests(&fake, "/resume + /next");

    // An unknown command gets the parser's suggestion.
    let (_, _) = sc.comment(OWNER, REPO, issue, "alice", "/statuss").await;
    let unknown = sc.next_comment().await;
    assert!(unknown.body.contains("/status"), "{}", unknown.body);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_delivery_applies_nothing_twice() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        data_dir,
    } = world().await;
    let fake = sc.fake().clone();
    let issue = fake.create_issue(OWNER, REPO, "Ship", "- [ ] Write\n- [ ] Ship\n", "alice");
    let body = "/mission ship it\n/done T1 written";
    let (c1, first) = sc.comment(OWNER, REPO, issue, "alice", body).await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"));
    // Both commands ran: the mission started and T1 is done (two ledger commits).
    let ok = navin_e2e::fake::wait_until(WAIT, || ledger_commits(&fake) == 2).await;
    assert!(ok, "{} ledger commits", ledger_commits(&fake));
    reacted(&fake, c1, "+1").await;
    let commits = ledger_commits(&fake);
    // The panel edit for T1 follows the commit; wait for it before counting edits.
    let ok = navin_e2e::fake::wait_until(WAIT, || {
        latest_edit(&fake, "<!-- navin:panel").is_some_and(|c| c.body.contains("1/2"))
            || !fake.bot_comment_edits().is_empty()
    })
    .await;
    assert!(ok);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let edits = fake.bot_comment_edits().len();

    // The worker runs the same delivery again (attempt 2, as after a crash before "done").
    let payload = sc.comment_payload(OWNER, REPO, issue, "alice", body, c1);
    let installation = sc.installation_for(OWNER, REPO);
    let delivery = Delivery {
        seq: 1,
        delivery_id: first.guid.clone(),
        event: "issue_comment".into(),
        action: Some("created".into()),
        repository: Some(format!("{OWNER}/{REPO}")),
        installation_id: installation,
        headers: Vec::new(),
        body: bytes::Bytes::from(serde_json::to_vec(payload.json()).unwrap()),
        received_at_ms: 0,
        attempt: 2,
    };
    let handler = navin_bot::queue::EngineHandler::new(Engine::new(
        server.github().clone(),
        EngineConfig::new(data_dir),
    ));
    navin_bot::queue::DeliveryHandler::handle(&handler, &delivery)
        .await
        .unwrap();
    assert_eq!(ledger_commits(&fake), commits, "no second ledger commit");
    assert_eq!(
        fake.bot_comment_edits().len(),
        edits,
        "the panel is already current"
    );
    sc.assert_no_comment(Duration::from_millis(300)).await;
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_edited_comments_and_close() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let issue = fake.create_issue(OWNER, REPO, "Idea", "No task list here.", "alice");

    // /reject with feedback: the plan is regenerated with the feedback appended to the
    // request; the record keeps the rejection and the superseded text's hash.
    sc.comment(OWNER, REPO, issue, "alice", "/plan add a farewell function")
        .await;
    let plan = sc.next_comment().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    count_requests(&fake, "/plan");
    let (c1, _) = sc
        .comment(
            OWNER,
            REPO,
            issue,
            "alice",
            "/reject too broad, only touch greet.rs",
        )
        .await;
    reacted(&fake, c1, "+1").await;
    let edited = latest_edit(&fake, "<!-- navin:plan").unwrap();
    assert_eq!(edited.id, plan.id);
    let record = ledger_git(
        &fake,
        &[
            "show",
            &format!("navin/ledger:.navin/plans/issue-{issue}.json"),
        ],
    )
    .unwrap();
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(record["status"], "pending");
    assert_eq!(
        record["rejections"][0]["feedback"],
        "too broad, only touch greet.rs"
    );
    assert!(record["request"]
        .as_str()
        .unwrap()
        .ends_with("too broad, only touch greet.rs"));
    assert_eq!(
        record["superseded"][0]["hash"],
        record["rejections"][0]["plan_hash"]
    );
    count_requests(&fake, "/reject (regenerates)");

    // /mission with no goal needs an approved plan.
    sc.comment(OWNER, REPO, issue, "alice", "/mission").await;
    let refusal = sc.next_comment().await;
    assert!(refusal.body.contains("approved plan"), "{}", refusal.body);

    // An edited comment runs only the commands it newly gained.
    let (c2, _) = sc.comment(OWNER, REPO, issue, "alice", "/next").await;
    let nothing = sc.next_comment().await;
    assert!(nothing.body.contains("no mission"), "{}", nothing.body);
    let new_body = "/next\n/mission edited goal";
    let mut edited = sc
        .comment_payload(OWNER, REPO, issue, "alice", new_body, c2)
        .json()
        .clone();
    edited["action"] = "edited".into();
    edited["changes"] = serde_json::json!({"body": {"from": "/next"}});
    let sent = sc.sender().send("issue_comment", &edited).await.unwrap();
    assert_eq!(sent.status, 202);
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);
    assert_eq!(mission_json(&fake)["goal"], "edited goal");

    // /mission close with every (zero) step done closes it as done.
    let (c3, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/mission close")
        .await;
    reacted(&fake, c3, "+1").await;
    assert_eq!(mission_json(&fake)["status"], "done");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_commands_on_one_repository_lose_no_update() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let issue = fake.create_issue(OWNER, REPO, "Race", "No task list.", "alice");
    let (c0, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/mission survive a burst")
        .await;
    reacted(&fake, c0, "+1").await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);

    // Twenty writers comment at once; each delivery is acknowledged independently.
    let sends = (0..20).map(|i| {
        let sc = &sc;
        async move {
            sc.comment(
                OWNER,
                REPO,
                issue,
                "alice",
                &format!("/step add R{i} burst step {i}"),
            )
            .await
        }
    });
    let sent = futures_util::future::join_all(sends).await;
    for (id, _) in &sent {
        reacted(&fake, *id, "+1").await;
    }
    let mission = mission_json(&fake);
    let ids: Vec<&str> = mission["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    for i in 0..20 {
        assert!(
            ids.contains(&format!("R{i}").as_str()),
            "R{i} lost: {ids:?}"
        );
    }
    assert_eq!(ids.len(), 20);
    // One init plus one commit per command: nothing lost, nothing doubled.
    assert_eq!(ledger_commits(&fake), 21);
    assert_eq!(mission["version"], 21);
    sc.finish().await;
}
