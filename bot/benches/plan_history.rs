//! What `/plan`'s history costs on the server path: the planned commit fetched alone (depth 1, the baseline) against with 300 commits of history, behind a real `git http-backend` on loopback; fetch time, bytes on disk, history read and plan time.
//!
//! Run: `cargo bench -p navin-bot --bench plan_history [-- ROUNDS]`. The served
//! repository is a generated one (10k files, 400 commits of three one-line edits), or
//! with `NAVIN_BENCH_REPO=<git dir>` that repository's default branch and its whole
//! history (a real repository's commits weigh more). Each round fetches into a fresh
//! data directory at each depth in turn (interleaved, so both see the same machine),
//! then plans from what was fetched with the built-in planner.
#![allow(
    clippy::unwrap_used,
    reason = "a bench that cannot set up should stop loudly"
)]

use std::path::Path;
use std::time::Instant;

use navin_e2e::FakeGitHub;
use navin_engine::source::{fetch_commit, Want};
use navin_planner::{plan_repository, PlannerOptions, RepoSource};

const OWNER: &str = "octo";
const REPO: &str = "big";
const FILES: usize = 10_000;
const COMMITS: usize = 400;
const DEPTHS: [usize; 2] = [1, 300];

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// 10k small modules, then 400 commits that each edit three of them.
fn seed(fake: &FakeGitHub) {
    let files: Vec<(String, String)> = (0..FILES)
        .map(|i| {
            (
                format!("crates/c{:02}/src/m{:03}.rs", i % 100, i / 100),
                format!("//! Module {i}.\n\n/// Handles record {i}.\npub fn handle_{i}(id: u64) -> u64 {{\n    id.wrapping_mul({i})\n}}\n"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    fake.commit_files(OWNER, REPO, "main", &refs, "10k files");
    for c in 0..COMMITS {
        let edits: Vec<(String, String)> = (0..3)
            .map(|k| {
                let i = (c * 7 + k * 100) % FILES;
                (files[i].0.clone(), format!("{}// change {c}\n", files[i].1))
            })
            .collect();
        let refs: Vec<(&str, &str)> = edits
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        fake.commit_files(
            OWNER,
            REPO,
            "main",
            &refs,
            &format!("Handle record {c} faster"),
        );
    }
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let fake = FakeGitHub::start();
    fake.create_repo(OWNER, REPO);
    let installation = fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    let real = std::env::var("NAVIN_BENCH_REPO").ok();
    match &real {
        // The fake serves a real bare repository: fill its `main` from the given one.
        Some(path) => {
            let served = git2::Repository::open_bare(fake.git_dir_path(OWNER, REPO)).unwrap();
            let mut remote = served.remote_anonymous(path).unwrap();
            remote
                .fetch(&["+HEAD:refs/heads/main"], None, None)
                .unwrap();
        }
        None => seed(&fake),
    }
    let token = fake.mint_installation_token(installation);
    let url = fake.git_remote_url(OWNER, REPO);
    let full = format!("{OWNER}/{REPO}");
    let request = if real.is_some() {
        "fix the request body limit"
    } else {
        "make handle_42 faster"
    };

    let mut fetch: Vec<Vec<f64>> = vec![Vec::new(); DEPTHS.len()];
    let mut bytes: Vec<u64> = vec![0; DEPTHS.len()];
    let mut read: Vec<usize> = vec![0; DEPTHS.len()];
    let mut history: Vec<Vec<f64>> = vec![Vec::new(); DEPTHS.len()];
    let mut plan: Vec<Vec<f64>> = vec![Vec::new(); DEPTHS.len()];
    for _ in 0..rounds {
        for (d, &depth) in DEPTHS.iter().enumerate() {
            let data = tempfile::tempdir().unwrap();
            let want = Want::Branch("main".into());
            let t0 = Instant::now();
            let tree = fetch_commit(data.path(), &full, &url, &token, &want, depth).unwrap();
            fetch[d].push(t0.elapsed().as_secs_f64());
            bytes[d] = dir_bytes(data.path());
            let t1 = Instant::now();
            let past = tree.history(navin_planner::DEFAULT_HISTORY_DEPTH);
            history[d].push(t1.elapsed().as_secs_f64());
            read[d] = past.map_or(0, |h| h.commits.len());
            let t2 = Instant::now();
            let out = plan_repository(&tree, request, &PlannerOptions::default()).unwrap();
            plan[d].push(t2.elapsed().as_secs_f64());
            assert!(!out.plan.changes.is_empty());
        }
    }
    let base_fetch = median(&mut fetch[0].clone());
    let base_bytes = bytes[0] as f64;
    let source = real
        .as_deref()
        .unwrap_or("generated: 10k files, 400 commits");
    println!("plan_history source=\"{source}\" rounds={rounds}");
    println!(
        "{:>6} {:>10} {:>8} {:>10} {:>8} {:>9} {:>11} {:>8}",
        "depth", "fetch_s", "×depth1", "disk_MiB", "×depth1", "commits", "history_s", "plan_s*"
    );
    for (d, depth) in DEPTHS.iter().enumerate() {
        let f = median(&mut fetch[d]);
        println!(
            "{:>6} {:>10.3} {:>8.2} {:>10.1} {:>8.2} {:>9} {:>11.3} {:>8.3}",
            depth,
            f,
            f / base_fetch,
            bytes[d] as f64 / (1024.0 * 1024.0),
            bytes[d] as f64 / base_bytes,
            read[d],
            median(&mut history[d]),
            median(&mut plan[d]),
        );
    }
    println!("* plan_s includes the planner's own history read");
}
