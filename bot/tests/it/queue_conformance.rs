//! One queue contract, two backends: every case runs against the embedded SQLite queue
//! and against a real PostgreSQL server started for the test; then what only a queue
//! shared by several replicas must do (leases, takeover, one leader, migrations).
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use navin_bot::queue::{
    ClaimedDelivery, DeliveryFilter, DeliveryHandler, DeliveryQueue, DeliveryRow, DeliveryState,
    EnqueueOutcome, HandlerError, HandlerFuture, NewDelivery, PgOptions, WorkerConfig, Workers,
};
use navin_bot::server::Metrics;
use navin_e2e::postgres::PgServer;
use tokio::sync::Notify;

use crate::server_support::{self, eventually};

const T0: i64 = 1_000_000;

fn delivery(id: &str, repo: &str) -> NewDelivery {
    server_support::new_delivery(id, repo, T0)
}

async fn put(q: &DeliveryQueue, id: &str, repo: &str) -> EnqueueOutcome {
    q.enqueue(delivery(id, repo)).await.unwrap()
}

fn ids(claimed: &[ClaimedDelivery]) -> Vec<&str> {
    claimed.iter().map(|d| d.delivery_id.as_str()).collect()
}

type Make<'a> = &'a dyn Fn(&'static str) -> Pin<Box<dyn Future<Output = DeliveryQueue> + 'a>>;

/// The contract both backends keep, one case per fresh queue.
async fn contract(make: Make<'_>) {
    one_repository_at_a_time_in_arrival_order(make("order").await).await;
    a_repeated_delivery_is_a_duplicate_in_every_state(make("dupes").await).await;
    a_retry_waits_until_due_and_counts_its_attempts(make("retry").await).await;
    a_failed_delivery_keeps_its_error_and_its_repository_moves_on(make("failed").await).await;
    a_failed_delivery_that_arrives_again_runs_again_after_its_repositorys_queue(
        make("again").await,
    )
    .await;
    pruning_forgets_only_old_finished_deliveries(make("prune").await).await;
    workers_handle_every_delivery_once_in_order_per_repository(make("workers").await).await;
    a_listing_shows_what_waits_runs_and_failed_with_attempts_and_errors(make("list").await).await;
    a_listing_filters_by_state_and_repository_and_pages_newest_first(make("filter").await).await;
    done_deliveries_are_listed_only_when_asked(make("listdone").await).await;
}

const UNFINISHED_AND_FAILED: [DeliveryState; 3] = [
    DeliveryState::Queued,
    DeliveryState::Running,
    DeliveryState::Failed,
];

fn listing(states: &[DeliveryState], repositories: Option<&[&str]>) -> DeliveryFilter {
    DeliveryFilter {
        states: states.to_vec(),
        repositories: repositories.map(|r| r.iter().map(|s| (*s).to_owned()).collect()),
        before_seq: None,
        limit: 50,
    }
}

fn listed(rows: &[DeliveryRow]) -> Vec<&str> {
    rows.iter().map(|r| r.delivery_id.as_str()).collect()
}

async fn a_listing_shows_what_waits_runs_and_failed_with_attempts_and_errors(q: DeliveryQueue) {
    for (id, repo) in [("a", "o/r"), ("b", "o/r"), ("c", "o/s"), ("d", "o/t")] {
        put(&q, id, repo).await;
    }
    let claimed = q.claim(T0, 10).await.unwrap();
    assert_eq!(ids(&claimed), ["a", "c", "d"]);
    q.retry_at(claimed[0].seq, "503 from GitHub".into(), T0 + 5_000)
        .await
        .unwrap();
    q.fail(
        claimed[1].seq,
        "payload field installation.id".into(),
        T0 + 7,
    )
    .await
    .unwrap();
    let rows = q.list(listing(&UNFINISHED_AND_FAILED, None)).await.unwrap();
    assert_eq!(listed(&rows), ["d", "c", "b", "a"], "newest first");
    let seen: Vec<(DeliveryState, u32, Option<&str>)> = rows
        .iter()
        .map(|r| (r.state, r.attempts, r.last_error.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (DeliveryState::Running, 1, None),
            (
                DeliveryState::Failed,
                1,
                Some("payload field installation.id")
            ),
            (DeliveryState::Queued, 0, None),
            (DeliveryState::Queued, 1, Some("503 from GitHub")),
        ]
    );
    let (failed, retrying) = (&rows[1], &rows[3]);
    assert_eq!(failed.finished_at_ms, Some(T0 + 7));
    assert_eq!(
        (retrying.next_attempt_at_ms, retrying.finished_at_ms),
        (T0 + 5_000, None)
    );
    assert_eq!(
        (
            failed.event.as_str(),
            failed.action.as_deref(),
            failed.repository.as_deref(),
            failed.installation_id,
            failed.received_at_ms,
        ),
        ("issue_comment", Some("created"), Some("o/s"), Some(1), T0)
    );
    assert!(rows.windows(2).all(|w| w[0].seq > w[1].seq));
    q.close().await;
}

async fn a_listing_filters_by_state_and_repository_and_pages_newest_first(q: DeliveryQueue) {
    for i in 0..9 {
        put(&q, &format!("x{i}"), &format!("Owner/R{}", i % 3)).await;
    }
    let installation_event = NewDelivery {
        repository: None,
        event: "installation".to_owned(),
        ..delivery("inst", "unused")
    };
    q.enqueue(installation_event).await.unwrap();
    let heads = q.claim(T0, 10).await.unwrap();
    assert_eq!(ids(&heads), ["x0", "x1", "x2", "inst"]);
    q.fail(heads[1].seq, "422".into(), T0).await.unwrap();

    let r1 = q
        .list(listing(
            &UNFINISHED_AND_FAILED,
            Some(&["owner/r1", "OWNER/R1"]),
        ))
        .await
        .unwrap();
    assert_eq!(
        listed(&r1),
        ["x7", "x4", "x1"],
        "one repository, whatever its case, each row once"
    );
    let two = q
        .list(listing(
            &UNFINISHED_AND_FAILED,
            Some(&["owner/r1", "owner/r2"]),
        ))
        .await
        .unwrap();
    assert_eq!(listed(&two), ["x8", "x7", "x5", "x4", "x2", "x1"]);
    let failed = q
        .list(listing(&[DeliveryState::Failed], None))
        .await
        .unwrap();
    assert_eq!(listed(&failed), ["x1"]);
    let running = q
        .list(listing(&[DeliveryState::Running], None))
        .await
        .unwrap();
    assert_eq!(
        listed(&running),
        ["inst", "x2", "x0"],
        "no repository filter: installation events too"
    );
    assert!(
        q.list(listing(&UNFINISHED_AND_FAILED, Some(&[])))
            .await
            .unwrap()
            .is_empty(),
        "no repositories, no rows"
    );
    assert!(q.list(listing(&[], None)).await.unwrap().is_empty());

    let mut pages = Vec::new();
    let mut before_seq = None;
    loop {
        let page = q
            .list(DeliveryFilter {
                before_seq,
                limit: 4,
                ..listing(&UNFINISHED_AND_FAILED, None)
            })
            .await
            .unwrap();
        let Some(last) = page.last() else { break };
        before_seq = Some(last.seq);
        pages.push(
            listed(&page)
                .iter()
                .map(|s| (*s).to_owned())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(
        pages,
        [
            vec!["inst", "x8", "x7", "x6"],
            vec!["x5", "x4", "x3", "x2"],
            vec!["x1", "x0"],
        ]
    );
    let one = q
        .list(DeliveryFilter {
            limit: 0,
            ..listing(&UNFINISHED_AND_FAILED, None)
        })
        .await
        .unwrap();
    assert_eq!(listed(&one), ["inst"], "a limit of 0 still lists one row");
    q.close().await;
}

async fn done_deliveries_are_listed_only_when_asked(q: DeliveryQueue) {
    put(&q, "handled", "o/r").await;
    put(&q, "waiting", "o/r").await;
    let claimed = q.claim(T0, 1).await.unwrap();
    q.complete(claimed[0].seq, T0 + 3).await.unwrap();
    let open = q.list(listing(&UNFINISHED_AND_FAILED, None)).await.unwrap();
    assert_eq!(listed(&open), ["waiting"]);
    let all = q
        .list(listing(&DeliveryState::ALL, Some(&["o/r"])))
        .await
        .unwrap();
    assert_eq!(listed(&all), ["waiting", "handled"]);
    assert_eq!(
        (all[1].state, all[1].attempts, all[1].finished_at_ms),
        (DeliveryState::Done, 1, Some(T0 + 3))
    );
    q.close().await;
}

async fn one_repository_at_a_time_in_arrival_order(q: DeliveryQueue) {
    for i in 0..4 {
        put(&q, &format!("r{i}"), "o/r").await;
    }
    put(&q, "s0", "o/s").await;
    let first = q.claim(T0, 10).await.unwrap();
    assert_eq!(
        ids(&first),
        ["r0", "s0"],
        "one head per repository, oldest first"
    );
    assert!(
        q.claim(T0, 10).await.unwrap().is_empty(),
        "heads are running"
    );
    q.complete(first[0].seq, T0).await.unwrap();
    let next = q.claim(T0, 10).await.unwrap();
    assert_eq!(ids(&next), ["r1"]);
    let stats = q.stats().await.unwrap();
    assert_eq!(
        (stats.queued, stats.running, stats.done, stats.failed),
        (2, 2, 1, 0),
        "counts after two claims and a completion"
    );
    q.close().await;
}

async fn a_repeated_delivery_is_a_duplicate_in_every_state(q: DeliveryQueue) {
    assert_eq!(put(&q, "g", "o/r").await, EnqueueOutcome::Queued);
    assert_eq!(put(&q, "g", "o/r").await, EnqueueOutcome::Duplicate);
    let claimed = q.claim(T0, 1).await.unwrap();
    assert_eq!(put(&q, "g", "o/r").await, EnqueueOutcome::Duplicate);
    q.complete(claimed[0].seq, T0).await.unwrap();
    assert_eq!(put(&q, "g", "o/r").await, EnqueueOutcome::Duplicate);
    assert_eq!(q.stats().await.unwrap().done, 1);
    let held = q.known(vec!["g".into(), "other".into()]).await.unwrap();
    assert_eq!(held, HashSet::from(["g".to_owned()]));
    q.close().await;
}

async fn a_retry_waits_until_due_and_counts_its_attempts(q: DeliveryQueue) {
    put(&q, "a", "o/r").await;
    put(&q, "b", "o/r").await;
    let first = q.claim(T0, 5).await.unwrap();
    assert_eq!(first[0].attempt, 1);
    q.retry_at(first[0].seq, "503 from GitHub".into(), T0 + 5_000)
        .await
        .unwrap();
    assert!(
        q.claim(T0 + 4_999, 5).await.unwrap().is_empty(),
        "not due yet, and b waits behind it"
    );
    let again = q.claim(T0 + 5_000, 5).await.unwrap();
    assert_eq!(ids(&again), ["a"]);
    assert_eq!(again[0].attempt, 2);
    assert_eq!(
        again[0].body,
        delivery("a", "o/r").body,
        "the payload survives"
    );
    let status = q.status("a").await.unwrap().unwrap();
    assert_eq!((status.state.as_str(), status.attempts), ("running", 2));
    assert_eq!(status.last_error.as_deref(), Some("503 from GitHub"));
    q.close().await;
}

async fn a_failed_delivery_keeps_its_error_and_its_repository_moves_on(q: DeliveryQueue) {
    put(&q, "bad", "o/r").await;
    put(&q, "next", "o/r").await;
    let claimed = q.claim(T0, 5).await.unwrap();
    q.fail(claimed[0].seq, "payload field installation.id".into(), T0)
        .await
        .unwrap();
    let status = q.status("bad").await.unwrap().unwrap();
    assert_eq!(status.state, "failed");
    assert!(status.last_error.unwrap().contains("installation.id"));
    assert_eq!(ids(&q.claim(T0, 5).await.unwrap()), ["next"]);
    assert_eq!(q.stats().await.unwrap().failed, 1);
    q.close().await;
}

/// An admin's redeliver (from the dashboard) brings a failed delivery back with its GUID:
/// it runs again, behind what its repository already queued, as a retry that keeps its
/// first receipt: its operations may have landed before it failed, and the engine looks
/// for them back to then, however many writes came in between.
async fn a_failed_delivery_that_arrives_again_runs_again_after_its_repositorys_queue(
    q: DeliveryQueue,
) {
    put(&q, "bad", "o/r").await;
    let claimed = q.claim(T0, 5).await.unwrap();
    q.fail(claimed[0].seq, "GitHub was down".into(), T0)
        .await
        .unwrap();
    put(&q, "later", "o/r").await;
    assert_eq!(put(&q, "bad", "o/r").await, EnqueueOutcome::Queued);
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.queued, stats.failed), (2, 0), "{stats:?}");
    let first = q.claim(T0, 5).await.unwrap();
    assert_eq!(ids(&first), ["later"]);
    let status = q.status("bad").await.unwrap().unwrap();
    assert_eq!((status.state.as_str(), status.attempts), ("queued", 1));
    let later = q.claim(T0, 5).await.unwrap();
    assert!(later.is_empty(), "one at a time per repository");
    let running = q.status("later").await.unwrap().unwrap();
    assert_eq!(running.state, "running");
    q.complete(first[0].seq, T0 + 1000).await.unwrap();
    let again = q.claim(T0 + 2000, 5).await.unwrap();
    assert_eq!(ids(&again), ["bad"]);
    assert_eq!(
        again[0].attempt, 2,
        "a retry, so the engine looks for its operations"
    );
    assert_eq!(again[0].received_at_ms, T0, "since it first came");
    q.close().await;
}

async fn pruning_forgets_only_old_finished_deliveries(q: DeliveryQueue) {
    for (id, repo) in [("old", "o/a"), ("recent", "o/b"), ("waiting", "o/c")] {
        put(&q, id, repo).await;
    }
    let claimed = q.claim(T0, 2).await.unwrap();
    let day = 24 * 3600 * 1000;
    for d in &claimed {
        let at = if d.delivery_id == "old" {
            T0
        } else {
            T0 + 9 * day
        };
        q.complete(d.seq, at).await.unwrap();
    }
    let removed = q.prune(T0 + day, T0 + day).await.unwrap();
    assert_eq!(removed, 1);
    assert_eq!(q.status("old").await.unwrap(), None);
    assert!(q.status("recent").await.unwrap().is_some());
    assert_eq!(q.status("waiting").await.unwrap().unwrap().state, "queued");
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.done, stats.queued), (1, 1));
    q.close().await;
}

/// Records the order deliveries were handled in, per repository.
struct Recorder(Arc<Mutex<BTreeMap<String, Vec<String>>>>);

impl DeliveryHandler for Recorder {
    fn handle<'a>(&'a self, d: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(2)).await;
            self.0
                .lock()
                .unwrap()
                .entry(d.repository.clone().unwrap_or_default())
                .or_default()
                .push(d.delivery_id.clone());
            Ok::<(), HandlerError>(())
        })
    }
}

async fn workers_handle_every_delivery_once_in_order_per_repository(q: DeliveryQueue) {
    let seen = Arc::new(Mutex::new(BTreeMap::new()));
    let mut sent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in 0..60 {
        let repo = format!("o/r{}", i % 4);
        let id = format!("w{i:03}");
        put(&q, &id, &repo).await;
        sent.entry(repo).or_default().push(id);
    }
    let workers = Workers::spawn(
        q.clone(),
        Arc::new(Recorder(seen.clone())),
        WorkerConfig {
            concurrency: 4,
            idle_poll: Duration::from_millis(10),
            ..WorkerConfig::default()
        },
        Arc::new(Metrics::new()),
        Arc::new(Notify::new()),
    );
    let probe = q.clone();
    let finished = eventually(Duration::from_secs(30), move || {
        let q = probe.clone();
        async move { q.stats().await.unwrap().done == 60 }
    })
    .await;
    assert!(finished, "workers did not finish: {:?}", q.stats().await);
    workers.shutdown(Duration::from_secs(5)).await;
    assert_eq!(
        *seen.lock().unwrap(),
        sent,
        "each handled once, in arrival order"
    );
    q.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_queue_keeps_the_queue_contract() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    contract(&move |name| {
        let path = root.join(name).join("deliveries.sqlite3");
        Box::pin(async move { DeliveryQueue::open(&path).unwrap().0 })
    })
    .await;
}

fn options(lease_secs: u64) -> PgOptions {
    PgOptions {
        lease: Duration::from_secs(lease_secs),
        pool_size: 8,
        ca_file: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postgres_queue_keeps_the_queue_contract() {
    let pg = PgServer::start().unwrap();
    let pg = &pg;
    contract(&move |name| {
        Box::pin(async move {
            let url = pg.database(name).unwrap();
            DeliveryQueue::connect(&url, &options(60)).await.unwrap()
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_delivery_is_taken_over_after_its_lease_and_its_late_outcome_ignored() {
    let pg = PgServer::start().unwrap();
    let url = pg.database("lease").unwrap();
    let a = DeliveryQueue::connect(&url, &options(10)).await.unwrap();
    let b = DeliveryQueue::connect(&url, &options(10)).await.unwrap();
    put(&a, "d0", "o/r").await;
    put(&b, "d1", "o/r").await;
    let held = a.claim(T0, 5).await.unwrap();
    assert_eq!(ids(&held), ["d0"]);
    assert!(
        b.claim(T0 + 9_999, 5).await.unwrap().is_empty(),
        "the lease still holds"
    );
    let taken = b.claim(T0 + 10_001, 5).await.unwrap();
    assert_eq!(
        ids(&taken),
        ["d0"],
        "the lapsed lease is taken over, not d1"
    );
    assert_eq!(taken[0].attempt, 2);
    assert_eq!(
        (taken[0].crashes, taken[0].tries()),
        (1, 1),
        "a lapsed lease is a crash, not a failed attempt"
    );
    a.complete(held[0].seq, T0 + 10_002).await.unwrap();
    assert_eq!(
        a.status("d0").await.unwrap().unwrap().state,
        "running",
        "the old owner's outcome is ignored"
    );
    assert!(
        b.claim(T0 + 10_003, 5).await.unwrap().is_empty(),
        "d1 waits for d0"
    );
    b.complete(taken[0].seq, T0 + 10_004).await.unwrap();
    assert_eq!(ids(&a.claim(T0 + 10_005, 5).await.unwrap()), ["d1"]);
    let stats = a.stats().await.unwrap();
    assert_eq!((stats.done, stats.running, stats.queued), (1, 1, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_lease_is_not_taken_over() {
    let pg = PgServer::start().unwrap();
    let url = pg.database("renew").unwrap();
    let a = DeliveryQueue::connect(&url, &options(10)).await.unwrap();
    let b = DeliveryQueue::connect(&url, &options(10)).await.unwrap();
    assert_eq!(a.renew_every(), Some(Duration::from_secs(10) / 3));
    put(&a, "slow", "o/r").await;
    let held = a.claim(T0, 1).await.unwrap();
    a.renew(&[held[0].seq], T0 + 8_000).await.unwrap();
    assert!(
        b.claim(T0 + 15_000, 5).await.unwrap().is_empty(),
        "renewed until T0 + 18 s"
    );
    assert_eq!(ids(&b.claim(T0 + 18_001, 5).await.unwrap()), ["slow"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_claiming_at_once_never_share_a_delivery_and_keep_each_repositorys_order() {
    let pg = PgServer::start().unwrap();
    let url = pg.database("race").unwrap();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(DeliveryQueue::connect(&url, &options(60)).await.unwrap());
    }
    let mut sent: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in 0..150 {
        let repo = format!("o/r{}", i % 10);
        let id = format!("x{i:03}");
        put(&replicas[i % 3], &id, &repo).await;
        sent.entry(repo).or_default().push(id);
    }
    let handled: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let mut tasks = Vec::new();
    for q in replicas.clone() {
        let handled = handled.clone();
        tasks.push(tokio::spawn(async move {
            let mut idle = 0;
            while idle < 20 {
                let claimed = q.claim(T0, 3).await.unwrap();
                if claimed.is_empty() {
                    idle += 1;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                }
                idle = 0;
                for d in claimed {
                    // Recorded before completion: the next of its repository cannot be
                    // claimed until then, so this order is the claim order.
                    handled
                        .lock()
                        .unwrap()
                        .push((d.repository.clone().unwrap(), d.delivery_id.clone()));
                    q.complete(d.seq, T0).await.unwrap();
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let handled = handled.lock().unwrap().clone();
    assert_eq!(handled.len(), 150, "every delivery handled exactly once");
    let mut per_repo: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (repo, id) in handled {
        per_repo.entry(repo).or_default().push(id);
    }
    assert_eq!(
        per_repo, sent,
        "each repository's deliveries in arrival order"
    );
    assert_eq!(replicas[0].stats().await.unwrap().done, 150);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_leads_until_its_connection_goes() {
    let pg = PgServer::start().unwrap();
    let url = pg.database("leader").unwrap();
    let a = DeliveryQueue::connect(&url, &options(60)).await.unwrap();
    let b = DeliveryQueue::connect(&url, &options(60)).await.unwrap();
    let lead = a.try_lead("reconciler").await.unwrap();
    assert!(lead.as_ref().is_some_and(|l| l.held()));
    assert!(b.try_lead("reconciler").await.unwrap().is_none());
    assert!(
        b.try_lead("another-chore").await.unwrap().is_some(),
        "roles are independent"
    );
    drop(lead);
    let mut took_over = false;
    for _ in 0..50 {
        if b.try_lead("reconciler").await.unwrap().is_some() {
            took_over = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        took_over,
        "leadership moves once its holder's connection closes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_together_apply_the_schema_once_and_a_newer_schema_is_refused() {
    let pg = PgServer::start().unwrap();
    let url = pg.database("migrate").unwrap();
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move { DeliveryQueue::connect(&url, &options(60)).await })
        })
        .collect();
    for s in starts {
        s.await.unwrap().unwrap();
    }
    assert_eq!(
        pg.psql("migrate", "SELECT count(*) FROM navin_schema_migrations")
            .unwrap(),
        "3"
    );
    pg.psql(
        "migrate",
        "INSERT INTO navin_schema_migrations (version, name) VALUES (99, 'future')",
    )
    .unwrap();
    let err = DeliveryQueue::connect(&url, &options(60))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("newer navin"), "{err}");
    let err = DeliveryQueue::connect("mysql://nope", &options(60))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("NAVIN_DATABASE_URL"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_database_is_reached_over_verified_tls() {
    let pg = PgServer::start_tls().unwrap();
    let url = format!("{}?sslmode=require", pg.database("tls").unwrap());
    let trusted = PgOptions {
        ca_file: pg.ca_file(),
        ..options(60)
    };
    let q = DeliveryQueue::connect(&url, &trusted).await.unwrap();
    put(&q, "over-tls", "o/r").await;
    assert_eq!(ids(&q.claim(T0, 1).await.unwrap()), ["over-tls"]);
    assert_ne!(
        pg.psql("tls", "SELECT count(*) FROM pg_stat_ssl WHERE ssl")
            .unwrap(),
        "0",
        "the connections use TLS"
    );
    let untrusted = DeliveryQueue::connect(&url, &options(60))
        .await
        .unwrap_err();
    assert!(
        untrusted.to_string().to_lowercase().contains("certificate"),
        "a certificate no root vouches for is refused: {untrusted}"
    );
}
