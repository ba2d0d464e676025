//! The handler contract between the queue and what processes deliveries, and the adapter that runs the engine on them.
//!
//! The queue knows only "done", "try again later" and "failed for good" ([`HandlerError`],
//! with a message kept for operators). The engine's typed errors are mapped to those here,
//! by their [`Retry`] classification, never by their text.

use std::future::Future;
use std::pin::Pin;

use navin_engine::{parse_event, Engine, Retry};

use super::ClaimedDelivery;

/// Why a handler did not finish a delivery. The message is stored with the delivery for
/// operators (`failed` rows); nothing branches on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandlerError {
    /// Worth another attempt later (GitHub 5xx, rate limit, lost compare-and-swap race).
    #[error("transient: {0}")]
    Transient(String),
    /// Will never succeed (malformed payload, a bug): marked failed without retrying.
    #[error("permanent: {0}")]
    Permanent(String),
    /// The data directory's disk failed (full, an I/O error): retried with backoff for
    /// as long as it lasts, never marked failed for it.
    #[error("storage: {0}")]
    Storage(String),
}

pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Result<(), HandlerError>> + Send + 'a>>;

/// Processes one claimed delivery. The delivery is marked done only after the returned
/// future resolves `Ok`, so effects must be idempotent: on a crash or a retry the same
/// delivery (same `delivery_id`) runs again.
pub trait DeliveryHandler: Send + Sync + 'static {
    fn handle<'a>(&'a self, delivery: &'a ClaimedDelivery) -> HandlerFuture<'a>;

    /// Work to run once the server listens, in the background: it never delays
    /// readiness, and its failure is logged, never fatal. Nothing by default.
    fn on_start(&self) -> HandlerFuture<'_> {
        Box::pin(async { Ok(()) })
    }
}

/// Acknowledges every delivery and does nothing: `navin serve` without an engine.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHandler;

impl DeliveryHandler for NoHandler {
    fn handle<'a>(&'a self, delivery: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        tracing::debug!(delivery = %delivery.delivery_id, event = %delivery.event, "no handler installed");
        Box::pin(async { Ok(()) })
    }
}

/// Parses each delivery with the engine's parser and runs the engine on it.
#[derive(Debug)]
pub struct EngineHandler {
    engine: std::sync::Arc<Engine>,
    /// Check every installed repository's ledger branch protection once at start.
    check_at_start: bool,
}

impl EngineHandler {
    pub fn new(engine: Engine) -> Self {
        Self::shared(std::sync::Arc::new(engine))
    }

    /// Around an engine others use too (the dashboard reads and edits through it).
    pub fn shared(engine: std::sync::Arc<Engine>) -> Self {
        Self {
            engine,
            check_at_start: false,
        }
    }

    /// With the start-up check of every installed repository's ledger branch protection
    /// (`navin serve` turns it on; tests that count requests leave it off).
    #[must_use]
    pub fn with_check_at_start(mut self) -> Self {
        self.check_at_start = true;
        self
    }

    async fn run(&self, delivery: &ClaimedDelivery) -> Result<(), HandlerError> {
        let meta = navin_engine::Delivery {
            id: delivery.delivery_id.clone(),
            attempt: delivery.attempt,
            installation: delivery.installation_id,
            repository: delivery.repository.clone(),
            received_at: chrono::DateTime::from_timestamp_millis(delivery.received_at_ms),
            final_attempt: delivery.final_attempt,
        };
        let event = match parse_event(meta, &delivery.event, &delivery.body) {
            Ok(Some(event)) => event,
            // Stored by an older version with a wider routing table: nothing to do now.
            Ok(None) => return Ok(()),
            Err(e) => return Err(HandlerError::Permanent(e.to_string())),
        };
        match self.engine.handle(&event).await {
            Ok(report) => {
                for setback in report.setbacks() {
                    tracing::warn!(
                        what = %setback.what,
                        permission = setback.permission.map(|p| p.to_string()).unwrap_or_default(),
                        error = %setback.message,
                        "finished with a setback"
                    );
                }
                Ok(())
            }
            Err(e) => Err(match e.retry() {
                Retry::Later => HandlerError::Transient(e.to_string()),
                Retry::Storage => HandlerError::Storage(e.to_string()),
                Retry::Never => HandlerError::Permanent(e.to_string()),
            }),
        }
    }
}

impl DeliveryHandler for EngineHandler {
    fn handle<'a>(&'a self, delivery: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin(self.run(delivery))
    }

    fn on_start(&self) -> HandlerFuture<'_> {
        Box::pin(async move {
            if self.check_at_start {
                self.engine
                    .check_ledger_branches_at_start(navin_engine::startup::MAX_STARTUP_REPOSITORIES)
                    .await;
            }
            Ok(())
        })
    }
}
