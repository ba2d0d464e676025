//! What unauthenticated webhook traffic may hold at once: request bodies being read and
//! the bytes buffered for them, with a deadline on each read, so slow or huge senders
//! cannot starve GitHub's deliveries or the server's memory.
//!
//! The signature is checked only once the whole body is in, so until then a request is
//! anyone's. Each one takes a slot before a byte of its body is read, and its bytes from
//! a shared budget as they arrive; when either is spent the answer is `503` with `Retry-After`
//! (the reconciler redelivers what GitHub recorded as failed), and a body that does not
//! arrive within [`BODY_READ_TIMEOUT`] is answered `408`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Longest wait for a request's headers, then for its whole body. GitHub sends a 25 MB
/// payload in well under a second; ten seconds leaves room for a slow network.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Webhook bodies read at once. A waiting body costs a task and a socket; its bytes are
/// bounded by [`MAX_BUFFERED_BYTES`].
pub const MAX_BODIES_IN_FLIGHT: usize = 1024;

/// Bytes all bodies being read may hold at once, counted as they arrive.
pub const MAX_BUFFERED_BYTES: usize = 64 * 1024 * 1024;

/// Budgets are counted in KiB so a 25 MiB body fits a semaphore's permit count.
const UNIT: usize = 1024;

/// The two budgets (see the module doc).
#[derive(Debug, Clone)]
pub struct IngressLimits {
    bodies: Arc<Semaphore>,
    bytes: Arc<Semaphore>,
    byte_units: usize,
    body_timeout: Duration,
}

/// What a request holds while its body is read: a slot, and the bytes received so far
/// (taken as they arrive, so a sender must really send to spend the budget). Released
/// when dropped.
#[derive(Debug)]
pub struct Admission {
    _body: OwnedSemaphorePermit,
    bytes: Option<OwnedSemaphorePermit>,
    held_units: usize,
    limits: IngressLimits,
}

impl Admission {
    /// Grows the bytes held to cover `len` received bytes; false when the budget is
    /// spent. A body larger than the whole budget may hold all of it.
    pub fn hold(&mut self, len: usize) -> bool {
        let units = len.div_ceil(UNIT).min(self.limits.byte_units);
        if units <= self.held_units {
            return true;
        }
        let more = u32::try_from(units - self.held_units).unwrap_or(u32::MAX);
        match Arc::clone(&self.limits.bytes).try_acquire_many_owned(more) {
            Ok(permit) => {
                match &mut self.bytes {
                    Some(held) => held.merge(permit),
                    None => self.bytes = Some(permit),
                }
                self.held_units = units;
                true
            }
            Err(_) => false,
        }
    }
}

impl Default for IngressLimits {
    fn default() -> Self {
        IngressLimits::new(MAX_BODIES_IN_FLIGHT, MAX_BUFFERED_BYTES)
    }
}

impl IngressLimits {
    pub fn new(bodies: usize, bytes: usize) -> Self {
        let byte_units = bytes.div_ceil(UNIT).max(1);
        IngressLimits {
            bodies: Arc::new(Semaphore::new(bodies.max(1))),
            bytes: Arc::new(Semaphore::new(byte_units)),
            byte_units,
            body_timeout: BODY_READ_TIMEOUT,
        }
    }

    /// The same budgets with another body read deadline.
    pub fn with_body_timeout(self, body_timeout: Duration) -> Self {
        IngressLimits {
            body_timeout,
            ..self
        }
    }

    /// How long a body may take to arrive.
    pub fn body_timeout(&self) -> Duration {
        self.body_timeout
    }

    /// A slot for a body, or `None` when all are taken.
    pub fn admit(&self) -> Option<Admission> {
        let body = Arc::clone(&self.bodies).try_acquire_owned().ok()?;
        Some(Admission {
            _body: body,
            bytes: None,
            held_units: 0,
            limits: self.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_past_either_budget_wait_for_a_release() {
        let limits = IngressLimits::new(2, 3 * UNIT);
        let mut first = limits.admit().expect("a slot");
        assert!(first.hold(2 * UNIT));
        let mut second = limits.admit().expect("a second slot");
        assert!(limits.admit().is_none(), "both slots taken");
        assert!(second.hold(UNIT), "one unit left");
        assert!(!second.hold(2 * UNIT), "the bytes are spent");
        drop(first);
        assert!(second.hold(3 * UNIT));
        assert!(
            second.hold(100 * UNIT),
            "alone, a huge body may hold it all"
        );
        drop(second);
        let mut again = limits.admit().expect("released");
        assert!(again.hold(3 * UNIT));
    }
}
