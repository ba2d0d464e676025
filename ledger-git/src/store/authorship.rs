//! Foreign commits and cut histories: a ledger commit Navin did not make (no `Navin-Operation` trailer, or another committer) that marks a gated step done, or a version sequence with a gap, is refused, not built upon.
//!
//! Anyone who can push to the branch can edit both ledger files consistently, so reading
//! them alone cannot tell a forged `done` from a real one. Navin's own commits carry its
//! committer identity and trailers; a commit without them that flips a `test`, `lint` or
//! `verify` step to done is the forgery the done-gate exists to stop.

use git2::{Oid, Repository};

use super::{has_ledger, oid_str, read_ledger_at, Store, StoreError};
use crate::model::{Ledger, TaskStatus};

/// The identities Navin's front ends commit as: the CLI, `navin mcp` and the Action
/// (`Navin`) and the App (`navin[bot]`) may all write one branch.
const NAVIN_COMMITTERS: [&str; 2] = ["Navin", "navin[bot]"];

/// Commits checked per read when nothing was vetted before (a fresh clone): enough for
/// any recent edit, bounded for a long-lived branch.
const VET_LIMIT: usize = 500;

impl Store {
    /// Checks the commits from `tip` back to the last vetted tip (or [`VET_LIMIT`] of
    /// them) and remembers `tip` as vetted once it passes.
    pub(super) fn vet(&self, repo: &Repository, tip: Oid) -> Result<(), StoreError> {
        let vetted = *self.vetted.lock().unwrap_or_else(|p| p.into_inner());
        if vetted == Some(tip) {
            return Ok(());
        }
        let mut walk = repo.revwalk()?;
        walk.push(tip)?;
        if let Some(v) = vetted.filter(|v| repo.graph_descendant_of(tip, *v).unwrap_or(false)) {
            walk.hide(v)?;
        }
        for oid in walk.take(VET_LIMIT) {
            let commit = repo.find_commit(oid?)?;
            check_sequence(&commit)?;
            if self.made_by_navin(&commit) || !has_ledger(repo, commit.id())? {
                continue;
            }
            let after = read_ledger_at(repo, commit.id())?;
            let before = match commit.parents().next() {
                Some(p) if has_ledger(repo, p.id())? => Some(read_ledger_at(repo, p.id())?),
                _ => None,
            };
            if let Some(step) = forged_done(before.as_ref(), &after) {
                let by = commit
                    .committer()
                    .name()
                    .map_or_else(|_| "someone".to_owned(), str::to_owned);
                return Err(StoreError::Foreign {
                    commit: oid_str(commit.id()),
                    by,
                    step,
                });
            }
        }
        *self.vetted.lock().unwrap_or_else(|p| p.into_inner()) = Some(tip);
        Ok(())
    }

    fn made_by_navin(&self, commit: &git2::Commit<'_>) -> bool {
        let committer = commit.committer();
        let name = committer.name().unwrap_or_default();
        (NAVIN_COMMITTERS.contains(&name) || name == self.cfg.committer_name)
            && commit
                .message()
                .is_ok_and(|m| m.contains("\nNavin-Operation: ") || m.contains("\nNavin-Plan: "))
    }
}

/// How far back along first parents the previous version is looked for (plan commits
/// carry none).
pub(super) const SEQUENCE_LOOKBACK: usize = 200;

/// A commit's `Navin-Version` trailer.
pub(super) fn version_of(commit: &git2::Commit<'_>) -> Option<u64> {
    commit
        .message()
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Navin-Version: ")?.trim().parse().ok())
}

/// Every change bumps the version by one, across replaces and rollbacks, so a commit
/// whose version is not one more than the previous versioned commit's means versions
/// were cut out or rewritten.
fn check_sequence(commit: &git2::Commit<'_>) -> Result<(), StoreError> {
    let Some(version) = version_of(commit) else {
        return Ok(());
    };
    let mut parent = commit.parent(0).ok();
    for _ in 0..SEQUENCE_LOOKBACK {
        let Some(p) = parent else {
            return Ok(());
        };
        if let Some(previous) = version_of(&p) {
            if version != previous + 1 {
                return Err(StoreError::VersionGap {
                    commit: oid_str(commit.id()),
                    version,
                    previous,
                });
            }
            return Ok(());
        }
        parent = p.parent(0).ok();
    }
    Ok(())
}

/// The first step that needs a green run and is done in `after` but was not in `before`.
fn forged_done(before: Option<&Ledger>, after: &Ledger) -> Option<String> {
    after
        .board
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done && t.validation.needs_run())
        .find(|t| {
            before
                .and_then(|b| b.board.task(&t.id))
                .is_none_or(|old| old.status != TaskStatus::Done)
        })
        .map(|t| t.id.clone())
}
