//! The scenario DSL: a `World` is one repository on the fake GitHub with `navin serve` and the engine running against it, driven the way people drive it and read back the way they would.
//!
//! - It owns the fake GitHub (a small Rust repository `octo-org/hello`, a writer `alice`,
//!   a reader `bob`, the App installed), its git remote and the server; every method
//!   defaults the repository.
//! - Each action waits until the engine has handled its delivery, so a test reads
//!   results without sleeping; a delivery the queue marks failed fails the test with the
//!   stored error.
//! - The ledger and plan records are read typed, through the ledger crate, from the
//!   fake's git remote (what a clone of the repository would see).
//! - A panic in the bot fails the test at once with the panic's message, instead of a
//!   timeout (the handler is watched; the queue would otherwise retry it quietly).
//! - Dropped with bot comments the test never read (or with requests off GitHub's REST
//!   description), it fails.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use navin_bot::queue::{Delivery, DeliveryHandler, EngineHandler, HandlerError, HandlerFuture};
use navin_bot::server::{start, RunningServer};
use navin_e2e::fake::{CheckRunSpec, PullSpec};
use navin_e2e::{FakeGitHub, Scenario, WebhookSender};
use navin_engine::{Engine, EngineConfig};
use navin_ledger::model::{Ledger, Task};
use navin_ledger::plan::record::{record_path, PlanRecord};

use crate::engine_support::{serve_args, OWNER, REPO, SECRET, WAIT};

/// Panics the bot's handler raised, with the delivery that caused each.
pub type Panics = Arc<Mutex<Vec<String>>>;

/// A handler (the engine's) with its panics recorded for the test to see at once.
pub struct Watched<H> {
    pub inner: H,
    pub panics: Panics,
}

impl<H: DeliveryHandler> DeliveryHandler for Watched<H> {
    fn handle<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(async move {
            match AssertUnwindSafe(self.inner.handle(delivery))
                .catch_unwind()
                .await
            {
                Ok(result) => result,
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_else(|| "a non-string panic".to_owned());
                    let line = format!("delivery {}: {message}", delivery.delivery_id);
                    self.panics.lock().unwrap().push(line.clone());
                    Err(HandlerError::Permanent(format!("bot panicked: {line}")))
                }
            }
        })
    }
}

pub struct World {
    sc: Scenario,
    server: RunningServer,
    panics: Panics,
    _dir: tempfile::TempDir,
}

impl World {
    /// The repository of [`crate::engine_support::world`], with the engine watched.
    pub async fn new() -> World {
        crate::server_support::LogCapture::global();
        let fake = crate::engine_support::seeded_fake();
        let dir = tempfile::tempdir().unwrap();
        let args = serve_args(&fake, dir.path());
        let engine_dir = args.data_dir.clone();
        let panics = Panics::default();
        let watched = Arc::clone(&panics);
        let server = start(&args, move |github| {
            Arc::new(Watched {
                inner: EngineHandler::new(Engine::new(
                    github.clone(),
                    EngineConfig::new(engine_dir),
                )),
                panics: watched,
            })
        })
        .await
        .unwrap();
        let url = format!("http://{}/webhook", server.local_addr());
        let sc = Scenario::new(fake, WebhookSender::new(url, SECRET)).wait(WAIT);
        World {
            sc,
            server,
            panics,
            _dir: dir,
        }
    }

    pub fn fake(&self) -> &FakeGitHub {
        self.sc.fake()
    }

    fn check_panics(&self) {
        let panics = self.panics.lock().unwrap();
        if !panics.is_empty() {
            panic!("the bot panicked:\n  {}", panics.join("\n  "));
        }
    }

    /// Waits until the queue has handled `guid`; a failed delivery or a bot panic fails
    /// the test with its message.
    async fn handled(&self, guid: &str) {
        let deadline = Instant::now() + WAIT;
        loop {
            self.check_panics();
            if let Some(status) = self.server.queue().status(guid).await.unwrap() {
                match status.state.as_str() {
                    "done" => return,
                    "failed" => panic!("delivery {guid} failed: {:?}", status.last_error),
                    _ => {}
                }
            }
            assert!(Instant::now() < deadline, "delivery {guid} was not handled");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A new issue opened by alice.
    pub fn issue(&self, title: &str, body: &str) -> u64 {
        self.fake().create_issue(OWNER, REPO, title, body, "alice")
    }

    /// `author` comments `body` on issue or PR `number`; returns once the engine handled it.
    pub async fn comment(&mut self, number: u64, author: &str, body: &str) -> u64 {
        let (id, sent) = self.sc.comment(OWNER, REPO, number, author, body).await;
        self.handled(&sent.guid).await;
        id
    }

    /// The body of the next comment Navin posted (in order).
    pub async fn reply(&mut self) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            self.check_panics();
            if let Some(comment) = self.sc.try_next_comment() {
                return comment.body;
            }
            assert!(
                Instant::now() < deadline,
                "Navin posted no comment within {WAIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The reactions on a comment, as GitHub lists them.
    pub fn reactions(&self, comment: u64) -> Vec<String> {
        self.fake().reactions(comment)
    }

    /// Opens a pull request by alice from `branch` whose body names `step`, with one
    /// real commit; returns its number and head SHA once the engine handled it.
    pub async fn open_pr(&mut self, step: &str, branch: &str) -> (u64, String) {
        let spec = PullSpec::new(branch)
            .author("alice")
            .title(&format!("Work on {step}"))
            .body(&format!("What changed.\n\nNavin-Step: {step}\n"))
            .file(
                &format!("src/{}.rs", step.to_ascii_lowercase()),
                "pub fn f() {}\n",
            );
        let (number, sent) = self.sc.open_pull(OWNER, REPO, spec).await;
        self.handled(&sent.guid).await;
        (number, self.fake().pull(OWNER, REPO, number).head_sha)
    }

    /// GitHub Actions reports check `name` on `sha` as `conclusion`; returns the run id
    /// once the engine handled the event.
    pub async fn ci(&mut self, sha: &str, name: &str, conclusion: &str) -> u64 {
        let spec = CheckRunSpec::new(name, sha).conclusion(conclusion);
        let (id, sent) = self.sc.complete_check_run(OWNER, REPO, spec).await;
        self.handled(&sent.guid).await;
        id
    }

    /// The ledger on the branch, typed; `None` before the first mission.
    pub fn ledger(&self) -> Option<Ledger> {
        let mission = self.ledger_file(".navin/board/mission.json")?;
        let board = self
            .ledger_file(".navin/board/board.json")
            .expect("mission.json without board.json");
        Some(navin_ledger::decode(&mission, &board).expect("the ledger on the branch parses"))
    }

    /// One step of the board.
    pub fn step(&self, id: &str) -> Task {
        let ledger = self.ledger().expect("a mission on the ledger branch");
        let task = ledger
            .board
            .task(id)
            .unwrap_or_else(|| panic!("no step {id}"));
        task.clone()
    }

    /// The record of plan `id` (`issue-7`, `pr-3`), typed.
    pub fn plan_record(&self, id: &str) -> Option<PlanRecord> {
        let bytes = self.ledger_file(&record_path(id))?;
        Some(serde_json::from_slice(&bytes).expect("the plan record parses"))
    }

    fn ledger_file(&self, path: &str) -> Option<Vec<u8>> {
        let repo = git2::Repository::open_bare(self.fake().git_dir_path(OWNER, REPO)).unwrap();
        let tip = repo.find_reference("refs/heads/navin/ledger").ok()?;
        let tree = tip.peel_to_tree().unwrap();
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = repo.find_blob(entry.id()).unwrap();
        Some(blob.content().to_vec())
    }

    /// Waits a moment for stragglers, then fails on unread comments, off-spec requests
    /// or a bot panic.
    pub async fn finish(self) {
        self.check_panics();
        self.sc.finish().await;
    }
}
