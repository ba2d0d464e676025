//! Listing stored deliveries for the dashboard's deliveries page: what was queued,
//! what runs, what failed and why.
//!
//! A listing must cost the same behind a backlog of 100,000 done (or queued) rows as
//! behind none, so both backends answer it the same way: one newest-first index seek
//! per asked state (or per state and repository), each reading at most `limit` index
//! entries, merged into the newest `limit`. Rows of a state or a repository that was
//! not asked for are never read.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// The most rows one listing returns: a page, not an export.
pub const MAX_LIST_LIMIT: usize = 200;

/// Where a stored delivery is in its life, as its `state` column spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeliveryState {
    /// Waiting for a worker (a first attempt, or a retry not yet due).
    Queued,
    /// A worker is handling it.
    Running,
    /// Handled; kept only to recognize a redelivery of the same id.
    Done,
    /// Given up on, with the error kept; GitHub can redeliver it.
    Failed,
}

impl DeliveryState {
    pub const ALL: [Self; 4] = [Self::Queued, Self::Running, Self::Done, Self::Failed];

    /// The stored spelling (both backends' `state` column).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }
}

impl fmt::Display for DeliveryState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored state this navin does not know (the schema's CHECK allows none, so a
/// damaged or foreign database).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown delivery state {0:?} (expected queued, running, done or failed)")]
pub struct UnknownState(pub String);

impl FromStr for DeliveryState {
    type Err = UnknownState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|state| state.as_str() == s)
            .ok_or_else(|| UnknownState(s.to_owned()))
    }
}

/// One stored delivery as the dashboard lists it (no payload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRow {
    /// Queue position: newer deliveries have larger ones; the paging cursor.
    pub seq: i64,
    /// `X-GitHub-Delivery`: what a redelivery request names.
    pub delivery_id: String,
    pub event: String,
    pub action: Option<String>,
    /// `owner/name` as the payload spelled it.
    pub repository: Option<String>,
    pub installation_id: Option<u64>,
    pub state: DeliveryState,
    /// Attempts started so far (a running delivery counts its current one).
    pub attempts: u32,
    /// The last attempt's error: kept while a retry waits, and once failed.
    pub last_error: Option<String>,
    pub received_at_ms: i64,
    /// When a queued delivery is due; for a finished one, when it last was.
    pub next_attempt_at_ms: i64,
    pub finished_at_ms: Option<i64>,
}

/// Which deliveries a listing returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryFilter {
    /// Only these states. Empty lists nothing: done rows are many and rarely wanted,
    /// so they are shown only when asked for.
    pub states: Vec<DeliveryState>,
    /// Only deliveries of these `owner/name` repositories, compared case-insensitively
    /// as GitHub compares them; `None` lists every delivery, including those of no
    /// repository (installation events). `Some` of an empty list lists nothing, so a
    /// caller that found no repository for its user never shows everyone's.
    pub repositories: Option<Vec<String>>,
    /// Paging: only rows with a `seq` below this (the last row of the previous page).
    pub before_seq: Option<i64>,
    /// At most this many rows, clamped to `1..=MAX_LIST_LIMIT`.
    pub limit: usize,
}

/// A filter as the backends run it: states once each, repositories as the ordering
/// keys they are stored under (one lowercase spelling), the limit clamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListPlan {
    pub states: Vec<DeliveryState>,
    pub keys: Option<Vec<String>>,
    pub before_seq: i64,
    pub limit: usize,
}

impl DeliveryFilter {
    /// `None` when nothing can match, so no backend is asked.
    pub(super) fn plan(&self) -> Option<ListPlan> {
        let states: Vec<DeliveryState> = self
            .states
            .iter()
            .copied()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let keys = self.repositories.as_ref().map(|repos| {
            repos
                .iter()
                .map(|repo| super::repository_key(repo))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
        });
        if states.is_empty() || keys.as_ref().is_some_and(Vec::is_empty) {
            return None;
        }
        Some(ListPlan {
            states,
            keys,
            before_seq: self.before_seq.unwrap_or(i64::MAX),
            limit: self.limit.clamp(1, MAX_LIST_LIMIT),
        })
    }
}

/// The newest `limit` sequence numbers offered so far, for merging several
/// newest-first index runs without reading more of each than can still make the page.
#[derive(Debug)]
pub(super) struct Newest {
    limit: usize,
    seqs: BTreeSet<i64>,
}

impl Newest {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            limit,
            seqs: BTreeSet::new(),
        }
    }

    /// Rows at or below this cannot make the page any more (0 while it is not full;
    /// sequence numbers start at 1).
    pub(super) fn floor(&self) -> i64 {
        match self.seqs.first() {
            Some(&oldest) if self.seqs.len() >= self.limit => oldest,
            _ => 0,
        }
    }

    pub(super) fn offer(&mut self, seq: i64) {
        self.seqs.insert(seq);
        if self.seqs.len() > self.limit {
            self.seqs.pop_first();
        }
    }

    /// Newest first.
    pub(super) fn into_desc(self) -> impl Iterator<Item = i64> {
        self.seqs.into_iter().rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(states: &[DeliveryState], repos: Option<&[&str]>, limit: usize) -> DeliveryFilter {
        DeliveryFilter {
            states: states.to_vec(),
            repositories: repos.map(|r| r.iter().map(|s| (*s).to_owned()).collect()),
            before_seq: None,
            limit,
        }
    }

    #[test]
    fn states_round_trip_through_their_stored_spelling() {
        for state in DeliveryState::ALL {
            assert_eq!(state.as_str().parse::<DeliveryState>(), Ok(state));
        }
        assert_eq!(
            "Failed".parse::<DeliveryState>(),
            Err(UnknownState("Failed".to_owned()))
        );
    }

    #[test]
    fn a_plan_asks_each_state_and_repository_once_lowercased_with_the_limit_clamped() {
        use DeliveryState::{Failed, Queued};
        let plan = filter(&[Failed, Queued, Failed], Some(&["O/R", "o/r", "a/b"]), 0)
            .plan()
            .expect("something can match");
        assert_eq!(plan.states, [Queued, Failed]);
        assert_eq!(
            plan.keys,
            Some(vec!["repo:a/b".to_owned(), "repo:o/r".to_owned()])
        );
        assert_eq!((plan.before_seq, plan.limit), (i64::MAX, 1));
        let big = filter(&[Failed], None, 10_000)
            .plan()
            .expect("something can match");
        assert_eq!((big.keys, big.limit), (None, MAX_LIST_LIMIT));
    }

    #[test]
    fn no_states_or_an_empty_repository_list_match_nothing() {
        assert_eq!(filter(&[], None, 20).plan(), None);
        assert_eq!(filter(&[DeliveryState::Failed], Some(&[]), 20).plan(), None);
    }

    #[test]
    fn the_merge_keeps_the_newest_and_raises_its_floor_once_full() {
        let mut newest = Newest::new(3);
        for seq in [5, 9, 1] {
            newest.offer(seq);
        }
        assert_eq!(newest.floor(), 1);
        newest.offer(7);
        assert_eq!(newest.floor(), 5);
        assert_eq!(newest.into_desc().collect::<Vec<_>>(), [9, 7, 5]);
        assert_eq!(Newest::new(3).floor(), 0);
    }
}
