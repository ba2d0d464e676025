//! Webhook acknowledgement latency and throughput over loopback TCP, 25 KB signed
//! deliveries: Navin's ingress (verify + durable SQLite commit + 202, workers running)
//! next to a minimal axum verify-and-202 handler without durability, in the same run;
//! then the real `navin serve` binary under the same load, with its RSS; then the same
//! process on a bad day: with 300 slow clients holding connections open (p99 against the
//! figure without them), and under sixteen 25 MiB deliveries at once (its peak RSS).
//!
//! Run: `cargo bench -p navin-bot --bench server_ack`
//! Knobs: NAVIN_BENCH_REQUESTS (default 4000), NAVIN_BENCH_CONCURRENCY (default 16),
//! NAVIN_BENCH_SLOW_CLIENTS (default 300).
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

/// Opens `n` connections that each stop partway: even ones inside their headers, odd
/// ones after the headers and a few bytes of a declared 25 KB body. They come from
/// 127.0.0.2, another address than the load's, as an attacker's would: the server
/// shares its ingress budget per sender.
async fn hold_connections(addr: std::net::SocketAddr, n: usize) -> Vec<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt as _;
    let mut held = Vec::with_capacity(n);
    for i in 0..n {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        let mut stream = socket.connect(addr).await.unwrap();
        let head = if i % 2 == 0 {
            "POST /webhook HTTP/1.1\r\nHost: navin\r\nX-GitHub-Ev".to_owned()
        } else {
            format!(
                "POST /webhook HTTP/1.1\r\nHost: navin\r\nX-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: slow-{i}\r\nContent-Type: application/json\r\nContent-Length: 25000\r\n\r\n{{\"action\":"
            )
        };
        stream.write_all(head.as_bytes()).await.unwrap();
        held.push(stream);
    }
    held
}

/// Posts `n` signed 25 MiB deliveries at once; returns how they were answered and the
/// server's peak RSS (KiB) afterwards.
async fn huge_bodies(
    addr: std::net::SocketAddr,
    n: usize,
    child: &std::process::Child,
) -> (String, u64) {
    use http_body_util::{BodyExt as _, Full};
    let client: hyper_util::client::legacy::Client<_, Full<Bytes>> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();
    let pad = "x".repeat(support::CAP - 1024);
    let body = Bytes::from(
        serde_json::to_vec(&serde_json::json!({
            "action": "created",
            "repository": {"full_name": "bench/huge"},
            "installation": {"id": 1},
            "comment": {"body": pad},
        }))
        .unwrap(),
    );
    let signature = navin_bot::server::sign(support::SECRET, &body);
    let mut tasks = Vec::new();
    for i in 0..n {
        let (client, body, signature) = (client.clone(), body.clone(), signature.clone());
        tasks.push(tokio::spawn(async move {
            let req = http::Request::builder()
                .method("POST")
                .uri(format!("http://{addr}/webhook"))
                .header("content-type", "application/json")
                .header("x-github-event", "issue_comment")
                .header("x-github-delivery", format!("huge-{i}"))
                .header("x-hub-signature-256", signature)
                .body(Full::new(body))
                .unwrap();
            match client.request(req).await {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let _ = response.into_body().collect().await;
                    status
                }
                Err(_) => 0,
            }
        }));
    }
    let mut counts = std::collections::BTreeMap::new();
    for task in tasks {
        *counts.entry(task.await.unwrap()).or_insert(0) += 1;
    }
    let (_, peak) = rss_kib(child.id());
    let statuses = counts
        .iter()
        .map(|(status, count)| format!("{count}× {status}"))
        .collect::<Vec<_>>()
        .join(", ");
    (statuses, peak)
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

    let (mut child, addr) = spawn_navin(work.path(), &work.path().join("data"), None);
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

    // The bad day, same process: 300 clients hold connections open (half stop in their
    // headers, half in their bodies) while GitHub's deliveries keep coming.
    let slow_clients = env_usize("NAVIN_BENCH_SLOW_CLIENTS", 300);
    let with_slow = runtime.block_on(async {
        let held = hold_connections(addr, slow_clients).await;
        let figures = load(addr, "slow", requests, concurrency).await;
        drop(held);
        figures
    });
    print(
        &format!("`navin serve`, {slow_clients} slow clients holding on"),
        &with_slow,
    );
    println!(
        "p99 with slow clients / without = {:.2}x (target <= 1.5x)",
        with_slow.p99.as_secs_f64() / figures.p99.as_secs_f64()
    );

    // Sixteen 25 MiB bodies at once: the byte budget, not the senders, bounds memory.
    let (statuses, peak) = runtime.block_on(async { huge_bodies(addr, 16, &child).await });
    println!(
        "16 concurrent 25 MiB deliveries: {statuses}; `navin serve` peak RSS {:.1} MiB",
        peak as f64 / 1024.0
    );
    let _ = child.kill();
    let _ = child.wait();
}
