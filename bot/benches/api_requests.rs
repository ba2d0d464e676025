//! GitHub REST requests each command and event costs, counted by the fake GitHub's request log while the real server and engine handle signed webhooks.
//!
//! Run: `cargo bench -p navin-bot --bench api_requests`. Each row is measured after a
//! warm-up command (the App slug, the installation token and `.github/navin.yml` are
//! cached then, as in a long-running server), by waiting until the engine has gone
//! quiet and counting every REST request it sent. Targets come from the engine issue:
//! `/status` at most 3, a check-run event at most 5, `/plan` at most 10. The planner
//! reads the repository by git (`plan_git` bench), so "planner reads" (REST tree and
//! blob reads) stay 0; the column is kept so a regression to REST reads shows.
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

use std::time::Duration;

use engine_support::*;
use navin_e2e::fake::{wait_until, CheckRunSpec, PullSpec};
use navin_e2e::FakeGitHub;

struct Row {
    what: String,
    requests: usize,
    planner_reads: usize,
    target: Option<usize>,
}

/// Waits until no REST request arrived for `quiet`, then returns and clears the log.
async fn settle(fake: &FakeGitHub) -> Vec<navin_e2e::fake::LoggedRequest> {
    let quiet = Duration::from_millis(400);
    let mut seen = usize::MAX;
    loop {
        let now = fake.api_requests().len();
        if now == seen {
            break;
        }
        seen = now;
        tokio::time::sleep(quiet).await;
    }
    let log = fake.api_requests();
    fake.clear_requests();
    log
}

fn row(what: &str, log: &[navin_e2e::fake::LoggedRequest], target: Option<usize>) -> Row {
    let planner_reads = log
        .iter()
        .filter(|r| {
            r.method == "GET" && (r.path.contains("/git/trees/") || r.path.contains("/git/blobs/"))
        })
        .count();
    Row {
        what: what.to_owned(),
        requests: log.len(),
        planner_reads,
        target,
    }
}

async fn command(
    sc: &mut navin_e2e::Scenario,
    issue: u64,
    body: &str,
    replies: usize,
) -> Vec<navin_e2e::fake::LoggedRequest> {
    let fake = sc.fake().clone();
    fake.clear_requests();
    let (id, _) = sc.comment(OWNER, REPO, issue, "alice", body).await;
    let ok = wait_until(WAIT, || !fake.reactions(id).is_empty() || replies > 0).await;
    assert!(ok, "no reaction to {body}");
    for _ in 0..replies {
        sc.next_comment().await;
    }
    settle(&fake).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    let issue = fake.create_issue(
        OWNER,
        REPO,
        "Greeting options",
        "- [ ] Write the parser\n- [ ] Document it\n",
        "alice",
    );
    let mut rows = Vec::new();

    // Warm-up: the first command of a process also reads GET /app, mints a token and
    // reads the repository config; a server pays that once per cache lifetime.
    let log = command(&mut sc, issue, "/help", 1).await;
    rows.push(row(
        "/help (first command: + App slug, token, config)",
        &log,
        None,
    ));

    let log = command(&mut sc, issue, "/plan add a --name option to greet", 1).await;
    rows.push(row("/plan (6-file repository)", &log, Some(10)));
    let log = command(&mut sc, issue, "/approve", 0).await;
    rows.push(row("/approve", &log, None));
    let log = command(&mut sc, issue, "/mission", 1).await;
    rows.push(row("/mission (from the approved plan)", &log, None));
    let log = command(&mut sc, issue, "/status", 0).await;
    rows.push(row("/status", &log, Some(3)));
    let log = command(&mut sc, issue, "/next", 1).await;
    rows.push(row("/next", &log, None));
    let log = command(&mut sc, issue, "/pause taking a break", 0).await;
    rows.push(row("/pause", &log, None));
    let log = command(&mut sc, issue, "/resume", 0).await;
    rows.push(row("/resume", &log, None));
    let log = command(&mut sc, issue, "/help", 1).await;
    rows.push(row("/help", &log, None));

    // Events. A step with a required check, linked by a PR, proven by a check run.
    let log = command(
        &mut sc,
        issue,
        "/step add B1 \"Bench step\" --validation test",
        0,
    )
    .await;
    rows.push(row("/step add", &log, None));
    let spec = PullSpec::new("navin/B1-bench")
        .author("alice")
        .title("Bench step")
        .body("Navin-Step: B1\n")
        .file("notes/bench.md", "bench\n");
    let (number, sent) = sc.open_pull(OWNER, REPO, spec).await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row(
        "pull_request opened (links, takes the step up)",
        &log,
        Some(6),
    ));
    let head = fake.pull(OWNER, REPO, number).head_sha;

    let (_, sent) = sc
        .complete_check_run(OWNER, REPO, CheckRunSpec::new("lint", &head).app(4242))
        .await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row("check_run completed, untrusted app", &log, Some(5)));
    let (_, sent) = sc
        .complete_check_run(
            OWNER,
            REPO,
            CheckRunSpec::new("ci/test", &head)
                .conclusion("failure")
                .output("1 test failed", "")
                .annotation("src/parser.rs", 88, "rejects_tabs panicked"),
        )
        .await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row(
        "check_run completed red, annotated (attempt counted)",
        &log,
        Some(5),
    ));
    let (head, sent) = sc
        .push_to_pull(OWNER, REPO, number, &[("notes/bench.md", "fixed\n")], "fix")
        .await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row(
        "pull_request synchronize (push: next attempt)",
        &log,
        Some(6),
    ));
    let (_, sent) = sc
        .complete_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", &head))
        .await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row(
        "check_run completed green (CI round; waits for merge)",
        &log,
        Some(6),
    ));
    let merged = sc.close_pull(OWNER, REPO, number, true);
    let sent = sc.send(&merged).await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row(
        "pull_request closed, merged (step done)",
        &log,
        Some(6),
    ));

    // A plan on a PR, its check run, and a review approval.
    fake.set_role(OWNER, REPO, "carol", "write");
    let spec = PullSpec::new("feature/bench")
        .author("carol")
        .title("Bench plan")
        .file(
            "src/greet.rs",
            "pub fn greet(n: &str) -> String { n.into() }\n",
        );
    let (plan_pr, sent) = sc.open_pull(OWNER, REPO, spec).await;
    processed(&server, &sent.guid).await;
    settle(&fake).await;
    let log = command(&mut sc, plan_pr, "/plan let callers pick the greeting", 1).await;
    rows.push(row(
        "/plan on a PR (+ navin/plan check run)",
        &log,
        Some(10),
    ));
    let (_, sent) = sc.review(OWNER, REPO, plan_pr, "alice", "approved").await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row("pull_request_review approved", &log, None));
    let (_, sent) = sc
        .push_to_pull(OWNER, REPO, plan_pr, &[("src/greet.rs", "// v2\n")], "v2")
        .await;
    processed(&server, &sent.guid).await;
    let log = settle(&fake).await;
    rows.push(row("pull_request synchronize (plan PR)", &log, None));

    drop((server, dir));
    rows.extend(attempt_rows().await);

    println!("\nGitHub REST requests per command and event (fake GitHub request log)\n");
    println!(
        "{:<52} {:>8} {:>14} {:>8} {:>7}",
        "command or event", "requests", "planner reads", "target", "met"
    );
    let mut all_met = true;
    for r in &rows {
        let counted = r.requests - r.planner_reads;
        let (target, met) = match r.target {
            Some(t) => (t.to_string(), counted <= t),
            None => ("-".to_owned(), true),
        };
        all_met &= met;
        println!(
            "{:<52} {:>8} {:>14} {:>8} {:>7}",
            r.what,
            r.requests,
            r.planner_reads,
            target,
            if r.target.is_some() {
                if met {
                    "yes"
                } else {
                    "NO"
                }
            } else {
                ""
            }
        );
    }
    println!("\ntargets count requests other than the planner's reads; all met: {all_met}");
}

/// The closed agent loop: what starting the next attempt adds to the event that ends the
/// last one, in a fresh server whose repository hands steps to an agent workflow and
/// restarts at once (`agents.idle_after: 0`).
async fn attempt_rows() -> Vec<Row> {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    let config = "dispatch:\n  agent: workflow\n  workflow: agent.yml\nagents:\n  idle_after: 0\nevidence:\n  done_on: green\n  required_checks:\n    test: [ci/test]\n";
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[(".github/navin.yml", config)],
        "agents",
    );
    fake.add_workflow(OWNER, REPO, "agent.yml", "agent");
    let issue = fake.create_issue(OWNER, REPO, "Loop", "Ship it.", "alice");
    command(
        &mut sc,
        issue,
        "/mission ship\n/step add A1 \"Loop step\" --validation test",
        1,
    )
    .await;
    let mut rows = Vec::new();
    let start_requests = |log: &[navin_e2e::fake::LoggedRequest]| {
        log.iter()
            .filter(|r| {
                r.path.ends_with("/dispatches")
                    || (r.method == "POST"
                        && r.path.ends_with("/comments")
                        && !r.path.ends_with(&format!("/issues/{issue}/comments")))
                    || (r.method == "GET"
                        && r.path.contains("/pulls/")
                        && !r.path.contains("/files"))
            })
            .count()
    };
    for (attempt, end) in [(2, "red CI"), (3, "closed pull request")] {
        let spec = PullSpec::new(&format!("navin/a1-try{attempt}"))
            .author("alice")
            .title("Loop step")
            .body("Navin-Step: A1\n")
            .file("notes/loop.md", &format!("try {attempt}\n"));
        let (number, sent) = sc.open_pull(OWNER, REPO, spec).await;
        processed(&server, &sent.guid).await;
        settle(&fake).await;
        let head = fake.pull(OWNER, REPO, number).head_sha;
        let sent = if attempt == 2 {
            sc.complete_check_run(
                OWNER,
                REPO,
                CheckRunSpec::new("ci/test", &head).conclusion("failure"),
            )
            .await
            .1
        } else {
            let closed = sc.close_pull(OWNER, REPO, number, false);
            sc.send(&closed).await
        };
        processed(&server, &sent.guid).await;
        sc.next_comment().await;
        let log = settle(&fake).await;
        rows.push(row(
            &format!("{end}: event (attempt {attempt} started)"),
            &log,
            None,
        ));
        let started = start_requests(&log);
        rows.push(Row {
            what: format!("  of which: starting attempt {attempt} (workflow)"),
            requests: started,
            planner_reads: 0,
            target: Some(6),
        });
    }
    drop((server, dir));
    rows
}
