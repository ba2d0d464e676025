//! What unauthenticated webhook traffic may hold at once: request bodies being read and
//! the bytes buffered for them, with a deadline on each read, so slow or huge senders
//! cannot starve GitHub's deliveries or the server's memory.
//!
//! The signature is checked only once the whole body is in, so until then a request is
//! anyone's. Each one takes a slot and its declared size from two budgets before a byte
//! of its body is read; when either is spent the answer is `503` with `Retry-After`
//! (the reconciler redelivers what GitHub recorded as failed), and a body that does not
//! arrive within [`BODY_READ_TIMEOUT`] is answered `408`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Longest wait for a request's headers, then for its whole body. GitHub sends a 25 MB
/// payload in well under a second; ten seconds leaves room for a slow network.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Webhook bodies read at once.
pub const MAX_BODIES_IN_FLIGHT: usize = 64;

/// Bytes all bodies being read may hold at once (each counts for its declared length,
/// or the size cap when it declares none).
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

/// What a request holds while its body is read; released when dropped.
#[derive(Debug)]
pub struct Admission {
    _body: OwnedSemaphorePermit,
    _bytes: OwnedSemaphorePermit,
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

    /// A slot for a body of `len` bytes, or `None` when either budget is spent. A body
    /// larger than the whole byte budget takes all of it, so it can still be served
    /// alone.
    pub fn admit(&self, len: usize) -> Option<Admission> {
        let body = Arc::clone(&self.bodies).try_acquire_owned().ok()?;
        let units = len.div_ceil(UNIT).clamp(1, self.byte_units);
        let units = u32::try_from(units).unwrap_or(u32::MAX);
        let bytes = Arc::clone(&self.bytes).try_acquire_many_owned(units).ok()?;
        Some(Admission {
            _body: body,
            _bytes: bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_past_either_budget_wait_for_a_release() {
        let limits = IngressLimits::new(2, 3 * UNIT);
        let first = limits.admit(2 * UNIT).expect("room");
        assert!(limits.admit(2 * UNIT).is_none(), "the bytes are spent");
        let small = limits.admit(10).expect("one unit left");
        assert!(limits.admit(10).is_none(), "both slots taken");
        drop(first);
        drop(small);
        let huge = limits.admit(100 * UNIT).expect("alone, a huge body fits");
        assert!(limits.admit(1).is_none());
        drop(huge);
        assert!(limits.admit(1).is_some());
    }
}
