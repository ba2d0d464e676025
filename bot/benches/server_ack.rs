//! Webhook acknowledgement latency and throughput over loopback TCP, 25 KB signed
//! deliveries: Navin's ingress (verify + durable SQLite commit + 202, workers running)
//! next to a minimal axum verify-and-202 handler without durability, in the same run;
//! then the real `navin serve` binary under the same load, with its RSS.
//!
//! Run: `cargo bench -p navin-bot --bench server_ack`
//! Knobs: NAVIN_BENCH_REQUESTS (default 4000), NAVIN_BENCH_CONCURRENCY (default 16).
#![allow(clippy::unwrap_used, reason = "a bench aborts on setup failure")]
#![allow(clippy::print_stdout, reason = "a bench prints its figures")]

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use navin_bot::queue::{DeliveryHandler, DeliveryQueue, NoHandler, WorkerConfig, Workers};
use navin_bot::server::{app, sign, AppState, AppStateConfig, Metrics, WebhookSecrets};
use secrecy::SecretString;
use tokio::sync::Notify;

const SECRET: &str = "bench-secret";
const BODY_BYTES: usize = 25 * 1024;
const CAP: usize = 25 * 1024 * 1024;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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

struct Figures {
    p50: Duration,
    p99: Duration,
    max: Duration,
    per_sec: f64,
    non_202: usize,
}

async fn load(addr: SocketAddr, prefix: &str, requests: usize, concurrency: usize) -> Figures {
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(hyper_util::rt::TokioExecutor::new()).build_http();
    let bodies: Arc<Vec<(Bytes, String)>> = Arc::new(
        (0..64)
            .map(|i| {
                let b = body(i);
                let s = sign(SECRET, &b);
                (b, s)
            })
            .collect(),
    );
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, bodies, next) = (client.clone(), bodies.clone(), next.clone());
        let prefix = prefix.to_owned();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut non_202 = 0;
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= requests {
                    break;
                }
                let (b, s) = &bodies[i % bodies.len()];
                let req = http::Request::builder()
                    .method("POST")
                    .uri(format!("http://{addr}/webhook"))
                    .header("content-type", "application/json")
                    .header("x-github-event", "issue_comment")
                    .header("x-github-delivery", format!("{prefix}-{i}"))
                    .header("x-hub-signature-256", s.as_str())
                    .body(Full::new(b.clone()))
                    .unwrap();
                let t = Instant::now();
                let response = client.request(req).await.unwrap();
                let status = response.status();
                let _ = response.into_body().collect().await;
                latencies.push(t.elapsed());
                if status != StatusCode::ACCEPTED {
                    non_202 += 1;
                }
            }
            (latencies, non_202)
        }));
    }
    let mut all = Vec::with_capacity(requests);
    let mut non_202 = 0;
    for task in tasks {
        let (l, n) = task.await.unwrap();
        all.extend(l);
        non_202 += n;
    }
    let elapsed = started.elapsed();
    all.sort_unstable();
    let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
    Figures {
        p50: pick(0.50),
        p99: pick(0.99),
        max: *all.last().unwrap(),
        per_sec: all.len() as f64 / elapsed.as_secs_f64(),
        non_202,
    }
}

fn print(name: &str, f: &Figures) {
    println!(
        "{name:<44} p50 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   {:>7.0} req/s   non-202: {}",
        f.p50.as_secs_f64() * 1e3,
        f.p99.as_secs_f64() * 1e3,
        f.max.as_secs_f64() * 1e3,
        f.per_sec,
        f.non_202
    );
}

/// The comparison point: verify and answer, no storage.
fn baseline_router(secrets: WebhookSecrets) -> Router {
    Router::new().route(
        "/webhook",
        post(move |req: Request| {
            let secrets = secrets.clone();
            async move {
                let (parts, body) = req.into_parts();
                let Ok(collected) = Limited::new(body, CAP).collect().await else {
                    return StatusCode::PAYLOAD_TOO_LARGE;
                };
                let bytes = collected.to_bytes();
                let sig = parts
                    .headers
                    .get("x-hub-signature-256")
                    .map(|v| v.as_bytes());
                match secrets.verify(sig, &bytes) {
                    Ok(()) => StatusCode::ACCEPTED,
                    Err(_) => StatusCode::UNAUTHORIZED,
                }
            }
        }),
    )
}

fn secrets() -> WebhookSecrets {
    WebhookSecrets::new(vec![SecretString::from(SECRET)])
}

async fn serve_in_process(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn spawn_navin(dir: &std::path::Path) -> (Child, SocketAddr) {
    let key = dir.join("key.pem");
    let ok = Command::new("openssl")
        .args(["genrsa", "-out"])
        .arg(&key)
        .arg("2048")
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success(), "openssl genrsa failed");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .arg("serve")
        .env("NAVIN_LISTEN", addr.to_string())
        .env("NAVIN_APP_ID", "1")
        .env("NAVIN_PRIVATE_KEY_PATH", &key)
        .env("NAVIN_WEBHOOK_SECRET", SECRET)
        .env("NAVIN_API_URL", "http://127.0.0.1:9")
        .env("NAVIN_DATA_DIR", dir.join("data"))
        .env("NAVIN_RECONCILE_INTERVAL_SECS", "0")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "navin serve did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, addr)
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

    let (mut child, addr) = spawn_navin(work.path());
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
