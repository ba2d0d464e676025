//! Warnings about unauthenticated traffic, at most one line per cause per interval with a count of the ones left out, so a flood cannot fill the log.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often one cause may write a line.
pub const INTERVAL: Duration = Duration::from_secs(10);

/// Per cause: when it last wrote, and how many it has held back since.
#[derive(Debug, Default)]
pub struct Quiet {
    causes: Mutex<HashMap<&'static str, (Instant, u64)>>,
}

impl Quiet {
    /// Whether a warning for `cause` may be written at `now`: `Some(n)` with the `n`
    /// left out since the last line, or `None` to count this one and stay quiet.
    pub fn allow(&self, cause: &'static str, now: Instant) -> Option<u64> {
        let mut causes = self.causes.lock().unwrap_or_else(|p| p.into_inner());
        match causes.get_mut(cause) {
            Some((last, held)) if now.duration_since(*last) < INTERVAL => {
                *held += 1;
                None
            }
            Some((last, held)) => {
                let n = *held;
                *last = now;
                *held = 0;
                Some(n)
            }
            None => {
                causes.insert(cause, (now, 0));
                Some(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_writes_one_line_per_cause_per_interval_with_the_count_left_out() {
        let quiet = Quiet::default();
        let t0 = Instant::now();
        assert_eq!(quiet.allow("busy", t0), Some(0));
        for i in 1..=1000 {
            assert_eq!(quiet.allow("busy", t0 + Duration::from_millis(i)), None);
        }
        assert_eq!(
            quiet.allow("signature", t0),
            Some(0),
            "another cause is its own"
        );
        assert_eq!(
            quiet.allow("busy", t0 + INTERVAL + Duration::from_secs(1)),
            Some(1000)
        );
    }
}
