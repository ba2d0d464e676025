//! One log line per delivery attempt, with what an operator filters on: delivery id,
//! event, action, repository, installation, attempt, outcome and time taken.
//!
//! A wrapper around the server's handler, so the queue's workers stay as they are and
//! every handler (the engine, tests' hooks) is logged the same way. The values come from
//! the payload, so they are untrusted: the formatters in `logging` clip them.

use std::sync::Arc;
use std::time::Instant;

use crate::queue::{ClaimedDelivery, DeliveryHandler, HandlerError, HandlerFuture};

/// Logs how each attempt of the wrapped handler ended.
pub struct LoggedHandler {
    inner: Arc<dyn DeliveryHandler>,
    /// The workers' attempt limit: a transient error on the last attempt is a failure.
    max_attempts: u32,
}

impl LoggedHandler {
    pub fn new(inner: Arc<dyn DeliveryHandler>, max_attempts: u32) -> Self {
        Self {
            inner,
            max_attempts,
        }
    }
}

/// What became of one attempt, as the queue will record it.
fn outcome(result: &Result<(), HandlerError>, attempt: u32, max_attempts: u32) -> &'static str {
    match result {
        Ok(()) => "done",
        Err(HandlerError::Transient(_)) if attempt < max_attempts => "retry",
        // The queue retries these past the attempt budget: the disk, not the delivery.
        Err(HandlerError::Storage(_)) => "retry",
        Err(_) => "failed",
    }
}

impl DeliveryHandler for LoggedHandler {
    fn handle<'a>(&'a self, d: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let result = self.inner.handle(d).await;
            let outcome = outcome(&result, d.tries(), self.max_attempts);
            let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let error = result.as_ref().err().map(ToString::to_string);
            macro_rules! line {
                ($level:ident) => {
                    tracing::$level!(
                        delivery = %d.delivery_id,
                        event = %d.event,
                        action = d.action.as_deref().unwrap_or(""),
                        repository = d.repository.as_deref().unwrap_or(""),
                        installation = d.installation_id.unwrap_or(0),
                        attempt = d.attempt,
                        outcome,
                        elapsed_ms,
                        error = error.as_deref().unwrap_or(""),
                        "delivery handled"
                    )
                };
            }
            match outcome {
                "done" => line!(info),
                "retry" => line!(warn),
                _ => line!(error),
            }
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transient_error_on_the_last_attempt_is_a_failure_and_a_storage_error_never_is() {
        let transient = Err(HandlerError::Transient("502".into()));
        assert_eq!(outcome(&Ok(()), 1, 6), "done");
        assert_eq!(outcome(&transient, 5, 6), "retry");
        assert_eq!(outcome(&transient, 6, 6), "failed");
        assert_eq!(
            outcome(&Err(HandlerError::Permanent("bad".into())), 1, 6),
            "failed"
        );
        let full = Err(HandlerError::Storage("no space left on device".into()));
        assert_eq!(outcome(&full, 6, 6), "retry", "a full disk is waited out");
    }
}
