//! The whole server over loopback TCP, started as `navin serve` starts it: acknowledgement
//! while GitHub hangs, restart on the same data directory, the
//! reconciler at start, and graceful shutdown.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::server_support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use navin_bot::queue::{ClaimedDelivery, DeliveryHandler, HandlerError, HandlerFuture};
use navin_bot::server::start;
use navin_github::GitHubApp;
use server_support::{eventually, http_client, payload, post_webhook, serve_args};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Hooks that call GitHub for every comment, the way the engine will.
struct CallsGitHub {
    github: GitHubApp,
    started: Arc<AtomicUsize>,
}

impl DeliveryHandler for CallsGitHub {
    fn handle<'a>(&'a self, d: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin(async move {
            self.started.fetch_add(1, Ordering::SeqCst);
            let installation = d.installation_id.unwrap_or_default();
            let repo = d.repository.clone().unwrap_or_default();
            self.github
                .installation(installation)
                .get(&format!("/repos/{repo}"))
                .await
                .map_err(|e| HandlerError::Transient(e.to_string()))?;
            Ok(())
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledges_within_a_second_while_the_github_api_hangs() {
    let github = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&github)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let args = serve_args(dir.path(), &github.uri());
    let started = Arc::new(AtomicUsize::new(0));
    let hooks_started = started.clone();
    let server = start(&args, move |gh| {
        Arc::new(CallsGitHub {
            github: gh.clone(),
            started: hooks_started,
        })
    })
    .await
    .unwrap();
    let addr = server.local_addr();
    let client = http_client();

    // The first delivery's handler is stuck on GitHub from here on.
    let body = payload("created", "o/r0", 42);
    let t = Instant::now();
    assert_eq!(
        post_webhook(&client, addr, "issue_comment", "hang-0", &body).await,
        Ok(202)
    );
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "first ack took {:?}",
        t.elapsed()
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            started.load(Ordering::SeqCst) >= 1
        })
        .await
    );

    // More deliveries while every handler is hanging: each still acknowledged at once.
    let mut slowest = Duration::ZERO;
    for i in 1..20 {
        let body = payload("created", &format!("o/r{i}"), 42);
        let t = Instant::now();
        assert_eq!(
            post_webhook(&client, addr, "issue_comment", &format!("hang-{i}"), &body).await,
            Ok(202)
        );
        slowest = slowest.max(t.elapsed());
    }
    assert!(slowest < Duration::from_secs(1), "slowest ack {slowest:?}");
    let status = server.queue().status("hang-0").await.unwrap().unwrap();
    assert_eq!(
        status.state, "running",
        "stored, and its handler is still waiting on GitHub"
    );
    let stats = server.queue().stats().await.unwrap();
    assert_eq!(
        stats.queued + stats.running,
        20,
        "every acknowledged delivery is stored"
    );

    let report = server.shutdown().await.unwrap();
    assert!(
        report.abandoned >= 1,
        "hung handlers are cut off at the grace period"
    );
    // Stopped means stopped: no more acknowledgements.
    assert!(
        post_webhook(&http_client(), addr, "issue_comment", "late", &body)
            .await
            .is_err()
    );
}

/// Never finishes: stands for a process that dies mid-handler.
struct Stuck;

impl DeliveryHandler for Stuck {
    fn handle<'a>(&'a self, _d: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin(std::future::pending())
    }
}

struct Recorder(Arc<Mutex<Vec<String>>>);

impl DeliveryHandler for Recorder {
    fn handle<'a>(&'a self, d: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        self.0.lock().unwrap().push(d.delivery_id.clone());
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_survive_a_server_restart_on_the_same_data_dir() {
    let github = MockServer::start().await;
    let dir = tempfile::tempdir().unwrap();
    let args = serve_args(dir.path(), &github.uri());
    let client = http_client();
    let ids = ["a1", "b1", "a2", "c1", "a3"];
    {
        let server = start(&args, |_| Arc::new(Stuck)).await.unwrap();
        for id in ids {
            let repo = format!("o/{}", &id[..1]);
            let body = payload("created", &repo, 1);
            assert_eq!(
                post_webhook(&client, server.local_addr(), "issue_comment", id, &body).await,
                Ok(202)
            );
        }
        let report = server.shutdown().await.unwrap();
        assert_eq!(
            report.abandoned, 3,
            "the head of each repository was running"
        );
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorder = Recorder(seen.clone());
    let server = start(&args, move |_| Arc::new(recorder)).await.unwrap();
    assert!(
        eventually(Duration::from_secs(10), || async {
            seen.lock().unwrap().len() == 5
        })
        .await
    );
    let order = seen.lock().unwrap().clone();
    let repo_a: Vec<&String> = order.iter().filter(|id| id.starts_with('a')).collect();
    assert_eq!(repo_a, ["a1", "a2", "a3"]);
    let mut all = order.clone();
    all.sort();
    all.dedup();
    assert_eq!(
        all.len(),
        5,
        "each delivery handled once after the restart: {order:?}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciler_asks_for_missed_deliveries_at_start() {
    let github = MockServer::start().await;
    let at = chrono::Utc::now() - chrono::Duration::hours(1);
    Mock::given(method("GET"))
        .and(path("/app/hook/deliveries"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(serde_json::json!([{
                "id": 900, "guid": "missed-while-down", "delivered_at": at.to_rfc3339(),
                "redelivery": false, "status": "failed to connect", "status_code": 0,
                "event": "issue_comment", "action": "created", "installation_id": 42
            }])),
        )
        .mount(&github)
        .await;
    Mock::given(method("POST"))
        .and(path("/app/hook/deliveries/900/attempts"))
        .respond_with(ResponseTemplate::new(202).set_body_json(serde_json::json!({})))
        .expect(1)
        .mount(&github)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let mut args = serve_args(dir.path(), &github.uri());
    args.reconcile_interval_secs = 3600;
    let server = start(&args, |_| Arc::new(Stuck)).await.unwrap();
    let g = &github;
    assert!(
        eventually(Duration::from_secs(10), || async move {
            g.received_requests()
                .await
                .unwrap()
                .iter()
                .any(|r| r.url.path() == "/app/hook/deliveries/900/attempts")
        })
        .await
    );
    server.shutdown().await.unwrap();
}

async fn readyz(addr: std::net::SocketAddr) -> (u16, String) {
    crate::server_support::http_get(addr, "/readyz").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_recovers_by_itself_once_github_accepts_the_app_again() {
    let github = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/app"))
        .respond_with(ResponseTemplate::new(401).set_body_json(serde_json::json!({
            "message": "A JSON web token could not be decoded"
        })))
        .mount(&github)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let args = serve_args(dir.path(), &github.uri());
    let server = start(&args, |_| Arc::new(navin_bot::queue::NoHandler))
        .await
        .unwrap();
    let addr = server.local_addr();
    assert_eq!(readyz(addr).await.0, 200, "nothing attempted yet");
    let refused = server
        .github()
        .app_request(navin_github::ApiRequest::get("/app"))
        .await;
    assert!(refused.is_err());
    let (status, reason) = readyz(addr).await;
    assert_eq!(status, 503, "{reason}");
    assert!(
        reason.starts_with("github: last App API call failed"),
        "{reason}"
    );
    assert!(reason.contains("401"), "{reason}");

    // GitHub takes the App back; no delivery arrives, yet /readyz finds out.
    github.reset().await;
    Mock::given(method("GET"))
        .and(path("/app"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": 1})))
        .mount(&github)
        .await;
    let recovered = eventually(Duration::from_secs(30), || async {
        readyz(addr).await == (200, "ready\n".to_owned())
    })
    .await;
    assert!(recovered, "still {:?}", readyz(addr).await);
    server.shutdown().await.unwrap();
}
