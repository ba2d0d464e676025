//! Shared helpers for the server tests: RSA keys made at test time, signed requests,
//! a server state around a temporary queue, and a GitHub client aimed at wiremock.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

pub mod serve;

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use navin_bot::config::ServeArgs;
use navin_bot::queue::DeliveryQueue;
use navin_bot::server::metrics::GitHubMetrics;
use navin_bot::server::{sign, AppState, AppStateConfig, Metrics, WebhookSecrets};
use navin_github::{AppKey, Credentials, GitHubApp, GitHubConfig, RetryPolicy};
use secrecy::SecretString;
use tokio::sync::Notify;

pub const SECRET: &str = "It's a Secret to Everybody";
pub const OLD_SECRET: &str = "the previous secret";

/// The test App key pair (made once per test binary by `navin_e2e`; never committed).
pub fn rsa_keys() -> &'static navin_e2e::AppKey {
    navin_e2e::AppKey::shared()
}

pub fn app_key() -> AppKey {
    AppKey::from_pem(rsa_keys().private_pem.as_bytes()).unwrap()
}

/// A webhook request signed with `secret`, carrying GitHub's headers.
pub fn signed(secret: &str, event: &str, delivery: &str, body: &[u8]) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri("/webhook")
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", sign(secret, body))
        .header("content-length", body.len().to_string())
        .body(Body::from(body.to_vec()))
        .unwrap()
}

/// A verified `issue_comment` delivery as ingress hands it to the queue.
#[allow(dead_code, reason = "each test module uses its own subset")]
pub fn new_delivery(id: &str, repo: &str, received_at_ms: i64) -> navin_bot::queue::NewDelivery {
    navin_bot::queue::NewDelivery {
        delivery_id: id.to_owned(),
        event: "issue_comment".to_owned(),
        action: Some("created".to_owned()),
        repository: Some(repo.to_owned()),
        installation_id: Some(1),
        headers: vec![("x-github-delivery".to_owned(), id.to_owned())],
        body: bytes::Bytes::from(payload("created", repo, 1)),
        received_at_ms,
    }
}

/// A minimal payload with the fields the queue reads.
pub fn payload(action: &str, repo: &str, installation: u64) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "action": action,
        "repository": {"full_name": repo, "id": 1},
        "installation": {"id": installation},
        "comment": {"body": "/status", "id": 9},
    }))
    .unwrap()
}

pub struct TestState {
    pub state: AppState,
    pub queue: DeliveryQueue,
    pub metrics: Arc<Metrics>,
    pub wake: Arc<Notify>,
}

pub fn test_state(dir: &Path, max_body_bytes: usize) -> TestState {
    let (queue, _) = DeliveryQueue::open(&dir.join("deliveries.sqlite3")).unwrap();
    let metrics = Arc::new(Metrics::new());
    let wake = Arc::new(Notify::new());
    let state = AppState::new(AppStateConfig {
        secrets: WebhookSecrets::new(vec![
            SecretString::from(SECRET),
            SecretString::from(OLD_SECRET),
        ]),
        queue: queue.clone(),
        metrics: Arc::clone(&metrics),
        wake: Arc::clone(&wake),
        max_body_bytes,
        app_key_loaded: true,
    });
    TestState {
        state,
        queue,
        metrics,
        wake,
    }
}

/// A GitHub client aimed at `api_url` with test-friendly settings.
pub fn github(api_url: &str, issuer: &str) -> (GitHubApp, Arc<GitHubMetrics>) {
    github_with(api_url, issuer, Duration::from_secs(1), None)
}

pub fn github_with(
    api_url: &str,
    issuer: &str,
    write_spacing: Duration,
    stateless: Option<&str>,
) -> (GitHubApp, Arc<GitHubMetrics>) {
    let metrics = Arc::new(GitHubMetrics::default());
    let app = GitHubApp::new(
        GitHubConfig {
            api_url: api_url.to_owned(),
            credentials: Credentials::App {
                issuer: issuer.to_owned(),
                key: app_key(),
            },
            write_spacing,
            policy: RetryPolicy::default(),
            git_url_template: "https://github.com/{owner}/{repo}.git".to_owned(),
            stateless_s2s_token: stateless.map(str::to_owned),
            // No client timeout: tests run on tokio's paused clock, which would fire it.
            read_timeout: None,
        },
        metrics.clone(),
    )
    .unwrap();
    (app, metrics)
}

/// `navin serve` flags for an in-process server on an ephemeral loopback port.
pub fn serve_args(data_dir: &Path, api_url: &str) -> ServeArgs {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }
    let key_path = data_dir.join("app-key.pem");
    std::fs::create_dir_all(data_dir).unwrap();
    std::fs::write(&key_path, &rsa_keys().private_pem).unwrap();
    Cli::try_parse_from([
        "navin",
        "--listen",
        "127.0.0.1:0",
        "--app-id",
        "1234",
        "--private-key-path",
        key_path.to_str().unwrap(),
        "--webhook-secret",
        SECRET,
        "--api-url",
        api_url,
        "--data-dir",
        data_dir.to_str().unwrap(),
        "--reconcile-interval-secs",
        "0",
        "--shutdown-grace-secs",
        "1",
    ])
    .unwrap()
    .serve
}

/// Polls `check` every 10 ms until it holds or `limit` passes.
pub async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Collects what tracing writes in this test binary, from every thread (the one global
/// subscriber of the binary; the engine tests install it too). A global
/// subscriber is used because per-thread defaults miss events whose callsite interest
/// was cached by another thread.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<std::sync::Mutex<Vec<u8>>>);

impl LogCapture {
    pub fn global() -> Self {
        static GLOBAL: OnceLock<LogCapture> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                use tracing_subscriber::layer::{Layer as _, SubscriberExt};
                let capture = Self::default();
                // Navin's own crates at every level (the secret and log-size checks read
                // these); the HTTP stack's chatter only from info up, so a binary full of
                // end-to-end tests does not buffer megabytes of it.
                let filter = tracing_subscriber::filter::Targets::new()
                    .with_default(tracing::Level::INFO)
                    .with_target("navin_bot", tracing::Level::TRACE)
                    .with_target("navin_engine", tracing::Level::TRACE)
                    .with_target("navin_github", tracing::Level::TRACE)
                    .with_target("navin_ledger", tracing::Level::TRACE);
                let layer = tracing_subscriber::fmt::layer()
                    .with_ansi(false)
                    .with_writer(capture.clone())
                    .with_filter(filter);
                let subscriber = tracing_subscriber::registry().with(layer);
                tracing::subscriber::set_global_default(subscriber).unwrap();
                capture
            })
            .clone()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl std::io::Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogCapture {
    type Writer = Self;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

pub type HttpClient = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    http_body_util::Full<bytes::Bytes>,
>;

/// A keep-alive HTTP/1 client for talking to a server on loopback.
pub fn http_client() -> HttpClient {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http()
}

/// `GET http://addr/path` (`/readyz`, `/metrics`): status and body.
#[allow(dead_code, reason = "each test module uses its own subset")]
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let request = Request::get(format!("http://{addr}{path}"))
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    let response = http_client().request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// Sends a signed delivery over TCP; returns the status.
pub async fn post_webhook(
    client: &HttpClient,
    addr: std::net::SocketAddr,
    event: &str,
    delivery: &str,
    body: &[u8],
) -> Result<u16, String> {
    let req = Request::builder()
        .method("POST")
        .uri(format!("http://{addr}/webhook"))
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .header("x-hub-signature-256", sign(SECRET, body))
        .body(http_body_util::Full::new(bytes::Bytes::copy_from_slice(
            body,
        )))
        .map_err(|e| e.to_string())?;
    let response = client.request(req).await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    // Drain the body so the connection can be reused.
    let _ = http_body_util::BodyExt::collect(response.into_body()).await;
    Ok(status)
}
