//! The remote's tip record (`refs/navin/tips/<branch>`): every write moves it forward in its own push, and every sync refuses a branch whose tip does not contain it, so a fresh clone catches a rewind too.
//!
//! A clone that saw the branch before compares with its own seen record; a fresh one (an
//! Action job, a server with a new data directory) has none, and checkpoints only catch a
//! rewind past one of them. The record stands in: it is a commit that was the branch's tip
//! when some writer last pushed, so it is in the branch's history unless the branch was
//! moved back. It records the tip a write was built on, not the write's own commit:
//! pushed without `--atomic` (libgit2 has none), a record could land while its branch
//! update lost a race, and then it would name a commit the branch never had. The price
//! is that the newest write alone can be dropped unseen by a clone that never saw it.

use git2::{Oid, Repository};

use super::remote::{Fetched, Scratch};
use super::{authorship, oid_str, Rewind, Store, StoreError};

impl Store {
    /// Where this clone lands the remote's tip record on each fetch.
    pub(super) fn record_scratch(&self, remote: &str) -> String {
        format!("refs/navin/incoming-tips/{remote}/{}", self.cfg.branch)
    }

    /// Fetches the branch with the remote's tip record and refuses a tip that does not
    /// descend from `seen` (this clone's own record, the most precise) or, for a clone
    /// that never saw the branch, that lacks one of its checkpoints; then a tip that
    /// does not contain the remote's record. A record newer than the tip fetched with it
    /// can be a race (the server listed the branch, then two writers moved both), so
    /// that mismatch is fetched once more before it is called a rewind.
    pub(super) fn fetch_checked(
        &self,
        repo: &Repository,
        remote: &str,
        seen: Option<Oid>,
    ) -> Result<Fetched, StoreError> {
        let checkpoints = seen.is_none();
        let tip = format!("refs/navin/incoming/{remote}/{}", self.cfg.branch);
        let record = self.record_scratch(remote);
        let scratch = Scratch {
            tip: &tip,
            record: &record,
        };
        let target = self.target(remote);
        let fetch = || -> Result<Fetched, StoreError> {
            let fetched = target.fetch(repo, &self.cfg.branch, &scratch, checkpoints)?;
            self.check_remote_seen(repo, remote, seen, fetched.tip)?;
            // Checkpoints never move, so one missing is a rewind whatever the race.
            if let (true, Some(tip)) = (checkpoints, fetched.tip) {
                self.check_checkpoints(repo, remote, tip)?;
            }
            Ok(fetched)
        };
        let fetched = fetch()?;
        if self.record_missing(repo, remote, fetched)?.is_none() {
            return Ok(fetched);
        }
        let fetched = fetch()?;
        match self.record_missing(repo, remote, fetched)? {
            Some(refused) => Err(refused),
            None => Ok(fetched),
        }
    }

    /// Why the fetched tip cannot be trusted against the record, if it cannot.
    fn record_missing(
        &self,
        repo: &Repository,
        remote: &str,
        fetched: Fetched,
    ) -> Result<Option<StoreError>, StoreError> {
        Ok(match (fetched.record, fetched.tip) {
            (None, _) => None,
            (Some(r), Some(t)) if r == t || repo.graph_descendant_of(t, r)? => None,
            (Some(r), Some(t)) => Some(StoreError::Rewound(Box::new(Rewind {
                branch: self.cfg.branch.clone(),
                remote: remote.to_owned(),
                record: super::remote::tip_record_ref(&self.cfg.branch),
                version: version_near(repo, r),
                commit: oid_str(r),
                tip: oid_str(t),
                tip_version: version_near(repo, t),
            }))),
            // Navin never deletes the branch; a record says it was there.
            (Some(r), None) => Some(StoreError::BranchVanished {
                branch: self.cfg.branch.clone(),
                remote: remote.to_owned(),
                seen: oid_str(r),
            }),
        })
    }
}

/// The ledger version at `oid`: its own `Navin-Version`, else its nearest first-parent
/// ancestor's (plan commits carry none).
pub(super) fn version_near(repo: &Repository, oid: Oid) -> Option<u64> {
    let mut commit = repo.find_commit(oid).ok();
    for _ in 0..authorship::SEQUENCE_LOOKBACK {
        let c = commit?;
        if let Some(v) = authorship::version_of(&c) {
            return Some(v);
        }
        commit = c.parent(0).ok();
    }
    None
}
