//! Shared world for the engine's end-to-end tests: the real server with the engine as
//! its handler, a fake GitHub holding a small Rust repository, and plain-git readers of
//! the ledger branch.

pub mod plans;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use navin_bot::config::ServeArgs;
use navin_bot::server::{start, RunningServer};
use navin_e2e::fake::BotComment;
use navin_e2e::{FakeGitHub, Scenario, WebhookSender};
use navin_engine::{Engine, EngineConfig};

pub const OWNER: &str = "octo-org";
pub const REPO: &str = "hello";
pub const SECRET: &str = "engine-e2e-secret";
pub const WAIT: Duration = Duration::from_secs(15);

pub struct Harness {
    pub sc: Scenario,
    pub _server: RunningServer,
    pub _dir: tempfile::TempDir,
    pub data_dir: std::path::PathBuf,
}

pub fn serve_args(fake: &FakeGitHub, data_dir: &Path) -> ServeArgs {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }
    let key_path = data_dir.join("app-key.pem");
    std::fs::write(&key_path, &fake.app_key().private_pem).unwrap();
    let app_id = fake.with_state(|m| m.app.id).to_string();
    let template = fake.git_url_template();
    let data = data_dir.join("data");
    Cli::try_parse_from([
        "navin",
        "--listen",
        "127.0.0.1:0",
        "--app-id",
        &app_id,
        "--private-key-path",
        key_path.to_str().unwrap(),
        "--webhook-secret",
        SECRET,
        "--api-url",
        fake.base_url(),
        "--git-url-template",
        &template,
        "--data-dir",
        data.to_str().unwrap(),
        "--write-spacing-ms",
        "0",
        "--reconcile-interval-secs",
        "0",
        "--shutdown-grace-secs",
        "1",
    ])
    .unwrap()
    .serve
}

/// A fake GitHub holding a small Rust repository, with a writer (alice), a reader (bob)
/// and the App installed.
pub fn seeded_fake() -> FakeGitHub {
    let fake = FakeGitHub::start();
    fake.create_repo(OWNER, REPO);
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "src/lib.rs",
                "//! Greetings.\npub mod greet;\n\npub fn hello() -> String {\n    greet::greet(\"world\")\n}\n",
            ),
            (
                "src/greet.rs",
                "pub fn greet(name: &str) -> String {\n    format!(\"hello {name}\")\n}\n",
            ),
            (
                ".github/navin.yml",
                "evidence:\n  required_checks:\n    test: [ci/test]\n",
            ),
            (
                "tests/greet.rs",
                "#[test]\nfn greets() {\n    assert_eq!(hello::hello(), \"hello world\");\n}\n",
            ),
        ],
        "seed",
    );
    fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    fake.set_role(OWNER, REPO, "alice", "write");
    fake.set_role(OWNER, REPO, "bob", "read");
    fake
}

/// [`seeded_fake`] with the engine serving webhooks.
pub async fn world() -> Harness {
    crate::server_support::LogCapture::global();
    let fake = seeded_fake();
    let dir = tempfile::tempdir().unwrap();
    let args = serve_args(&fake, dir.path());
    let data_dir = args.data_dir.clone();
    let engine_dir = data_dir.clone();
    let server = start(&args, move |github| {
        std::sync::Arc::new(navin_bot::queue::EngineHandler::new(Engine::new(
            github.clone(),
            EngineConfig::new(engine_dir),
        )))
    })
    .await
    .unwrap();
    let url = format!("http://{}/webhook", server.local_addr());
    let sc = Scenario::new(fake, WebhookSender::new(url, SECRET)).wait(WAIT);
    Harness {
        sc,
        _server: server,
        _dir: dir,
        data_dir,
    }
}

pub fn ledger_git(fake: &FakeGitHub, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(fake.git_dir_path(OWNER, REPO))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

pub fn ledger_commits(fake: &FakeGitHub) -> usize {
    ledger_git(fake, &["rev-list", "--count", "navin/ledger"])
        .map(|s| s.trim().parse().unwrap())
        .unwrap_or(0)
}

pub fn mission_json(fake: &FakeGitHub) -> serde_json::Value {
    let text = ledger_git(fake, &["show", "navin/ledger:.navin/board/mission.json"])
        .expect("mission.json on the ledger branch");
    serde_json::from_str(&text).unwrap()
}

pub async fn reacted(fake: &FakeGitHub, comment: u64, content: &str) {
    let ok = navin_e2e::fake::wait_until(WAIT, || {
        fake.reactions(comment).iter().any(|r| r == content)
    })
    .await;
    assert!(
        ok,
        "no {content} reaction on comment {comment}: {:?}",
        fake.reactions(comment)
    );
}

/// REST requests since the last call, printed for the bench that comes later.
pub fn count_requests(fake: &FakeGitHub, command: &str) -> usize {
    let n = fake.api_requests().len();
    println!("engine requests: {command} -> {n} REST requests");
    fake.clear_requests();
    n
}

pub fn latest_edit(fake: &FakeGitHub, marker: &str) -> Option<BotComment> {
    fake.bot_comment_edits()
        .into_iter()
        .rev()
        .find(|c| c.body.starts_with(marker))
}

/// Waits until the server's queue has handled the delivery; a failed delivery fails the test.
pub async fn processed(server: &RunningServer, guid: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(status) = server.queue().status(guid).await.unwrap() {
            match status.state.as_str() {
                "done" => return,
                "failed" => panic!("delivery {guid} failed: {:?}", status.last_error),
                _ => {}
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "delivery {guid} was not handled"
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}
