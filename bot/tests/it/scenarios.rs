//! Scenarios in the World DSL: each reads as what a maintainer does on GitHub and what they then see.

use navin_e2e::fake::CheckRunSpec;
use navin_ledger::model::{MissionStatus, TaskStatus};
use navin_ledger::plan::record::RecordStatus;

use crate::engine_support::{OWNER, REPO};
use crate::world::{Panics, Watched, World};

const MISSION: &str = "/mission configurable greetings\n\
                       /step add S1 \"Configurable greeting\" --validation test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_green_required_check_on_the_linked_pull_request_closes_its_step_once_merged() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make greetings configurable.");
    w.comment(issue, "alice", MISSION).await;
    assert!(w.reply().await.starts_with("<!-- navin:panel"));
    let (pr, head) = w.open_pr("S1", "navin/S1-greeting").await;
    assert_eq!(w.step("S1").links.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(
        w.step("S1").status,
        TaskStatus::InProgress,
        "green but not merged: evidence.done_on is merged by default"
    );
    w.merge(pr).await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn done_on_a_test_step_with_a_red_check_is_refused_naming_the_check() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", MISSION).await;
    w.reply().await;
    let (_, head) = w.open_pr("S1", "navin/S1-greeting").await;
    w.ci(&head, "ci/test", "failure").await;
    w.comment(issue, "alice", "/done S1 it works on my machine")
        .await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("failed") && refusal.contains("ci/test"),
        "{refusal}"
    );
    assert_ne!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}

/// GitHub has the green run but its webhook never arrived: `/done` reads the runs on the
/// linked head itself and closes the step by the same rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn done_closes_a_test_step_whose_required_check_is_green_on_its_head() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", MISSION).await;
    w.reply().await;
    let (_, head) = w.open_pr("S1", "navin/S1-greeting").await;
    w.fake()
        .add_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", &head));
    let early = w.comment(issue, "alice", "/done S1").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("green but not done") && refusal.contains("merged"),
        "{refusal}"
    );
    assert!(!w.reactions(early).contains(&"+1".to_owned()));
    // Merged on GitHub; its webhook never arrived either: `/done` asks the pull request.
    let pr = w.step("S1").links.prs[0];
    w.fake().close(OWNER, REPO, pr, true);
    let done = w.comment(issue, "alice", "/done S1").await;
    assert!(w.reactions(done).contains(&"+1".to_owned()));
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_cannot_start_a_mission_and_nothing_is_written() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "bob", "/mission take over").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("write access") && refusal.contains("role is"),
        "{refusal}"
    );
    assert!(w.ledger().is_none());
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_is_recorded_pending_and_an_approval_by_a_writer_approves_it() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make greetings configurable.");
    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    assert!(w.reply().await.contains("## Proposed Changes"));
    let id = format!("issue-{issue}");
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Pending);

    // alice asked for it: her own approval is refused, names the setting and changes nothing.
    let commits = w.ledger_commits();
    w.comment(issue, "alice", "/approve").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("alice asked for this plan")
            && refusal.contains("approval.allow_author_approval"),
        "{refusal}"
    );
    assert_eq!(
        w.ledger_commits(),
        commits,
        "a refused approval changes nothing"
    );
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Pending);

    w.comment(issue, "maya", "/approve").await;
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    assert_eq!(record.approvals[0].approver, "maya");
    // Recorded with the numeric id too: logins can be renamed and reused.
    assert_eq!(
        record.approvals[0].approver_id,
        Some(w.fake().user_id("maya"))
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_allow_author_approval_the_person_who_asked_approves_their_own_plan() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "approval:\n  allow_author_approval: true\n",
    )]);
    let issue = w.issue("Greetings", "Make greetings configurable.");
    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    w.reply().await;
    w.comment(issue, "alice", "/approve").await;
    let record = w.plan_record(&format!("issue-{issue}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    assert_eq!(record.approvals[0].approver, "alice");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_mission_refuses_further_steps_pointing_at_a_new_mission() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission greetings\n/mission close failed")
        .await;
    w.reply().await;
    assert_eq!(w.ledger().unwrap().mission.status, MissionStatus::Failed);
    w.comment(issue, "alice", "/step add S9 \"Late\"").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("/mission GOAL") && !refusal.contains("ledger init"),
        "{refusal}"
    );
    w.finish().await;
}

/// The watcher the World puts around the engine turns a handler panic into a failure
/// that names the delivery and the message, instead of a silent retry.
#[tokio::test]
async fn a_handler_panic_is_recorded_with_its_delivery_and_message() {
    struct Panicking;
    impl navin_bot::queue::DeliveryHandler for Panicking {
        fn handle<'a>(
            &'a self,
            _delivery: &'a navin_bot::queue::ClaimedDelivery,
        ) -> navin_bot::queue::HandlerFuture<'a> {
            Box::pin(async { panic!("index out of bounds") })
        }
    }
    let panics = Panics::default();
    let watched = Watched {
        inner: Panicking,
        panics: panics.clone(),
    };
    let delivery = navin_bot::queue::ClaimedDelivery {
        seq: 1,
        delivery_id: "d-42".into(),
        event: "issue_comment".into(),
        action: Some("created".into()),
        repository: None,
        installation_id: None,
        headers: Vec::new(),
        body: bytes::Bytes::from_static(b"{}"),
        received_at_ms: 0,
        attempt: 1,
        crashes: 0,
        final_attempt: false,
    };
    let result = navin_bot::queue::DeliveryHandler::handle(&watched, &delivery).await;
    assert!(matches!(
        result,
        Err(navin_bot::queue::HandlerError::Permanent(_))
    ));
    assert_eq!(
        *panics.lock().unwrap(),
        ["delivery d-42: index out of bounds"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_issue_refuses_commands_that_change_things_and_still_answers_reads() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission greetings").await;
    w.reply().await;
    w.fake().close(OWNER, REPO, issue, false);
    let commits = w.ledger_commits();
    w.comment(issue, "alice", "/step add S1 \"Late\"").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("is closed") && refusal.contains("Reopen"),
        "{refusal}"
    );
    assert_eq!(
        w.ledger_commits(),
        commits,
        "a refused command wrote the ledger"
    );
    let status = w.comment(issue, "bob", "/status").await;
    assert!(w.reactions(status).contains(&"eyes".to_owned()));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_maintainer_can_allow_a_command_on_closed_issues_in_the_config() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "evidence:\n  required_checks:\n    test: [ci/test]\nallow_on_closed: [mission close]\n",
    )]);
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission greetings").await;
    w.reply().await;
    w.fake().close(OWNER, REPO, issue, false);
    w.comment(issue, "alice", "/mission close failed").await;
    assert_eq!(w.ledger().unwrap().mission.status, MissionStatus::Failed);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_comment_with_more_commands_than_the_cap_runs_ten_and_lists_the_rest_in_one_reply() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    let mut body = "/mission greetings\n".to_owned();
    for n in 1..=14 {
        body.push_str(&format!("/step add S{n} \"Step {n}\"\n"));
    }
    w.comment(issue, "alice", &body).await;
    assert!(w.reply().await.starts_with("<!-- navin:panel"));
    let skipped = w.reply().await;
    assert!(
        skipped.contains("at most 10 commands") && skipped.contains("these 5 were skipped"),
        "{skipped}"
    );
    assert!(
        skipped.contains("line 11") && skipped.contains("S10"),
        "{skipped}"
    );
    assert_eq!(w.ledger().unwrap().board.tasks.len(), 9);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_text_limit_is_refused_and_nothing_is_stored() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", &format!("/plan {}", "x".repeat(5000)))
        .await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("5000 bytes") && refusal.contains("4096"),
        "{refusal}"
    );
    assert!(w.plan_record(&format!("issue-{issue}")).is_none());
    assert!(w.ledger().is_none());
    w.finish().await;
}

/// Every installation token names the one repository of the event and no more
/// permissions than its work needs: read commands cannot write code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installation_tokens_are_scoped_to_the_repository_and_what_the_event_needs() {
    let mut w = World::new().await;
    let repo_id = w.fake().repo_id(OWNER, REPO);
    let issue = w.issue("Greetings", "");
    w.comment(issue, "bob", "/status").await;
    w.reply().await;
    w.comment(issue, "alice", "/mission greetings").await;
    w.reply().await;
    let minted: Vec<serde_json::Value> = w
        .fake()
        .requests_to("POST", "/app/installations/*/access_tokens")
        .into_iter()
        .map(|r| r.body.expect("a token request body"))
        .collect();
    assert_eq!(minted.len(), 2, "{minted:?}");
    for body in &minted {
        assert_eq!(
            body["repository_ids"],
            serde_json::json!([repo_id]),
            "{body}"
        );
    }
    assert_eq!(
        minted[0]["permissions"]["contents"], "read",
        "/status: {}",
        minted[0]
    );
    assert_eq!(
        minted[1]["permissions"]["contents"], "write",
        "/mission: {}",
        minted[1]
    );
    // A write session may request code owners' reviews on a plan pull request.
    assert_eq!(minted[1]["permissions"]["pull_requests"], "write");
    w.finish().await;
}

/// One comment with 120 `/pause` and `/resume` commands (the cap raised to allow it) is
/// handled, then its delivery runs again as after a crash: nothing is applied twice,
/// though most of its operations fell out of the ledger's 100-entry history window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_comment_run_again_after_a_crash_applies_nothing_twice() {
    let mut w = World::new().await;
    w.patient(std::time::Duration::from_secs(120));
    w.commit(&[(
        ".github/navin.yml",
        "evidence:\n  required_checks:\n    test: [ci/test]\nlimits:\n  max_commands_per_comment: 200\n",
    )]);
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission greetings").await;
    w.reply().await;
    let toggles: String = (0..120)
        .map(|i| {
            if i % 2 == 0 {
                "/pause hold on\n"
            } else {
                "/resume\n"
            }
        })
        .collect();
    w.comment(issue, "alice", &toggles).await;
    let guid = w.last_delivery();
    let commits = w.ledger_commits();
    assert_eq!(w.ledger().unwrap().mission.version, 1 + 120);
    w.rerun(&guid).await;
    assert_eq!(
        w.ledger_commits(),
        commits,
        "a replayed operation was written again"
    );
    assert_eq!(w.ledger().unwrap().mission.version, 1 + 120);
    w.finish().await;
}

/// Several commands in one comment are answered by one reply (and each reaction once),
/// so a reader cannot make Navin post a comment per line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_commands_in_one_comment_get_one_reply() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(
        issue,
        "alice",
        "/mission greetings\n/step add S1 \"Greeting\"",
    )
    .await;
    w.reply().await;
    let asked = w
        .comment(issue, "bob", "/next\n/help\n/next\n/pause not mine")
        .await;
    let answer = w.reply().await;
    assert!(answer.contains("S1"), "the /next answer: {answer}");
    assert!(
        answer.contains("Navin commands"),
        "the /help answer: {answer}"
    );
    assert!(
        answer.contains("write access"),
        "the refused /pause: {answer}"
    );
    let eyes = w.reactions(asked).iter().filter(|r| *r == "eyes").count();
    assert_eq!(eyes, 1, "{:?}", w.reactions(asked));
    w.finish().await;
}

/// Defect 2 of the hardening review, across comments and issues: one person's answers
/// (replies and reactions) are capped per hour across the installation
/// (`limits.max_replies_per_person_per_hour`), not per issue; past the cap their
/// commands still run but nothing is posted, and people with write access are answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_reader_cannot_make_navin_answer_more_than_the_hourly_cap_across_issues() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "limits:\n  max_replies_per_person_per_hour: 2\n",
    )]);
    let issues = [
        w.issue("Greetings", ""),
        w.issue("Farewells", ""),
        w.issue("Salutations", ""),
    ];
    for issue in &issues[..2] {
        w.comment(*issue, "mallory", "/help").await;
        assert!(w.reply().await.contains("/plan"));
    }
    // A third issue is no way around the cap: no reply, no reaction.
    let third = w.comment(issues[2], "mallory", "/help").await;
    w.no_reply().await;
    assert!(
        w.reactions(third).is_empty(),
        "nothing posted: {:?}",
        w.reactions(third)
    );
    // A writer is answered every time, past the same cap.
    for issue in issues {
        w.comment(issue, "alice", "/help").await;
        assert!(w.reply().await.contains("/plan"), "a writer is answered");
    }
    w.finish().await;
}

/// Defect 2's figure: a writer's 500-line `/step add` comment costs four REST requests
/// (it made ~1,500 before the cap, 22 with the cap alone) and ten ledger commits, not 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_line_comment_costs_ten_commands_and_a_handful_of_requests() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/mission greetings").await;
    w.reply().await;
    let commits = w.ledger_commits();
    w.clear_requests();
    let mut body = String::new();
    for n in 1..=500 {
        body.push_str(&format!("/step add S{n} \"Step {n}\"\n"));
    }
    w.comment(issue, "alice", &body).await;
    let skipped = w.reply().await;
    assert!(skipped.contains("these 490 were skipped"), "{skipped}");
    let log: Vec<String> = w
        .fake()
        .api_requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let requests = w.requests("a 500-line /step add comment");
    // The panel found and edited once for the comment, one reply, one reaction.
    assert!(requests <= 4, "{requests} REST requests: {log:#?}");
    assert_eq!(w.ledger_commits(), commits + 10);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_is_ready_while_github_accepts_the_app() {
    let mut w = World::new().await;
    assert_eq!(w.readyz().await, (200, "ready\n".to_owned()));
    let issue = w.issue("Greetings", "");
    w.comment(issue, "alice", "/status").await;
    w.reply().await;
    let mints = w
        .fake()
        .requests_to("POST", "/app/installations/*/access_tokens");
    assert!(!mints.is_empty(), "the reply needed a minted token");
    assert_eq!(w.readyz().await, (200, "ready\n".to_owned()));
    w.finish().await;
}
