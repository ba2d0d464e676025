//! Prometheus metrics of the server, rendered in the text exposition format on `/metrics`.
//!
//! `prometheus-client` is used rather than hand-written text: it gets escaping, `# TYPE`
//! lines, histogram buckets and the OpenMetrics `# EOF` right, at the cost of one small
//! dependency with no transitive weight.

use std::sync::Arc;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use navin_github::RequestObserver;

type Labels = Vec<(&'static str, String)>;

/// GitHub-side metrics: fed by the GitHub client, registered in the server's registry.
#[derive(Debug, Default)]
pub struct GitHubMetrics {
    /// Responses by status code (`0` for transport errors).
    pub requests: Family<Labels, Counter>,
    /// Last `x-ratelimit-remaining` by installation (`0` for app-JWT requests).
    pub rate_limit_remaining: Family<Labels, Gauge>,
    /// How the App's credentials last fared, for `/readyz`.
    pub health: super::readiness::GitHubHealth,
}

impl RequestObserver for GitHubMetrics {
    fn record(&self, lane: u64, status: Option<u16>, remaining: Option<u64>) {
        let code = status.map_or_else(|| "0".to_owned(), |s| s.to_string());
        self.requests.get_or_create(&vec![("status", code)]).inc();
        if let Some(remaining) = remaining {
            self.rate_limit_remaining
                .get_or_create(&vec![("installation", lane.to_string())])
                .set(i64::try_from(remaining).unwrap_or(i64::MAX));
        }
    }

    fn app_auth(
        &self,
        what: navin_github::AppAuth,
        outcome: Result<(), &navin_github::GitHubError>,
    ) {
        self.health.record(what, outcome);
    }
}

/// All counters the server keeps. Cheap to clone handles out of; shared via `Arc`.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Deliveries that passed the signature check and were stored or recognised.
    pub received: Family<Labels, Counter>,
    /// Deliveries whose `X-GitHub-Delivery` was already queued or handled.
    pub duplicates: Counter,
    /// Requests refused at ingress, by reason (`signature`, `headers`, `too_large`, `body`).
    pub rejected: Family<Labels, Counter>,
    /// Signed deliveries of events or actions Navin does not handle.
    pub ignored: Counter,
    /// Deliveries queued or running, refreshed on every scrape.
    pub queue_depth: Gauge,
    /// Deliveries marked failed after their last attempt, refreshed on every scrape.
    pub queue_failed: Gauge,
    /// Time a handler took for one delivery attempt.
    pub handler_seconds: Histogram,
    /// Time from receipt to done, across retries.
    pub delivery_latency_seconds: Histogram,
    /// Attempts by outcome (`done`, `retry`, `failed`).
    pub attempts: Family<Labels, Counter>,
    /// Redeliveries the reconciler asked GitHub for.
    pub redeliveries_requested: Counter,
    /// Delivery attempts the data directory's disk failed (full, an I/O error).
    pub storage_errors: Counter,
    /// The disk's last failure, until an attempt succeeds again: `/readyz` reports it.
    storage_trouble: std::sync::Mutex<Option<(std::time::Instant, String)>>,
    pub github: Arc<GitHubMetrics>,
    /// 1, labelled with the version and the commit it was built from.
    pub build_info: Family<Labels, Gauge>,
}

/// The commit `build.rs` found (`unknown` outside a git checkout).
pub const BUILD_COMMIT: &str = env!("NAVIN_GIT_COMMIT");

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("navin");
        let received = Family::<Labels, Counter>::default();
        let duplicates = Counter::default();
        let rejected = Family::<Labels, Counter>::default();
        let ignored = Counter::default();
        let queue_depth = Gauge::default();
        let queue_failed = Gauge::default();
        let handler_seconds = Histogram::new(exponential_buckets(0.005, 2.0, 16));
        let delivery_latency_seconds = Histogram::new(exponential_buckets(0.01, 2.0, 18));
        let attempts = Family::<Labels, Counter>::default();
        let redeliveries_requested = Counter::default();
        let storage_errors = Counter::default();
        let github = Arc::new(GitHubMetrics::default());
        let build_info = Family::<Labels, Gauge>::default();
        build_info
            .get_or_create(&vec![
                ("version", env!("CARGO_PKG_VERSION").to_owned()),
                ("commit", BUILD_COMMIT.to_owned()),
            ])
            .set(1);

        registry.register(
            "webhook_deliveries_received",
            "Signed webhook deliveries received, by event",
            received.clone(),
        );
        registry.register(
            "webhook_deliveries_duplicate",
            "Deliveries whose X-GitHub-Delivery was already known",
            duplicates.clone(),
        );
        registry.register(
            "webhook_deliveries_rejected",
            "Webhook requests refused, by reason",
            rejected.clone(),
        );
        registry.register(
            "webhook_deliveries_ignored",
            "Signed deliveries of events or actions Navin does not handle",
            ignored.clone(),
        );
        registry.register(
            "queue_depth",
            "Deliveries queued or running",
            queue_depth.clone(),
        );
        registry.register(
            "queue_failed",
            "Deliveries marked failed",
            queue_failed.clone(),
        );
        registry.register(
            "delivery_handler_seconds",
            "Duration of one handler attempt",
            handler_seconds.clone(),
        );
        registry.register(
            "delivery_latency_seconds",
            "Time from receipt to done",
            delivery_latency_seconds.clone(),
        );
        registry.register(
            "delivery_attempts",
            "Handler attempts by outcome",
            attempts.clone(),
        );
        registry.register(
            "webhook_redeliveries_requested",
            "Redeliveries requested from GitHub by the reconciler",
            redeliveries_requested.clone(),
        );
        registry.register(
            "storage_errors",
            "Delivery attempts the data directory's disk failed (retried until it is back)",
            storage_errors.clone(),
        );
        registry.register(
            "github_requests",
            "GitHub API responses by status (0 = transport error)",
            github.requests.clone(),
        );
        registry.register(
            "github_rate_limit_remaining",
            "Last x-ratelimit-remaining seen, by installation (0 = app JWT)",
            github.rate_limit_remaining.clone(),
        );
        registry.register(
            "build_info",
            "The running navin: version and git commit (always 1)",
            build_info.clone(),
        );
        Self {
            registry,
            received,
            duplicates,
            rejected,
            ignored,
            queue_depth,
            queue_failed,
            handler_seconds,
            delivery_latency_seconds,
            attempts,
            storage_errors,
            storage_trouble: std::sync::Mutex::new(None),
            redeliveries_requested,
            github,
            build_info,
        }
    }

    pub fn reject(&self, reason: &'static str) {
        self.rejected
            .get_or_create(&vec![("reason", reason.to_owned())])
            .inc();
    }

    pub fn receive(&self, event: &str) {
        self.received
            .get_or_create(&vec![("event", event.to_owned())])
            .inc();
    }

    /// An attempt the disk failed: counted, and reported by `/readyz` until one succeeds.
    pub fn storage_failed(&self, why: &str) {
        self.storage_errors.inc();
        *self
            .storage_trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some((std::time::Instant::now(), why.to_owned()));
    }

    /// An attempt succeeded: whatever failed the disk before is past.
    pub fn storage_ok(&self) {
        *self
            .storage_trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Why the server is not ready on account of its disk, when it is not.
    pub fn storage_unready(&self) -> Option<String> {
        self.storage_trouble
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|(at, why)| {
                format!(
                    "storage: a delivery's write failed {}s ago ({why}); deliveries wait and are retried until the data directory can be written again",
                    at.elapsed().as_secs()
                )
            })
    }

    pub fn attempt(&self, outcome: &'static str) {
        self.attempts
            .get_or_create(&vec![("outcome", outcome.to_owned())])
            .inc();
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}
