//! The queue's statements. Each touches the rows it returns plus O(log n) index entries,
//! never a scan of the backlog: heads are found through `deliveries_due_heads`, the
//! next head of a key through `deliveries_pending_by_key`, counts through `counts`,
//! a listing's rows through `deliveries_by_state` or `deliveries_by_key_state`.
//! `INDEXED BY` makes a statement fail to prepare, rather than silently scan, if its
//! index ever stops applying.

use std::collections::HashSet;
use std::io::Read;

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ValueRef};
use rusqlite::{params, Connection, OptionalExtension};

use super::list::{ListPlan, Newest};
use super::{
    ClaimedDelivery, DeliveryRow, DeliveryState, EnqueueOutcome, NewDelivery, QueueStats,
    UnknownState,
};

/// zstd level: GitHub's JSON payloads shrink about tenfold at level 3 in ~0.1 ms per
/// 25 KB; higher levels cost more CPU on the webhook path for little more.
const ZSTD_LEVEL: i32 = 3;

/// No stored payload inflates past this: GitHub caps a payload at 25 MiB, and a damaged
/// frame must not make a claim allocate without bound.
const MAX_BODY_BYTES: u64 = 32 * 1024 * 1024;

pub(super) fn compress(body: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    zstd::bulk::compress(body, ZSTD_LEVEL)
}

pub(super) fn decompress(zbody: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    zstd::stream::read::Decoder::new(zbody)?
        .take(MAX_BODY_BYTES + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > MAX_BODY_BYTES {
        return Err(std::io::Error::other("inflates past 32 MiB"));
    }
    Ok(out)
}

/// Moves `k` rows from one state's count to another's (either side may be none).
fn shift(tx: &Connection, from: Option<&str>, to: Option<&str>, k: i64) -> rusqlite::Result<()> {
    if from == to || k == 0 {
        return Ok(());
    }
    let mut stmt = tx.prepare_cached("UPDATE counts SET n = n + ?2 WHERE state = ?1")?;
    if let Some(from) = from {
        stmt.execute(params![from, -k])?;
    }
    if let Some(to) = to {
        stmt.execute(params![to, k])?;
    }
    Ok(())
}

/// A key's oldest unfinished delivery: one seek in the partial index of pending rows.
pub(super) const OLDEST_PENDING: &str = "
    SELECT seq FROM deliveries INDEXED BY deliveries_pending_by_key
    WHERE ordering_key = ?1 AND state IN ('queued', 'running')
    ORDER BY seq LIMIT 1";

fn oldest_pending(tx: &Connection, key: &str) -> rusqlite::Result<Option<i64>> {
    tx.prepare_cached(OLDEST_PENDING)?
        .query_row(params![key], |row| row.get(0))
        .optional()
}

/// A delivery that failed here and arrives again (an admin asked GitHub to redeliver
/// it) runs again: its failed row is dropped so the insert below queues it afresh, at
/// the end of its repository's order. Operations it applied before failing carry its
/// id and are not applied twice.
/// Removes a failed row of `delivery_id`, returning when it was first received: its
/// operations may have landed before it failed, so its next run is a retry that looks
/// for them back to then.
fn forget_failed(tx: &Connection, delivery_id: &str) -> rusqlite::Result<Option<i64>> {
    let row: Option<(i64, i64)> = tx
        .prepare_cached(
            "DELETE FROM deliveries WHERE delivery_id = ?1 AND state = 'failed' RETURNING seq, received_at_ms",
        )?
        .query_row(params![delivery_id], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()?;
    let Some((seq, received_at_ms)) = row else {
        return Ok(None);
    };
    tx.prepare_cached("DELETE FROM bodies WHERE seq = ?1")?
        .execute(params![seq])?;
    shift(tx, Some("failed"), None, 1)?;
    Ok(Some(received_at_ms))
}

/// After a key's head finished, its next unfinished delivery (if any) becomes the head.
fn promote_next(tx: &Connection, key: &str) -> rusqlite::Result<()> {
    if let Some(seq) = oldest_pending(tx, key)? {
        tx.prepare_cached("UPDATE deliveries SET is_head = 1 WHERE seq = ?1")?
            .execute(params![seq])?;
    }
    Ok(())
}

pub(super) fn insert(
    tx: &Connection,
    d: &NewDelivery,
    zbody: &[u8],
) -> rusqlite::Result<EnqueueOutcome> {
    // A redelivered failure keeps its first receipt and counts as its second attempt.
    let (received_at_ms, attempts) = match forget_failed(tx, &d.delivery_id)? {
        Some(first) => (first.min(d.received_at_ms), 1_i64),
        None => (d.received_at_ms, 0),
    };
    let headers = serde_json::to_string(&d.headers).unwrap_or_else(|_| "[]".to_owned());
    let key = d.ordering_key();
    let is_head = oldest_pending(tx, &key)?.is_none();
    let inserted = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO deliveries
             (delivery_id, event, action, repository, installation_id, ordering_key,
              headers, received_at_ms, state, next_attempt_at_ms, is_head, attempts)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'queued', ?8, ?9, ?10)",
        )?
        .execute(params![
            d.delivery_id,
            d.event,
            d.action,
            d.repository,
            d.installation_id.map(|id| id as i64),
            key,
            headers,
            received_at_ms,
            is_head,
            attempts,
        ])?;
    if inserted == 0 {
        return Ok(EnqueueOutcome::Duplicate);
    }
    tx.prepare_cached("INSERT INTO bodies (seq, zbody) VALUES (?1, ?2)")?
        .execute(params![tx.last_insert_rowid(), zbody])?;
    shift(tx, None, Some("queued"), 1)?;
    Ok(EnqueueOutcome::Queued)
}

/// Due heads, oldest first: reads only the partial index of queued heads.
pub(super) const CLAIM_HEADS: &str = "
    SELECT seq, delivery_id, event, action, repository, installation_id, headers,
           received_at_ms, attempts, crashes
    FROM deliveries INDEXED BY deliveries_due_heads
    WHERE is_head = 1 AND state = 'queued' AND next_attempt_at_ms <= ?1
    ORDER BY seq
    LIMIT ?2";

/// Claims up to `limit` due heads in arrival order, so each repository's deliveries
/// run one at a time, in order. A head whose stored payload is damaged is failed with
/// that reason (its key moves on) instead of being handed out or blocking the key.
pub(super) fn claim(
    tx: &Connection,
    now_ms: i64,
    limit: usize,
) -> rusqlite::Result<Vec<ClaimedDelivery>> {
    let mut stmt = tx.prepare_cached(CLAIM_HEADS)?;
    let heads = stmt
        .query_map(params![now_ms, limit as i64], |row| {
            let headers: String = row.get(6)?;
            let attempts: i64 = row.get(8)?;
            Ok(ClaimedDelivery {
                seq: row.get(0)?,
                delivery_id: row.get(1)?,
                event: row.get(2)?,
                action: row.get(3)?,
                repository: row.get(4)?,
                installation_id: row.get::<_, Option<i64>>(5)?.map(|v| v as u64),
                headers: serde_json::from_str(&headers).unwrap_or_default(),
                body: bytes::Bytes::new(),
                received_at_ms: row.get(7)?,
                attempt: u32::try_from(attempts + 1).unwrap_or(u32::MAX),
                crashes: u32::try_from(row.get::<_, i64>(9)?).unwrap_or(0),
                final_attempt: false,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut claimed = Vec::with_capacity(heads.len());
    for mut d in heads {
        let zbody: Option<Vec<u8>> = tx
            .prepare_cached("SELECT zbody FROM bodies WHERE seq = ?1")?
            .query_row(params![d.seq], |row| row.get(0))
            .optional()?;
        let body = match zbody.as_deref().map(decompress) {
            Some(Ok(body)) => body,
            Some(Err(e)) => {
                let why = format!("stored payload is damaged ({e}); redeliver it from GitHub");
                tracing::error!(delivery = %d.delivery_id, error = %why, "cannot read a queued delivery");
                fail(tx, d.seq, &why, now_ms)?;
                continue;
            }
            None => {
                let why = "stored payload is missing; redeliver it from GitHub";
                tracing::error!(delivery = %d.delivery_id, error = %why, "cannot read a queued delivery");
                fail(tx, d.seq, why, now_ms)?;
                continue;
            }
        };
        d.body = body.into();
        tx.prepare_cached(
            "UPDATE deliveries SET state = 'running', attempts = attempts + 1 WHERE seq = ?1",
        )?
        .execute(params![d.seq])?;
        shift(tx, Some("queued"), Some("running"), 1)?;
        claimed.push(d);
    }
    Ok(claimed)
}

/// A row's state, key and head mark before a transition.
fn before(tx: &Connection, seq: i64) -> rusqlite::Result<Option<(String, String, bool)>> {
    tx.prepare_cached("SELECT state, ordering_key, is_head FROM deliveries WHERE seq = ?1")?
        .query_row(params![seq], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()
}

/// Done: the payload is dropped (only the id is needed for deduplication from now on).
pub(super) fn complete(tx: &Connection, seq: i64, now_ms: i64) -> rusqlite::Result<()> {
    let Some((state, key, was_head)) = before(tx, seq)? else {
        return Ok(());
    };
    tx.prepare_cached(
        "UPDATE deliveries SET state = 'done', last_error = NULL, finished_at_ms = ?2,
                is_head = 0 WHERE seq = ?1",
    )?
    .execute(params![seq, now_ms])?;
    tx.prepare_cached("DELETE FROM bodies WHERE seq = ?1")?
        .execute(params![seq])?;
    shift(tx, Some(&state), Some("done"), 1)?;
    if was_head {
        promote_next(tx, &key)?;
    }
    Ok(())
}

/// Back in the queue as its key's head, due at `at_ms`: later deliveries of the key
/// keep waiting behind it, which is what keeps a repository's events in order.
pub(super) fn retry_at(tx: &Connection, seq: i64, error: &str, at_ms: i64) -> rusqlite::Result<()> {
    let Some((state, _, _)) = before(tx, seq)? else {
        return Ok(());
    };
    tx.prepare_cached(
        "UPDATE deliveries SET state = 'queued', last_error = ?2, next_attempt_at_ms = ?3
         WHERE seq = ?1",
    )?
    .execute(params![seq, error, at_ms])?;
    shift(tx, Some(&state), Some("queued"), 1)
}

/// Failed for good: the body is kept so an operator can inspect or requeue it.
pub(super) fn fail(tx: &Connection, seq: i64, error: &str, now_ms: i64) -> rusqlite::Result<()> {
    let Some((state, key, was_head)) = before(tx, seq)? else {
        return Ok(());
    };
    tx.prepare_cached(
        "UPDATE deliveries SET state = 'failed', last_error = ?2, finished_at_ms = ?3,
                is_head = 0 WHERE seq = ?1",
    )?
    .execute(params![seq, error, now_ms])?;
    shift(tx, Some(&state), Some("failed"), 1)?;
    if was_head {
        promote_next(tx, &key)?;
    }
    Ok(())
}

/// Deliveries a crash left running go back to the queue (at-least-once); they are
/// still their keys' heads. The run a crash cut short did not fail, so it is counted
/// as a crash, not against the attempts a failing delivery gets.
pub(super) fn requeue_running(conn: &mut Connection) -> rusqlite::Result<usize> {
    let tx = conn.transaction()?;
    let n = tx
        .prepare_cached(
            "UPDATE deliveries INDEXED BY deliveries_running
             SET state = 'queued', crashes = crashes + 1
             WHERE state = 'running'",
        )?
        .execute([])?;
    shift(&tx, Some("running"), Some("queued"), n as i64)?;
    tx.commit()?;
    Ok(n)
}

pub(super) fn known(tx: &Connection, ids: &[String]) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = tx.prepare_cached("SELECT 1 FROM deliveries WHERE delivery_id = ?1")?;
    let mut held = HashSet::new();
    for id in ids {
        if stmt.exists(params![id])? {
            held.insert(id.clone());
        }
    }
    Ok(held)
}

pub(super) fn stats(tx: &Connection) -> rusqlite::Result<QueueStats> {
    let mut stats = QueueStats::default();
    let mut stmt = tx.prepare_cached("SELECT state, n FROM counts")?;
    let rows = stmt.query_map([], |row| {
        Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
    })?;
    for row in rows {
        let (state, count) = row?;
        stats.set(&state, count);
    }
    Ok(stats)
}

/// Forgets up to `batch` finished deliveries older than the cutoffs, reading only the
/// old end of `deliveries_finished` (never a queued row). Done rows must outlive
/// GitHub's redelivery window (3 days, 7 on GHES) or a late redelivery would run twice.
pub(super) fn prune(
    tx: &Connection,
    done_before_ms: i64,
    failed_before_ms: i64,
    batch: usize,
) -> rusqlite::Result<usize> {
    let mut removed = 0;
    for (state, before_ms) in [("done", done_before_ms), ("failed", failed_before_ms)] {
        let seqs = tx
            .prepare_cached(
                "SELECT seq FROM deliveries INDEXED BY deliveries_finished
                 WHERE finished_at_ms IS NOT NULL AND finished_at_ms < ?1 AND state = ?2
                 LIMIT ?3",
            )?
            .query_map(params![before_ms, state, (batch - removed) as i64], |row| {
                row.get::<_, i64>(0)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        for seq in &seqs {
            tx.prepare_cached("DELETE FROM deliveries WHERE seq = ?1")?
                .execute(params![seq])?;
            tx.prepare_cached("DELETE FROM bodies WHERE seq = ?1")?
                .execute(params![seq])?;
        }
        shift(tx, Some(state), None, seqs.len() as i64)?;
        removed += seqs.len();
        if removed >= batch {
            break;
        }
    }
    Ok(removed)
}

/// One row's state and error, for tests and operators.
pub(super) fn status(
    tx: &Connection,
    delivery_id: &str,
) -> rusqlite::Result<Option<(String, u32, Option<String>)>> {
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

/// The newest rows of one state below `?2` and above `?3` (a page's floor so far):
/// reads only that state's end of `deliveries_by_state`, never the row itself.
pub(super) const LIST_BY_STATE: &str = "
    SELECT seq FROM deliveries INDEXED BY deliveries_by_state
    WHERE state = ?1 AND seq < ?2 AND seq > ?3
    ORDER BY seq DESC
    LIMIT ?4";

/// The same for one repository's ordering key and one state.
pub(super) const LIST_BY_KEY: &str = "
    SELECT seq FROM deliveries INDEXED BY deliveries_by_key_state
    WHERE ordering_key = ?1 AND state = ?2 AND seq < ?3 AND seq > ?4
    ORDER BY seq DESC
    LIMIT ?5";

const LIST_ROW: &str = "
    SELECT seq, delivery_id, event, action, repository, installation_id, state, attempts,
           last_error, received_at_ms, next_attempt_at_ms, finished_at_ms
    FROM deliveries WHERE seq = ?1";

impl FromSql for DeliveryState {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        value
            .as_str()?
            .parse()
            .map_err(|e: UnknownState| FromSqlError::Other(Box::new(e)))
    }
}

/// The page `plan` asks for, newest first. Each state (or state and repository) is
/// one index seek reading at most a page of entries, and no more than can still beat
/// the page so far; only the rows returned are read from the table.
pub(super) fn list(tx: &Connection, plan: &ListPlan) -> rusqlite::Result<Vec<DeliveryRow>> {
    let mut newest = Newest::new(plan.limit);
    let limit = plan.limit as i64;
    for state in &plan.states {
        let state = state.as_str();
        match &plan.keys {
            None => {
                let mut stmt = tx.prepare_cached(LIST_BY_STATE)?;
                let mut rows =
                    stmt.query(params![state, plan.before_seq, newest.floor(), limit])?;
                while let Some(row) = rows.next()? {
                    newest.offer(row.get(0)?);
                }
            }
            Some(keys) => {
                let mut stmt = tx.prepare_cached(LIST_BY_KEY)?;
                for key in keys {
                    let mut rows =
                        stmt.query(params![key, state, plan.before_seq, newest.floor(), limit])?;
                    while let Some(row) = rows.next()? {
                        newest.offer(row.get(0)?);
                    }
                }
            }
        }
    }
    let mut stmt = tx.prepare_cached(LIST_ROW)?;
    newest
        .into_desc()
        .map(|seq| {
            stmt.query_row(params![seq], |row| {
                Ok(DeliveryRow {
                    seq: row.get(0)?,
                    delivery_id: row.get(1)?,
                    event: row.get(2)?,
                    action: row.get(3)?,
                    repository: row.get(4)?,
                    installation_id: row.get::<_, Option<i64>>(5)?.map(|v| v as u64),
                    state: row.get(6)?,
                    attempts: u32::try_from(row.get::<_, i64>(7)?).unwrap_or(u32::MAX),
                    last_error: row.get(8)?,
                    received_at_ms: row.get(9)?,
                    next_attempt_at_ms: row.get(10)?,
                    finished_at_ms: row.get(11)?,
                })
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "sql_tests.rs"]
mod tests;
