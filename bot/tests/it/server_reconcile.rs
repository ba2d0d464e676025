//! The reconciler on the wire: pages `GET /app/hook/deliveries` by cursor and redelivers
//! only GUIDs with no OK attempt that the queue does not hold (docs/server.md, "Reconciler").
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::server_support;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use navin_bot::queue::reconcile::reconcile_once;
use navin_bot::queue::{DeliveryQueue, NewDelivery};
use navin_bot::server::Metrics;
use server_support::github;
use wiremock::matchers::{header_regex, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn attempt(
    id: u64,
    guid: &str,
    status: &str,
    at: DateTime<Utc>,
    redelivery: bool,
) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "guid": guid,
        "delivered_at": at.to_rfc3339(),
        "redelivery": redelivery,
        "duration": 0.1,
        "status": status,
        "status_code": if status == "OK" { 202 } else { 502 },
        "event": "issue_comment",
        "action": "created",
        "installation_id": 42,
        "repository_id": 7,
        "throttled_at": null
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciler_pages_by_cursor_and_redelivers_only_unseen_failures() {
    let server = MockServer::start().await;
    let now = Utc::now();
    let h = |n: i64| now - chrono::Duration::hours(n);
    let next = |cursor: &str| {
        format!(
            "<{}/app/hook/deliveries?per_page=100&cursor={cursor}>; rel=\"next\"",
            server.uri()
        )
    };
    // Newest first, as GitHub lists them.
    let page1 = serde_json::json!([
        attempt(110, "ok-after-retry", "OK", h(1), true),
        attempt(109, "held", "timed out", h(2), false),
        attempt(108, "missed", "Invalid HTTP Response: 502", h(3), false),
    ]);
    let page2 = serde_json::json!([
        attempt(
            107,
            "ok-after-retry",
            "Invalid HTTP Response: 503",
            h(4),
            false
        ),
        attempt(106, "missed-too", "failed to connect", h(50), false),
        attempt(105, "ancient", "failed to connect", h(80), false),
    ]);
    Mock::given(method("GET"))
        .and(path("/app/hook/deliveries"))
        .and(query_param_is_missing("cursor"))
        .and(header_regex("authorization", "^Bearer eyJ"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(page1)
                .insert_header("link", next("c2").as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/app/hook/deliveries"))
        .and(query_param("cursor", "c2"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(page2)
                .insert_header("link", next("c3").as_str()),
        )
        .expect(1)
        .mount(&server)
        .await;
    // Page 3 would be past the 3-day window: it must not be fetched.
    Mock::given(method("GET"))
        .and(path("/app/hook/deliveries"))
        .and(query_param("cursor", "c3"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!([])))
        .expect(0)
        .mount(&server)
        .await;
    for id in [106, 108] {
        Mock::given(method("POST"))
            .and(path(format!("/app/hook/deliveries/{id}/attempts")))
            .and(header_regex("authorization", "^Bearer eyJ"))
            .respond_with(ResponseTemplate::new(202).set_body_json(serde_json::json!({})))
            .expect(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(202))
        .expect(0)
        .with_priority(10)
        .mount(&server)
        .await;

    let dir = tempfile::tempdir().unwrap();
    let (queue, _) = DeliveryQueue::open(&dir.path().join("q.sqlite3")).unwrap();
    queue
        .enqueue(NewDelivery {
            delivery_id: "held".to_owned(),
            event: "issue_comment".to_owned(),
            action: Some("created".to_owned()),
            repository: Some("o/r".to_owned()),
            installation_id: Some(42),
            headers: Vec::new(),
            body: Bytes::from_static(b"{}"),
            received_at_ms: 0,
        })
        .await
        .unwrap();
    let (app, _) = github(&server.uri(), "1");
    let metrics = Metrics::new();
    let requested = reconcile_once(&app, &queue, &metrics, now).await.unwrap();
    assert_eq!(requested, 2);
    assert!(metrics
        .render()
        .contains("navin_webhook_redeliveries_requested_total 2"));
    // Oldest first, so redelivered events keep their order.
    let posts: Vec<String> = server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.method.as_str() == "POST")
        .map(|r| r.url.path().to_owned())
        .collect();
    assert_eq!(
        posts,
        [
            "/app/hook/deliveries/106/attempts",
            "/app/hook/deliveries/108/attempts"
        ]
    );
}
