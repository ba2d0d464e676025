//! `/plan` end to end through the real server on a generated 10k-file repository: wall time, REST requests and git requests, against the 6-file repository measured in the same run.
//!
//! Run: `cargo bench -p navin-bot --bench plan_git`. Rows: the small repository (the
//! baseline), the 10k-file repository on its first `/plan` (the whole tree fetched at
//! depth 1), again after a one-file commit (an incremental fetch), the tool-using LLM
//! planner on a scripted endpoint, and the bad day: that endpoint failing with
//! `fallback: builtin`. Targets from the plan-mode issue: under 5 s end to end and at
//! most 6 REST requests (after the warm-up that mints the installation token).
#![allow(
    clippy::unwrap_used,
    reason = "a bench that cannot set up should stop loudly"
)]

#[path = "../tests/it/engine_support/mod.rs"]
#[allow(dead_code, reason = "the bench uses part of the test world")]
mod engine_support;
#[path = "../tests/it/server_support/mod.rs"]
#[allow(dead_code, reason = "the bench uses part of the test world")]
mod server_support;

use std::time::{Duration, Instant};

use engine_support::*;
use navin_e2e::fake::{LoggedRequest, RequestKind};
use navin_e2e::llm::{content, tool_calls, FakeLlm};
use navin_e2e::FakeGitHub;
use navin_planner::external::ExternalConfig;
use serde_json::json;

const FILES: usize = 10_000;

/// Waits until no request arrived for a while, then returns and clears the log.
async fn settle(fake: &FakeGitHub) -> Vec<LoggedRequest> {
    let mut seen = usize::MAX;
    loop {
        let now = fake.requests().len();
        if now == seen {
            break;
        }
        seen = now;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let log = fake.requests();
    fake.clear_requests();
    log
}

struct Row {
    what: &'static str,
    secs: f64,
    rest: usize,
    git: usize,
}

/// One `/plan` on a new issue (a second `/plan` on one issue edits its comment in
/// place): seconds from the comment's delivery to the plan comment, and requests.
async fn plan(sc: &mut navin_e2e::Scenario, what: &'static str) -> (Row, u64, String) {
    let fake = sc.fake().clone();
    let issue = fake.create_issue(OWNER, REPO, what, "", "alice");
    fake.clear_requests();
    let started = Instant::now();
    sc.comment(
        OWNER,
        REPO,
        issue,
        "alice",
        "/plan add a --since option to the history command",
    )
    .await;
    let body = sc.next_comment().await.body;
    let secs = started.elapsed().as_secs_f64();
    let log = settle(&fake).await;
    let rest = log.iter().filter(|r| r.kind == RequestKind::Rest).count();
    let row = Row {
        what,
        secs,
        rest,
        git: log.len() - rest,
    };
    (row, issue, body)
}

/// A repository of `FILES` Rust files in 100 crates-like folders, plus the one the
/// request is about.
fn generated() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = (0..FILES)
        .map(|i| {
            let path = format!("crates/c{:02}/src/m{:03}.rs", i % 100, i / 100);
            let text = format!(
                "//! Module {i}.\n\nuse crate::shared::Config;\n\n/// Handles record {i}.\npub fn handle_{i}(cfg: &Config, id: u64) -> u64 {{\n    id.wrapping_mul({i}) ^ cfg.seed\n}}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn handles() {{ assert_eq!(1, 1); }}\n}}\n"
            );
            (path, text)
        })
        .collect();
    files.push((
        "crates/cli/src/history.rs".to_owned(),
        "//! `ledger history`.\n\n#[derive(clap::Args)]\npub struct HistoryArgs {\n    #[arg(long)]\n    pub limit: Option<usize>,\n}\n\npub fn history(args: &HistoryArgs) {}\n".to_owned(),
    ));
    files
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let files = generated();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let mut rows = Vec::new();

    // The built-in planner: the small repository, then 10k files cold and warm.
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
    } = world().await;
    let fake = sc.fake().clone();
    // Warm-up: mints the installation token and caches the config, once per server.
    plan(&mut sc, "warm-up").await;
    rows.push(plan(&mut sc, "/plan, 6-file repository (baseline)").await.0);
    fake.commit_files(OWNER, REPO, "main", &refs, "10k files");
    let (cold, issue, _) = plan(&mut sc, "/plan, 10k files, first fetch").await;
    rows.push(cold);
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[("crates/c00/src/m000.rs", "//! changed\n")],
        "one file",
    );
    rows.push(
        plan(&mut sc, "/plan, 10k files, after a 1-file commit")
            .await
            .0,
    );
    // The scripted model's plan is the built-in one, so it validates.
    let builtin = fake
        .file_at(
            OWNER,
            REPO,
            "navin/ledger",
            &format!(".navin/plans/issue-{issue}.md"),
        )
        .unwrap();
    drop((server, dir));

    // The LLM planner on a second server whose repository asks for it.
    let llm = FakeLlm::start(vec![
        // The warm-up's plan, at once.
        content(&builtin),
        tool_calls(&[
            ("find_symbol", json!({"name": "HistoryArgs"})),
            (
                "grep",
                json!({"pattern": "since|limit", "glob": "crates/cli/**"}),
            ),
        ]),
        tool_calls(&[
            ("read_file", json!({"path": "crates/cli/src/history.rs"})),
            ("list_dir", json!({"path": "crates/cli/src"})),
        ]),
        content(&builtin),
    ])
    .await
    .unwrap();
    let planner = ExternalConfig {
        base_url: Some(llm.base_url().to_owned()),
        model: Some("bench-model".to_owned()),
        ..ExternalConfig::default()
    };
    let Harness {
        mut sc,
        _server,
        _dir,
    } = world_with(move |c| c.planner = planner).await;
    let fake = sc.fake().clone();
    let mut with_config = refs.clone();
    with_config.push((
        ".github/navin.yml",
        "planner:\n  source: llm\n  fallback: builtin\n",
    ));
    fake.commit_files(OWNER, REPO, "main", &with_config, "10k files, llm planner");
    plan(&mut sc, "warm-up (fetches the 10k tree)").await;
    let (agent, issue, _) = plan(&mut sc, "/plan, 10k files, LLM planner (4 tool calls)").await;
    rows.push(agent);
    let calls = llm.requests().len() - 1;
    let record = fake
        .file_at(
            OWNER,
            REPO,
            "navin/ledger",
            &format!(".navin/plans/issue-{issue}.json"),
        )
        .unwrap_or_default();
    assert!(record.contains("\"tool\": \"find_symbol\""), "{record}");
    // The script is spent: the endpoint now answers 503 and the built-in plan stands in.
    let (bad, _, comment) = plan(&mut sc, "/plan, 10k files, LLM failing -> built-in").await;
    assert!(comment.contains("built-in plan"), "{comment}");
    rows.push(bad);

    println!(
        "\n{:<52} {:>8} {:>6} {:>5} {:>8}",
        "case", "seconds", "REST", "git", "x base"
    );
    let base = rows[0].secs;
    let mut met = true;
    for r in &rows {
        println!(
            "{:<52} {:>8.2} {:>6} {:>5} {:>8.1}",
            r.what,
            r.secs,
            r.rest,
            r.git,
            r.secs / base
        );
        met &= r.secs < 5.0 && r.rest <= 6;
    }
    println!("\nLLM planner: {calls} chat requests for the scripted run (3 turns expected)");
    println!("targets (< 5 s, <= 6 REST requests per /plan) met: {met}");
}
