//! Delivery queue and workers: ordering, concurrency, retries, failure, duplicates,
//! restart and graceful shutdown.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::server_support;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use navin_bot::queue::{
    ClaimedDelivery, DeliveryHandler, DeliveryQueue, HandlerError, HandlerFuture, NewDelivery,
    WorkerConfig, Workers,
};
use navin_bot::server::{app, Metrics};
use server_support::{eventually, payload, signed, test_state, SECRET};
use tokio::sync::Notify;
use tower::ServiceExt;

/// A handler made from a closure over an owned delivery.
struct FnHandler<F>(F);

impl<F, Fut> DeliveryHandler for FnHandler<F>
where
    F: Fn(ClaimedDelivery) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), HandlerError>> + Send + 'static,
{
    fn handle<'a>(&'a self, delivery: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin((self.0)(delivery.clone()))
    }
}

fn fast_config(concurrency: usize, max_attempts: u32) -> WorkerConfig {
    WorkerConfig {
        concurrency,
        max_attempts,
        base_backoff: Duration::from_millis(20),
        max_backoff: Duration::from_millis(100),
        idle_poll: Duration::from_millis(10),
    }
}

fn delivery(id: &str, repo: &str) -> NewDelivery {
    server_support::new_delivery(id, repo, 0)
}

fn open(dir: &std::path::Path) -> DeliveryQueue {
    DeliveryQueue::open(&dir.join("deliveries.sqlite3"))
        .unwrap()
        .0
}

async fn state_of(queue: &DeliveryQueue, id: &str) -> String {
    queue
        .status(id)
        .await
        .unwrap()
        .map(|s| s.state)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_repository_is_handled_in_arrival_order_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    for i in 0..12 {
        queue
            .enqueue(delivery(&format!("d{i:02}"), "o/r"))
            .await
            .unwrap();
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let running = Arc::new(AtomicUsize::new(0));
    let overlap = Arc::new(AtomicUsize::new(0));
    let handler = {
        let (seen, running, overlap) = (seen.clone(), running.clone(), overlap.clone());
        FnHandler(move |d: ClaimedDelivery| {
            let (seen, running, overlap) = (seen.clone(), running.clone(), overlap.clone());
            async move {
                if running.fetch_add(1, Ordering::SeqCst) > 0 {
                    overlap.fetch_add(1, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
                seen.lock().unwrap().push(d.delivery_id.clone());
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(())
            }
        })
    };
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(8, 3),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    assert!(
        eventually(Duration::from_secs(10), || async {
            seen.lock().unwrap().len() == 12
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
    let expected: Vec<String> = (0..12).map(|i| format!("d{i:02}")).collect();
    assert_eq!(*seen.lock().unwrap(), expected);
    assert_eq!(
        overlap.load(Ordering::SeqCst),
        0,
        "two deliveries of one repo overlapped"
    );
    assert_eq!(queue.stats().await.unwrap().done, 12);
}

/// Claims `id`'s repository head and reopens the queue file without an outcome: what a
/// process killed while handling it leaves behind, and its restart.
async fn crash_while_running(dir: &std::path::Path, times: usize) {
    for _ in 0..times {
        let queue = open(dir);
        assert_eq!(queue.claim(i64::MAX, 1).await.unwrap().len(), 1);
        drop(queue);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_after_crashes_do_not_use_up_attempts_and_a_delivery_that_keeps_crashing_is_failed(
) {
    let dir = tempfile::tempdir().unwrap();
    open(dir.path())
        .enqueue(delivery("flaky", "o/a"))
        .await
        .unwrap();
    crash_while_running(dir.path(), 2).await;
    let queue = open(dir.path());
    let runs = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let runs = runs.clone();
        FnHandler(move |d: ClaimedDelivery| {
            let runs = runs.clone();
            async move {
                runs.lock().unwrap().push((d.attempt, d.final_attempt));
                Err(HandlerError::Transient("GitHub 502".to_owned()))
            }
        })
    };
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(2, 2),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    let q = queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move { state_of(&q, "flaky").await == "failed" }
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
    // Two crashes, then both of the two attempts --max-attempts 2 allows; each run after
    // a crash is a retry (attempt > 1), and only the second failure is the last.
    assert_eq!(*runs.lock().unwrap(), [(3, false), (4, true)]);
    drop(queue);

    // A delivery that takes the process down every time is not run a sixth time.
    let dir = tempfile::tempdir().unwrap();
    open(dir.path())
        .enqueue(delivery("poison", "o/b"))
        .await
        .unwrap();
    crash_while_running(dir.path(), navin_bot::queue::MAX_CRASHES as usize).await;
    let queue = open(dir.path());
    let ran = Arc::new(AtomicUsize::new(0));
    let handler = {
        let ran = ran.clone();
        FnHandler(move |_d: ClaimedDelivery| {
            let ran = ran.clone();
            async move {
                ran.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        })
    };
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(2, 6),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    let q = queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move { state_of(&q, "poison").await == "failed" }
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
    assert_eq!(ran.load(Ordering::SeqCst), 0, "not run again");
    let status = queue.status("poison").await.unwrap().unwrap();
    assert!(
        status
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("stopped 5 times")),
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn different_repositories_are_handled_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    queue.enqueue(delivery("a1", "o/a")).await.unwrap();
    queue.enqueue(delivery("b1", "o/b")).await.unwrap();
    // Each handler waits for the other: only concurrent handling can finish.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let handler = {
        let barrier = barrier.clone();
        FnHandler(move |_d: ClaimedDelivery| {
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                Ok(())
            }
        })
    };
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(4, 3),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    let q = queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move { q.stats().await.unwrap().done == 2 }
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_failures_are_retried_with_backoff_until_done() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    queue.enqueue(delivery("flaky", "o/r")).await.unwrap();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let attempts = attempts.clone();
        FnHandler(move |d: ClaimedDelivery| {
            let attempts = attempts.clone();
            async move {
                attempts
                    .lock()
                    .unwrap()
                    .push((d.attempt, tokio::time::Instant::now()));
                if d.attempt < 3 {
                    Err(HandlerError::Transient("GitHub 502".to_owned()))
                } else {
                    Ok(())
                }
            }
        })
    };
    let metrics = Arc::new(Metrics::new());
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(2, 5),
        metrics.clone(),
        Arc::new(Notify::new()),
    );
    let q = queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move { state_of(&q, "flaky").await == "done" }
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
    let attempts = attempts.lock().unwrap();
    assert_eq!(attempts.iter().map(|a| a.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(
        attempts[1].1 - attempts[0].1 >= Duration::from_millis(20),
        "first backoff"
    );
    assert!(
        attempts[2].1 - attempts[1].1 >= Duration::from_millis(40),
        "doubled backoff"
    );
    assert!(metrics
        .render()
        .contains("navin_delivery_attempts_total{outcome=\"retry\"} 2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delivery_is_marked_failed_with_its_error_after_the_last_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    queue.enqueue(delivery("doomed", "o/r")).await.unwrap();
    queue.enqueue(delivery("after", "o/r")).await.unwrap();
    let handler = FnHandler(|d: ClaimedDelivery| async move {
        if d.delivery_id == "doomed" {
            Err(HandlerError::Transient(
                "GitHub 503 on POST /comments".to_owned(),
            ))
        } else {
            Ok(())
        }
    });
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(2, 3),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    let q = queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move { state_of(&q, "after").await == "done" }
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
    let doomed = queue.status("doomed").await.unwrap().unwrap();
    assert_eq!(doomed.state, "failed");
    assert_eq!(doomed.attempts, 3);
    assert!(doomed.last_error.unwrap().contains("503 on POST /comments"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permanent_failure_and_panic_are_handled_without_stopping_workers() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    queue.enqueue(delivery("bad-payload", "o/a")).await.unwrap();
    queue.enqueue(delivery("panics", "o/b")).await.unwrap();
    queue.enqueue(delivery("fine", "o/c")).await.unwrap();
    let calls = Arc::new(Mutex::new(HashMap::<String, u32>::new()));
    let handler = {
        let calls = calls.clone();
        FnHandler(move |d: ClaimedDelivery| {
            let calls = calls.clone();
            async move {
                *calls
                    .lock()
                    .unwrap()
                    .entry(d.delivery_id.clone())
                    .or_default() += 1;
                match d.delivery_id.as_str() {
                    "bad-payload" => {
                        Err(HandlerError::Permanent("missing comment.body".to_owned()))
                    }
                    "panics" => panic!("handler bug"),
                    _ => Ok(()),
                }
            }
        })
    };
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(4, 2),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    let q = queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move {
                let s = q.stats().await.unwrap();
                s.done == 1 && s.failed == 2
            }
        })
        .await
    );
    workers.shutdown(Duration::from_secs(1)).await;
    let calls = calls.lock().unwrap().clone();
    assert_eq!(calls["bad-payload"], 1, "a permanent error is not retried");
    assert_eq!(calls["panics"], 2, "a panic counts as a transient failure");
    let bad = queue.status("bad-payload").await.unwrap().unwrap();
    assert!(bad.last_error.unwrap().contains("missing comment.body"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_delivery_twice_over_http_causes_one_effect() {
    let dir = tempfile::tempdir().unwrap();
    let t = test_state(dir.path(), 1 << 20);
    let effects = Arc::new(AtomicUsize::new(0));
    let handler = {
        let effects = effects.clone();
        FnHandler(move |_d: ClaimedDelivery| {
            let effects = effects.clone();
            async move {
                effects.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        })
    };
    let workers = Workers::spawn(
        t.queue.clone(),
        Arc::new(handler),
        fast_config(4, 3),
        t.metrics.clone(),
        t.wake.clone(),
    );
    let body = payload("created", "o/r", 1);
    // Once before it is handled, concurrently, and once long after it is done.
    let first = app(t.state.clone()).oneshot(signed(SECRET, "issue_comment", "guid-same", &body));
    let second = app(t.state.clone()).oneshot(signed(SECRET, "issue_comment", "guid-same", &body));
    let (a, b) = tokio::join!(first, second);
    assert_eq!(a.unwrap().status(), 202);
    assert_eq!(b.unwrap().status(), 202);
    let q = t.queue.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let q = q.clone();
            async move { state_of(&q, "guid-same").await == "done" }
        })
        .await
    );
    let late = app(t.state.clone())
        .oneshot(signed(SECRET, "issue_comment", "guid-same", &body))
        .await
        .unwrap();
    assert_eq!(late.status(), 202);
    tokio::time::sleep(Duration::from_millis(100)).await;
    workers.shutdown(Duration::from_secs(1)).await;
    assert_eq!(effects.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_and_interrupted_deliveries_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let queue = open(dir.path());
        queue.enqueue(delivery("waiting", "o/a")).await.unwrap();
        queue.enqueue(delivery("interrupted", "o/b")).await.unwrap();
        // Simulate a process that claimed a delivery and died mid-handler.
        let claimed = queue.claim(i64::MAX, 1).await.unwrap();
        assert_eq!(claimed[0].delivery_id, "waiting");
        queue.close().await;
    }
    let (queue, requeued) = DeliveryQueue::open(&dir.path().join("deliveries.sqlite3")).unwrap();
    assert_eq!(requeued, 1, "the running delivery is put back");
    let mut ids: Vec<(String, u32)> = queue
        .claim(i64::MAX, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.delivery_id, d.attempt))
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        [("interrupted".to_owned(), 1), ("waiting".to_owned(), 2)]
    );
}

#[tokio::test]
async fn a_second_queue_on_the_same_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = open(dir.path());
    let second = DeliveryQueue::open(&dir.path().join("deliveries.sqlite3"));
    let message = second.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("in use by another process"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_in_flight_handlers_finish_and_leaves_the_rest_queued() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    queue.enqueue(delivery("quick", "o/a")).await.unwrap();
    queue.enqueue(delivery("stuck", "o/b")).await.unwrap();
    queue
        .enqueue(delivery("behind-quick", "o/a"))
        .await
        .unwrap();
    let started = Arc::new(AtomicUsize::new(0));
    let handler = {
        let started = started.clone();
        FnHandler(move |d: ClaimedDelivery| {
            let started = started.clone();
            async move {
                started.fetch_add(1, Ordering::SeqCst);
                let wait = if d.delivery_id == "stuck" { 3600 } else { 0 };
                tokio::time::sleep(Duration::from_millis(200) + Duration::from_secs(wait)).await;
                Ok(())
            }
        })
    };
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        fast_config(4, 3),
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            started.load(Ordering::SeqCst) == 2
        })
        .await
    );
    let report = workers.shutdown(Duration::from_millis(600)).await;
    assert_eq!((report.finished, report.abandoned), (1, 1));
    assert_eq!(state_of(&queue, "quick").await, "done");
    assert_eq!(
        state_of(&queue, "behind-quick").await,
        "queued",
        "not started after the stop"
    );
    assert_eq!(
        state_of(&queue, "stuck").await,
        "running",
        "runs again at next start"
    );
}

/// The engine adapter fails a delivery whose payload cannot be what its event promises
/// for good (no retry), naming the field, before any GitHub call.
#[tokio::test]
async fn a_delivery_with_a_malformed_payload_fails_for_good_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let (github, _metrics) = server_support::github("http://127.0.0.1:9", "1");
    let engine = navin_engine::Engine::new(github, navin_engine::EngineConfig::new(dir.path()));
    let handler = navin_bot::queue::EngineHandler::new(engine);
    let mut body: serde_json::Value = serde_json::from_slice(include_bytes!(
        "../../../tests/fixtures/webhooks/issue_comment.created.json"
    ))
    .unwrap();
    body["installation"]["id"] = "seven".into();
    let delivery = ClaimedDelivery {
        seq: 1,
        delivery_id: "bad".to_owned(),
        event: "issue_comment".to_owned(),
        action: Some("created".to_owned()),
        repository: Some("o/r".to_owned()),
        installation_id: Some(7),
        headers: Vec::new(),
        body: Bytes::from(serde_json::to_vec(&body).unwrap()),
        received_at_ms: 0,
        attempt: 1,
        crashes: 0,
        final_attempt: false,
    };
    match handler.handle(&delivery).await {
        Err(HandlerError::Permanent(message)) => {
            assert!(message.contains("installation.id"), "{message}")
        }
        other => panic!("expected a permanent failure, got {other:?}"),
    }
    // An action Navin does not act on is acknowledged and does nothing.
    let ignored = ClaimedDelivery {
        action: Some("deleted".to_owned()),
        body: Bytes::from_static(br#"{"action":"deleted"}"#),
        ..delivery
    };
    handler.handle(&ignored).await.unwrap();
}

#[tokio::test]
async fn done_deliveries_are_remembered_for_deduplication_until_pruned() {
    let dir = tempfile::tempdir().unwrap();
    let queue = open(dir.path());
    queue.enqueue(delivery("old", "o/r")).await.unwrap();
    queue.enqueue(delivery("recent", "o/s")).await.unwrap();
    let day_ms = 24 * 3600 * 1000;
    let now = 100 * day_ms;
    for d in queue.claim(i64::MAX, 10).await.unwrap() {
        let finished = if d.delivery_id == "old" {
            now - 9 * day_ms
        } else {
            now - day_ms
        };
        queue.complete(d.seq, finished).await.unwrap();
    }
    let keep_done = i64::try_from(navin_bot::queue::worker::KEEP_DONE.as_millis()).unwrap();
    let removed = queue.prune(now - keep_done, now - keep_done).await.unwrap();
    assert_eq!(removed, 1);
    assert_eq!(
        queue.enqueue(delivery("recent", "o/s")).await.unwrap(),
        navin_bot::queue::EnqueueOutcome::Duplicate,
        "still inside the window: a redelivery is a duplicate"
    );
    assert_eq!(queue.status("old").await.unwrap(), None);
}
