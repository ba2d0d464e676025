//! The bad day: GitHub's API is unreachable (an outage, or an installation rate-limited
//! for an hour) while deliveries keep arriving. Acknowledgement latency and throughput
//! of the real `navin serve` binary, workers on, with 0, 10k and 100k deliveries already
//! queued (all for one repository, or spread over 1,000), next to a bare axum
//! verify-and-202 handler and the same handler plus one fdatasync per request. At one
//! connection the three are measured interleaved, in rounds of 50 requests, so the
//! server and its fsync floor see the same disk; plus the server's CPU per request, its
//! CPU while idle on the backlog, and the queue's size.
//!
//! Run: `cargo bench -p navin-bot --bench queue_backlog`
//! Knobs: NAVIN_BENCH_REQUESTS (default 1000 per case and connection count),
//! NAVIN_BENCH_BACKLOGS (default `10000,100000`; the empty queue always runs first),
//! NAVIN_BENCH_QUEUE=postgres (the shared PostgreSQL queue, on a private server the
//! bench starts, instead of SQLite).
#![allow(clippy::unwrap_used, reason = "a bench aborts on setup failure")]
#![allow(clippy::print_stdout, reason = "a bench prints its figures")]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use navin_bot::queue::{DeliveryQueue, NewDelivery, PgOptions};
use navin_e2e::postgres::PgServer;
use support::{
    baseline_router, cpu_time, durable_baseline_router, env_usize, secrets, serve_in_process,
    spawn_navin, Figures,
};

/// A real `issue_comment.created` delivery (from `@octokit/webhooks-examples`).
const FIXTURE: &str = include_str!("../../tests/fixtures/webhooks/issue_comment.created.json");
const WORDS: &[&str] = &[
    "the",
    "ledger",
    "branch",
    "should",
    "keep",
    "step",
    "S3",
    "blocked",
    "until",
    "CI",
    "passes",
    "on",
    "head",
    "commit",
    "please",
    "review",
    "plan",
    "approve",
    "mission",
    "retry",
    "error",
    "timeout",
    "fixed",
    "in",
    "src/lib.rs",
    "line",
    "42",
    "thanks",
];

/// About 25 KB: the real payload with a long comment of ordinary words, so zstd sees
/// text that compresses as real comments do, not a run of one byte.
fn body(i: usize, repos: usize) -> Bytes {
    let mut payload: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    let mut state = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut comment = String::from("/status\n\n");
    while comment.len() < 9_000 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        comment.push_str(WORDS[(state >> 33) as usize % WORDS.len()]);
        comment.push(if state % 13 == 0 { '\n' } else { ' ' });
    }
    payload["comment"]["body"] = comment.into();
    payload["repository"]["full_name"] = format!("bench/repo{}", i % repos).into();
    Bytes::from(serde_json::to_vec(&payload).unwrap())
}

/// Where a case's queue lives: a SQLite file, or a database of the bench's PostgreSQL.
enum Store<'a> {
    Sqlite(std::path::PathBuf),
    Postgres(&'a PgServer, String),
}

impl Store<'_> {
    async fn open(&self) -> DeliveryQueue {
        match self {
            Store::Sqlite(path) => DeliveryQueue::open(path).unwrap().0,
            Store::Postgres(_, url) => DeliveryQueue::connect(url, &PgOptions::default())
                .await
                .unwrap(),
        }
    }

    fn url(&self) -> Option<&str> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(_, url) => Some(url),
        }
    }

    fn mib(&self, data: &Path) -> f64 {
        match self {
            Store::Sqlite(_) => dir_mib(data),
            Store::Postgres(pg, url) => {
                let db = url.rsplit('/').next().unwrap_or_default();
                pg.psql(db, "SELECT pg_database_size(current_database())")
                    .ok()
                    .and_then(|v| v.parse::<f64>().ok())
                    .unwrap_or(0.0)
                    / (1024.0 * 1024.0)
            }
        }
    }
}

/// Fills a queue with `n` due deliveries before the server opens it.
async fn prefill(store: &Store<'_>, n: usize, repos: usize) {
    let queue = store.open().await;
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap();
    let mut next = 0;
    while next < n {
        let end = (next + 1024).min(n);
        let tasks: Vec<_> = (next..end)
            .map(|i| {
                let queue = queue.clone();
                tokio::spawn(async move {
                    queue
                        .enqueue(NewDelivery {
                            delivery_id: format!("backlog-{i}"),
                            event: "issue_comment".to_owned(),
                            action: Some("created".to_owned()),
                            repository: Some(format!("bench/repo{}", i % repos)),
                            installation_id: Some(1),
                            headers: vec![(
                                "x-github-event".to_owned(),
                                "issue_comment".to_owned(),
                            )],
                            body: body(i, repos),
                            received_at_ms: now,
                        })
                        .await
                        .unwrap()
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        next = end;
    }
    queue.close().await;
}

fn dir_mib(dir: &Path) -> f64 {
    let bytes: u64 = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    bytes as f64 / (1024.0 * 1024.0)
}

struct Case {
    name: String,
    one: Figures,
    many: Figures,
    /// 64 connections at once: GitHub's bursts, all from one address here, which must
    /// stay inside one sender's share of the ingress budget.
    crowd: Figures,
    bare_one: Figures,
    bare_many: Figures,
    fsync_one: Figures,
    cpu_ms_per_request: f64,
    idle_cpu_pct: f64,
    queue_mib: f64,
    prefill_s: f64,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let requests = env_usize("NAVIN_BENCH_REQUESTS", 1000);
    let backlogs: Vec<usize> = std::env::var("NAVIN_BENCH_BACKLOGS")
        .unwrap_or_else(|_| "10000,100000".to_owned())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let work = tempfile::Builder::new()
        .prefix("navin-backlog-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "queue_backlog: `navin serve`, workers on, GitHub API unreachable; {requests} deliveries \
         of ~{} KB per measurement, loopback",
        body(0, 1).len() / 1024
    );
    let bare = runtime.block_on(serve_in_process(baseline_router(secrets())));
    // On the same disk as the queue, so the fsync costs what the queue's does.
    let fsynced = runtime.block_on(serve_in_process(durable_baseline_router(
        secrets(),
        work.path().join("fsync-baseline.log"),
    )));
    let mut cases: Vec<(usize, usize)> = vec![(0, 1)];
    for &b in &backlogs {
        cases.push((b, 1));
        cases.push((b, 1000));
    }
    let postgres = std::env::var("NAVIN_BENCH_QUEUE").is_ok_and(|q| q == "postgres");
    let pg = postgres.then(|| PgServer::start().unwrap());
    println!(
        "queue: {}",
        if postgres {
            "PostgreSQL (private server)"
        } else {
            "SQLite"
        }
    );
    let mut results: Vec<Case> = Vec::new();
    for (n, (backlog, repos)) in cases.into_iter().enumerate() {
        let data = work.path().join(format!("case{n}"));
        let store = match &pg {
            Some(pg) => Store::Postgres(pg, pg.database(&format!("case{n}")).unwrap()),
            None => Store::Sqlite(data.join("deliveries.sqlite3")),
        };
        let started = Instant::now();
        runtime.block_on(prefill(&store, backlog, repos));
        let prefill_s = started.elapsed().as_secs_f64();
        let (mut child, addr) = spawn_navin(work.path(), &data, store.url());
        // Let the workers meet the unreachable API before anything is measured.
        std::thread::sleep(Duration::from_secs(2));
        let idle_from = cpu_time(child.id());
        std::thread::sleep(Duration::from_secs(3));
        let idle_cpu_pct = (cpu_time(child.id()) - idle_from).as_secs_f64() / 3.0 * 100.0;
        let payload = move |i: usize| body(i, repos);
        let (bare_one, bare_many, fsync_one, one, many, crowd, cpu) = runtime.block_on(async {
            let tag = format!("c{n}");
            support::load(bare, &format!("{tag}-bw"), 100, 1, &payload).await;
            support::load(fsynced, &format!("{tag}-fw"), 100, 1, &payload).await;
            support::load(addr, &format!("{tag}-nw"), 100, 1, &payload).await;
            let cpu_from = cpu_time(child.id());
            let rounds = (requests / 50).max(1);
            let interleaved = support::load_interleaved(
                &[
                    (bare, &format!("{tag}-b1")),
                    (fsynced, &format!("{tag}-f1")),
                    (addr, &format!("{tag}-n1")),
                ],
                rounds,
                requests / rounds,
                &payload,
            )
            .await;
            let cpu = cpu_time(child.id()) - cpu_from;
            let [bare_one, fsync_one, one] = interleaved[..] else {
                unreachable!("three targets, three figures")
            };
            let bare_many =
                support::load(bare, &format!("{tag}-b16"), requests, 16, &payload).await;
            let many = support::load(addr, &format!("{tag}-n16"), requests, 16, &payload).await;
            let crowd = support::load(addr, &format!("{tag}-n64"), requests, 64, &payload).await;
            (bare_one, bare_many, fsync_one, one, many, crowd, cpu)
        });
        let _ = child.kill();
        let _ = child.wait();
        let name = if backlog == 0 {
            "empty queue".to_owned()
        } else {
            format!(
                "{}k queued, {repos} repo{}",
                backlog / 1000,
                if repos == 1 { "" } else { "s" }
            )
        };
        results.push(Case {
            name,
            one,
            many,
            crowd,
            bare_one,
            bare_many,
            fsync_one,
            cpu_ms_per_request: ms(cpu) / requests as f64,
            idle_cpu_pct,
            queue_mib: store.mib(&data),
            prefill_s,
        });
        std::fs::remove_dir_all(&data).ok();
    }
    report(&results);
}

fn report(results: &[Case]) {
    println!();
    println!(
        "{:<22} {:>8} {:>8} {:>7} {:>8} {:>7} {:>8} {:>9} {:>10} {:>9}",
        "case (1 connection)",
        "p50 ms",
        "p99 ms",
        "req/s",
        "req/s@16",
        "CPU ms",
        "idle CPU",
        "bare p99",
        "fsync p99",
        "queue MiB"
    );
    for c in results {
        println!(
            "{:<22} {:>8.2} {:>8.2} {:>7.0} {:>8.0} {:>7.2} {:>7.1}% {:>9.2} {:>10.2} {:>9.1}",
            c.name,
            ms(c.one.p50),
            ms(c.one.p99),
            c.one.per_sec,
            c.many.per_sec,
            c.cpu_ms_per_request,
            c.idle_cpu_pct,
            ms(c.bare_one.p99),
            ms(c.fsync_one.p99),
            c.queue_mib,
        );
    }
    for c in results {
        println!(
            "  {:<22} non-202 answers at 1, 16, 64 connections: {}, {}, {}  (req/s@64 {:.0})",
            c.name, c.one.non_202, c.many.non_202, c.crowd.non_202, c.crowd.per_sec
        );
    }
    println!(
        "bare = axum verify+202 without storage; fsync = the same plus one fdatasync of the \
         body per request, the floor of any durable ack on this disk"
    );
    let Some(empty) = results.first() else { return };
    println!();
    println!("ratios (backlog target: within 1.5x of the empty queue):");
    for c in results {
        let p99 = c.one.p99.as_secs_f64() / empty.one.p99.as_secs_f64();
        let p50 = c.one.p50.as_secs_f64() / empty.one.p50.as_secs_f64();
        let rps = empty.one.per_sec / c.one.per_sec;
        let worst = p99.max(p50).max(rps);
        println!(
            "  {:<22} vs empty: p50 {p50:.2}x p99 {p99:.2}x 1/(req/s) {rps:.2}x {:<4}  p99 vs bare {:.2}x, vs fsync floor {:.2}x; req/s@16 {:.2}x of bare  (prefill {:.1} s)",
            c.name,
            if worst <= 1.5 { "ok" } else { "OVER" },
            c.one.p99.as_secs_f64() / c.bare_one.p99.as_secs_f64(),
            c.one.p99.as_secs_f64() / c.fsync_one.p99.as_secs_f64(),
            c.many.per_sec / c.bare_many.per_sec,
            c.prefill_s,
        );
    }
}
