//! The queue's statements against a real SQLite database: invariants under arbitrary
//! operation sequences, cost independent of the backlog, and the upgrade from version 1.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use rusqlite::{params, Connection, StatementStatus};

use super::*;
use crate::queue::list::ListPlan;
use crate::queue::{migrate, DeliveryFilter};

fn open() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    migrate::to_current(&mut conn).unwrap();
    conn
}

fn delivery(id: &str, repo: &str) -> NewDelivery {
    NewDelivery {
        delivery_id: id.to_owned(),
        event: "issue_comment".to_owned(),
        action: Some("created".to_owned()),
        repository: Some(repo.to_owned()),
        installation_id: Some(7),
        headers: vec![("x-github-delivery".to_owned(), id.to_owned())],
        body: bytes::Bytes::from(format!(r#"{{"id":"{id}","pad":"{}"}}"#, "x".repeat(2000))),
        received_at_ms: 0,
    }
}

fn enqueue(conn: &Connection, id: &str, repo: &str) -> EnqueueOutcome {
    let d = delivery(id, repo);
    insert(conn, &d, &compress(&d.body).unwrap()).unwrap()
}

/// The counts and head marks, recomputed from scratch, must equal the kept ones.
fn assert_consistent(conn: &Connection) {
    let kept = stats(conn).unwrap();
    let mut recount = QueueStats::default();
    let mut stmt = conn
        .prepare("SELECT state, COUNT(*) FROM deliveries GROUP BY state")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap();
    for row in rows {
        let (state, n) = row.unwrap();
        let n = u64::try_from(n).unwrap();
        match state.as_str() {
            "queued" => recount.queued = n,
            "running" => recount.running = n,
            "done" => recount.done = n,
            _ => recount.failed = n,
        }
    }
    assert_eq!(kept, recount, "counts drifted from the rows");
    let heads: BTreeSet<i64> = conn
        .prepare("SELECT seq FROM deliveries WHERE is_head = 1")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let oldest: BTreeSet<i64> = conn
        .prepare(
            "SELECT MIN(seq) FROM deliveries WHERE state IN ('queued', 'running')
             GROUP BY ordering_key",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        heads, oldest,
        "heads are not each key's oldest unfinished delivery"
    );
    let bodies: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM deliveries d JOIN bodies b ON b.seq = d.seq
             WHERE d.state = 'done'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(bodies, 0, "a done delivery kept its payload");
}

#[derive(Debug, Clone)]
enum Step {
    Enqueue { id: u8, repo: u8 },
    Claim { limit: usize },
    Complete(usize),
    Retry { nth: usize, later: bool },
    Fail(usize),
    Restart,
    Prune,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..40, 0u8..4).prop_map(|(id, repo)| Step::Enqueue { id, repo }),
        3 => (1usize..4).prop_map(|limit| Step::Claim { limit }),
        2 => (0usize..4).prop_map(Step::Complete),
        1 => (0usize..4, any::<bool>()).prop_map(|(nth, later)| Step::Retry { nth, later }),
        1 => (0usize..4).prop_map(Step::Fail),
        1 => Just(Step::Restart),
        1 => Just(Step::Prune),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever happens, counts equal a recount, each key has exactly its oldest
    /// unfinished delivery as head, and a claim hands out only heads, oldest first,
    /// with the payload that was enqueued.
    #[test]
    fn counts_heads_and_order_hold_after_any_operations(steps in prop::collection::vec(step(), 1..60)) {
        let mut conn = open();
        let mut running: Vec<(i64, String)> = Vec::new();
        let now = 1_000;
        for s in steps {
            match s {
                Step::Enqueue { id, repo } => {
                    enqueue(&conn, &format!("g{id}"), &format!("o/r{repo}"));
                }
                Step::Claim { limit } => {
                    let claimed = claim(&conn, now, limit).unwrap();
                    let mut keys = BTreeSet::new();
                    for d in &claimed {
                        prop_assert!(keys.insert(d.repository.clone()), "two deliveries of one key claimed");
                        let oldest = oldest_pending(&conn, &format!("repo:{}", d.repository.as_deref().unwrap())).unwrap();
                        prop_assert_eq!(oldest, Some(d.seq));
                        let prefix = format!(r#"{{"id":"{}""#, d.delivery_id);
                        prop_assert!(d.body.starts_with(prefix.as_bytes()), "wrong payload for {}", d.delivery_id);
                        running.push((d.seq, d.delivery_id.clone()));
                    }
                    prop_assert!(claimed.windows(2).all(|w| w[0].seq < w[1].seq));
                }
                Step::Complete(n) if n < running.len() => {
                    let (seq, _) = running.remove(n);
                    complete(&conn, seq, now).unwrap();
                }
                Step::Retry { nth, later } if nth < running.len() => {
                    let (seq, _) = running.remove(nth);
                    retry_at(&conn, seq, "503", if later { now + 10 } else { now }).unwrap();
                }
                Step::Fail(n) if n < running.len() => {
                    let (seq, _) = running.remove(n);
                    fail(&conn, seq, "bad", now).unwrap();
                }
                Step::Restart => {
                    requeue_running(&mut conn).unwrap();
                    running.clear();
                }
                Step::Prune => {
                    prune(&conn, now + 1, now + 1, 3).unwrap();
                }
                _ => {}
            }
            assert_consistent(&conn);
        }
    }
}

/// Steps the claim statement takes, and whether it scanned a table, on `backlog`
/// queued deliveries behind `keys` heads that are all running (the API is down).
fn claim_cost(backlog: usize, keys: usize) -> (i32, i32) {
    let conn = open();
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..backlog {
        enqueue(&tx, &format!("b{i}"), &format!("o/r{}", i % keys));
    }
    let claimed = claim(&tx, 10, keys).unwrap();
    assert_eq!(claimed.len(), keys.min(backlog));
    for d in &claimed {
        retry_at(&tx, d.seq, "connection refused", 1_000_000).unwrap();
    }
    tx.commit().unwrap();
    let mut stmt = conn.prepare(CLAIM_HEADS).unwrap();
    let due: Vec<i64> = stmt
        .query_map(params![10, 8], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(due.is_empty(), "every head waits for its retry");
    (
        stmt.get_status(StatementStatus::VmStep),
        stmt.get_status(StatementStatus::FullscanStep),
    )
}

#[test]
fn a_claim_costs_the_same_behind_a_backlog_of_twenty_thousand_as_behind_two_hundred() {
    let (small, small_scan) = claim_cost(200, 1);
    let (large, large_scan) = claim_cost(20_000, 1);
    assert_eq!(
        (small_scan, large_scan),
        (0, 0),
        "the claim scanned a table"
    );
    assert_eq!(
        small, large,
        "claim steps grew with the backlog: {small} -> {large}"
    );
    let (many_keys, _) = claim_cost(20_000, 1_000);
    assert_eq!(
        small, many_keys,
        "claim steps grew with waiting heads: {small} -> {many_keys}"
    );
}

#[test]
fn enqueue_and_stats_cost_the_same_behind_a_large_backlog() {
    let steps = |backlog: usize| {
        let conn = open();
        let tx = conn.unchecked_transaction().unwrap();
        for i in 0..backlog {
            enqueue(&tx, &format!("b{i}"), "o/r");
        }
        tx.commit().unwrap();
        let d = delivery("new", "o/r");
        let mut probe = conn.prepare(OLDEST_PENDING).unwrap();
        probe
            .query_row(params!["repo:o/r"], |r| r.get::<_, i64>(0))
            .unwrap();
        let mut counts = conn.prepare("SELECT state, n FROM counts").unwrap();
        let _ = counts.query_map([], |_| Ok(())).unwrap().count();
        assert_eq!(
            insert(&conn, &d, &compress(&d.body).unwrap()).unwrap(),
            EnqueueOutcome::Queued
        );
        (
            probe.get_status(StatementStatus::VmStep),
            counts.get_status(StatementStatus::VmStep),
        )
    };
    assert_eq!(steps(100), steps(20_000));
}

/// `failed` deliveries of `o/watched` enqueued first, then `done` finished ones of
/// the same repository after them: a newest-first scan by `seq` alone would pass
/// every done row before reaching a failed one.
fn failed_behind_done(failed: usize, done: usize) -> Connection {
    let conn = open();
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..failed {
        enqueue(&tx, &format!("f{i}"), "o/watched");
        let claimed = claim(&tx, 10, 1).unwrap();
        fail(&tx, claimed[0].seq, "422 from GitHub", 10).unwrap();
    }
    for i in 0..done {
        enqueue(&tx, &format!("d{i}"), "o/watched");
        let claimed = claim(&tx, 10, 1).unwrap();
        complete(&tx, claimed[0].seq, 10).unwrap();
    }
    tx.commit().unwrap();
    conn
}

/// VM steps and full-scan steps of one listing statement, and the seqs it found.
fn steps_of(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> (i32, i32, usize) {
    let mut stmt = conn.prepare(sql).unwrap();
    let found = stmt
        .query_map(params, |r| r.get::<_, i64>(0))
        .unwrap()
        .count();
    (
        stmt.get_status(StatementStatus::VmStep),
        stmt.get_status(StatementStatus::FullscanStep),
        found,
    )
}

fn failed_page(repositories: Option<Vec<String>>) -> ListPlan {
    DeliveryFilter {
        states: vec![DeliveryState::Failed],
        repositories,
        before_seq: None,
        limit: 20,
    }
    .plan()
    .unwrap()
}

#[test]
fn listing_failed_deliveries_costs_the_same_behind_twenty_thousand_done_as_behind_two_hundred() {
    let cost = |done: usize| {
        let conn = failed_behind_done(20, done);
        let page = list(&conn, &failed_page(Some(vec!["O/Watched".to_owned()]))).unwrap();
        assert_eq!(page.len(), 20);
        assert!(page.iter().all(|r| r.state == DeliveryState::Failed));
        assert_eq!(list(&conn, &failed_page(None)).unwrap(), page);
        let all = steps_of(&conn, LIST_BY_STATE, params!["failed", i64::MAX, 0, 20]);
        let one = steps_of(
            &conn,
            LIST_BY_KEY,
            params!["repo:o/watched", "failed", i64::MAX, 0, 20],
        );
        (all, one)
    };
    let (small_all, small_one) = cost(200);
    let (large_all, large_one) = cost(20_000);
    for (steps, scanned, found) in [small_all, small_one, large_all, large_one] {
        assert_eq!(found, 20);
        assert_eq!(scanned, 0, "a listing scanned a table");
        assert!(steps > 0);
    }
    assert_eq!(
        small_all, large_all,
        "listing steps grew with the done rows"
    );
    assert_eq!(
        small_one, large_one,
        "listing one repository's steps grew with its done rows"
    );
}

#[test]
fn a_page_across_repositories_is_the_newest_of_all_and_the_next_page_follows_on() {
    // Ten repositories of 30 failed deliveries each, interleaved: the merge of the
    // per-repository seeks must give the newest of all of them, in order.
    let conn = open();
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..300 {
        enqueue(&tx, &format!("f{i}"), &format!("o/r{}", i % 10));
        let claimed = claim(&tx, 10, 1).unwrap();
        fail(&tx, claimed[0].seq, "bad", 10).unwrap();
    }
    tx.commit().unwrap();
    let repos: Vec<String> = (0..10).map(|i| format!("o/r{i}")).collect();
    let page = list(&conn, &failed_page(Some(repos.clone()))).unwrap();
    let seqs: Vec<i64> = page.iter().map(|r| r.seq).collect();
    let expected: Vec<i64> = (281..=300).rev().collect();
    assert_eq!(seqs, expected, "the 20 newest, newest first");
    let next = DeliveryFilter {
        states: vec![DeliveryState::Failed],
        repositories: Some(repos),
        before_seq: Some(281),
        limit: 5,
    };
    let seqs: Vec<i64> = list(&conn, &next.plan().unwrap())
        .unwrap()
        .iter()
        .map(|r| r.seq)
        .collect();
    assert_eq!(seqs, [280, 279, 278, 277, 276]);
}

#[test]
fn a_version_two_file_without_the_listing_indexes_gains_them_at_open() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(crate::queue::schema::SCHEMA).unwrap();
    conn.pragma_update(None, "user_version", 2).unwrap();
    enqueue(&conn, "kept", "o/r");
    assert!(
        list(&conn, &failed_page(None)).is_err(),
        "the statements name indexes this file lacks"
    );
    migrate::to_current(&mut conn).unwrap();
    let queued = DeliveryFilter {
        states: vec![DeliveryState::Queued],
        repositories: None,
        before_seq: None,
        limit: 20,
    };
    let rows = list(&conn, &queued.plan().unwrap()).unwrap();
    assert_eq!(
        rows.iter()
            .map(|r| r.delivery_id.as_str())
            .collect::<Vec<_>>(),
        ["kept"]
    );
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 2, "an index alone takes no new schema version");
}

#[test]
fn a_damaged_payload_fails_its_delivery_and_lets_the_repository_move_on() {
    let conn = open();
    enqueue(&conn, "a", "o/r");
    enqueue(&conn, "b", "o/r");
    conn.execute(
        "UPDATE bodies SET zbody = x'00112233' WHERE seq = (SELECT seq FROM deliveries WHERE delivery_id = 'a')",
        [],
    )
    .unwrap();
    let claimed = claim(&conn, 10, 4).unwrap();
    assert!(claimed.is_empty());
    let (state, _, error) = status(&conn, "a").unwrap().unwrap();
    assert_eq!(state, "failed");
    assert!(error.unwrap().contains("redeliver it from GitHub"));
    let next = claim(&conn, 10, 4).unwrap();
    assert_eq!(
        next.iter()
            .map(|d| d.delivery_id.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    assert_consistent(&conn);
}

#[test]
fn payloads_are_stored_compressed() {
    let conn = open();
    let d = delivery("big", "o/r");
    insert(&conn, &d, &compress(&d.body).unwrap()).unwrap();
    let stored: i64 = conn
        .query_row("SELECT length(zbody) FROM bodies", [], |r| r.get(0))
        .unwrap();
    assert!(
        (stored as usize) * 5 < d.body.len(),
        "{stored} of {} bytes",
        d.body.len()
    );
}

/// The schema every queue file had before `user_version` was set (version 1).
const V1_SCHEMA: &str = "
CREATE TABLE deliveries (
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
CREATE INDEX deliveries_pending_by_key
    ON deliveries (ordering_key, seq) WHERE state IN ('queued', 'running');
CREATE INDEX deliveries_queued ON deliveries (seq) WHERE state = 'queued';
CREATE INDEX deliveries_finished
    ON deliveries (finished_at_ms) WHERE finished_at_ms IS NOT NULL;
";

#[test]
fn an_upgrade_keeps_every_queued_running_and_failed_delivery_of_a_version_one_file() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(V1_SCHEMA).unwrap();
    let rows = [
        ("done1", "repo:o/a", "done", None),
        ("run1", "repo:o/a", "running", Some("{\"n\":1}")),
        ("q1", "repo:o/a", "queued", Some("{\"n\":2}")),
        ("q2", "repo:o/b", "queued", Some("{\"n\":3}")),
        ("bad", "repo:o/c", "failed", Some("{\"n\":4}")),
    ];
    for (id, key, state, body) in rows {
        conn.execute(
            "INSERT INTO deliveries (delivery_id, event, ordering_key, headers, body,
             received_at_ms, state, next_attempt_at_ms, finished_at_ms)
             VALUES (?1, 'issue_comment', ?2, '[]', ?3, 0, ?4, 0,
                     CASE WHEN ?4 IN ('done', 'failed') THEN 5 END)",
            params![id, key, body.map(str::as_bytes), state],
        )
        .unwrap();
    }
    migrate::to_current(&mut conn).unwrap();
    assert_eq!(requeue_running(&mut conn).unwrap(), 1);
    assert_consistent(&conn);
    let kept = stats(&conn).unwrap();
    assert_eq!((kept.queued, kept.done, kept.failed), (3, 1, 1));
    let claimed: BTreeMap<String, Vec<u8>> = claim(&conn, 10, 10)
        .unwrap()
        .into_iter()
        .map(|d| (d.delivery_id, d.body.to_vec()))
        .collect();
    assert_eq!(
        claimed,
        BTreeMap::from([
            ("run1".to_owned(), b"{\"n\":1}".to_vec()),
            ("q2".to_owned(), b"{\"n\":3}".to_vec()),
        ]),
        "each key's oldest unfinished delivery is claimable, with its payload"
    );
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, crate::queue::schema::SCHEMA_VERSION);
    // Opening again is a no-op.
    migrate::to_current(&mut conn).unwrap();
    assert_consistent(&conn);
}

#[test]
fn a_run_a_crash_cut_short_is_a_retry_that_does_not_count_against_the_attempts() {
    let mut conn = open();
    enqueue(&conn, "d1", "o/a");
    let first = claim(&conn, 10, 10).unwrap();
    assert_eq!(
        (first[0].attempt, first[0].crashes, first[0].tries()),
        (1, 0, 1)
    );
    // The process dies while d1 runs; the next start puts it back.
    assert_eq!(requeue_running(&mut conn).unwrap(), 1);
    let again = claim(&conn, 10, 10).unwrap();
    assert_eq!(again[0].attempt, 2, "a retry: its effects may have landed");
    assert_eq!(again[0].crashes, 1);
    assert_eq!(again[0].tries(), 1, "the crash is not a failed attempt");
    // A real failure afterwards counts.
    retry_at(&conn, again[0].seq, "503", 0).unwrap();
    let third = claim(&conn, 10, 10).unwrap();
    assert_eq!(
        (third[0].attempt, third[0].crashes, third[0].tries()),
        (3, 1, 2)
    );
    assert_consistent(&conn);
}

#[test]
fn a_file_without_the_crash_count_gets_it_at_open_and_keeps_its_deliveries() {
    let mut conn = open();
    enqueue(&conn, "d1", "o/a");
    conn.execute_batch("ALTER TABLE deliveries DROP COLUMN crashes")
        .unwrap();
    migrate::to_current(&mut conn).unwrap();
    let claimed = claim(&conn, 10, 10).unwrap();
    assert_eq!(claimed[0].delivery_id, "d1");
    assert_eq!(claimed[0].crashes, 0);
}

#[test]
fn a_file_from_a_newer_navin_is_refused_not_rewritten() {
    let mut conn = open();
    conn.pragma_update(None, "user_version", 99).unwrap();
    let err = migrate::to_current(&mut conn).unwrap_err();
    assert!(err.to_string().contains("newer navin"), "{err}");
}
