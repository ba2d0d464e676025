//! Answers (replies and reactions) per person per installation in the last hour: past the cap Navin still acts on commands but posts nothing more to that person anywhere in the installation, so nobody can make it flood issues (or spend the installation's content-creation limit) one comment at a time, however many issues they comment on.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The window the cap counts over.
pub const WINDOW: Duration = Duration::from_secs(3600);

/// Keys kept before expired ones are swept: bounds memory under a flood of new names.
const SWEEP_AT: usize = 10_000;

/// Who was answered in which installation, and when.
#[derive(Debug, Default)]
pub struct ReplyBudget {
    sent: Mutex<HashMap<(u64, String), VecDeque<Instant>>>,
}

impl ReplyBudget {
    /// Whether `who` may get one more answer in `installation` now (and counts it when
    /// so): fewer than `cap` in the last [`WINDOW`]. `cap` 0 means no cap.
    pub fn take(&self, installation: u64, who: &str, cap: usize, now: Instant) -> bool {
        if cap == 0 {
            return true;
        }
        let mut sent = self.sent.lock().unwrap_or_else(|p| p.into_inner());
        if sent.len() >= SWEEP_AT {
            sent.retain(|_, times| {
                times
                    .back()
                    .is_some_and(|t| now.duration_since(*t) < WINDOW)
            });
        }
        let key = (installation, who.to_ascii_lowercase());
        let times = sent.entry(key).or_default();
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) >= WINDOW)
        {
            times.pop_front();
        }
        if times.len() >= cap {
            return false;
        }
        times.push_back(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_counts_per_person_across_the_installation_and_frees_up_after_the_window() {
        let budget = ReplyBudget::default();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(budget.take(7, "mallory", 3, t0));
        }
        assert!(
            !budget.take(7, "Mallory", 3, t0),
            "the fourth is over the cap, on any issue of the installation"
        );
        assert!(budget.take(7, "alice", 3, t0), "another person");
        assert!(budget.take(8, "mallory", 3, t0), "another installation");
        assert!(budget.take(7, "mallory", 3, t0 + WINDOW), "an hour later");
        assert!(budget.take(7, "mallory", 0, t0), "0 is no cap");
    }
}
