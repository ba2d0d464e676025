//! Webhook ingress through the router (`oneshot`, no socket): signature, headers, size caps,
//! unknown events, duplicates and secret rotation (docs/server.md, "Request path") at the HTTP boundary, plus health, readiness and metrics.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::server_support;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use navin_bot::server::{app, sign};
use server_support::{payload, signed, test_state, LogCapture, OLD_SECRET, SECRET};
use tower::ServiceExt;

const CAP: usize = 64 * 1024;

async fn send(state: &navin_bot::server::AppState, req: Request<Body>) -> (StatusCode, String) {
    let response = app(state.clone()).oneshot(req).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

async fn stored(t: &server_support::TestState) -> u64 {
    let s = t.queue.stats().await.unwrap();
    s.queued + s.running + s.done + s.failed
}

#[tokio::test]
async fn missing_signature_is_401_and_nothing_is_queued() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "o/r", 1);
    let mut req = signed(SECRET, "issue_comment", "guid-nosig", &body);
    req.headers_mut().remove("x-hub-signature-256");
    let (status, _) = send(&t.state, req).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(stored(&t).await, 0);
}

#[tokio::test]
async fn malformed_or_wrong_signature_is_401_and_only_the_delivery_id_is_logged() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let logs = LogCapture::global();
    let body = br#"{"action":"created","comment":{"body":"BODY-SENTINEL"}}"#;
    for (i, signature) in [
        "sha256=".to_owned(),
        "sha1=0123".to_owned(),
        "sha256=not-hex".to_owned(),
        sign("wrong secret", body),
    ]
    .into_iter()
    .enumerate()
    {
        let mut req = signed(SECRET, "issue_comment", &format!("guid-bad-{i}"), body);
        req.headers_mut()
            .insert("x-hub-signature-256", signature.parse().unwrap());
        let (status, text) = send(&t.state, req).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{signature}");
        assert!(!text.contains("sha256"), "no internals in the body: {text}");
    }
    assert_eq!(stored(&t).await, 0);
    let logged = logs.text();
    // One line for the cause within the interval (the first), the rest counted.
    assert!(logged.contains("guid-bad-0"), "{logged}");
    assert!(!logged.contains("guid-bad-3"), "rate limited: {logged}");
    assert!(!logged.contains("BODY-SENTINEL"), "{logged}");
    assert!(!logged.contains(SECRET), "{logged}");
    assert!(t.metrics.render().contains("reason=\"signature\""));
}

#[tokio::test]
async fn github_test_vector_passes_the_signature_check_at_the_endpoint() {
    // "Hello, World!" is not JSON: getting 400 (not 401) shows the signature passed.
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let req = signed(SECRET, "issue_comment", "guid-vector", b"Hello, World!");
    assert_eq!(
        req.headers()["x-hub-signature-256"],
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    );
    let (status, text) = send(&t.state, req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("JSON"));
    assert_eq!(stored(&t).await, 0);
}

#[tokio::test]
async fn reserialized_body_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let original = br#"{"action": "created", "repository": {"full_name": "o/r"}}"#;
    let value: serde_json::Value = serde_json::from_slice(original).unwrap();
    let mut req = signed(
        SECRET,
        "issue_comment",
        "guid-reser",
        &serde_json::to_vec(&value).unwrap(),
    );
    req.headers_mut().insert(
        "x-hub-signature-256",
        sign(SECRET, original).parse().unwrap(),
    );
    let (status, _) = send(&t.state, req).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn missing_event_or_delivery_header_is_400() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "o/r", 1);
    for header in ["x-github-event", "x-github-delivery"] {
        let mut req = signed(SECRET, "issue_comment", "guid-h", &body);
        req.headers_mut().remove(header);
        let (status, text) = send(&t.state, req).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{header}");
        assert!(text.to_ascii_lowercase().contains(header), "{text}");
    }
    assert_eq!(stored(&t).await, 0);
}

#[tokio::test]
async fn non_post_methods_on_webhook_are_405() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    for method in ["GET", "PUT", "DELETE"] {
        let req = Request::builder()
            .method(method)
            .uri("/webhook")
            .body(Body::empty())
            .unwrap();
        let (status, _) = send(&t.state, req).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method}");
    }
}

#[tokio::test]
async fn declared_length_over_the_cap_is_413_without_reading_the_body() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    // A body that fails when read: 413 (not 400) proves it was never polled.
    let poisoned = futures_util::stream::once(async {
        Err::<bytes::Bytes, std::io::Error>(std::io::Error::other("body must not be read"))
    });
    let req = Request::builder()
        .method("POST")
        .uri("/webhook")
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", "guid-big")
        .header("x-hub-signature-256", sign(SECRET, b"{}"))
        .header("content-length", (CAP + 1).to_string())
        .body(Body::from_stream(poisoned))
        .unwrap();
    let (status, _) = send(&t.state, req).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(stored(&t).await, 0);
}

#[tokio::test]
async fn endless_chunked_body_is_cut_off_at_the_cap_with_413() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    // Never ends: buffering it whole would hang this test forever.
    let endless = futures_util::stream::repeat_with(|| {
        Ok::<bytes::Bytes, std::io::Error>(bytes::Bytes::from_static(&[b'x'; 4096]))
    });
    let req = Request::builder()
        .method("POST")
        .uri("/webhook")
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", "guid-endless")
        .header("x-hub-signature-256", sign(SECRET, b"{}"))
        .body(Body::from_stream(endless))
        .unwrap();
    let (status, _) = tokio::time::timeout(Duration::from_secs(30), send(&t.state, req))
        .await
        .expect("ingress must stop reading at the cap");
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(t.metrics.render().contains("reason=\"too_large\""));
}

#[tokio::test]
async fn unknown_event_and_unhandled_action_get_202_and_are_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let (status, _) = send(
        &t.state,
        signed(SECRET, "star", "guid-star", &payload("created", "o/r", 1)),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = send(
        &t.state,
        signed(
            SECRET,
            "issue_comment",
            "guid-del",
            &payload("deleted", "o/r", 1),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(stored(&t).await, 0);
    assert!(t
        .metrics
        .render()
        .contains("navin_webhook_deliveries_ignored_total 2"));
}

#[tokio::test]
async fn ping_is_answered_200_and_not_stored() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = br#"{"zen":"Keep it logically awesome.","hook_id":1}"#;
    let (status, _) = send(&t.state, signed(SECRET, "ping", "guid-ping", body)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(stored(&t).await, 0);
}

#[tokio::test]
async fn handled_delivery_is_stored_before_the_202() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "Octo/Repo", 77);
    let (status, _) = send(&t.state, signed(SECRET, "issue_comment", "guid-1", &body)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let row = t.queue.status("guid-1").await.unwrap().unwrap();
    assert_eq!(row.state, "queued");
    let claimed = t.queue.claim(i64::MAX, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let d = &claimed[0];
    assert_eq!(d.event, "issue_comment");
    assert_eq!(d.action.as_deref(), Some("created"));
    assert_eq!(d.repository.as_deref(), Some("Octo/Repo"));
    assert_eq!(d.installation_id, Some(77));
    assert_eq!(&d.body[..], &body[..], "raw bytes kept exactly as signed");
    assert_eq!(d.header("X-GitHub-Delivery"), Some("guid-1"));
    assert_eq!(d.header("x-hub-signature-256"), None);
}

#[tokio::test]
async fn repeated_delivery_id_gets_202_and_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "o/r", 1);
    for _ in 0..3 {
        let (status, _) = send(&t.state, signed(SECRET, "issue_comment", "guid-dup", &body)).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    assert_eq!(stored(&t).await, 1);
    assert!(t
        .metrics
        .render()
        .contains("navin_webhook_deliveries_duplicate_total 2"));
}

#[tokio::test]
async fn either_rotation_secret_is_accepted_at_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "o/r", 1);
    let (a, _) = send(&t.state, signed(SECRET, "issue_comment", "guid-new", &body)).await;
    let (b, _) = send(
        &t.state,
        signed(OLD_SECRET, "issue_comment", "guid-old", &body),
    )
    .await;
    let (c, _) = send(
        &t.state,
        signed("third", "issue_comment", "guid-other", &body),
    )
    .await;
    assert_eq!(
        (a, b, c),
        (
            StatusCode::ACCEPTED,
            StatusCode::ACCEPTED,
            StatusCode::UNAUTHORIZED
        )
    );
    assert_eq!(stored(&t).await, 2);
}

#[tokio::test]
async fn health_readiness_and_metrics_endpoints_answer() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "o/r", 1);
    send(&t.state, signed(SECRET, "issue_comment", "guid-m", &body)).await;
    let get = |path: &str| Request::builder().uri(path).body(Body::empty()).unwrap();
    assert_eq!(send(&t.state, get("/healthz")).await.0, StatusCode::OK);
    assert_eq!(send(&t.state, get("/readyz")).await.0, StatusCode::OK);
    let (status, text) = send(&t.state, get("/metrics")).await;
    assert_eq!(status, StatusCode::OK);
    for needle in [
        "navin_webhook_deliveries_received_total{event=\"issue_comment\"} 1",
        "navin_queue_depth 1",
        "# TYPE navin_delivery_latency_seconds histogram",
        "# TYPE navin_delivery_handler_seconds histogram",
    ] {
        assert!(text.contains(needle), "missing {needle} in\n{text}");
    }
}

#[tokio::test]
async fn readiness_fails_once_the_queue_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    t.queue.close().await;
    let req = Request::builder()
        .uri("/readyz")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&t.state, req).await.0, StatusCode::SERVICE_UNAVAILABLE);
    // And a delivery that cannot be stored is not acknowledged, so GitHub keeps it failed.
    let body = payload("created", "o/r", 1);
    let (status, _) = send(
        &t.state,
        signed(SECRET, "issue_comment", "guid-closed", &body),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn an_oversized_or_malformed_delivery_id_is_400_and_never_logged() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let logs = LogCapture::global();
    let body = payload("created", "o/r", 1);
    let huge = "Q".repeat(300 * 1024);
    for id in [huge.as_str(), "abc def", "../../etc%2fpasswd"] {
        // Unsigned: the id is refused before the signature is even looked at.
        let mut req = signed(SECRET, "issue_comment", "placeholder", &body);
        req.headers_mut()
            .insert("x-github-delivery", id.parse().unwrap());
        req.headers_mut().remove("x-hub-signature-256");
        let (status, text) = send(&t.state, req).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{}",
            &id[..id.len().min(20)]
        );
        assert!(text.contains("X-GitHub-Delivery"), "{text}");
    }
    assert_eq!(stored(&t).await, 0);
    assert!(
        !logs.text().contains(&"Q".repeat(200)),
        "a long delivery id reached the log"
    );
    // The event header is bounded the same way.
    let mut req = signed(SECRET, "issue_comment", "guid-event", &body);
    req.headers_mut()
        .insert("x-github-event", "Q".repeat(10_000).parse().unwrap());
    let (status, text) = send(&t.state, req).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("X-GitHub-Event"), "{text}");
    // A GUID as GitHub sends it is accepted.
    let guid = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
    let (status, _) = send(&t.state, signed(SECRET, "issue_comment", guid, &body)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_body_that_is_not_json_by_content_type_is_415_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body = payload("created", "o/r", 1);
    for kind in ["application/x-www-form-urlencoded", "text/plain"] {
        let mut req = signed(SECRET, "issue_comment", "guid-media", &body);
        req.headers_mut()
            .insert("content-type", kind.parse().unwrap());
        let (status, text) = send(&t.state, req).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{kind}");
        assert!(text.contains("application/json"), "{text}");
    }
    assert_eq!(stored(&t).await, 0);
    // JSON with a charset parameter is JSON.
    let mut req = signed(SECRET, "issue_comment", "guid-charset", &body);
    req.headers_mut().insert(
        "content-type",
        "application/json; charset=utf-8".parse().unwrap(),
    );
    let (status, _) = send(&t.state, req).await;
    assert_eq!(status, StatusCode::ACCEPTED);
}

#[tokio::test]
async fn a_signed_payload_with_a_field_of_the_wrong_type_is_400_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    let body =
        br#"{"action":"created","repository":{"full_name":"o/r"},"installation":{"id":"seven"}}"#;
    let (status, text) = send(&t.state, signed(SECRET, "issue_comment", "guid-type", body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.contains("installation.id"), "{text}");
    assert!(!text.contains("not a JSON object"), "{text}");
    assert_eq!(stored(&t).await, 0);
}

#[tokio::test]
async fn a_body_that_never_arrives_is_408_and_while_it_holds_the_last_slot_others_get_503() {
    use navin_bot::server::ingress::IngressLimits;
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    t.state.set_ingress(
        IngressLimits::new(1, 1024 * 1024).with_body_timeout(Duration::from_millis(500)),
    );
    // Headers, a declared length, and then nothing: a slow (or hostile) sender.
    let stalled = Request::builder()
        .method("POST")
        .uri("/webhook")
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", "guid-stalled")
        .header("content-length", "2000")
        .body(Body::from_stream(futures_util::stream::pending::<
            Result<bytes::Bytes, std::io::Error>,
        >()))
        .unwrap();
    let state = t.state.clone();
    let slow = tokio::spawn(async move { send(&state, stalled).await });
    // While it holds the only slot, GitHub's delivery is told to come back, not queued.
    let mut busy = None;
    for _ in 0..20 {
        let body = payload("created", "o/r", 1);
        let response = app(t.state.clone())
            .oneshot(signed(SECRET, "issue_comment", "guid-real", &body))
            .await
            .unwrap();
        if response.status() == StatusCode::SERVICE_UNAVAILABLE {
            busy = Some(response);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let busy = busy.expect("the second request finds the budget spent");
    assert_eq!(busy.headers()["retry-after"], "1");
    let (status, _) = tokio::time::timeout(Duration::from_secs(10), slow)
        .await
        .expect("the stalled body is cut off at the deadline")
        .unwrap();
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    let rendered = t.metrics.render();
    assert!(rendered.contains("reason=\"busy\"") && rendered.contains("reason=\"slow_body\""));
    // The slot is free again: the delivery goes through.
    let body = payload("created", "o/r", 1);
    let (status, _) = send(
        &t.state,
        signed(SECRET, "issue_comment", "guid-real", &body),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(stored(&t).await, 1);
}

#[tokio::test]
async fn bytes_a_stalled_sender_really_sent_count_against_the_budget_until_it_is_cut_off() {
    use futures_util::StreamExt as _;
    use navin_bot::server::ingress::IngressLimits;
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), CAP);
    t.state.set_ingress(
        IngressLimits::new(8, 48 * 1024).with_body_timeout(Duration::from_millis(800)),
    );
    // 40 KiB sent, then nothing: it holds 40 of the 48 KiB.
    let sent = futures_util::stream::once(async {
        Ok::<bytes::Bytes, std::io::Error>(bytes::Bytes::from(vec![b' '; 40 * 1024]))
    })
    .chain(futures_util::stream::pending());
    let stalled = Request::builder()
        .method("POST")
        .uri("/webhook")
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", "guid-hog")
        .body(Body::from_stream(sent))
        .unwrap();
    let state = t.state.clone();
    let hog = tokio::spawn(async move { send(&state, stalled).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A 12 KiB delivery does not fit beside it.
    let mut body = payload("created", "o/r", 1);
    let pad = 12 * 1024 - body.len();
    body.splice(
        1..1,
        format!("\"pad\":\"{}\",", "x".repeat(pad)).into_bytes(),
    );
    let (status, _) = send(&t.state, signed(SECRET, "issue_comment", "guid-big", &body)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, _) = hog.await.unwrap();
    assert_eq!(status, StatusCode::REQUEST_TIMEOUT);
    // Cut off, its bytes are free: the same delivery lands.
    let (status, _) = send(&t.state, signed(SECRET, "issue_comment", "guid-big", &body)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
}
