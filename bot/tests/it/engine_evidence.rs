//! Step links and CI evidence end to end: the real server with the engine against the fake
//! GitHub, driven by signed `pull_request`, `check_run` and `workflow_run` webhooks built
//! from the real payload fixtures, checked with plain git on the ledger branch, the
//! panel comment and the fake's request log.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::engine_support;

use std::time::Duration;

use engine_support::*;
use navin_bot::queue::Delivery;
use navin_bot::server::RunningServer;
use navin_e2e::fake::{CheckRunSpec, PullSpec};
use navin_e2e::{FakeGitHub, Payload, Scenario};
use navin_engine::{Engine, EngineConfig};
use serde_json::{json, Value};

/// An app that is not GitHub Actions (and not in the repository's `trusted_apps`).
const OTHER_APP: u64 = 4242;

/// A running mission on a new issue with two test steps, `S2` after `S1`; returns the issue.
async fn mission(sc: &mut Scenario, server: &RunningServer) -> u64 {
    let fake = sc.fake().clone();
    let issue = fake.create_issue(
        OWNER,
        REPO,
        "Greetings",
        "Make greetings configurable.",
        "alice",
    );
    let (_, sent) = sc
        .comment(
            OWNER,
            REPO,
            issue,
            "alice",
            "/mission configurable greetings\n\
             /step add S1 \"Configurable greeting\" --validation test\n\
             /step add S2 \"Farewell\" --after S1 --validation test",
        )
        .await;
    processed(server, &sent.guid).await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);
    fake.clear_requests();
    issue
}

/// Opens a PR with one real commit and waits for the engine; returns its number and head.
async fn open_pr(sc: &Scenario, server: &RunningServer, spec: PullSpec) -> (u64, String) {
    let (number, sent) = sc.open_pull(OWNER, REPO, spec).await;
    processed(server, &sent.guid).await;
    (number, sc.fake().pull(OWNER, REPO, number).head_sha)
}

/// Stores a completed check run, delivers `check_run.completed`, waits for the engine.
async fn check_run(sc: &Scenario, server: &RunningServer, spec: CheckRunSpec) -> (u64, String) {
    let (id, sent) = sc.complete_check_run(OWNER, REPO, spec).await;
    processed(server, &sent.guid).await;
    (id, sent.guid)
}

/// `check_run.completed` for a stored run, as a fork PR's run carries it (no `pull_requests`).
fn check_run_payload(sc: &Scenario, id: u64) -> Payload {
    let fake = sc.fake();
    let run = fake.check_run(id).unwrap();
    Payload::fixture("check_run.completed")
        .repo(OWNER, REPO, fake.repo_id(OWNER, REPO))
        .check_run_id(id)
        .check_name(&run.name)
        .head_sha(&run.head_sha)
        .app_id(run.app_id)
        .conclusion(run.conclusion.as_deref().unwrap())
        .set("/check_run/pull_requests", json!([]))
        .installation(sc.installation_for(OWNER, REPO).unwrap())
}

/// A step as `board.json` on the ledger branch has it, read with plain git.
fn step(fake: &FakeGitHub, id: &str) -> Value {
    let text = ledger_git(fake, &["show", "navin/ledger:.navin/board/board.json"]).unwrap();
    let board: Value = serde_json::from_str(&text).unwrap();
    board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no step {id} in {board}"))
}

fn panel(fake: &FakeGitHub) -> String {
    latest_edit(fake, "<!-- navin:panel")
        .map(|c| c.body)
        .unwrap_or_default()
}

fn pr_for(step: &str) -> PullSpec {
    PullSpec::new(&format!("feature-{}", step.to_ascii_lowercase()))
        .author("alice")
        .title(&format!("Work on {step}"))
        .body(&format!("What changed.\n\nNavin-Step: {step}\n"))
        .file(
            &format!("src/{}.rs", step.to_ascii_lowercase()),
            "pub fn f() {}\n",
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_naming_its_step_links_it_and_a_green_required_check_on_its_head_marks_it_done() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;

    let (pr, head) = open_pr(&sc, &server, pr_for("S1")).await;
    count_requests(&fake, "pull_request opened (links S1)");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["links"]["prs"], json!([pr]), "{s1}");
    assert_eq!(s1["links"]["head_sha"], head);
    assert_eq!(s1["links"]["branch"], "feature-s1");
    assert_eq!(s1["status"], "planned");

    // A check that is not required proves nothing on its own.
    check_run(&sc, &server, CheckRunSpec::new("lint", &head)).await;
    assert_eq!(step(&fake, "S1")["status"], "planned");
    fake.clear_requests();

    let (run, _) = check_run(&sc, &server, CheckRunSpec::new("ci/test", &head)).await;
    // The runs were re-read from the API before the step was closed.
    assert!(!fake
        .requests_to(
            "GET",
            &format!("/repos/{OWNER}/{REPO}/commits/{head}/check-runs")
        )
        .is_empty());
    let n = count_requests(&fake, "check_run completed (green, step done)");
    assert!(n <= 5, "{n} REST requests for one check run");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "done", "{s1}");
    let proof = s1["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["check_run_id"] == run)
        .unwrap_or_else(|| panic!("run {run} is not S1's evidence: {s1}"));
    assert_eq!(proof["kind"], "check_run");
    assert_eq!(proof["ok"], true);
    assert_eq!(proof["name"], "ci/test");
    assert_eq!(proof["app_id"], 15368);
    assert_eq!(proof["head_sha"], head);
    assert_eq!(proof["conclusion"], "success");
    assert!(proof["url"].as_str().is_some_and(|u| !u.is_empty()));
    assert!(proof["completed_at"].is_string());
    assert_eq!(step(&fake, "S2")["status"], "planned");
    let body = panel(&fake);
    assert!(body.contains("1/2"), "{body}");
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_are_done_in_dependency_order() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;

    // S2's PR links by its branch name, and goes green first: S2 waits for S1.
    let spec = PullSpec::new("navin/S2-farewell")
        .author("alice")
        .file("src/farewell.rs", "pub fn bye() {}\n");
    let (_, s2_head) = open_pr(&sc, &server, spec).await;
    assert_eq!(step(&fake, "S2")["links"]["head_sha"], s2_head);
    let (s2_run, _) = check_run(&sc, &server, CheckRunSpec::new("ci/test", &s2_head)).await;
    let s2 = step(&fake, "S2");
    assert_eq!(s2["status"], "planned", "{s2}");
    assert_eq!(s2["evidence"][0]["check_run_id"], s2_run, "{s2}");

    // S1 goes green: S1 is done, then S2, whose head is re-read before it closes.
    let (_, s1_head) = open_pr(&sc, &server, pr_for("S1")).await;
    fake.clear_requests();
    check_run(&sc, &server, CheckRunSpec::new("ci/test", &s1_head)).await;
    count_requests(&fake, "check_run completed (S1 done, then S2)");
    assert_eq!(step(&fake, "S1")["status"], "done");
    assert_eq!(step(&fake, "S2")["status"], "done");
    let mission = mission_json(&fake);
    let at = |prefix: &str| {
        mission["history"]
            .as_array()
            .unwrap()
            .iter()
            .position(|h| h["reason"].as_str().unwrap_or("").starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} in {mission}"))
    };
    assert!(at("S1 done") < at("S2 done"));
    assert_eq!(mission["status"], "running");
    assert!(panel(&fake).contains("2/2"), "{}", panel(&fake));
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_run_with_the_right_name_from_an_untrusted_app_is_ignored() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (_, head) = open_pr(&sc, &server, pr_for("S1")).await;
    let commits = ledger_commits(&fake);
    fake.clear_requests();

    check_run(
        &sc,
        &server,
        CheckRunSpec::new("ci/test", &head).app(OTHER_APP),
    )
    .await;
    let n = count_requests(&fake, "check_run completed (untrusted app)");
    assert_eq!(n, 0, "an untrusted run costs no request");
    assert_eq!(ledger_commits(&fake), commits);
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "planned");
    assert_eq!(s1["evidence"], json!([]));

    // The same name from GitHub Actions counts, and only it is the evidence.
    let (trusted, _) = check_run(&sc, &server, CheckRunSpec::new("ci/test", &head)).await;
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "done");
    let ids: Vec<&Value> = s1["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["check_run_id"])
        .collect();
    assert_eq!(ids, [&json!(trusted)]);
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_green_run_on_an_old_head_after_synchronize_is_ignored() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (pr, old) = open_pr(&sc, &server, pr_for("S1")).await;
    fake.clear_requests();

    let (new, sent) = sc
        .push_to_pull(OWNER, REPO, pr, &[("src/s1.rs", "pub fn g() {}\n")], "more")
        .await;
    processed(&server, &sent.guid).await;
    count_requests(&fake, "pull_request synchronize (link moves)");
    assert_ne!(old, new);
    assert_eq!(step(&fake, "S1")["links"]["head_sha"], new);
    let commits = ledger_commits(&fake);

    check_run(&sc, &server, CheckRunSpec::new("ci/test", &old)).await;
    let n = count_requests(&fake, "check_run completed (old head)");
    assert_eq!(n, 0, "a run on no linked head costs no request");
    assert_eq!(ledger_commits(&fake), commits);
    assert_eq!(step(&fake, "S1")["status"], "planned");

    check_run(&sc, &server, CheckRunSpec::new("ci/test", &new)).await;
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "done");
    assert!(s1["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["head_sha"] == new));
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skipped_run_is_not_green() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (_, head) = open_pr(&sc, &server, pr_for("S1")).await;
    let commits = ledger_commits(&fake);
    fake.clear_requests();

    for conclusion in ["skipped", "neutral", "cancelled"] {
        let spec = CheckRunSpec::new("ci/test", &head).conclusion(conclusion);
        check_run(&sc, &server, spec).await;
        count_requests(&fake, &format!("check_run completed ({conclusion})"));
    }
    assert_eq!(ledger_commits(&fake), commits, "nothing recorded");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "planned", "{s1}");
    assert_eq!(s1["retry_count"], 0, "not green is not a failed attempt");

    // A run of the same check that passes is green.
    check_run(&sc, &server, CheckRunSpec::new("ci/test", &head)).await;
    assert_eq!(step(&fake, "S1")["status"], "done");
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_required_check_counts_an_attempt_and_the_panel_names_the_failed_check() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (pr, head) = open_pr(&sc, &server, pr_for("S1")).await;
    fake.clear_requests();

    let (run, _) = check_run(
        &sc,
        &server,
        CheckRunSpec::new("ci/test", &head).conclusion("failure"),
    )
    .await;
    count_requests(&fake, "check_run completed (red, attempt counted)");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "failed", "{s1}");
    assert_eq!(s1["retry_count"], 1);
    assert_eq!(s1["evidence"][0]["check_run_id"], run);
    assert_eq!(s1["evidence"][0]["ok"], false);
    assert_eq!(s1["evidence"][0]["conclusion"], "failure");
    let body = panel(&fake);
    let failed = body
        .lines()
        .find(|l| l.contains("What failed last"))
        .unwrap_or_else(|| panic!("no failure line in the panel:\n{body}"));
    assert!(
        failed.contains("ci/test") && failed.contains("failure"),
        "{failed}"
    );
    assert!(failed.contains("S1"), "{failed}");

    // A fix pushed to the PR is the next attempt, and its green run closes the step.
    let (fixed, sent) = sc
        .push_to_pull(
            OWNER,
            REPO,
            pr,
            &[("src/s1.rs", "pub fn f() -> u8 { 1 }\n")],
            "fix",
        )
        .await;
    processed(&server, &sent.guid).await;
    count_requests(&fake, "pull_request synchronize (retry on the new head)");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "planned", "{s1}");
    assert_eq!(s1["retry_count"], 1);
    check_run(&sc, &server, CheckRunSpec::new("ci/test", &fixed)).await;
    assert_eq!(step(&fake, "S1")["status"], "done");
    assert!(
        !panel(&fake).contains("What failed last"),
        "{}",
        panel(&fake)
    );
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_check_run_event_changes_nothing_twice() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        data_dir,
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (_, head) = open_pr(&sc, &server, pr_for("S1")).await;

    // A failure on a fork-style payload (no `pull_requests`): matched on the SHA.
    let id = fake.add_check_run(
        OWNER,
        REPO,
        CheckRunSpec::new("ci/test", &head).conclusion("failure"),
    );
    let payload = check_run_payload(&sc, id);
    let first = sc.send(&payload).await;
    processed(&server, &first.guid).await;
    assert_eq!(step(&fake, "S1")["retry_count"], 1);
    let commits = ledger_commits(&fake);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let edits = fake.bot_comment_edits().len();
    fake.clear_requests();

    // GitHub's redelivery (same GUID), the same completion under a new GUID, and the
    // worker running the delivery again after a crash: no second attempt, no commit.
    let again = sc
        .sender()
        .send_with_guid(payload.event(), payload.json(), &first.guid)
        .await
        .unwrap();
    assert_eq!(again.status, 202);
    let copy = sc.send(&payload).await;
    processed(&server, &copy.guid).await;
    count_requests(&fake, "check_run completed (same run again)");
    let delivery = Delivery {
        seq: 1,
        delivery_id: first.guid.clone(),
        event: "check_run".into(),
        action: Some("completed".into()),
        repository: Some(format!("{OWNER}/{REPO}")),
        installation_id: sc.installation_for(OWNER, REPO),
        headers: Vec::new(),
        body: bytes::Bytes::from(serde_json::to_vec(payload.json()).unwrap()),
        received_at_ms: 0,
        attempt: 2,
    };
    let handler = navin_bot::queue::EngineHandler::new(Engine::new(
        server.github().clone(),
        EngineConfig::new(data_dir),
    ));
    navin_bot::queue::DeliveryHandler::handle(&handler, &delivery)
        .await
        .unwrap();
    count_requests(&fake, "check_run completed (worker retry, attempt 2)");

    assert_eq!(ledger_commits(&fake), commits, "no second ledger commit");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["retry_count"], 1, "{s1}");
    assert_eq!(s1["evidence"].as_array().unwrap().len(), 1, "{s1}");
    assert_eq!(
        fake.bot_comment_edits().len(),
        edits,
        "the panel is current"
    );
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_workflow_run_is_re_read_and_its_jobs_prove_the_step() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (_, head) = open_pr(&sc, &server, pr_for("S1")).await;

    // The workflow's job reported as a check run the App never heard about.
    fake.add_workflow(OWNER, REPO, ".github/workflows/ci.yml", "CI");
    fake.add_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", &head));
    let run = fake.add_workflow_run(OWNER, REPO, ".github/workflows/ci.yml", &head, "success");
    let payload = Payload::fixture("workflow_run.completed")
        .repo(OWNER, REPO, fake.repo_id(OWNER, REPO))
        .check_run_id(run)
        .check_name("CI")
        .head_sha(&head)
        .conclusion("success")
        .installation(sc.installation_for(OWNER, REPO).unwrap());
    fake.clear_requests();
    let sent = sc.send(&payload).await;
    processed(&server, &sent.guid).await;
    assert!(!fake
        .requests_to("GET", &format!("/repos/{OWNER}/{REPO}/actions/runs/{run}"))
        .is_empty());
    let n = count_requests(&fake, "workflow_run completed (green, step done)");
    assert!(n <= 5, "{n} REST requests for one workflow run");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "done", "{s1}");
    let kinds: Vec<&str> = s1["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"check_run"), "{s1}");
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_check_suite_re_reads_its_runs_and_closes_the_step() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (_, head) = open_pr(&sc, &server, pr_for("S1")).await;

    // The suite's runs finished without a check_run delivery reaching the App.
    let run = fake.add_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", &head));
    let payload = Payload::fixture("check_suite.completed")
        .repo(OWNER, REPO, fake.repo_id(OWNER, REPO))
        .head_sha(&head)
        .app_id(15368)
        .conclusion("success")
        .installation(sc.installation_for(OWNER, REPO).unwrap());
    fake.clear_requests();
    let sent = sc.send(&payload).await;
    processed(&server, &sent.guid).await;
    let n = count_requests(&fake, "check_suite completed (green, step done)");
    assert!(n <= 5, "{n} REST requests for one check suite");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "done", "{s1}");
    assert_eq!(s1["evidence"][0]["check_run_id"], run, "{s1}");

    // The same suite from an untrusted app proves nothing and reads nothing.
    let (_, other) = open_pr(&sc, &server, pr_for("S2")).await;
    fake.add_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", &other));
    fake.clear_requests();
    let sent = sc
        .send(&payload.clone().head_sha(&other).app_id(OTHER_APP))
        .await;
    processed(&server, &sent.guid).await;
    assert_eq!(
        count_requests(&fake, "check_suite completed (untrusted app)"),
        0
    );
    assert_eq!(step(&fake, "S2")["status"], "planned");
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_run_that_passes_on_the_same_head_closes_a_failed_step() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;
    let (_, head) = open_pr(&sc, &server, pr_for("S1")).await;
    let red = CheckRunSpec::new("ci/test", &head).conclusion("failure");
    check_run(&sc, &server, red).await;
    assert_eq!(step(&fake, "S1")["status"], "failed");

    // Another failing check on the same head is not a second attempt.
    let commits = ledger_commits(&fake);
    fake.clear_requests();
    let lint = CheckRunSpec::new("lint", &head).conclusion("failure");
    check_run(&sc, &server, lint).await;
    assert_eq!(
        count_requests(&fake, "check_run completed (red, step already failed)"),
        0
    );
    assert_eq!(ledger_commits(&fake), commits);

    // "Re-run failed jobs": a newer ci/test run passes on the same head.
    let later = chrono::Utc::now();
    let rerun = CheckRunSpec::new("ci/test", &head)
        .started_at(later - chrono::Duration::minutes(2))
        .completed_at(later);
    fake.clear_requests();
    check_run(&sc, &server, rerun).await;
    count_requests(&fake, "check_run completed (re-run green on a failed step)");
    let s1 = step(&fake, "S1");
    assert_eq!(s1["status"], "done", "{s1}");
    assert_eq!(
        s1["retry_count"], 1,
        "the failed run still counts as an attempt"
    );
    drop(dir);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_pr_by_someone_without_write_access_cannot_link_a_step() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    mission(&mut sc, &server).await;

    // bob (read access) names S1 from his fork; green CI on his head proves nothing.
    let spec = pr_for("S1").author("bob").from_fork("bob/hello");
    let (_, head) = open_pr(&sc, &server, spec).await;
    let s1 = step(&fake, "S1");
    assert_eq!(s1["links"]["head_sha"], Value::Null, "{s1}");
    check_run(&sc, &server, CheckRunSpec::new("ci/test", &head)).await;
    assert_eq!(step(&fake, "S1")["status"], "planned");

    // The same from a writer's fork links the step.
    fake.set_role(OWNER, REPO, "dave", "write");
    let spec = pr_for("S1").author("dave").from_fork("dave/hello");
    let (pr, head) = open_pr(&sc, &server, spec).await;
    let s1 = step(&fake, "S1");
    assert_eq!(s1["links"]["prs"], json!([pr]), "{s1}");
    assert_eq!(s1["links"]["head_sha"], head);
    drop((server, dir));
    sc.finish().await;
}
