//! The Scenario DSL against a tiny echo bot: signed events in, comments out, unread comments fail.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use navin_e2e::webhook::signature_sha256;
use navin_e2e::{FakeGitHub, Scenario, WebhookSender};
use serde_json::{json, Value};

use crate::common::{setup, OWNER, REPO};

const SECRET: &str = "scenario-secret";

/// A stand-in bot: verifies the signature, then replies `echo: <body>` through the fake's REST API.
async fn start_echo_bot(fake: &FakeGitHub, installation: u64) -> String {
    let token = Arc::new(fake.mint_installation_token(installation));
    let api = fake.base_url().to_string();
    let app = axum::Router::new().route(
        "/webhook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let token = token.clone();
            let api = api.clone();
            async move {
                let sig = headers
                    .get("x-hub-signature-256")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default();
                if sig != signature_sha256(SECRET.as_bytes(), &body) {
                    return StatusCode::UNAUTHORIZED;
                }
                let event: Value = serde_json::from_slice(&body).unwrap_or_default();
                let is_bot = event["comment"]["user"]["type"] == "Bot";
                if headers.get("x-github-event").and_then(|v| v.to_str().ok())
                    == Some("issue_comment")
                    && !is_bot
                {
                    let number = event["issue"]["number"].as_u64().unwrap_or_default();
                    let repo = event["repository"]["full_name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let reply = format!(
                        "echo: {}",
                        event["comment"]["body"].as_str().unwrap_or_default()
                    );
                    tokio::spawn(async move {
                        let _ = navin_e2e::http_client()
                            .post(format!("{api}/repos/{repo}/issues/{number}/comments"))
                            .bearer_auth(token.as_str())
                            .body(json!({ "body": reply }).to_string())
                            .send()
                            .await;
                    });
                }
                StatusCode::ACCEPTED
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/webhook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn a_comment_event_is_signed_delivered_and_the_reply_is_read() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "Mission", "goal", "alice");
    let url = start_echo_bot(&fake, inst).await;
    let mut sc = Scenario::new(fake.clone(), WebhookSender::new(url, SECRET));
    let (comment_id, delivery) = sc.comment(OWNER, REPO, issue, "alice", "/status").await;
    assert_eq!(delivery.status, 202);
    let reply = sc.next_comment().await;
    assert_eq!(reply.body, "echo: /status");
    assert_eq!(
        (reply.issue_number, reply.author.as_str()),
        (issue, "navin[bot]")
    );
    assert_eq!(
        fake.comments(OWNER, REPO, issue)
            .iter()
            .map(|c| c.id)
            .next(),
        Some(comment_id)
    );
    sc.finish().await;
}

#[tokio::test]
async fn comment_payloads_match_the_fakes_state() {
    let (fake, inst) = setup();
    let pr = fake.create_pull(
        OWNER,
        REPO,
        navin_e2e::fake::PullSpec::new("feature")
            .file("a", "a")
            .author("bob"),
    );
    let sc = Scenario::new(
        fake.clone(),
        WebhookSender::new("http://127.0.0.1:9/unused", SECRET),
    );
    let id = fake.add_comment(OWNER, REPO, pr, "alice", "/approve");
    let payload = sc.comment_payload(OWNER, REPO, pr, "alice", "/approve", id);
    let v = payload.json();
    assert_eq!(v["issue"]["number"], pr);
    assert!(
        v["issue"]["pull_request"].is_object(),
        "a PR comment carries issue.pull_request"
    );
    assert_eq!(v["issue"]["user"]["login"], "bob");
    assert_eq!(v["comment"]["id"], id);
    assert_eq!(v["installation"]["id"], inst);
    assert_eq!(v["repository"]["id"], fake.repo_id(OWNER, REPO));
    sc.finish().await;
}

#[tokio::test]
async fn dropping_a_scenario_with_an_unread_bot_comment_fails_the_test() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "Mission", "goal", "alice");
    let url = start_echo_bot(&fake, inst).await;
    let sc =
        Scenario::new(fake.clone(), WebhookSender::new(url, SECRET)).wait(Duration::from_secs(5));
    sc.comment(OWNER, REPO, issue, "alice", "/help").await;
    assert!(
        navin_e2e::fake::wait_until(Duration::from_secs(5), || !fake.bot_comments().is_empty())
            .await
    );
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(sc)));
    let message = dropped.expect_err("an unread comment must fail the test");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("unread bot comment") && text.contains("echo: /help"),
        "{text}"
    );
}

#[tokio::test]
async fn pull_request_helpers_keep_webhooks_and_state_in_step() {
    let (fake, inst) = setup();
    let url = start_echo_bot(&fake, inst).await;
    let sc = Scenario::new(fake.clone(), WebhookSender::new(url, SECRET));
    let spec = navin_e2e::fake::PullSpec::new("navin/S2-cache")
        .author("bob")
        .body("Navin-Step: S2")
        .file("c.rs", "c");
    let (number, opened) = sc.open_pull(OWNER, REPO, spec).await;
    assert_eq!(opened.status, 202);
    let (sha, _) = sc
        .push_to_pull(OWNER, REPO, number, &[("c.rs", "c2")], "second")
        .await;
    assert_eq!(fake.pull(OWNER, REPO, number).head_sha, sha);
    let (review, _) = sc.review(OWNER, REPO, number, "rita", "approved").await;
    assert_eq!(fake.reviews(OWNER, REPO, number)[0].state, "APPROVED");
    assert_eq!(fake.reviews(OWNER, REPO, number)[0].commit_id, sha);
    sc.dismiss_review(OWNER, REPO, number, review).await;
    assert_eq!(fake.reviews(OWNER, REPO, number)[0].state, "DISMISSED");
    let (run, _) = sc
        .complete_check_run(
            OWNER,
            REPO,
            navin_e2e::fake::CheckRunSpec::new("test", &sha),
        )
        .await;
    assert_eq!(fake.check_run(run).map(|r| r.head_sha), Some(sha.clone()));

    let log = fake.with_state(|m| m.deliveries.clone());
    let events: Vec<(&str, Option<&str>)> = log
        .iter()
        .map(|d| (d.event.as_str(), d.action.as_deref()))
        .collect();
    assert_eq!(
        events,
        vec![
            ("pull_request", Some("opened")),
            ("pull_request", Some("synchronize")),
            ("pull_request_review", Some("submitted")),
            ("pull_request_review", Some("dismissed")),
            ("check_run", Some("completed")),
        ]
    );
    sc.finish().await;
}
