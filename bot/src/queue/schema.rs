//! The queue file's tables and indexes, below both the store that opens the file and the migration that builds them.
//!
//! Why this schema: GitHub can be unreachable for an hour while deliveries keep
//! arriving, so nothing a webhook or a worker does may cost more as the backlog grows.
//! Each ordering key's oldest unfinished delivery is marked its head (`is_head`), and a
//! claim reads only due heads through a partial index; per-state counts are kept in
//! `counts` inside the same transactions; payloads are zstd frames in `bodies`, out of
//! the rows that claims, stats and pruning read.

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
    is_head            INTEGER NOT NULL DEFAULT 0,
    crashes            INTEGER NOT NULL DEFAULT 0
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

/// Columns added to version 2 since it was written, added at every open where a file
/// lacks them, for the same reason as [`ADDED_INDEXES`]: with a default, an older navin
/// reads and writes the file without knowing them.
pub(super) const ADDED_COLUMNS: &[(&str, &str)] = &[(
    // Runs cut short by a crash, kept apart from failed attempts (`sql::requeue_running`).
    "crashes",
    "ALTER TABLE deliveries ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0",
)];

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
