//! The SQLite side of the delivery queue: schema and the synchronous statements.
//!
//! Why SQLite (WAL) for the queue:
//! - one file under the data directory, no service to run or secure;
//! - a commit is durable once it returns (`synchronous=FULL` fsyncs the WAL), so a
//!   crash after the 202 loses nothing, and the queue survives restarts;
//! - real transactions and a `UNIQUE` delivery id give deduplication for free;
//! - group commit (many deliveries per transaction, see `queue::DeliveryQueue`) keeps
//!   fsyncs from capping throughput.
//!
//! Several replicas would need a shared queue: the same table in PostgreSQL with
//! `SELECT … FOR UPDATE SKIP LOCKED` claims. Nothing outside this file knows it is SQLite.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{Delivery, EnqueueOutcome, NewDelivery, QueueError, QueueStats};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS deliveries (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id        TEXT    NOT NULL UNIQUE,
    event              TEXT    NOT NULL,
    action             TEXT,
    repository         TEXT,
    installation_id    INTEGER,
    ordering_key       TEXT    NOT NULL,
    headers            TEXT    NOT NULL,
    body               BLOB,
    received_at_ms     INTEGER NOT NULL,
    state              TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms INTEGER NOT NULL,
    last_error         TEXT,
    finished_at_ms     INTEGER
);
CREATE INDEX IF NOT EXISTS deliveries_pending_by_key
    ON deliveries (ordering_key, seq) WHERE state IN ('queued', 'running');
CREATE INDEX IF NOT EXISTS deliveries_queued
    ON deliveries (seq) WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS deliveries_finished
    ON deliveries (finished_at_ms) WHERE finished_at_ms IS NOT NULL;
";

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
        let conn = Connection::open(path).map_err(|e| QueueError::open(path, e))?;
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
        conn.execute_batch(SCHEMA)
            .map_err(|e| QueueError::open(path, e))?;
        let requeued = conn
            .execute(
                "UPDATE deliveries SET state = 'queued' WHERE state = 'running'",
                [],
            )
            .map_err(|e| QueueError::open(path, e))?;
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

pub(super) fn insert(tx: &Connection, d: &NewDelivery) -> Result<EnqueueOutcome, rusqlite::Error> {
    let headers = serde_json::to_string(&d.headers).unwrap_or_else(|_| "[]".to_owned());
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO deliveries
             (delivery_id, event, action, repository, installation_id, ordering_key,
              headers, body, received_at_ms, state, next_attempt_at_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'queued', ?9)",
        )?
        .execute(params![
            d.delivery_id,
            d.event,
            d.action,
            d.repository,
            d.installation_id.map(|id| id as i64),
            d.ordering_key(),
            headers,
            &d.body[..],
            d.received_at_ms,
        ])?;
    Ok(if inserted == 1 {
        EnqueueOutcome::Queued
    } else {
        EnqueueOutcome::Duplicate
    })
}

/// Claims up to `limit` deliveries that are due and are the oldest unfinished delivery
/// of their ordering key, so one repository's deliveries run one at a time, in order.
pub(super) fn claim(
    tx: &Connection,
    now_ms: i64,
    limit: usize,
) -> Result<Vec<Delivery>, rusqlite::Error> {
    let mut stmt = tx.prepare_cached(
        "SELECT seq, delivery_id, event, action, repository, installation_id, headers,
                body, received_at_ms, attempts
         FROM deliveries AS d
         WHERE d.state = 'queued' AND d.next_attempt_at_ms <= ?1
           AND NOT EXISTS (
               SELECT 1 FROM deliveries AS e
               WHERE e.ordering_key = d.ordering_key
                 AND e.state IN ('queued', 'running')
                 AND e.seq < d.seq)
         ORDER BY d.seq
         LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![now_ms, limit as i64], |row| {
        let headers: String = row.get(6)?;
        let body: Option<Vec<u8>> = row.get(7)?;
        let attempts: i64 = row.get(9)?;
        Ok(Delivery {
            seq: row.get(0)?,
            delivery_id: row.get(1)?,
            event: row.get(2)?,
            action: row.get(3)?,
            repository: row.get(4)?,
            installation_id: row.get::<_, Option<i64>>(5)?.map(|v| v as u64),
            headers: serde_json::from_str(&headers).unwrap_or_default(),
            body: body.unwrap_or_default().into(),
            received_at_ms: row.get(8)?,
            attempt: u32::try_from(attempts + 1).unwrap_or(u32::MAX),
        })
    })?;
    let claimed: Vec<Delivery> = rows.collect::<Result<_, _>>()?;
    let mut mark = tx.prepare_cached(
        "UPDATE deliveries SET state = 'running', attempts = attempts + 1 WHERE seq = ?1",
    )?;
    for d in &claimed {
        mark.execute(params![d.seq])?;
    }
    Ok(claimed)
}

/// Done: the payload is dropped (only the id is needed for deduplication from now on).
pub(super) fn complete(tx: &Connection, seq: i64, now_ms: i64) -> Result<(), rusqlite::Error> {
    tx.prepare_cached(
        "UPDATE deliveries SET state = 'done', body = NULL, last_error = NULL,
                finished_at_ms = ?2 WHERE seq = ?1",
    )?
    .execute(params![seq, now_ms])?;
    Ok(())
}

pub(super) fn retry_at(
    tx: &Connection,
    seq: i64,
    error: &str,
    at_ms: i64,
) -> Result<(), rusqlite::Error> {
    tx.prepare_cached(
        "UPDATE deliveries SET state = 'queued', last_error = ?2, next_attempt_at_ms = ?3
         WHERE seq = ?1",
    )?
    .execute(params![seq, error, at_ms])?;
    Ok(())
}

/// Failed for good: the body is kept so an operator can inspect or requeue it.
pub(super) fn fail(
    tx: &Connection,
    seq: i64,
    error: &str,
    now_ms: i64,
) -> Result<(), rusqlite::Error> {
    tx.prepare_cached(
        "UPDATE deliveries SET state = 'failed', last_error = ?2, finished_at_ms = ?3
         WHERE seq = ?1",
    )?
    .execute(params![seq, error, now_ms])?;
    Ok(())
}

pub(super) fn known(tx: &Connection, ids: &[String]) -> Result<HashSet<String>, rusqlite::Error> {
    let mut stmt = tx.prepare_cached("SELECT 1 FROM deliveries WHERE delivery_id = ?1")?;
    let mut held = HashSet::new();
    for id in ids {
        if stmt
            .query_row(params![id], |_| Ok(()))
            .optional()?
            .is_some()
        {
            held.insert(id.clone());
        }
    }
    Ok(held)
}

pub(super) fn stats(tx: &Connection) -> Result<QueueStats, rusqlite::Error> {
    let mut stats = QueueStats::default();
    let mut stmt = tx.prepare_cached("SELECT state, COUNT(*) FROM deliveries GROUP BY state")?;
    let rows = stmt.query_map([], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
    })?;
    for row in rows {
        let (state, count) = row?;
        let count = u64::try_from(count).unwrap_or(0);
        match state.as_str() {
            "queued" => stats.queued = count,
            "running" => stats.running = count,
            "done" => stats.done = count,
            "failed" => stats.failed = count,
            _ => {}
        }
    }
    Ok(stats)
}

/// Forgets finished deliveries older than the cutoffs. Done rows must outlive GitHub's
/// redelivery window (3 days, 7 on GHES) or a late redelivery would run twice.
pub(super) fn prune(
    tx: &Connection,
    done_before_ms: i64,
    failed_before_ms: i64,
) -> Result<usize, rusqlite::Error> {
    let done = tx
        .prepare_cached("DELETE FROM deliveries WHERE state = 'done' AND finished_at_ms < ?1")?
        .execute(params![done_before_ms])?;
    let failed = tx
        .prepare_cached("DELETE FROM deliveries WHERE state = 'failed' AND finished_at_ms < ?1")?
        .execute(params![failed_before_ms])?;
    Ok(done + failed)
}

/// One row's state and error, for tests and operators.
pub(super) fn status(
    tx: &Connection,
    delivery_id: &str,
) -> Result<Option<(String, u32, Option<String>)>, rusqlite::Error> {
    tx.prepare_cached("SELECT state, attempts, last_error FROM deliveries WHERE delivery_id = ?1")?
        .query_row(params![delivery_id], |row| {
            let attempts: i64 = row.get(1)?;
            Ok((
                row.get::<_, String>(0)?,
                u32::try_from(attempts).unwrap_or(u32::MAX),
                row.get::<_, Option<String>>(2)?,
            ))
        })
        .optional()
}
