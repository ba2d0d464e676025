//! Brings a queue file to the current schema in one transaction, so an upgrade keeps
//! every queued, running and failed delivery (GitHub will not send them again).

use rusqlite::{params, Connection, TransactionBehavior};

use super::schema::{ADDED_COLUMNS, ADDED_INDEXES, SCHEMA, SCHEMA_VERSION};
use super::sql::compress;

/// Why a queue file cannot be used as it is.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(
        "schema version {found} was written by a newer navin (this one reads up to \
         {SCHEMA_VERSION}); run that version, or move the file aside to start an empty queue"
    )]
    TooNew { found: i64 },
    #[error("a stored payload cannot be compressed: {0}")]
    Compress(std::io::Error),
}

/// Creates the schema in an empty file, moves a version-1 file forward, adds the
/// indexes a version-2 file may lack, and refuses a file from a newer version rather
/// than guess at its meaning.
pub(super) fn to_current(conn: &mut Connection) -> Result<(), MigrateError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if found > SCHEMA_VERSION {
        return Err(MigrateError::TooNew { found });
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if found < SCHEMA_VERSION {
        if has_inline_bodies(&tx)? {
            from_v1(&tx)?;
        } else {
            tx.execute_batch(SCHEMA)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    add_columns(&tx)?;
    add_indexes(&tx, found == SCHEMA_VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Adds each of [`ADDED_COLUMNS`] the file lacks (a file from before them, or built by
/// a version-1 migration that predates them).
fn add_columns(tx: &Connection) -> Result<(), rusqlite::Error> {
    let mut exists = tx.prepare("SELECT 1 FROM pragma_table_info('deliveries') WHERE name = ?1")?;
    for (name, alter) in ADDED_COLUMNS {
        if !exists.exists(params![name])? {
            tx.execute_batch(alter)?;
        }
    }
    Ok(())
}

/// Builds each of [`ADDED_INDEXES`] the file lacks. On a file that held deliveries
/// already this reads every row once, so the slower first start is logged.
fn add_indexes(tx: &Connection, existing_file: bool) -> Result<(), rusqlite::Error> {
    let mut exists =
        tx.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")?;
    for (name, create) in ADDED_INDEXES {
        if exists.exists(params![name])? {
            continue;
        }
        tx.execute_batch(create)?;
        if existing_file {
            tracing::info!(
                index = name,
                "built a delivery queue index this file lacked"
            );
        }
    }
    Ok(())
}

/// Version 1 (before `user_version` was set) kept each payload in `deliveries.body`.
fn has_inline_bodies(tx: &Connection) -> Result<bool, rusqlite::Error> {
    let mut stmt =
        tx.prepare("SELECT 1 FROM pragma_table_info('deliveries') WHERE name = 'body'")?;
    stmt.exists([])
}

fn from_v1(tx: &Connection) -> Result<(), MigrateError> {
    tx.execute_batch(
        "ALTER TABLE deliveries ADD COLUMN is_head INTEGER NOT NULL DEFAULT 0;
         DROP INDEX IF EXISTS deliveries_queued;",
    )?;
    tx.execute_batch(SCHEMA)?;
    {
        let mut read = tx.prepare("SELECT seq, body FROM deliveries WHERE body IS NOT NULL")?;
        let mut write = tx.prepare("INSERT INTO bodies (seq, zbody) VALUES (?1, ?2)")?;
        let mut rows = read.query([])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let body: Vec<u8> = row.get(1)?;
            write.execute(params![
                seq,
                compress(&body).map_err(MigrateError::Compress)?
            ])?;
        }
    }
    tx.execute_batch(
        "ALTER TABLE deliveries DROP COLUMN body;
         UPDATE deliveries SET is_head = 1 WHERE seq IN (
             SELECT MIN(seq) FROM deliveries
             WHERE state IN ('queued', 'running') GROUP BY ordering_key);
         UPDATE counts SET n = (SELECT COUNT(*) FROM deliveries AS d WHERE d.state = counts.state);",
    )?;
    Ok(())
}
