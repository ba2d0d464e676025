//! Time from process start to a handled run, next to `/bin/true`: `ready-matrix`, and `mode: event` on an issue comment without commands (the engine, its runtime and GitHub client start, the comment is judged, the ledger is read for the outputs), both against a ledger in a local bare repository (no network).

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

fn report(label: &str, action: &[Duration], baseline: &[Duration]) {
    println!(
        "  {label:<28} median {:7.2} ms  p95 {:7.2} ms  (beyond /bin/true: median {:7.2} ms, p95 {:7.2} ms; target under 300 ms)",
        ms(pct(action, 0.5)),
        ms(pct(action, 0.95)),
        ms(pct(action, 0.5)) - ms(pct(baseline, 0.5)),
        ms(pct(action, 0.95)) - ms(pct(baseline, 0.95))
    );
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
    let comment = navin_e2e::Payload::fixture("issue_comment.created")
        .comment_body("Thanks, this looks right to me.")
        .into_json();
    let event_path = dir.path().join("event.json");
    std::fs::write(&event_path, serde_json::to_vec(&comment).expect("json")).expect("event");
    let event_output = dir.path().join("event-output");
    let summary = dir.path().join("summary");
    let event = time(|| {
        let mut c = Command::new(bin);
        c.env_clear()
            .args(["--mode", "event"])
            .env("INPUT_GITHUB_TOKEN", "ghs_bench")
            .env("GITHUB_REPOSITORY", "octo-org/hello")
            .env("GITHUB_EVENT_NAME", "issue_comment")
            .env("GITHUB_EVENT_PATH", &event_path)
            .env("GITHUB_RUN_ID", "1")
            // Nothing listens there: an API call would fail the run.
            .env("GITHUB_API_URL", "http://127.0.0.1:9")
            .env("GITHUB_WORKSPACE", dir.path())
            .env("GITHUB_OUTPUT", &event_output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", &temp)
            .env("INPUT_LEDGER_BRANCH", "navin/ledger")
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
    let event_written = std::fs::read_to_string(&event_output).unwrap_or_default();
    assert!(
        event_written.contains("running"),
        "event mode did not report the mission"
    );
    println!("navin-action startup ({RUNS} runs each, 50-step ledger, local bare remote)");
    report("ready-matrix", &action, &baseline);
    report("event (comment, no command)", &event, &baseline);
    println!(
        "  /bin/true                    median {:7.2} ms  p95 {:7.2} ms",
        ms(pct(&baseline, 0.5)),
        ms(pct(&baseline, 0.95))
    );
}
