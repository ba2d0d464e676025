//! The ledger branch's commit log read back: the complete history, newest first.

use chrono::{TimeZone, Utc};

use super::checkpoints::subject_version;
use super::{oid_str, HistoryCommit, Store, StoreError};

impl Store {
    /// The branch's commits, newest first (the complete history; mission.json keeps a window).
    pub fn history(&self, limit: usize) -> Result<Vec<HistoryCommit>, StoreError> {
        let repo = self.repo()?;
        let Some(tip) = self.tip(&repo)? else {
            return Ok(Vec::new());
        };
        let mut walk = repo.revwalk()?;
        walk.push(tip)?;
        walk.simplify_first_parent()?;
        let mut out = Vec::new();
        for oid in walk.take(limit) {
            let commit = repo.find_commit(oid?)?;
            let subject = commit
                .summary()
                .ok()
                .flatten()
                .unwrap_or_default()
                .to_string();
            let body = commit.body().ok().flatten().unwrap_or_default().to_string();
            let at = Utc
                .timestamp_opt(commit.time().seconds(), 0)
                .single()
                .unwrap_or_default();
            out.push(HistoryCommit {
                commit: oid_str(commit.id()),
                version: subject_version(&subject),
                subject,
                body,
                at,
            });
        }
        Ok(out)
    }
}
