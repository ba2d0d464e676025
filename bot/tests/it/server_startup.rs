//! Defect 6 of the hardening review, at start: the real `navin serve` binary lists the App's installations and their repositories once it listens, reads each ledger branch (from `.github/navin.yml`) and its protection, and logs a warning for each one anyone but Navin can change, without waiting for a panel.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::time::{Duration, Instant};

use navin_e2e::FakeGitHub;

use crate::server_support::serve::ServeProcess;
use crate::server_support::{http_get, SECRET};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_logs_a_warning_at_start_for_each_installed_ledger_branch_anyone_can_rewrite() {
    let fake = FakeGitHub::start();
    // Unguarded, on the branch its config names.
    fake.create_repo("octo-org", "open");
    fake.commit_files(
        "octo-org",
        "open",
        "main",
        &[(".github/navin.yml", "ledger_branch: missions\n")],
        "config",
    );
    fake.commit_files("octo-org", "open", "missions", &[("x", "1")], "ledger");
    // Guarded by a ruleset.
    fake.create_repo("octo-org", "guarded");
    fake.commit_files(
        "octo-org",
        "guarded",
        "navin/ledger",
        &[("x", "1")],
        "ledger",
    );
    fake.protect_branch("octo-org", "guarded", "navin/ledger");
    // No ledger yet: nothing to warn about.
    fake.create_repo("octo-org", "fresh");
    fake.create_installation(
        "octo-org",
        &["octo-org/open", "octo-org/guarded", "octo-org/fresh"],
    );
    // A second installation, on another account.
    fake.create_repo("other", "loose");
    fake.commit_files("other", "loose", "navin/ledger", &[("x", "1")], "ledger");
    fake.create_installation("other", &["other/loose"]);

    let dir = tempfile::tempdir().unwrap();
    let mut serve = ServeProcess::spawn(
        &fake,
        SECRET,
        &dir.path().join("data"),
        &dir.path().join("serve.log"),
        &[("NAVIN_LOG_FORMAT", "json"), ("RUST_LOG", "info")],
    );
    let addr = serve.addr;
    // Readiness does not wait for the check.
    assert_eq!(http_get(addr, "/readyz").await.0, 200);
    let deadline = Instant::now() + Duration::from_secs(60);
    while fake
        .requests_to("GET", "/repos/{owner}/{repo}/branches/{branch}")
        .len()
        < 4
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the last answers be logged.
    tokio::time::sleep(Duration::from_millis(500)).await;
    serve.stop();
    let logs = serve.log_text();
    let warnings: Vec<serde_json::Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["level"] == "WARN" && l["warning"].is_string())
        .collect();
    let warned = |repo: &str| warnings.iter().find(|l| l["repo"] == repo);
    let open =
        warned("octo-org/open").unwrap_or_else(|| panic!("no warning for octo-org/open in {logs}"));
    assert_eq!(open["branch"], "missions", "{open}");
    assert!(
        open["warning"]
            .as_str()
            .unwrap()
            .contains("The ledger branch `missions` is not protected"),
        "{open}"
    );
    let loose =
        warned("other/loose").unwrap_or_else(|| panic!("no warning for other/loose in {logs}"));
    assert_eq!(loose["branch"], "navin/ledger");
    assert!(warned("octo-org/fresh").is_none(), "{logs}");
    let guarded = warned("octo-org/guarded").unwrap_or_else(|| panic!("{logs}"));
    assert!(
        guarded["warning"].as_str().unwrap().contains("is unknown"),
        "guarded, but who may bypass is unknown without administration: {guarded}"
    );
    assert!(
        logs.contains("start-up check of ledger branch protection done"),
        "{logs}"
    );
    // Started without the dashboard's settings, it says so once, naming them.
    let off: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("dashboard off"))
        .collect();
    assert!(
        off.len() == 1
            && off[0].contains("NAVIN_DASHBOARD_URL")
            && off[0].contains("NAVIN_CLIENT_SECRET_FILE"),
        "{logs}"
    );
    assert!(!fake
        .requests_to("GET", "/installation/repositories")
        .is_empty());
    fake.assert_conformant();
}
