//! The ledger branch's commit log read back: the complete history, newest first, and earlier versions of a file in it.

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

    /// The newest earlier version of `path` that `wanted` accepts, looking back over the
    /// branch's newest `limit` commits (first parents, from the local tip, without
    /// syncing: callers read the current text first, which syncs). Each distinct
    /// content is offered once. A plan edit started from an older text finds that text
    /// here to merge against; `limit` bounds the walk on a long-lived branch.
    pub fn find_file_version(
        &self,
        path: &str,
        limit: usize,
        mut wanted: impl FnMut(&[u8]) -> bool,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let repo = self.repo()?;
        let Some(tip) = self.tip(&repo)? else {
            return Ok(None);
        };
        let mut walk = repo.revwalk()?;
        walk.push(tip)?;
        walk.simplify_first_parent()?;
        let mut offered = std::collections::HashSet::new();
        for oid in walk.take(limit) {
            let tree = repo.find_commit(oid?)?.tree()?;
            let entry = match tree.get_path(std::path::Path::new(path)) {
                Ok(entry) => entry,
                Err(e) if e.code() == git2::ErrorCode::NotFound => continue,
                Err(e) => return Err(e.into()),
            };
            if !offered.insert(entry.id()) {
                continue;
            }
            let Ok(blob) = repo.find_blob(entry.id()) else {
                continue;
            };
            if wanted(blob.content()) {
                return Ok(Some(blob.content().to_vec()));
            }
        }
        Ok(None)
    }
}
