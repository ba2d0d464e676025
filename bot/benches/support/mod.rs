//! Shared by the webhook benches: a loopback load generator, the bare verify-and-202
//! handler they are compared with, and the real `navin serve` binary as a child process.
#![allow(dead_code, reason = "each bench uses its own subset")]

use std::net::SocketAddr;
use std::path::Path;
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
use navin_bot::server::{sign, WebhookSecrets};
use secrecy::SecretString;

pub const SECRET: &str = "bench-secret";
pub const CAP: usize = 25 * 1024 * 1024;

pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub p50: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub per_sec: f64,
    pub non_202: usize,
}

/// Sends `requests` signed `issue_comment` deliveries over `concurrency` keep-alive
/// connections; `body(i)` is the i-th payload (signed once per distinct index mod 64).
pub async fn load(
    addr: SocketAddr,
    prefix: &str,
    requests: usize,
    concurrency: usize,
    body: &dyn Fn(usize) -> Bytes,
) -> Figures {
    send(&client(), addr, prefix, requests, concurrency, body)
        .await
        .figures()
}

/// Latencies gathered from one or more runs of [`send`].
#[derive(Default)]
pub struct Samples {
    latencies: Vec<Duration>,
    elapsed: Duration,
    non_202: usize,
}

impl Samples {
    fn add(&mut self, other: Self) {
        self.latencies.extend(other.latencies);
        self.elapsed += other.elapsed;
        self.non_202 += other.non_202;
    }

    pub fn figures(mut self) -> Figures {
        let all = &mut self.latencies;
        all.sort_unstable();
        let pick = |q: f64| all[((all.len() as f64 * q) as usize).min(all.len() - 1)];
        Figures {
            p50: pick(0.50),
            p99: pick(0.99),
            max: *all.last().unwrap(),
            per_sec: all.len() as f64 / self.elapsed.as_secs_f64(),
            non_202: self.non_202,
        }
    }
}

/// Measures several servers over the same stretch of time: `rounds` rounds, each sending
/// `per_round` requests on one connection to every target in turn. A disk's fsync time
/// drifts by 3-5x within a minute on these machines; measured one after the other, a
/// server and its fsync floor can land on different sides of such a swing, and their
/// ratio says more about the swing than about the server. Interleaved, both see it.
pub async fn load_interleaved(
    targets: &[(SocketAddr, &str)],
    rounds: usize,
    per_round: usize,
    body: &dyn Fn(usize) -> Bytes,
) -> Vec<Figures> {
    let mut samples: Vec<Samples> = targets.iter().map(|_| Samples::default()).collect();
    // One client (one kept-alive connection) per target for the whole run, so no
    // round's first request pays for a connect.
    let clients: Vec<_> = targets.iter().map(|_| client()).collect();
    for round in 0..rounds {
        for (((addr, prefix), into), client) in targets.iter().zip(&mut samples).zip(&clients) {
            let prefix = format!("{prefix}-r{round}");
            into.add(send(client, *addr, &prefix, per_round, 1, body).await);
        }
    }
    samples.into_iter().map(Samples::figures).collect()
}

fn client() -> Client<HttpConnector, Full<Bytes>> {
    Client::builder(hyper_util::rt::TokioExecutor::new()).build_http()
}

async fn send(
    client: &Client<HttpConnector, Full<Bytes>>,
    addr: SocketAddr,
    prefix: &str,
    requests: usize,
    concurrency: usize,
    body: &dyn Fn(usize) -> Bytes,
) -> Samples {
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
    let mut samples = Samples::default();
    for task in tasks {
        let (l, n) = task.await.unwrap();
        samples.latencies.extend(l);
        samples.non_202 += n;
    }
    samples.elapsed = started.elapsed();
    samples
}

pub fn print(name: &str, f: &Figures) {
    println!(
        "{name:<44} p50 {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   {:>7.0} req/s   non-202: {}",
        f.p50.as_secs_f64() * 1e3,
        f.p99.as_secs_f64() * 1e3,
        f.max.as_secs_f64() * 1e3,
        f.per_sec,
        f.non_202
    );
}

pub fn secrets() -> WebhookSecrets {
    WebhookSecrets::new(vec![SecretString::from(SECRET)])
}

/// Reads and verifies a delivery as both baselines do: the body, or the status to answer.
async fn verified(req: Request, secrets: &WebhookSecrets) -> Result<Bytes, StatusCode> {
    let (parts, body) = req.into_parts();
    let bytes = Limited::new(body, CAP)
        .collect()
        .await
        .map_err(|_| StatusCode::PAYLOAD_TOO_LARGE)?
        .to_bytes();
    let sig = parts
        .headers
        .get("x-hub-signature-256")
        .map(|v| v.as_bytes());
    secrets
        .verify(sig, &bytes)
        .map_err(|_| StatusCode::UNAUTHORIZED)?;
    Ok(bytes)
}

/// The comparison point: verify and answer, no storage.
pub fn baseline_router(secrets: WebhookSecrets) -> Router {
    Router::new().route(
        "/webhook",
        post(move |req: Request| {
            let secrets = secrets.clone();
            async move {
                match verified(req, &secrets).await {
                    Ok(_) => StatusCode::ACCEPTED,
                    Err(status) => status,
                }
            }
        }),
    )
}

/// The floor of any durable acknowledgement: verify, append the body to a file and
/// `fdatasync` it, then answer. Nothing can promise "stored" for less on this disk.
pub fn durable_baseline_router(secrets: WebhookSecrets, file: std::path::PathBuf) -> Router {
    let file = Arc::new(std::sync::Mutex::new(
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file)
            .unwrap(),
    ));
    Router::new().route(
        "/webhook",
        post(move |req: Request| {
            let (secrets, file) = (secrets.clone(), file.clone());
            async move {
                let bytes = match verified(req, &secrets).await {
                    Ok(bytes) => bytes,
                    Err(status) => return status,
                };
                let stored = tokio::task::spawn_blocking(move || {
                    use std::io::Write;
                    let mut f = file.lock().unwrap();
                    f.write_all(&bytes).and_then(|()| f.sync_data())
                })
                .await;
                match stored {
                    Ok(Ok(())) => StatusCode::ACCEPTED,
                    _ => StatusCode::SERVICE_UNAVAILABLE,
                }
            }
        }),
    )
}

pub async fn serve_in_process(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    addr
}

/// Resident and peak resident set of a process, in KiB.
pub fn rss_kib(pid: u32) -> (u64, u64) {
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

/// User plus system CPU time a process has used so far.
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64)
}

fn clock_ticks() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

/// Starts `navin serve` on a free loopback port with a fresh App key, its data under
/// `data_dir`, the queue in PostgreSQL when `database` is given, and GitHub's API at a
/// closed loopback port (unreachable).
pub fn spawn_navin(work: &Path, data_dir: &Path, database: Option<&str>) -> (Child, SocketAddr) {
    let key = work.join("key.pem");
    if !key.exists() {
        let ok = Command::new("openssl")
            .args(["genrsa", "-out"])
            .arg(&key)
            .arg("2048")
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "openssl genrsa failed");
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_navin"));
    if let Some(url) = database {
        command.env("NAVIN_DATABASE_URL", url);
    }
    let child = command
        .arg("serve")
        .env("NAVIN_LISTEN", addr.to_string())
        .env("NAVIN_APP_ID", "1")
        .env("NAVIN_PRIVATE_KEY_PATH", &key)
        .env("NAVIN_WEBHOOK_SECRET", SECRET)
        .env("NAVIN_API_URL", "http://127.0.0.1:9")
        .env("NAVIN_DATA_DIR", data_dir)
        .env("NAVIN_RECONCILE_INTERVAL_SECS", "0")
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(Instant::now() < deadline, "navin serve did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, addr)
}
