//! Time from process start to a handled `ready-matrix` run against a ledger in a local bare repository (no network), next to `/bin/true`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use chrono::Utc;
use navin_ledger::model::{Actor, Validation};
use navin_ledger::store::{Store, StoreConfig};
use navin_ledger::{Ctx, InitArgs, NewTask, Operation};

const RUNS: usize = 30;

fn seed(remote: &Path) {
    git2::Repository::init_bare(remote).expect("init remote");
    let store = Store::open(remote, StoreConfig::default()).expect("store");
    let steps = (1..=50)
        .map(|i| NewTask {
            id: format!("S{i}"),
            title: format!("Step {i}"),
            validation: Validation::Test,
            depends_on: if i > 10 {
                vec![format!("S{}", i - 10)]
            } else {
                vec![]
            },
            ..NewTask::default()
        })
        .collect();
    store
        .transact(
            &Operation::Init(InitArgs {
                goal: "bench".into(),
                steps,
                ..InitArgs::default()
            }),
            &Ctx::new(Utc::now(), Actor::Main),
        )
        .expect("seed ledger");
}

fn time(mut cmd: impl FnMut() -> Command) -> Vec<Duration> {
    let mut out = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut c = cmd();
        let start = Instant::now();
        let status = c.status().expect("spawn");
        out.push(start.elapsed());
        assert!(status.success(), "run failed: {status}");
    }
    out.sort();
    out
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let remote = dir.path().join("remote.git");
    seed(&remote);
    let temp = dir.path().join("runner-temp");
    std::fs::create_dir_all(&temp).expect("runner temp");
    let output = dir.path().join("output");
    let bin = env!("CARGO_BIN_EXE_navin-action");
    let action = time(|| {
        let mut c = Command::new(bin);
        c.env_clear()
            .args(["--mode", "ready-matrix"])
            .env("INPUT_GITHUB_TOKEN", "ghs_bench")
            .env("GITHUB_REPOSITORY", "octo-org/hello")
            .env("GITHUB_WORKSPACE", dir.path())
            .env("GITHUB_OUTPUT", &output)
            .env("RUNNER_TEMP", &temp)
            .env("NAVIN_GIT_URL", &remote)
            .stdout(std::process::Stdio::null());
        c
    });
    let baseline = time(|| {
        let mut c = Command::new("/bin/true");
        c.env_clear();
        c
    });
    let written = std::fs::read_to_string(&output).unwrap_or_default();
    assert!(written.contains("\"S1\""), "ready-matrix produced no steps");
    println!("navin-action ready-matrix startup ({RUNS} runs, 50-step ledger, local bare remote)");
    println!(
        "  navin-action: median {:7.2} ms  p95 {:7.2} ms",
        ms(pct(&action, 0.5)),
        ms(pct(&action, 0.95))
    );
    println!(
        "  /bin/true:    median {:7.2} ms  p95 {:7.2} ms",
        ms(pct(&baseline, 0.5)),
        ms(pct(&baseline, 0.95))
    );
    println!(
        "  difference:   median {:7.2} ms  p95 {:7.2} ms  (target: under 300 ms)",
        ms(pct(&action, 0.5)) - ms(pct(&baseline, 0.5)),
        ms(pct(&action, 0.95)) - ms(pct(&baseline, 0.95))
    );
}
