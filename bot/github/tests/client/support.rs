//! Helpers for the GitHub client tests: RSA keys made at test time, a client aimed at a
//! wiremock server, a log capture, and a request observer that remembers statuses.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use navin_github::{
    AppAuth, AppKey, Credentials, GitHubApp, GitHubConfig, GitHubError, RequestObserver,
    RetryPolicy,
};

/// The test App key pair (made once per test binary by `navin_e2e`; never committed).
pub fn rsa_keys() -> &'static navin_e2e::AppKey {
    navin_e2e::AppKey::shared()
}

pub fn app_key() -> AppKey {
    AppKey::from_pem(rsa_keys().private_pem.as_bytes()).unwrap()
}

/// Every status the client reported, in order (`None` for transport errors), and how
/// each use of the App's credentials ended (`true` for success).
#[derive(Debug, Default)]
pub struct StatusLog(Mutex<Vec<Option<u16>>>, Mutex<Vec<(AppAuth, bool)>>);

impl StatusLog {
    pub fn seen(&self) -> Vec<Option<u16>> {
        self.0.lock().unwrap().clone()
    }

    pub fn app_auths(&self) -> Vec<(AppAuth, bool)> {
        self.1.lock().unwrap().clone()
    }
}

impl RequestObserver for StatusLog {
    fn record(&self, _lane: u64, status: Option<u16>, _remaining: Option<u64>) {
        self.0.lock().unwrap().push(status);
    }

    fn app_auth(&self, what: AppAuth, outcome: Result<(), &GitHubError>) {
        self.1.lock().unwrap().push((what, outcome.is_ok()));
    }
}

/// A GitHub client aimed at `api_url` with test-friendly settings.
pub fn github(api_url: &str, issuer: &str) -> (GitHubApp, Arc<StatusLog>) {
    github_with(api_url, issuer, Duration::from_secs(1), None)
}

pub fn github_with(
    api_url: &str,
    issuer: &str,
    write_spacing: Duration,
    stateless: Option<&str>,
) -> (GitHubApp, Arc<StatusLog>) {
    let statuses = Arc::new(StatusLog::default());
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
        statuses.clone(),
    )
    .unwrap();
    (app, statuses)
}

/// Collects everything tracing writes in this test binary, from every thread. A global
/// subscriber is used because per-thread defaults miss events whose callsite interest
/// was cached by another thread.
#[derive(Clone, Default)]
pub struct LogCapture(Arc<std::sync::Mutex<Vec<u8>>>);

impl LogCapture {
    pub fn global() -> Self {
        static GLOBAL: OnceLock<LogCapture> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let capture = Self::default();
                let subscriber = tracing_subscriber::fmt()
                    .with_max_level(tracing::Level::TRACE)
                    .with_ansi(false)
                    .with_writer(capture.clone())
                    .finish();
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
