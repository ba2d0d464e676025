-- The delivery queue shared by several `navin serve` replicas (NAVIN_DATABASE_URL).
-- Same model as the embedded SQLite queue: each ordering key's oldest unfinished
-- delivery is its head, and only heads are claimed; a running delivery is leased by
-- one replica and is claimable again once its lease lapses (the replica died).

CREATE TABLE navin_deliveries (
    seq                BIGSERIAL PRIMARY KEY,
    delivery_id        TEXT    NOT NULL UNIQUE,
    event              TEXT    NOT NULL,
    action             TEXT,
    repository         TEXT,
    installation_id    BIGINT,
    ordering_key       TEXT    NOT NULL,
    headers            TEXT    NOT NULL,
    received_at_ms     BIGINT  NOT NULL,
    state              TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts           INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms BIGINT  NOT NULL,
    last_error         TEXT,
    finished_at_ms     BIGINT,
    is_head            BOOLEAN NOT NULL DEFAULT FALSE,
    lease_owner        TEXT,
    lease_until_ms     BIGINT
);

-- Payloads as zstd frames, out of the rows that claims and counts read.
CREATE TABLE navin_bodies (
    seq   BIGINT PRIMARY KEY REFERENCES navin_deliveries (seq) ON DELETE CASCADE,
    zbody BYTEA  NOT NULL
);

-- Per-state counts, split in shards so concurrent replicas do not queue up on one row.
CREATE TABLE navin_counts (
    state TEXT    NOT NULL,
    shard INTEGER NOT NULL,
    n     BIGINT  NOT NULL DEFAULT 0,
    PRIMARY KEY (state, shard)
);
INSERT INTO navin_counts (state, shard)
    SELECT s, g FROM unnest(ARRAY['queued', 'running', 'done', 'failed']) AS s,
                     generate_series(0, 15) AS g;

CREATE INDEX navin_deliveries_pending_by_key
    ON navin_deliveries (ordering_key, seq) WHERE state IN ('queued', 'running');
CREATE INDEX navin_deliveries_due_heads
    ON navin_deliveries (next_attempt_at_ms) WHERE is_head AND state = 'queued';
CREATE INDEX navin_deliveries_lapsed_heads
    ON navin_deliveries (lease_until_ms) WHERE is_head AND state = 'running';
CREATE INDEX navin_deliveries_finished
    ON navin_deliveries (finished_at_ms) WHERE finished_at_ms IS NOT NULL;
