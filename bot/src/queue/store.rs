//! The SQLite side of the delivery queue: the file, its lock, its schema version and
//! the background checkpointer. The statements live in `sql`.
//!
//! Why SQLite (WAL) for the queue:
//! - one file under the data directory, no service to run or secure;
//! - a commit is durable once it returns (`synchronous=FULL` fsyncs the WAL), so a
//!   crash after the 202 loses nothing, and the queue survives restarts;
//! - real transactions and a `UNIQUE` delivery id give deduplication for free;
//! - group commit (many deliveries per transaction, see `queue::DeliveryQueue`) keeps
//!   fsyncs from capping throughput.
//!
//! Why this schema: GitHub can be unreachable for an hour while deliveries keep
//! arriving, so nothing a webhook or a worker does may cost more as the backlog grows.
//! Each ordering key's oldest unfinished delivery is marked its head (`is_head`), and a
//! claim reads only due heads through a partial index; per-state counts are kept in
//! `counts` inside the same transactions; payloads are zstd frames in `bodies`, out of
//! the rows that claims, stats and pruning read.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use super::QueueError;

/// The schema this code reads and writes (`PRAGMA user_version`). Version 1 kept bodies
/// inline and found heads by scanning; [`super::migrate`] moves such a file forward.
pub(super) const SCHEMA_VERSION: i64 = 2;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS deliveries (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id        TEXT    NOT NULL UNIQUE,
    event              TEXT    NOT NULL,
    action             TEXT,
    repository         TEXT,
    installation_id    INTEGER,
    ordering_key       TEXT    NOT NULL,
    headers            TEXT    NOT NULL,
    received_at_ms     INTEGER NOT NULL,
    state              TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms INTEGER NOT NULL,
    last_error         TEXT,
    finished_at_ms     INTEGER,
    is_head            INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS bodies (
    seq   INTEGER PRIMARY KEY,
    zbody BLOB    NOT NULL
);
CREATE TABLE IF NOT EXISTS counts (
    state TEXT    PRIMARY KEY,
    n     INTEGER NOT NULL
);
INSERT OR IGNORE INTO counts (state, n)
    VALUES ('queued', 0), ('running', 0), ('done', 0), ('failed', 0);
CREATE INDEX IF NOT EXISTS deliveries_pending_by_key
    ON deliveries (ordering_key, seq) WHERE state IN ('queued', 'running');
CREATE INDEX IF NOT EXISTS deliveries_due_heads
    ON deliveries (next_attempt_at_ms) WHERE is_head = 1 AND state = 'queued';
CREATE INDEX IF NOT EXISTS deliveries_running
    ON deliveries (seq) WHERE state = 'running';
CREATE INDEX IF NOT EXISTS deliveries_finished
    ON deliveries (finished_at_ms) WHERE finished_at_ms IS NOT NULL;
";

/// Indexes added to version 2 since it was written, created at every open where a
/// file lacks them ([`super::migrate::to_current`]). They change what a row means in
/// no way and an older navin keeps them up to date without knowing them, so they take
/// no new schema version: that would make the older navin refuse the file, and
/// rolling back would cost the queue. Full indexes, not partial ones, so that one
/// statement with the state as a parameter can name them in `INDEXED BY`.
pub(super) const ADDED_INDEXES: &[(&str, &str)] = &[
    (
        // The listing of one state, newest first (`sql::LIST_BY_STATE`).
        "deliveries_by_state",
        "CREATE INDEX IF NOT EXISTS deliveries_by_state ON deliveries (state, seq)",
    ),
    (
        // The listing of one state of one repository (`sql::LIST_BY_KEY`).
        "deliveries_by_key_state",
        "CREATE INDEX IF NOT EXISTS deliveries_by_key_state
             ON deliveries (ordering_key, state, seq)",
    ),
];

pub(super) struct Store {
    conn: Connection,
    /// Held (flock) for the store's life: one process per queue file.
    _lock: std::fs::File,
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
        Ok((Self { conn, _lock: lock }, requeued))
    }

    pub(super) fn begin(&mut self) -> Result<rusqlite::Transaction<'_>, rusqlite::Error> {
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
