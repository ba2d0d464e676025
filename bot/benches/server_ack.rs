//! Webhook acknowledgement latency and throughput over loopback TCP, 25 KB signed
//! deliveries: Navin's ingress (verify + durable SQLite commit + 202, workers running)
//! next to a minimal axum verify-and-202 handler without durability, in the same run;
//! then the real `navin serve` binary under the same load, with its RSS.
//!
//! Run: `cargo bench -p navin-bot --bench server_ack`
//! Knobs: NAVIN_BENCH_REQUESTS (default 4000), NAVIN_BENCH_CONCURRENCY (default 16).
#![allow(clippy::unwrap_used, reason = "a bench aborts on setup failure")]
#![allow(clippy::print_stdout, reason = "a bench prints its figures")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use navin_bot::queue::{DeliveryHandler, DeliveryQueue, NoHandler, WorkerConfig, Workers};
use navin_bot::server::{app, AppState, AppStateConfig, Metrics};
use support::{
    baseline_router, env_usize, print, rss_kib, secrets, serve_in_process, spawn_navin, CAP,
};
use tokio::sync::Notify;

const BODY_BYTES: usize = 25 * 1024;

/// A 25 KB issue_comment payload; the repository varies so workers run in parallel.
fn body(i: usize) -> Bytes {
    let filler = "x".repeat(BODY_BYTES - 200);
    let json = serde_json::json!({
        "action": "created",
        "repository": {"full_name": format!("bench/repo{}", i % 16)},
        "installation": {"id": 1},
        "comment": {"body": filler},
    });
    Bytes::from(serde_json::to_vec(&json).unwrap())
}

async fn load(
    addr: std::net::SocketAddr,
    prefix: &str,
    requests: usize,
    concurrency: usize,
) -> support::Figures {
    support::load(addr, prefix, requests, concurrency, &body).await
}

fn main() {
    let requests = env_usize("NAVIN_BENCH_REQUESTS", 4000);
    let concurrency = env_usize("NAVIN_BENCH_CONCURRENCY", 16);
    // Keep the database on the real disk (target/), not a tmpfs, so fsync costs what it costs.
    let work = tempfile::Builder::new()
        .prefix("navin-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    println!(
        "server_ack: {requests} deliveries of {} KB, {concurrency} keep-alive connections, loopback",
        BODY_BYTES / 1024
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let baseline = serve_in_process(baseline_router(secrets())).await;
        let (queue, _) =
            DeliveryQueue::open(&work.path().join("inproc/deliveries.sqlite3")).unwrap();
        let metrics = Arc::new(Metrics::new());
        let wake = Arc::new(Notify::new());
        let handler: Arc<dyn DeliveryHandler> = Arc::new(NoHandler);
        let workers = Workers::spawn(
            queue.clone(),
            handler,
            WorkerConfig::default(),
            metrics.clone(),
            wake.clone(),
        );
        let navin = serve_in_process(app(AppState::new(AppStateConfig {
            secrets: secrets(),
            queue: queue.clone(),
            metrics,
            wake,
            max_body_bytes: CAP,
            app_key_loaded: true,
        })))
        .await;

        // Warm up both (connections, page cache, SQLite file growth).
        load(baseline, "warm-b", 200, concurrency).await;
        load(navin, "warm-n", 200, concurrency).await;

        let base = load(baseline, "b", requests, concurrency).await;
        let durable = load(navin, "n", requests, concurrency).await;
        let base_serial = load(baseline, "bs", requests / 4, 1).await;
        let durable_serial = load(navin, "ns", requests / 4, 1).await;
        print("baseline verify+202 (no durability)", &base);
        print("navin verify+SQLite commit+202", &durable);
        print("baseline, 1 connection", &base_serial);
        print("navin, 1 connection", &durable_serial);
        println!(
            "navin p99 / baseline p99 = {:.2}x (target <= 2x)",
            durable.p99.as_secs_f64() / base.p99.as_secs_f64()
        );
        workers.shutdown(Duration::from_secs(5)).await;
        queue.close().await;
    });

    let (mut child, addr) = spawn_navin(work.path(), &work.path().join("data"));
    let (idle_rss, _) = rss_kib(child.id());
    let figures = runtime.block_on(async {
        load(addr, "warm", 200, concurrency).await;
        load(addr, "bin", requests, concurrency).await
    });
    let (rss, hwm) = rss_kib(child.id());
    print("`navin serve` binary (separate process)", &figures);
    println!(
        "`navin serve` RSS: idle {:.1} MiB, after load {:.1} MiB, peak {:.1} MiB",
        idle_rss as f64 / 1024.0,
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    let _ = child.kill();
    let _ = child.wait();
}
