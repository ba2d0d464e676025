//! Ledger benchmarks: transactions/s against a raw git2 baseline measured in the same run,
//! and ready-queue / local-replan times on boards of 1k, 10k and 100k tasks.
//!
//! Run: `cargo bench -p navin-ledger --bench ledger` (set NAVIN_BENCH_TX to change the count).

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use git2::{FileMode, Oid, Repository, Signature};
use navin_ledger::model::{Actor, TaskStatus};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome, ProgressArgs};
use navin_ledger::store::{Committed, Store, StoreConfig};

fn ctx() -> Ctx {
    Ctx::new(
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
            .single()
            .expect("time"),
        Actor::Main,
    )
}

fn steps(n: usize, fan_in: usize) -> Vec<NewTask> {
    // Deterministic pseudo-random DAG: each task depends on up to `fan_in` earlier ones.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|i| {
            let mut deps = Vec::new();
            for _ in 0..fan_in.min(i) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let d = format!("T{}", (seed as usize) % i);
                if !deps.contains(&d) {
                    deps.push(d);
                }
            }
            NewTask {
                id: format!("T{i}"),
                title: format!("task number {i}"),
                depends_on: deps,
                ..NewTask::default()
            }
        })
        .collect()
}

fn progress() -> Operation {
    Operation::Progress(ProgressArgs {
        step: "T0".into(),
        real_progress: true,
        ..ProgressArgs::default()
    })
}

/// A store with a 20-step mission and a full history window, ready for `progress` transactions.
fn ledger_store() -> (tempfile::TempDir, Store, usize, usize) {
    let dir = tempfile::tempdir().expect("tmp");
    Repository::init(dir.path()).expect("repo");
    let store = Store::open(dir.path(), StoreConfig::default()).expect("store");
    let init = Operation::Init(InitArgs {
        goal: "bench".into(),
        steps: steps(20, 2),
        ..InitArgs::default()
    });
    store.transact(&init, &ctx()).expect("init");
    store
        .transact(&Operation::Start { step: "T0".into() }, &ctx())
        .expect("start");
    for _ in 0..120 {
        store.transact(&progress(), &ctx()).expect("warm");
    }
    let ledger = store.read().expect("read").expect("ledger").ledger;
    let (m, b) = navin_ledger::encode(&ledger).expect("encode");
    (dir, store, m.len(), b.len())
}

/// Ledger transactions per second.
fn ledger_tx(store: &Store, n: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..n {
        match store.transact(&progress(), &ctx()).expect("tx") {
            Committed::Written { .. } => {}
            Committed::AlreadyApplied { .. } => panic!("unexpected"),
        }
    }
    n as f64 / start.elapsed().as_secs_f64()
}

/// The same git work with no ledger logic: two blobs of the same sizes, the
/// nested tree, a commit on the previous tip, a compare-and-swap ref update.
struct Raw {
    _dir: tempfile::TempDir,
    repo: Repository,
    tip: Option<Oid>,
    counter: usize,
}

impl Raw {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        let repo = Repository::init(dir.path()).expect("repo");
        Self {
            _dir: dir,
            repo,
            tip: None,
            counter: 0,
        }
    }

    fn run(&mut self, n: usize, mission_len: usize, board_len: usize) -> f64 {
        let repo = &self.repo;
        let sig = Signature::new(
            "Navin",
            "navin@example.com",
            &git2::Time::new(1_700_000_000, 0),
        )
        .expect("sig");
        let refname = "refs/heads/navin/ledger";
        let mut mission = vec![b'm'; mission_len];
        let board = vec![b'b'; board_len];
        let start = Instant::now();
        for _ in 0..n {
            self.counter += 1;
            let stamp = format!("{:020}", self.counter);
            mission[..20].copy_from_slice(stamp.as_bytes());
            let mb = repo.blob(&mission).expect("blob");
            let bb = repo.blob(&board).expect("blob");
            let mut inner = repo.treebuilder(None).expect("tb");
            inner
                .insert("mission.json", mb, FileMode::Blob.into())
                .expect("insert");
            inner
                .insert("board.json", bb, FileMode::Blob.into())
                .expect("insert");
            let inner = inner.write().expect("tree");
            let mut mid = repo.treebuilder(None).expect("tb");
            mid.insert("board", inner, FileMode::Tree.into())
                .expect("insert");
            let mid = mid.write().expect("tree");
            let mut root = repo.treebuilder(None).expect("tb");
            root.insert(".navin", mid, FileMode::Tree.into())
                .expect("insert");
            let tree = repo.find_tree(root.write().expect("tree")).expect("tree");
            let parent = self.tip.map(|t| repo.find_commit(t).expect("parent"));
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            let commit = repo
                .commit(None, &sig, &sig, "raw", &tree, &parents)
                .expect("commit");
            match self.tip {
                Some(old) => repo
                    .reference_matching(refname, commit, true, old, "raw")
                    .expect("cas"),
                None => repo
                    .reference(refname, commit, false, "raw")
                    .expect("create"),
            };
            self.tip = Some(commit);
        }
        n as f64 / start.elapsed().as_secs_f64()
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn board_ops(n: usize) {
    let init = Operation::Init(InitArgs {
        goal: "big".into(),
        steps: steps(n, 3),
        ..InitArgs::default()
    });
    let build = Instant::now();
    let Ok(Outcome::Applied(a)) = apply(None, &init, &ctx()) else {
        panic!("init")
    };
    let build = build.elapsed();
    let mut ledger = a.ledger;
    // Half the board done, so the ready queue has real work to check.
    for (i, t) in ledger.board.tasks.iter_mut().enumerate() {
        if i < n / 2 {
            std::sync::Arc::make_mut(t).status = TaskStatus::Done;
        }
    }
    let ready: Vec<Duration> = (0..11)
        .map(|_| {
            let t = Instant::now();
            let r = ledger.ready();
            std::hint::black_box(r.len());
            t.elapsed()
        })
        .collect();
    let target = format!("T{}", n / 10);
    let op = Operation::Replan {
        step: target,
        reason: "bench".into(),
    };
    let mut reset = 0;
    let replan: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let Ok(Outcome::Applied(a)) = apply(Some(&ledger), &op, &ctx()) else {
                panic!("replan")
            };
            let e = t.elapsed();
            reset = a
                .effects
                .iter()
                .find_map(|e| match e {
                    navin_ledger::ops::Effect::Replanned { steps, .. } => Some(steps.len()),
                    _ => None,
                })
                .unwrap_or(0);
            e
        })
        .collect();
    println!(
        "board {n:>7} tasks: index+validate {:>8.2} ms | ready queue {:>8.3} ms | local replan (whole op, {reset} reset) {:>8.2} ms",
        build.as_secs_f64() * 1e3,
        median(ready).as_secs_f64() * 1e3,
        median(replan).as_secs_f64() * 1e3,
    );
}

fn main() {
    let n: usize = std::env::var("NAVIN_BENCH_TX")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let (_dir, store, m, b) = ledger_store();
    let mut raw = Raw::new();
    // Interleave rounds so both see the same machine load; report the median round.
    let mut rounds: Vec<(f64, f64)> = (0..7)
        .map(|_| (ledger_tx(&store, n), raw.run(n, m, b)))
        .collect();
    rounds.sort_by(|x, y| (x.0 / x.1).total_cmp(&(y.0 / y.1)));
    let (tx, base) = rounds[rounds.len() / 2];
    println!("ledger transactions: {tx:>8.0} tx/s (mission.json {m} B, board.json {b} B; median of 7 rounds x {n})");
    println!("raw git2 baseline:   {base:>8.0} commits/s (same sizes and tree shape, same rounds)");
    println!("ratio ledger/raw:    {:>8.2} (target >= 0.5)", tx / base);
    for size in [1_000, 10_000, 100_000] {
        board_ops(size);
    }
}
