//! Durable webhook delivery queue: deliveries are committed here before GitHub gets its 202.
//!
//! All SQLite work runs on one dedicated thread (an actor). Requests that arrive while a
//! transaction is being written are committed together in the next one (group commit),
//! so one fsync serves many deliveries and acknowledgement latency stays flat under load.

pub mod handler;
mod list;
mod migrate;
// Without the `postgres` feature the backend is a type with no values: every arm that
// would use it is unreachable, and connecting says how to get a build that has it.
#[cfg_attr(not(feature = "postgres"), path = "pg_off.rs")]
mod pg;
mod pg_options;
pub mod reconcile;
mod schema;
mod sql;
mod store;
pub mod sweeper;
pub mod worker;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use tokio::sync::oneshot;

pub use handler::{DeliveryHandler, EngineHandler, HandlerError, HandlerFuture, NoHandler};
pub use list::{DeliveryFilter, DeliveryRow, DeliveryState, UnknownState, MAX_LIST_LIMIT};
pub use navin_engine::{classify, Classification, EventKind};
pub use pg::{PgLeader, PgOptions};
pub use worker::{retry_delay, WorkerConfig, WorkerHandle, Workers, MAX_CRASHES};

/// Most operations written in one transaction; bounds the latency a single large
/// group can add.
const MAX_GROUP: usize = 512;

/// Most rows one prune transaction removes, so pruning a large backlog of old rows never
/// holds up the webhooks queued behind it for long.
const PRUNE_BATCH: usize = 2000;

/// A verified delivery as it arrived, before it is stored.
#[derive(Debug, Clone)]
pub struct NewDelivery {
    pub delivery_id: String,
    pub event: String,
    pub action: Option<String>,
    /// `owner/name` as in the payload.
    pub repository: Option<String>,
    pub installation_id: Option<u64>,
    /// The GitHub headers worth keeping (event, delivery, hook ids, user agent).
    pub headers: Vec<(String, String)>,
    /// The raw body exactly as signed.
    pub body: Bytes,
    pub received_at_ms: i64,
}

impl NewDelivery {
    /// Deliveries with the same key are handled one at a time, in arrival order.
    /// Repository names are case-insensitive on GitHub, hence the lowercase.
    pub fn ordering_key(&self) -> String {
        match (&self.repository, self.installation_id) {
            (Some(repo), _) => repository_key(repo),
            (None, Some(id)) => format!("installation:{id}"),
            (None, None) => "global".to_owned(),
        }
    }
}

/// The ordering key of a repository's deliveries, which is also how a listing finds
/// them: one spelling per repository whatever case the payload used.
fn repository_key(repo: &str) -> String {
    format!("repo:{}", repo.to_ascii_lowercase())
}

/// A claimed delivery handed to the handler.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    /// Queue position; also the order within one repository.
    pub seq: i64,
    /// `X-GitHub-Delivery`: the idempotency key for every effect of this delivery.
    pub delivery_id: String,
    pub event: String,
    pub action: Option<String>,
    pub repository: Option<String>,
    pub installation_id: Option<u64>,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub received_at_ms: i64,
    /// 1 for the first attempt; above 1 the handler may already have applied some effects.
    pub attempt: u32,
    /// Of `attempt - 1` earlier runs, how many a crash cut short (the process died, or
    /// its replica's lease lapsed): they count as retries (effects may have landed) but
    /// not against `--max-attempts`.
    pub crashes: u32,
    /// Set by the worker: a transient failure of this attempt is not retried.
    pub final_attempt: bool,
}

impl ClaimedDelivery {
    /// The runs that count against `--max-attempts`: this one and every earlier one
    /// that ended in an error, not those a crash cut short.
    pub fn tries(&self) -> u32 {
        self.attempt.saturating_sub(self.crashes).max(1)
    }

    /// Deserializes the stored body into the engine's own payload type.
    pub fn payload<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnqueueOutcome {
    /// Stored durably; a worker will handle it.
    Queued,
    /// This delivery id is already queued, running or done: nothing more happens. (A
    /// failed one that arrives again is queued afresh: someone asked for it.)
    Duplicate,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    pub queued: u64,
    pub running: u64,
    pub done: u64,
    pub failed: u64,
}

impl QueueStats {
    /// Records a count read from a backend's counts table, by its state's name.
    fn set(&mut self, state: &str, count: i64) {
        let count = u64::try_from(count).unwrap_or(0);
        match state {
            "queued" => self.queued = count,
            "running" => self.running = count,
            "done" => self.done = count,
            "failed" => self.failed = count,
            _ => {}
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("cannot open delivery queue {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cannot create data directory {path}: {source}")]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("delivery queue write failed: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(
        "delivery queue {0} is in use by another process (one `navin serve` per data directory)"
    )]
    Locked(PathBuf),
    #[error("delivery queue transaction failed: {0}")]
    Commit(String),
    #[error("delivery queue {path}: {source}")]
    Schema {
        path: PathBuf,
        source: migrate::MigrateError,
    },
    #[error("cannot compress the delivery's payload: {0}")]
    Compress(std::io::Error),
    #[error("{0}")]
    DatabaseUrl(String),
    /// The database's error with its causes (a TLS failure names the certificate
    /// problem only in its source).
    #[error("queue database: {0}")]
    Postgres(String),
    #[error("queue database TLS: {0}")]
    DatabaseTls(String),
    #[error("queue database: no connection: {0}")]
    Pool(String),
    #[error(
        "the queue database was migrated to version {found} by a newer navin (this one \
         knows up to {known}); run that version"
    )]
    DatabaseTooNew { found: i32, known: i32 },
    #[error("delivery queue is closed")]
    Closed,
    #[error("delivery queue: {0}")]
    State(#[from] UnknownState),
}

/// `error: cause: cause…`, each distinct message once.
#[cfg(feature = "postgres")]
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

#[cfg(feature = "postgres")]
impl From<tokio_postgres::Error> for QueueError {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Postgres(with_causes(&e))
    }
}

#[cfg(feature = "postgres")]
impl From<deadpool_postgres::PoolError> for QueueError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        Self::Pool(with_causes(&e))
    }
}

impl QueueError {
    fn open(path: &Path, source: rusqlite::Error) -> Self {
        Self::Open {
            path: path.to_owned(),
            source,
        }
    }
}

type Reply<T> = oneshot::Sender<Result<T, QueueError>>;

enum Op {
    /// The delivery and its payload as a zstd frame, compressed by the caller so the
    /// queue's one thread spends its time on I/O.
    Enqueue(Box<NewDelivery>, Vec<u8>, Reply<EnqueueOutcome>),
    Claim {
        now_ms: i64,
        limit: usize,
        reply: Reply<Vec<ClaimedDelivery>>,
    },
    Complete {
        seq: i64,
        now_ms: i64,
        reply: Reply<()>,
    },
    Retry {
        seq: i64,
        error: String,
        at_ms: i64,
        reply: Reply<()>,
    },
    Fail {
        seq: i64,
        error: String,
        now_ms: i64,
        reply: Reply<()>,
    },
    Known {
        ids: Vec<String>,
        reply: Reply<HashSet<String>>,
    },
    Stats(Reply<QueueStats>),
    Status {
        id: String,
        reply: Reply<Option<DeliveryStatus>>,
    },
    Prune {
        done_before_ms: i64,
        failed_before_ms: i64,
        batch: usize,
        reply: Reply<usize>,
    },
    List {
        plan: list::ListPlan,
        reply: Reply<Vec<DeliveryRow>>,
    },
    Close(oneshot::Sender<()>),
}

/// State of one stored delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryStatus {
    /// `queued`, `running`, `done` or `failed`.
    pub state: String,
    pub attempts: u32,
    pub last_error: Option<String>,
}

/// Handle to the queue; cheap to clone, usable from async code. SQLite (one process,
/// the default) or PostgreSQL (several replicas, `NAVIN_DATABASE_URL`).
#[derive(Debug, Clone)]
pub struct DeliveryQueue {
    backend: Backend,
}

#[derive(Debug, Clone)]
enum Backend {
    /// The queue's own thread owns the SQLite file (see `serve_ops`).
    Sqlite(mpsc::Sender<Op>),
    Postgres(std::sync::Arc<pg::PgQueue>),
}

/// Who runs cluster-wide chores such as the reconciler; held until dropped.
#[derive(Debug)]
pub enum Leader {
    /// The only process on a SQLite queue always leads.
    Alone,
    Postgres(PgLeader),
}

impl Leader {
    /// False once leadership was lost (the database connection holding it closed).
    pub fn held(&self) -> bool {
        match self {
            Leader::Alone => true,
            Leader::Postgres(l) => l.held(),
        }
    }
}

impl DeliveryQueue {
    /// Opens the queue file, creating `dir`'s parents as needed. Returns the queue and how
    /// many deliveries were found running (a crash or kill mid-handler) and re-queued.
    pub fn open(path: &Path) -> Result<(Self, usize), QueueError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| QueueError::DataDir {
                path: dir.to_owned(),
                source,
            })?;
        }
        let (store, requeued) = store::Store::open(path)?;
        let checkpointer = store::Checkpointer::spawn(path)?;
        let (tx, rx) = mpsc::channel();
        let db_path = path.to_owned();
        thread::Builder::new()
            .name("navin-queue".to_owned())
            .spawn(move || run_actor(store, checkpointer, &db_path, &rx))
            .map_err(|source| QueueError::DataDir {
                path: path.to_owned(),
                source,
            })?;
        Ok((
            Self {
                backend: Backend::Sqlite(tx),
            },
            requeued,
        ))
    }

    /// Connects to the PostgreSQL queue shared by several replicas, applying its
    /// migrations if needed. Deliveries a dead replica was running are taken over
    /// once their lease lapses, not at connect.
    pub async fn connect(url: &str, options: &PgOptions) -> Result<Self, QueueError> {
        let queue = pg::PgQueue::connect(url, options).await?;
        Ok(Self {
            backend: Backend::Postgres(std::sync::Arc::new(queue)),
        })
    }

    async fn call<T>(&self, op: impl FnOnce(Reply<T>) -> Op) -> Result<T, QueueError> {
        let Backend::Sqlite(tx) = &self.backend else {
            return Err(QueueError::Closed);
        };
        let (reply, rx) = oneshot::channel();
        tx.send(op(reply)).map_err(|_| QueueError::Closed)?;
        rx.await.map_err(|_| QueueError::Closed)?
    }

    /// Returns once the delivery is committed (fsynced), or known already.
    pub async fn enqueue(&self, delivery: NewDelivery) -> Result<EnqueueOutcome, QueueError> {
        let zbody = sql::compress(&delivery.body).map_err(QueueError::Compress)?;
        match &self.backend {
            Backend::Postgres(pg) => pg.enqueue(&delivery, &zbody).await,
            Backend::Sqlite(_) => {
                self.call(|r| Op::Enqueue(Box::new(delivery), zbody, r))
                    .await
            }
        }
    }

    /// Marks up to `limit` due deliveries running and returns them (at most one per
    /// repository, and only the oldest unfinished one of it).
    pub async fn claim(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> Result<Vec<ClaimedDelivery>, QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.claim(now_ms, limit).await;
        }
        self.call(|reply| Op::Claim {
            now_ms,
            limit,
            reply,
        })
        .await
    }

    pub async fn complete(&self, seq: i64, now_ms: i64) -> Result<(), QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.complete(seq, now_ms).await;
        }
        self.call(|reply| Op::Complete { seq, now_ms, reply }).await
    }

    pub async fn retry_at(&self, seq: i64, error: String, at_ms: i64) -> Result<(), QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.retry_at(seq, &error, at_ms).await;
        }
        self.call(|reply| Op::Retry {
            seq,
            error,
            at_ms,
            reply,
        })
        .await
    }

    pub async fn fail(&self, seq: i64, error: String, now_ms: i64) -> Result<(), QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.fail(seq, &error, now_ms).await;
        }
        self.call(|reply| Op::Fail {
            seq,
            error,
            now_ms,
            reply,
        })
        .await
    }

    /// How often running deliveries' leases must be renewed; none on SQLite, where
    /// one process owns the file and a restart requeues what it was running.
    pub fn renew_every(&self) -> Option<std::time::Duration> {
        match &self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(pg) => Some(pg.lease() / 3),
        }
    }

    /// Keeps this replica's claim on deliveries it is still running.
    pub async fn renew(&self, seqs: &[i64], now_ms: i64) -> Result<(), QueueError> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(()),
            Backend::Postgres(pg) => pg.renew(seqs, now_ms).await,
        }
    }

    /// Leadership for `role` if no live replica holds it.
    pub async fn try_lead(&self, role: &str) -> Result<Option<Leader>, QueueError> {
        match &self.backend {
            Backend::Sqlite(_) => Ok(Some(Leader::Alone)),
            Backend::Postgres(pg) => Ok(pg.try_lead(role).await?.map(Leader::Postgres)),
        }
    }

    /// Which of `ids` (delivery GUIDs) the queue holds in any state.
    pub async fn known(&self, ids: Vec<String>) -> Result<HashSet<String>, QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.known(&ids).await;
        }
        self.call(|reply| Op::Known { ids, reply }).await
    }

    pub async fn stats(&self) -> Result<QueueStats, QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.stats().await;
        }
        self.call(Op::Stats).await
    }

    pub async fn status(&self, delivery_id: &str) -> Result<Option<DeliveryStatus>, QueueError> {
        if let Backend::Postgres(pg) = &self.backend {
            return pg.status(delivery_id).await;
        }
        let id = delivery_id.to_owned();
        self.call(|reply| Op::Status { id, reply }).await
    }

    /// Stored deliveries matching `filter`, newest first, without their payloads (the
    /// dashboard's deliveries page). It reads only index entries of the asked states
    /// (and repositories), so its cost does not grow with a backlog of anything else.
    /// The next page is the same filter with `before_seq` set to the last row's `seq`.
    pub async fn list(&self, filter: DeliveryFilter) -> Result<Vec<DeliveryRow>, QueueError> {
        let Some(plan) = filter.plan() else {
            return Ok(Vec::new());
        };
        if let Backend::Postgres(pg) = &self.backend {
            return pg.list(&plan).await;
        }
        self.call(|reply| Op::List { plan, reply }).await
    }

    /// Forgets finished deliveries older than the cutoffs, [`PRUNE_BATCH`] rows per
    /// transaction so webhooks arriving meanwhile are committed between batches.
    pub async fn prune(
        &self,
        done_before_ms: i64,
        failed_before_ms: i64,
    ) -> Result<usize, QueueError> {
        let mut removed = 0;
        loop {
            let n = match &self.backend {
                Backend::Postgres(pg) => {
                    pg.prune(done_before_ms, failed_before_ms, PRUNE_BATCH)
                        .await?
                }
                Backend::Sqlite(_) => {
                    self.call(|reply| Op::Prune {
                        done_before_ms,
                        failed_before_ms,
                        batch: PRUNE_BATCH,
                        reply,
                    })
                    .await?
                }
            };
            removed += n;
            if n < PRUNE_BATCH {
                return Ok(removed);
            }
            tokio::task::yield_now().await;
        }
    }

    /// Finishes pending writes and closes the database (releasing its lock) so another
    /// queue can open the same file.
    pub async fn close(&self) {
        match &self.backend {
            Backend::Postgres(pg) => pg.close(),
            Backend::Sqlite(tx) => {
                let (done, rx) = oneshot::channel();
                if tx.send(Op::Close(done)).is_ok() {
                    let _ = rx.await;
                }
            }
        }
    }
}

/// A reply to send once the group's transaction is committed.
type Pending = Box<dyn FnOnce(Option<&rusqlite::Error>) + Send>;

fn deferred<T: Send + 'static>(reply: Reply<T>, result: Result<T, rusqlite::Error>) -> Pending {
    Box::new(move |commit_error| {
        let outcome = match (result, commit_error) {
            (Err(e), _) => Err(QueueError::Sql(e)),
            (Ok(_), Some(e)) => Err(QueueError::Commit(e.to_string())),
            (Ok(v), None) => Ok(v),
        };
        let _ = reply.send(outcome);
    })
}

fn run_actor(
    mut store: store::Store,
    checkpointer: store::CheckpointHandle,
    path: &Path,
    rx: &mpsc::Receiver<Op>,
) {
    let closer = serve_ops(&mut store, path, rx);
    checkpointer.stop();
    // The connections (and the file lock) are gone before `close()` returns.
    drop(store);
    if let Some(done) = closer {
        let _ = done.send(());
    }
}

/// Serves operations until the channel closes or a `Close` arrives (returned).
fn serve_ops(
    store: &mut store::Store,
    path: &Path,
    rx: &mpsc::Receiver<Op>,
) -> Option<oneshot::Sender<()>> {
    let mut groups: u32 = 0;
    while let Ok(first) = rx.recv() {
        groups = groups.wrapping_add(1);
        if groups % 256 == 0 {
            store.checkpoint_if_huge(path);
        }
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(op) => group.push(op),
                Err(_) => break,
            }
        }
        let mut close = None;
        let mut pending: Vec<Pending> = Vec::with_capacity(group.len());
        let durability = if group.iter().any(|op| matches!(op, Op::Enqueue(..))) {
            store::Durability::Flushed
        } else {
            store::Durability::Deferred
        };
        let mut tx = match store.begin(durability) {
            Ok(tx) => tx,
            Err(e) => {
                for op in group {
                    if let Op::Close(done) = op {
                        close = Some(done);
                    } else {
                        fail_op(op, &e);
                    }
                }
                if close.is_some() {
                    return close;
                }
                continue;
            }
        };
        for op in group {
            match op {
                Op::Enqueue(d, zbody, reply) => {
                    let outcome = isolated(&mut tx, |c| sql::insert(c, &d, &zbody));
                    pending.push(deferred(reply, outcome));
                }
                Op::Claim {
                    now_ms,
                    limit,
                    reply,
                } => {
                    let claimed = isolated(&mut tx, |c| sql::claim(c, now_ms, limit));
                    pending.push(deferred(reply, claimed));
                }
                Op::Complete { seq, now_ms, reply } => {
                    let done = isolated(&mut tx, |c| sql::complete(c, seq, now_ms));
                    pending.push(deferred(reply, done));
                }
                Op::Retry {
                    seq,
                    error,
                    at_ms,
                    reply,
                } => {
                    let done = isolated(&mut tx, |c| sql::retry_at(c, seq, &error, at_ms));
                    pending.push(deferred(reply, done));
                }
                Op::Fail {
                    seq,
                    error,
                    now_ms,
                    reply,
                } => {
                    let done = isolated(&mut tx, |c| sql::fail(c, seq, &error, now_ms));
                    pending.push(deferred(reply, done));
                }
                Op::Known { ids, reply } => pending.push(deferred(reply, sql::known(&tx, &ids))),
                Op::Stats(reply) => pending.push(deferred(reply, sql::stats(&tx))),
                Op::Status { id, reply } => {
                    let status = sql::status(&tx, &id).map(|row| {
                        row.map(|(state, attempts, last_error)| DeliveryStatus {
                            state,
                            attempts,
                            last_error,
                        })
                    });
                    pending.push(deferred(reply, status));
                }
                Op::Prune {
                    done_before_ms,
                    failed_before_ms,
                    batch,
                    reply,
                } => {
                    let pruned = isolated(&mut tx, |c| {
                        sql::prune(c, done_before_ms, failed_before_ms, batch)
                    });
                    pending.push(deferred(reply, pruned));
                }
                Op::List { plan, reply } => pending.push(deferred(reply, sql::list(&tx, &plan))),
                Op::Close(done) => close = Some(done),
            }
        }
        let commit = tx.commit().err();
        for reply in pending {
            reply(commit.as_ref());
        }
        if close.is_some() {
            return close;
        }
    }
    None
}

/// Runs one operation inside a savepoint, so a failing statement leaves nothing half
/// done while the rest of the group still commits.
fn isolated<T>(
    tx: &mut rusqlite::Transaction<'_>,
    f: impl FnOnce(&rusqlite::Connection) -> Result<T, rusqlite::Error>,
) -> Result<T, rusqlite::Error> {
    let sp = tx.savepoint()?;
    let value = f(&sp)?;
    sp.commit()?;
    Ok(value)
}

fn fail_op(op: Op, e: &rusqlite::Error) {
    let err = || QueueError::Commit(e.to_string());
    match op {
        Op::Enqueue(_, _, r) => drop(r.send(Err(err()))),
        Op::Claim { reply, .. } => drop(reply.send(Err(err()))),
        Op::Complete { reply, .. } | Op::Retry { reply, .. } | Op::Fail { reply, .. } => {
            drop(reply.send(Err(err())));
        }
        Op::Known { reply, .. } => drop(reply.send(Err(err()))),
        Op::Stats(reply) => drop(reply.send(Err(err()))),
        Op::Status { reply, .. } => drop(reply.send(Err(err()))),
        Op::Prune { reply, .. } => drop(reply.send(Err(err()))),
        Op::List { reply, .. } => drop(reply.send(Err(err()))),
        Op::Close(done) => drop(done.send(())),
    }
}
