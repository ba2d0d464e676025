//! The PostgreSQL queue: several `navin serve` replicas share one database.
//!
//! The model is the SQLite queue's (heads, counts, zstd bodies), made safe across
//! processes:
//! - **Order per key.** Enqueue and every transition out of `running` take a
//!   transaction-scoped advisory lock on the ordering key first, so sequence numbers
//!   within a key follow commit order and "am I the head?" and "who is the next
//!   head?" are never answered from a stale view.
//! - **Claims** lock due heads with `FOR UPDATE SKIP LOCKED`: replicas never wait on
//!   each other's claims and never take the same row.
//! - **Leases.** A claimed delivery is leased to its replica for `lease`, renewed by
//!   the workers while it runs. A lapsed lease (the replica died) makes the head
//!   claimable again; an outcome reported by a replica that lost the lease is ignored,
//!   so one delivery's outcome is recorded once.
//! - **One leader** for cluster-wide chores (the reconciler) through a session advisory
//!   lock on a connection of its own: it is released when that connection or its
//!   process dies.

use std::collections::HashSet;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::Transaction;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::list::ListPlan;
pub use super::pg_options::PgOptions;
use super::sql::decompress;
use super::{
    ClaimedDelivery, DeliveryRow, DeliveryStatus, EnqueueOutcome, NewDelivery, QueueError,
    QueueStats,
};

/// Migrations in order; each runs once, inside the transaction that records it.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "queue",
        include_str!("../../migrations/postgres/0001_queue.sql"),
    ),
    (
        2,
        "listing",
        include_str!("../../migrations/postgres/0002_listing.sql"),
    ),
    (
        3,
        "crashes",
        include_str!("../../migrations/postgres/0003_crashes.sql"),
    ),
];

/// Advisory lock keys (arbitrary, fixed: they must agree across versions).
const MIGRATION_LOCK: i64 = 0x6e61_7669_6e5f_6d31;
const KEY_LOCK_SEED: i64 = 7;
const LEADER_LOCK_SEED: i64 = 11;
const COUNT_SHARDS: i32 = 16;

/// The TLS connector for the queue database: `ca_file`'s certificates, or the platform's
/// roots.
fn tls(ca_file: Option<&std::path::Path>) -> Result<MakeRustlsConnect, QueueError> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| QueueError::DatabaseTls(e.to_string()))?;
    let config = match ca_file {
        Some(path) => {
            let mut roots = rustls::RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(path).map_err(|e| {
                QueueError::DatabaseTls(format!(
                    "cannot read NAVIN_DATABASE_CA_FILE {}: {e}",
                    path.display()
                ))
            })?;
            for cert in certs {
                let cert = cert.map_err(|e| {
                    QueueError::DatabaseTls(format!(
                        "{}: not a PEM certificate: {e}",
                        path.display()
                    ))
                })?;
                roots
                    .add(cert)
                    .map_err(|e| QueueError::DatabaseTls(format!("{}: {e}", path.display())))?;
            }
            if roots.is_empty() {
                return Err(QueueError::DatabaseTls(format!(
                    "{} holds no certificate",
                    path.display()
                )));
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
        None => {
            use rustls_platform_verifier::BuilderVerifierExt;
            builder
                .with_platform_verifier()
                .map_err(|e| QueueError::DatabaseTls(e.to_string()))?
                .with_no_client_auth()
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

pub(super) struct PgQueue {
    pool: Pool,
    config: tokio_postgres::Config,
    tls: MakeRustlsConnect,
    /// This process, as written in `lease_owner`.
    replica: String,
    lease_ms: i64,
}

impl std::fmt::Debug for PgQueue {
    // The connection settings hold the password: only the replica id is shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgQueue")
            .field("replica", &self.replica)
            .finish_non_exhaustive()
    }
}

/// What a running delivery becomes.
enum Outcome<'a> {
    Done,
    Failed(&'a str),
    Retry(&'a str, i64),
}

fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

impl PgQueue {
    /// Connects, applies pending migrations under a lock (so replicas starting together
    /// apply each once), and returns the queue.
    pub(super) async fn connect(url: &str, options: &PgOptions) -> Result<Self, QueueError> {
        let config: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| {
            QueueError::DatabaseUrl(format!(
                "NAVIN_DATABASE_URL is not a PostgreSQL connection string ({e}); \
                 expected postgres://USER:PASSWORD@HOST:PORT/DATABASE"
            ))
        })?;
        let tls = tls(options.ca_file.as_deref())?;
        let manager = Manager::from_config(
            config.clone(),
            tls.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(2))
            .build()
            .map_err(|e| QueueError::DatabaseUrl(e.to_string()))?;
        let mut client = pool.get().await?;
        migrate(&mut client).await?;
        drop(client);
        let replica = format!(
            "{}-{}-{:08x}",
            hostname(),
            std::process::id(),
            rand::random::<u32>()
        );
        Ok(Self {
            pool,
            config,
            tls,
            replica,
            lease_ms: ms(options.lease),
        })
    }

    pub(super) fn lease(&self) -> Duration {
        Duration::from_millis(u64::try_from(self.lease_ms).unwrap_or(60_000))
    }

    pub(super) async fn enqueue(
        &self,
        d: &NewDelivery,
        zbody: &[u8],
    ) -> Result<EnqueueOutcome, QueueError> {
        let headers = serde_json::to_string(&d.headers).unwrap_or_else(|_| "[]".to_owned());
        let key = d.ordering_key();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        lock_key(&tx, &key).await?;
        // A delivery that failed here and arrives again (an admin asked GitHub to
        // redeliver it) runs again, queued afresh at the end of its repository's order,
        // as a retry: its operations may have landed before it failed, so it keeps its
        // first receipt, back to which the engine looks for them.
        let mut received_at_ms = d.received_at_ms;
        let mut attempts: i32 = 0;
        if let Some(row) = tx
            .query_opt(
                "DELETE FROM navin_deliveries WHERE delivery_id = $1 AND state = 'failed' RETURNING seq, received_at_ms",
                &[&d.delivery_id],
            )
            .await?
        {
            let seq: i64 = row.get(0);
            let first: i64 = row.get(1);
            received_at_ms = first.min(received_at_ms);
            attempts = 1;
            tx.execute("DELETE FROM navin_bodies WHERE seq = $1", &[&seq])
                .await?;
            shift(&tx, Some("failed"), None, 1).await?;
        }
        let pending: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM navin_deliveries
                 WHERE ordering_key = $1 AND state IN ('queued', 'running'))",
                &[&key],
            )
            .await?
            .get(0);
        let installation = d.installation_id.map(|id| id as i64);
        let row = tx
            .query_opt(
                "INSERT INTO navin_deliveries
                 (delivery_id, event, action, repository, installation_id, ordering_key,
                  headers, received_at_ms, state, next_attempt_at_ms, is_head, attempts)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued', $8, $9, $10)
                 ON CONFLICT (delivery_id) DO NOTHING
                 RETURNING seq",
                &[
                    &d.delivery_id,
                    &d.event,
                    &d.action,
                    &d.repository,
                    &installation,
                    &key,
                    &headers,
                    &received_at_ms,
                    &!pending,
                    &attempts,
                ],
            )
            .await?;
        let Some(row) = row else {
            tx.commit().await?;
            return Ok(EnqueueOutcome::Duplicate);
        };
        let seq: i64 = row.get(0);
        tx.execute(
            "INSERT INTO navin_bodies (seq, zbody) VALUES ($1, $2)",
            &[&seq, &zbody],
        )
        .await?;
        shift(&tx, None, Some("queued"), 1).await?;
        tx.commit().await?;
        Ok(EnqueueOutcome::Queued)
    }

    /// Takes up to `limit` heads: first those whose replica's lease lapsed (they have
    /// waited longest), then due queued ones, oldest first.
    pub(super) async fn claim(
        &self,
        now_ms: i64,
        limit: usize,
    ) -> Result<Vec<ClaimedDelivery>, QueueError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let lapsed: Vec<i64> = tx
            .query(
                "SELECT seq FROM navin_deliveries
                 WHERE is_head AND state = 'running' AND lease_until_ms < $1
                 ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED",
                &[&now_ms, &limit],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let room = limit - lapsed.len() as i64;
        let due: Vec<i64> = if room > 0 {
            tx.query(
                "SELECT seq FROM navin_deliveries
                 WHERE is_head AND state = 'queued' AND next_attempt_at_ms <= $1
                 ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED",
                &[&now_ms, &room],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect()
        } else {
            Vec::new()
        };
        if !lapsed.is_empty() {
            tracing::warn!(
                deliveries = lapsed.len(),
                "taking over deliveries whose replica stopped renewing its lease"
            );
        }
        let seqs: Vec<i64> = lapsed.iter().chain(&due).copied().collect();
        if seqs.is_empty() {
            tx.commit().await?;
            return Ok(Vec::new());
        }
        let bodies: std::collections::HashMap<i64, Vec<u8>> = tx
            .query(
                "SELECT seq, zbody FROM navin_bodies WHERE seq = ANY($1)",
                &[&seqs],
            )
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        let mut good = Vec::with_capacity(seqs.len());
        let mut inflated = std::collections::HashMap::new();
        for seq in &seqs {
            match bodies.get(seq).map(|z| decompress(z)) {
                Some(Ok(body)) => {
                    inflated.insert(*seq, body);
                    good.push(*seq);
                }
                Some(Err(e)) => {
                    let why = format!("stored payload is damaged ({e}); redeliver it from GitHub");
                    self.settle(&tx, *seq, &Outcome::Failed(&why), now_ms, false)
                        .await?;
                }
                None => {
                    let why = "stored payload is missing; redeliver it from GitHub";
                    self.settle(&tx, *seq, &Outcome::Failed(why), now_ms, false)
                        .await?;
                }
            }
        }
        let rows = tx
            .query(
                "UPDATE navin_deliveries
                 SET state = 'running', attempts = attempts + 1,
                     crashes = crashes + CASE WHEN state = 'running' THEN 1 ELSE 0 END,
                     lease_owner = $2, lease_until_ms = $3
                 WHERE seq = ANY($1)
                 RETURNING seq, delivery_id, event, action, repository, installation_id,
                           headers, received_at_ms, attempts, crashes",
                &[&good, &self.replica, &now_ms.saturating_add(self.lease_ms)],
            )
            .await?;
        let newly_running = due.iter().filter(|s| good.contains(s)).count() as i64;
        shift(&tx, Some("queued"), Some("running"), newly_running).await?;
        tx.commit().await?;
        let mut claimed: Vec<ClaimedDelivery> = rows
            .iter()
            .map(|row| {
                let seq: i64 = row.get(0);
                let headers: String = row.get(6);
                let attempts: i32 = row.get(8);
                ClaimedDelivery {
                    seq,
                    delivery_id: row.get(1),
                    event: row.get(2),
                    action: row.get(3),
                    repository: row.get(4),
                    installation_id: row.get::<_, Option<i64>>(5).map(|v| v as u64),
                    headers: serde_json::from_str(&headers).unwrap_or_default(),
                    body: inflated.remove(&seq).unwrap_or_default().into(),
                    received_at_ms: row.get(7),
                    attempt: u32::try_from(attempts).unwrap_or(u32::MAX),
                    crashes: u32::try_from(row.get::<_, i32>(9)).unwrap_or(0),
                    final_attempt: false,
                }
            })
            .collect();
        claimed.sort_by_key(|d| d.seq);
        Ok(claimed)
    }

    pub(super) async fn complete(&self, seq: i64, now_ms: i64) -> Result<(), QueueError> {
        self.finish(seq, Outcome::Done, now_ms).await
    }

    pub(super) async fn retry_at(
        &self,
        seq: i64,
        error: &str,
        at_ms: i64,
    ) -> Result<(), QueueError> {
        self.finish(seq, Outcome::Retry(error, at_ms), at_ms).await
    }

    pub(super) async fn fail(&self, seq: i64, error: &str, now_ms: i64) -> Result<(), QueueError> {
        self.finish(seq, Outcome::Failed(error), now_ms).await
    }

    async fn finish(&self, seq: i64, outcome: Outcome<'_>, now_ms: i64) -> Result<(), QueueError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        self.settle(&tx, seq, &outcome, now_ms, true).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Records `outcome` for `seq` inside `tx`. With `owned`, only while this replica
    /// still holds the lease: after a takeover the other replica's outcome counts.
    async fn settle(
        &self,
        tx: &Transaction<'_>,
        seq: i64,
        outcome: &Outcome<'_>,
        now_ms: i64,
        owned: bool,
    ) -> Result<(), QueueError> {
        let Some(row) = tx
            .query_opt(
                "SELECT ordering_key FROM navin_deliveries WHERE seq = $1",
                &[&seq],
            )
            .await?
        else {
            return Ok(());
        };
        let key: String = row.get(0);
        lock_key(tx, &key).await?;
        let row = tx
            .query_one(
                "SELECT state, is_head, lease_owner FROM navin_deliveries
                 WHERE seq = $1 FOR UPDATE",
                &[&seq],
            )
            .await?;
        let state: String = row.get(0);
        let was_head: bool = row.get(1);
        let owner: Option<String> = row.get(2);
        if owned && (state != "running" || owner.as_deref() != Some(self.replica.as_str())) {
            tracing::warn!(
                seq,
                "another replica took this delivery over; its outcome here is not recorded"
            );
            return Ok(());
        }
        let to = match outcome {
            Outcome::Done => {
                tx.execute(
                    "UPDATE navin_deliveries SET state = 'done', last_error = NULL,
                            finished_at_ms = $2, is_head = FALSE,
                            lease_owner = NULL, lease_until_ms = NULL
                     WHERE seq = $1",
                    &[&seq, &now_ms],
                )
                .await?;
                tx.execute("DELETE FROM navin_bodies WHERE seq = $1", &[&seq])
                    .await?;
                "done"
            }
            Outcome::Failed(error) => {
                tx.execute(
                    "UPDATE navin_deliveries SET state = 'failed', last_error = $2,
                            finished_at_ms = $3, is_head = FALSE,
                            lease_owner = NULL, lease_until_ms = NULL
                     WHERE seq = $1",
                    &[&seq, error, &now_ms],
                )
                .await?;
                "failed"
            }
            Outcome::Retry(error, at_ms) => {
                tx.execute(
                    "UPDATE navin_deliveries SET state = 'queued', last_error = $2,
                            next_attempt_at_ms = $3, lease_owner = NULL, lease_until_ms = NULL
                     WHERE seq = $1",
                    &[&seq, error, at_ms],
                )
                .await?;
                "queued"
            }
        };
        shift(tx, Some(&state), Some(to), 1).await?;
        if was_head && to != "queued" {
            tx.execute(
                "UPDATE navin_deliveries SET is_head = TRUE WHERE seq = (
                     SELECT seq FROM navin_deliveries
                     WHERE ordering_key = $1 AND state IN ('queued', 'running')
                     ORDER BY seq LIMIT 1)",
                &[&key],
            )
            .await?;
        }
        Ok(())
    }

    /// Extends this replica's leases on deliveries it is still running.
    pub(super) async fn renew(&self, seqs: &[i64], now_ms: i64) -> Result<(), QueueError> {
        if seqs.is_empty() {
            return Ok(());
        }
        let client = self.pool.get().await?;
        client
            .execute(
                "UPDATE navin_deliveries SET lease_until_ms = $2
                 WHERE seq = ANY($1) AND lease_owner = $3 AND state = 'running'",
                &[&seqs, &now_ms.saturating_add(self.lease_ms), &self.replica],
            )
            .await?;
        Ok(())
    }

    pub(super) async fn known(&self, ids: &[String]) -> Result<HashSet<String>, QueueError> {
        let client = self.pool.get().await?;
        Ok(client
            .query(
                "SELECT delivery_id FROM navin_deliveries WHERE delivery_id = ANY($1)",
                &[&ids],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    pub(super) async fn stats(&self) -> Result<QueueStats, QueueError> {
        let client = self.pool.get().await?;
        let mut stats = QueueStats::default();
        for row in client
            .query(
                "SELECT state, SUM(n)::BIGINT FROM navin_counts GROUP BY state",
                &[],
            )
            .await?
        {
            stats.set(row.get(0), row.get(1));
        }
        Ok(stats)
    }

    pub(super) async fn status(&self, id: &str) -> Result<Option<DeliveryStatus>, QueueError> {
        let client = self.pool.get().await?;
        Ok(client
            .query_opt(
                "SELECT state, attempts, last_error FROM navin_deliveries WHERE delivery_id = $1",
                &[&id],
            )
            .await?
            .map(|row| DeliveryStatus {
                state: row.get(0),
                attempts: u32::try_from(row.get::<_, i32>(1)).unwrap_or(0),
                last_error: row.get(2),
            }))
    }

    /// The page `plan` asks for, newest first, in one statement: a backward scan of
    /// `navin_deliveries_by_state` (or `_by_key_state`) per state (and repository),
    /// each stopped after a page of rows, then merged.
    pub(super) async fn list(&self, plan: &ListPlan) -> Result<Vec<DeliveryRow>, QueueError> {
        const COLUMNS: &str = "d.seq, d.delivery_id, d.event, d.action, d.repository,
            d.installation_id, d.state, d.attempts, d.last_error, d.received_at_ms,
            d.next_attempt_at_ms, d.finished_at_ms";
        let states: Vec<&str> = plan.states.iter().map(|s| s.as_str()).collect();
        let limit = plan.limit as i64;
        let client = self.pool.get().await?;
        let rows = match &plan.keys {
            None => {
                let sql = format!(
                    "SELECT {COLUMNS} FROM unnest($1::TEXT[]) AS s (state)
                     CROSS JOIN LATERAL (
                         SELECT * FROM navin_deliveries
                         WHERE state = s.state AND seq < $2
                         ORDER BY seq DESC LIMIT $3) AS d
                     ORDER BY d.seq DESC LIMIT $3"
                );
                client
                    .query(&sql, &[&states, &plan.before_seq, &limit])
                    .await?
            }
            Some(keys) => {
                let sql = format!(
                    "SELECT {COLUMNS} FROM unnest($1::TEXT[]) AS s (state)
                     CROSS JOIN unnest($4::TEXT[]) AS k (ordering_key)
                     CROSS JOIN LATERAL (
                         SELECT * FROM navin_deliveries
                         WHERE ordering_key = k.ordering_key AND state = s.state
                           AND seq < $2
                         ORDER BY seq DESC LIMIT $3) AS d
                     ORDER BY d.seq DESC LIMIT $3"
                );
                client
                    .query(&sql, &[&states, &plan.before_seq, &limit, keys])
                    .await?
            }
        };
        rows.iter()
            .map(|row| {
                Ok(DeliveryRow {
                    seq: row.get(0),
                    delivery_id: row.get(1),
                    event: row.get(2),
                    action: row.get(3),
                    repository: row.get(4),
                    installation_id: row.get::<_, Option<i64>>(5).map(|v| v as u64),
                    state: row.get::<_, &str>(6).parse()?,
                    attempts: u32::try_from(row.get::<_, i32>(7)).unwrap_or(0),
                    last_error: row.get(8),
                    received_at_ms: row.get(9),
                    next_attempt_at_ms: row.get(10),
                    finished_at_ms: row.get(11),
                })
            })
            .collect()
    }

    /// Forgets up to `batch` finished deliveries older than the cutoffs.
    pub(super) async fn prune(
        &self,
        done_before_ms: i64,
        failed_before_ms: i64,
        batch: usize,
    ) -> Result<usize, QueueError> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await?;
        let mut removed = 0usize;
        for (state, before) in [("done", done_before_ms), ("failed", failed_before_ms)] {
            let room = i64::try_from(batch - removed).unwrap_or(i64::MAX);
            let n = tx
                .query(
                    "WITH gone AS (
                         SELECT seq FROM navin_deliveries
                         WHERE finished_at_ms IS NOT NULL AND finished_at_ms < $1 AND state = $2
                         ORDER BY finished_at_ms LIMIT $3 FOR UPDATE SKIP LOCKED)
                     DELETE FROM navin_deliveries AS d USING gone WHERE d.seq = gone.seq
                     RETURNING d.seq",
                    &[&before, &state, &room],
                )
                .await?
                .len();
            shift(&tx, Some(state), None, n as i64).await?;
            removed += n;
            if removed >= batch {
                break;
            }
        }
        tx.commit().await?;
        Ok(removed)
    }

    /// Becomes the leader for `role` if no live replica is: the lock is held by a
    /// connection of its own for as long as the returned guard lives.
    pub(super) async fn try_lead(&self, role: &str) -> Result<Option<PgLeader>, QueueError> {
        let (client, connection) = self.config.connect(self.tls.clone()).await?;
        let task = tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "leader connection to the queue database closed");
            }
        });
        let held: bool = client
            .query_one(
                "SELECT pg_try_advisory_lock(hashtextextended($1, $2))",
                &[&role, &LEADER_LOCK_SEED],
            )
            .await?
            .get(0);
        if held {
            Ok(Some(PgLeader { client, task }))
        } else {
            task.abort();
            Ok(None)
        }
    }

    pub(super) fn close(&self) {
        self.pool.close();
    }
}

/// Leadership held through an open connection's session lock.
pub struct PgLeader {
    client: tokio_postgres::Client,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for PgLeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgLeader")
            .field("held", &!self.client.is_closed())
            .finish()
    }
}

impl PgLeader {
    /// False once the connection (and with it the lock) is gone.
    pub fn held(&self) -> bool {
        !self.client.is_closed()
    }
}

impl Drop for PgLeader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn lock_key(tx: &Transaction<'_>, key: &str) -> Result<(), tokio_postgres::Error> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, $2))",
        &[&key, &KEY_LOCK_SEED],
    )
    .await?;
    Ok(())
}

async fn shift(
    tx: &Transaction<'_>,
    from: Option<&str>,
    to: Option<&str>,
    k: i64,
) -> Result<(), tokio_postgres::Error> {
    if from == to || k == 0 {
        return Ok(());
    }
    let shard = rand::random_range(0..COUNT_SHARDS);
    for (state, delta) in [(from, -k), (to, k)] {
        if let Some(state) = state {
            tx.execute(
                "UPDATE navin_counts SET n = n + $3 WHERE state = $1 AND shard = $2",
                &[&state, &shard, &delta],
            )
            .await?;
        }
    }
    Ok(())
}

/// Applies the migrations this binary knows and the database lacks, one transaction
/// under an advisory lock; refuses a database migrated by a newer navin.
async fn migrate(client: &mut tokio_postgres::Client) -> Result<(), QueueError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS navin_schema_migrations (
             version    INTEGER     PRIMARY KEY,
             name       TEXT        NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )
    .await?;
    let applied: HashSet<i32> = tx
        .query("SELECT version FROM navin_schema_migrations", &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let known = MIGRATIONS.iter().map(|m| m.0).max().unwrap_or(0);
    if let Some(newer) = applied.iter().copied().filter(|v| *v > known).max() {
        return Err(QueueError::DatabaseTooNew {
            found: newer,
            known,
        });
    }
    for (version, name, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO navin_schema_migrations (version, name) VALUES ($1, $2)",
            &[version, name],
        )
        .await?;
        tracing::info!(version, name, "applied queue database migration");
    }
    tx.commit().await?;
    Ok(())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "navin".to_owned())
}
