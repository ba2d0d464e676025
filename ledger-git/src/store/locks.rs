//! Ref moves under one writer lock per repository, so a ref lock a killed writer left behind is known for dead and removed: one crash cannot stop every later write.
//!
//! libgit2 moves a ref by writing `<ref>.lock` and renaming it over the ref. A process
//! killed in between leaves the lock, and git will not move the ref again while it
//! exists. Every ref the store moves, it moves holding an exclusive `flock` on
//! `navin-writer.flock` in the git dir, which the kernel releases however the holder
//! dies; so a ref lock found while holding it is no live navin writer's. Only a plain
//! `git` command could hold one, for a moment: a lock younger than [`STALE_AFTER`] is
//! left to it.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use git2::{ErrorCode, Repository};
use rustix::fs::{flock, FlockOperation};

/// How old a ref lock found under the writer lock must be before it is removed.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(1);

/// The writer lock, held while it lives.
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Waits for the repository's writer lock (ref moves take microseconds).
    pub(crate) fn take(repo: &Repository) -> std::io::Result<Self> {
        let path = repo.commondir().join("navin-writer.flock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)?;
        flock(&file, FlockOperation::LockExclusive).map_err(std::io::Error::from)?;
        Ok(Self { _file: file })
    }
}

/// Runs `update`, a move of `refname`, holding the writer lock. When git says the ref
/// is locked and the lock is a dead writer's, the lock is removed and `update` runs once
/// more. The outer error is the writer lock's; the inner one is git's.
pub(crate) fn move_ref<T>(
    repo: &Repository,
    refname: &str,
    update: impl Fn() -> Result<T, git2::Error>,
) -> std::io::Result<Result<T, git2::Error>> {
    let _writer = WriterLock::take(repo)?;
    Ok(match update() {
        Err(e)
            if e.code() == ErrorCode::Locked && clear_stale(repo, refname, SystemTime::now()) =>
        {
            update()
        }
        other => other,
    })
}

/// The lock file of `refname` (in the common git dir, shared by worktrees).
pub(crate) fn lock_path(repo: &Repository, refname: &str) -> PathBuf {
    repo.commondir().join(format!("{refname}.lock"))
}

/// Removes `refname`'s lock when it is older than [`STALE_AFTER`] at `now`. Returns
/// whether one was removed; a fresh lock is left alone. Call it holding the writer lock.
pub(crate) fn clear_stale(repo: &Repository, refname: &str, now: SystemTime) -> bool {
    let path = lock_path(repo, refname);
    let Ok(meta) = std::fs::metadata(&path) else {
        return false;
    };
    let age = meta
        .modified()
        .ok()
        .and_then(|m| now.duration_since(m).ok())
        .unwrap_or_default();
    if age < STALE_AFTER {
        return false;
    }
    match std::fs::remove_file(&path) {
        Ok(()) => {
            tracing::warn!(lock = %path.display(), age_ms = age.as_millis() as u64, "removed a stale ref lock left by a killed writer");
            true
        }
        Err(e) => {
            tracing::warn!(lock = %path.display(), error = %e, "cannot remove a stale ref lock");
            false
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn only_a_lock_older_than_the_limit_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let name = "refs/heads/navin/ledger";
        let path = lock_path(&repo, name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"").unwrap();
        let now = SystemTime::now();
        assert!(
            !clear_stale(&repo, name, now),
            "a fresh lock is a live writer's"
        );
        assert!(path.exists());
        assert!(clear_stale(
            &repo,
            name,
            now + STALE_AFTER + Duration::from_secs(1)
        ));
        assert!(!path.exists());
        assert!(!clear_stale(&repo, name, now), "no lock, nothing to do");
    }
}
