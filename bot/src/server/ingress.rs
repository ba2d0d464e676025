//! What unauthenticated webhook traffic may hold at once: request bodies being read and
//! the bytes buffered for them, with a deadline on each read, so slow or huge senders
//! cannot starve GitHub's deliveries or the server's memory.
//!
//! The signature is checked only once the whole body is in, so until then a request is
//! anyone's. Each one takes a slot before a byte of its body is read, and its bytes from
//! a shared budget as they arrive; when either is spent the answer is `503` with `Retry-After`
//! (the reconciler redelivers what GitHub recorded as failed), and a body that does not
//! arrive within [`BODY_READ_TIMEOUT`] is answered `408`.
//!
//! Each sender (by [`super::ClientAddr`]) may hold only its share of both budgets, so
//! one client's stalled bodies cannot crowd out GitHub's deliveries, which come from
//! other addresses: past its share that sender gets `503` while the others are read.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
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

/// One sender's share of the body slots: an eighth.
const SENDER_BODIES_DIVISOR: usize = 8;
/// One sender's share of the bytes: half, which still fits GitHub's largest payload.
const SENDER_BYTES_DIVISOR: usize = 2;

/// What one sender holds now.
#[derive(Debug, Default, Clone, Copy)]
struct SenderUse {
    bodies: usize,
    units: usize,
}

/// Why a body was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Every slot is taken.
    Full,
    /// This sender holds its whole share already.
    SenderShare,
}

/// The two budgets (see the module doc).
#[derive(Debug, Clone)]
pub struct IngressLimits {
    bodies: Arc<Semaphore>,
    bytes: Arc<Semaphore>,
    byte_units: usize,
    body_timeout: Duration,
    senders: Arc<Mutex<HashMap<IpAddr, SenderUse>>>,
    sender_bodies: usize,
    sender_units: usize,
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
    /// Whose share it counts against; `None` for a request with no known sender (an
    /// in-process caller), which only the shared budgets bound.
    sender: Option<IpAddr>,
}

impl Admission {
    /// Grows the bytes held to cover `len` received bytes; false when the budget is
    /// spent. A body larger than the whole budget may hold all of it.
    pub fn hold(&mut self, len: usize) -> bool {
        let units = len.div_ceil(UNIT).min(self.limits.byte_units);
        if units <= self.held_units {
            return true;
        }
        let extra = units - self.held_units;
        if let Some(ip) = self.sender {
            let senders = self
                .limits
                .senders
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let used = senders.get(&ip).map_or(0, |u| u.units);
            if used + extra > self.limits.sender_units {
                return false;
            }
        }
        let more = u32::try_from(extra).unwrap_or(u32::MAX);
        match Arc::clone(&self.limits.bytes).try_acquire_many_owned(more) {
            Ok(permit) => {
                match &mut self.bytes {
                    Some(held) => held.merge(permit),
                    None => self.bytes = Some(permit),
                }
                self.held_units = units;
                if let Some(ip) = self.sender {
                    let mut senders = self
                        .limits
                        .senders
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    senders.entry(ip).or_default().units += extra;
                }
                true
            }
            Err(_) => false,
        }
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let Some(ip) = self.sender else { return };
        let mut senders = self
            .limits
            .senders
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(used) = senders.get_mut(&ip) {
            used.bodies = used.bodies.saturating_sub(1);
            used.units = used.units.saturating_sub(self.held_units);
            if used.bodies == 0 && used.units == 0 {
                senders.remove(&ip);
            }
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
        let bodies = bodies.max(1);
        IngressLimits {
            bodies: Arc::new(Semaphore::new(bodies)),
            bytes: Arc::new(Semaphore::new(byte_units)),
            byte_units,
            body_timeout: BODY_READ_TIMEOUT,
            senders: Arc::new(Mutex::new(HashMap::new())),
            sender_bodies: (bodies / SENDER_BODIES_DIVISOR).max(1),
            sender_units: (byte_units / SENDER_BYTES_DIVISOR).max(1),
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

    /// A slot for a body from `sender`, within its share; refused when the sender holds
    /// its share or every slot is taken.
    pub fn admit(&self, sender: Option<IpAddr>) -> Result<Admission, Refused> {
        if let Some(ip) = sender {
            let mut senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
            let used = senders.entry(ip).or_default();
            if used.bodies >= self.sender_bodies {
                return Err(Refused::SenderShare);
            }
            used.bodies += 1;
        }
        let admission = |body| Admission {
            _body: body,
            bytes: None,
            held_units: 0,
            limits: self.clone(),
            sender,
        };
        match Arc::clone(&self.bodies).try_acquire_owned() {
            Ok(body) => Ok(admission(body)),
            Err(_) => {
                if let Some(ip) = sender {
                    let mut senders = self.senders.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(used) = senders.get_mut(&ip) {
                        used.bodies = used.bodies.saturating_sub(1);
                        if used.bodies == 0 && used.units == 0 {
                            senders.remove(&ip);
                        }
                    }
                }
                Err(Refused::Full)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_past_either_budget_wait_for_a_release() {
        let limits = IngressLimits::new(2, 3 * UNIT);
        let mut first = limits.admit(None).expect("a slot");
        assert!(first.hold(2 * UNIT));
        let mut second = limits.admit(None).expect("a second slot");
        assert!(limits.admit(None).is_err(), "both slots taken");
        assert!(second.hold(UNIT), "one unit left");
        assert!(!second.hold(2 * UNIT), "the bytes are spent");
        drop(first);
        assert!(second.hold(3 * UNIT));
        assert!(
            second.hold(100 * UNIT),
            "alone, a huge body may hold it all"
        );
        drop(second);
        let mut again = limits.admit(None).expect("released");
        assert!(again.hold(3 * UNIT));
    }

    #[test]
    fn one_sender_holds_only_its_share_and_another_is_still_admitted() {
        let ip = |s: &str| Some(s.parse::<IpAddr>().expect("ip"));
        let limits = IngressLimits::new(16, 16 * UNIT);
        let hog = ip("203.0.113.9");
        let mut held: Vec<Admission> = (0..2)
            .map(|_| limits.admit(hog).expect("within its share"))
            .collect();
        assert_eq!(
            limits.admit(hog).err(),
            Some(Refused::SenderShare),
            "16 / 8 = 2 bodies"
        );
        // Its bytes are capped at half the budget, whatever it sends.
        assert!(held[0].hold(8 * UNIT));
        assert!(!held[1].hold(UNIT), "over its byte share");
        // GitHub, from another address, is read in full.
        let mut github = limits.admit(ip("140.82.115.1")).expect("another sender");
        assert!(github.hold(8 * UNIT));
        // Released, the hog's share is back.
        held.clear();
        assert!(limits.admit(hog).is_ok());
    }
}
