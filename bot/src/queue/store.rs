//! The SQLite side of the delivery queue: the file, its lock, its schema version and
//! the background checkpointer. The tables live in `schema`, the statements in `sql`.
//!
//! Why SQLite (WAL) for the queue:
//! - one file under the data directory, no service to run or secure;
//! - a commit that stores a delivery is durable once it returns (`synchronous=FULL`
//!   flushes the WAL; see [`Durability`] for the commits that need not), so a crash
//!   after the 202 loses nothing, and the queue survives restarts;
//! - real transactions and a `UNIQUE` delivery id give deduplication for free;
//! - group commit (many deliveries per transaction, see `queue::DeliveryQueue`) keeps
//!   fsyncs from capping throughput.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::QueueError;

pub(super) struct Store {
    conn: Connection,
    /// The `synchronous` level the connection is at, so it is set only on a change.
    durability: Durability,
    /// Held (flock) for the store's life: one process per queue file.
    _lock: std::fs::File,
}

/// How far a group's commit goes before its callers are answered.
///
/// Only an enqueue needs its own fsync: GitHub is told 202 once the delivery is on disk.
/// Every other write (a claim, a completion, a retry time, a failure) may be lost to a
/// power cut without harm, because the queue is at-least-once already: a lost claim or
/// retry time leaves the delivery queued or running, which the next open requeues, and a
/// lost completion re-runs a delivery the way a crash mid-handler does (the ledger's
/// operations carry their delivery id and are not applied twice). WAL frames are
/// appended in order, so the next enqueue's fsync makes them durable anyway. Skipping
/// their fsync keeps a worker's bookkeeping off the disk a webhook's 202 waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Durability {
    /// `synchronous=FULL`: the WAL is fsynced before the commit returns.
    Flushed,
    /// `synchronous=NORMAL`: written to the WAL; durable at the next fsync or checkpoint.
    Deferred,
}

impl Durability {
    fn pragma(self) -> &'static str {
        match self {
            Self::Flushed => "FULL",
            Self::Deferred => "NORMAL",
        }
    }
}

/// How often the background thread moves WAL frames into the database file.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);
/// WAL size at which the writer checkpoints itself, in case the background checkpoints
/// never catch up under sustained load.
const WAL_HARD_LIMIT_BYTES: u64 = 256 * 1024 * 1024;

impl Store {
    /// Opens (creating if needed) the queue and puts deliveries that were running when
    /// the previous process died back in the queue: at-least-once delivery.
    pub(super) fn open(path: &Path) -> Result<(Self, usize), QueueError> {
        let lock = lock_exclusively(path)?;
        let mut conn = Connection::open(path).map_err(|e| QueueError::open(path, e))?;
        // Checkpoints are left to the background thread (see `Checkpointer`): done on
        // this connection they would stall the commit that triggers them, which is
        // what a webhook waits on.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             PRAGMA busy_timeout = 5000;
             PRAGMA wal_autocheckpoint = 0;",
        )
        .map_err(|e| QueueError::open(path, e))?;
        super::migrate::to_current(&mut conn).map_err(|source| QueueError::Schema {
            path: path.to_owned(),
            source,
        })?;
        let requeued =
            super::sql::requeue_running(&mut conn).map_err(|e| QueueError::open(path, e))?;
        Ok((
            Self {
                conn,
                durability: Durability::Flushed,
                _lock: lock,
            },
            requeued,
        ))
    }

    pub(super) fn begin(
        &mut self,
        durability: Durability,
    ) -> Result<rusqlite::Transaction<'_>, rusqlite::Error> {
        if durability != self.durability {
            self.conn
                .pragma_update(None, "synchronous", durability.pragma())?;
            self.durability = durability;
        }
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
    }

    /// Blocking checkpoint, only when the WAL has grown past the hard limit.
    pub(super) fn checkpoint_if_huge(&self, path: &Path) {
        let wal = wal_path(path);
        let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if size > WAL_HARD_LIMIT_BYTES {
            if let Err(e) = self.conn.execute_batch("PRAGMA wal_checkpoint(RESTART);") {
                tracing::warn!(error = %e, "delivery queue checkpoint failed");
            }
        }
    }
}

fn wal_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// Tries at taking the queue's lock, [`LOCK_RETRY`] apart (one second in all).
const LOCK_TRIES: u32 = 20;
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// A second `navin serve` on the same data directory would process every delivery
/// twice; it fails at start instead. The OS drops the lock when the process dies, even
/// by SIGKILL.
fn lock_exclusively(path: &Path) -> Result<std::fs::File, QueueError> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| QueueError::DataDir {
            path: lock_path.clone(),
            source,
        })?;
    // A lock can outlive its holder by a moment: a child process forked just before the
    // holder closed it keeps it until it execs. A short wait tells that apart from a
    // second server, which still holds it after the last try.
    for attempt in 0..LOCK_TRIES {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(file),
            Err(_) if attempt + 1 < LOCK_TRIES => std::thread::sleep(LOCK_RETRY),
            Err(_) => break,
        }
    }
    Err(QueueError::Locked(path.to_owned()))
}

/// Moves WAL frames into the database file on its own connection and thread, so the
/// writer never waits for a checkpoint. Stops (after a final checkpoint) when the
/// writer drops its [`CheckpointHandle`].
pub(super) struct Checkpointer;

pub(super) struct CheckpointHandle {
    tx: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    pub(super) fn spawn(path: &Path) -> Result<CheckpointHandle, QueueError> {
        let conn = Connection::open(path).map_err(|e| QueueError::open(path, e))?;
        conn.execute_batch("PRAGMA busy_timeout = 5000;")
            .map_err(|e| QueueError::open(path, e))?;
        let (tx, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("navin-queue-checkpoint".to_owned())
            .spawn(move || loop {
                match rx.recv_timeout(CHECKPOINT_EVERY) {
                    Err(mpsc::RecvTimeoutError::Timeout) | Ok(()) => {
                        if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE);") {
                            tracing::debug!(error = %e, "background checkpoint skipped");
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
                        return;
                    }
                }
            })
            .map_err(|source| QueueError::DataDir {
                path: path.to_owned(),
                source,
            })?;
        Ok(CheckpointHandle {
            tx: Some(tx),
            thread: Some(thread),
        })
    }
}

impl CheckpointHandle {
    /// Final checkpoint, then the thread and its connection are gone.
    pub(super) fn stop(mut self) {
        self.tx.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

    use super::*;

    fn synchronous(tx: &rusqlite::Transaction<'_>) -> i64 {
        tx.query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn an_enqueue_commit_is_fsynced_even_right_after_a_deferred_bookkeeping_commit() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = Store::open(&dir.path().join("q.sqlite3")).unwrap();
        let tx = store.begin(Durability::Deferred).unwrap();
        assert_eq!(
            synchronous(&tx),
            1,
            "bookkeeping commits skip the fsync (NORMAL)"
        );
        tx.commit().unwrap();
        let tx = store.begin(Durability::Flushed).unwrap();
        assert_eq!(
            synchronous(&tx),
            2,
            "an enqueue commit waits for the fsync (FULL)"
        );
        tx.commit().unwrap();
    }
}
