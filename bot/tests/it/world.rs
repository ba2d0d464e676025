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
//! - A comment or hand-built payload it sent can be redelivered (same GUID) or re-run
//!   by a fresh engine on the same data directory, as the worker does after a crash.
//! - A panic in the bot fails the test at once with the panic's message, instead of a
//!   timeout (the handler is watched; the queue would otherwise retry it quietly).
//! - Dropped with bot comments the test never read (or with requests off GitHub's REST
//!   description), it fails.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use navin_bot::queue::{
    ClaimedDelivery, DeliveryHandler, EngineHandler, HandlerError, HandlerFuture,
};
use navin_bot::server::{start, RunningServer};
use navin_e2e::fake::model::{CheckRun, Issue};
use navin_e2e::fake::{BotComment, CheckRunSpec, PullSpec};
use navin_e2e::{FakeGitHub, Payload, Scenario, WebhookSender};
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
    fn handle<'a>(&'a self, delivery: &'a ClaimedDelivery) -> HandlerFuture<'a> {
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
    /// The engine's settings, for re-running a delivery in a fresh engine.
    engine_config: EngineConfig,
    /// The GUID and payload of every comment and hand-built payload sent, in order.
    sent: Vec<(String, Payload)>,
    /// How long one delivery may take before the test fails.
    wait: Duration,
    _dir: tempfile::TempDir,
}

/// The pull request [`World::open_pr`] opens, for tweaking first (another author, a fork).
pub fn step_pr(step: &str, branch: &str) -> PullSpec {
    PullSpec::new(branch)
        .author("alice")
        .title(&format!("Work on {step}"))
        .body(&format!("What changed.\n\nNavin-Step: {step}\n"))
        .file(
            &format!("src/{}.rs", step.to_ascii_lowercase()),
            "pub fn f() {}\n",
        )
}

impl World {
    /// The repository of [`crate::engine_support::world`], with the engine watched.
    pub async fn new() -> World {
        Self::build(|_, _| {}).await
    }

    /// As [`World::new`], with the operator's planner settings (the LLM endpoint).
    pub async fn with_planner(planner: navin_planner::external::ExternalConfig) -> World {
        Self::build(move |_, config| config.planner = planner).await
    }

    /// As [`World::new`], with the engine given a user token for agent dispatch, minted
    /// by the fake for `login` (who gets write access).
    pub async fn with_agent_token(login: &str) -> World {
        let login = login.to_owned();
        Self::build(move |fake, config| {
            fake.set_role(OWNER, REPO, &login, "write");
            config.agent_token = Some(secrecy::SecretString::from(fake.user_token(&login)));
        })
        .await
    }

    /// As [`World::new`], with the web dashboard served beside the webhook at
    /// [`World::dashboard_url`] and the fake's App registered for its sign-in callback.
    pub async fn with_dashboard() -> World {
        Self::build_with(|_, _| {}, true).await
    }

    async fn build(configure: impl FnOnce(&FakeGitHub, &mut EngineConfig)) -> World {
        Self::build_with(configure, false).await
    }

    /// As [`World::new`], with the server's clock ticking every `secs` seconds
    /// (`--sweep-interval-secs`), so timed rules fire without a webhook.
    pub async fn with_sweeps(secs: u64) -> World {
        Self::build_full(|_, _| {}, false, |args| args.sweep_interval_secs = secs).await
    }

    /// As [`World::new`], with deliveries tried at most `n` times (`--max-attempts`).
    pub async fn with_max_attempts(n: u32) -> World {
        Self::build_full(|_, _| {}, false, |args| args.max_attempts = n).await
    }

    async fn build_with(
        configure: impl FnOnce(&FakeGitHub, &mut EngineConfig),
        dashboard: bool,
    ) -> World {
        Self::build_full(configure, dashboard, |_| {}).await
    }

    async fn build_full(
        configure: impl FnOnce(&FakeGitHub, &mut EngineConfig),
        dashboard: bool,
        tweak: impl FnOnce(&mut navin_bot::config::ServeArgs),
    ) -> World {
        crate::server_support::LogCapture::global();
        let fake = crate::engine_support::seeded_fake();
        let dir = tempfile::tempdir().unwrap();
        let mut args = serve_args(&fake, dir.path());
        tweak(&mut args);
        if dashboard {
            crate::dashboard_support::enable(&fake, &mut args, dir.path());
        }
        let data_dir = args.data_dir.clone();
        let mut engine_config = EngineConfig::new(data_dir.clone());
        // Sealed as `navin serve` seals: with the key its settings give (here the
        // webhook secret's).
        engine_config.ledger_key = Some(args.ledger_key().unwrap());
        configure(&fake, &mut engine_config);
        let for_engine = engine_config.clone();
        let panics = Panics::default();
        let watched = Arc::clone(&panics);
        let server = if dashboard {
            navin_bot::server::start_engine_with(&args, for_engine, move |handler| {
                Arc::new(Watched {
                    inner: handler,
                    panics: watched,
                })
            })
            .await
            .unwrap()
        } else {
            start(&args, move |github| {
                Arc::new(Watched {
                    inner: EngineHandler::new(Engine::new(github.clone(), for_engine)),
                    panics: watched,
                })
            })
            .await
            .unwrap()
        };
        let url = format!("http://{}/webhook", server.local_addr());
        let sc = Scenario::new(fake, WebhookSender::new(url, SECRET)).wait(WAIT);
        World {
            sc,
            server,
            panics,
            engine_config,
            sent: Vec::new(),
            wait: WAIT,
            _dir: dir,
        }
    }

    /// Allows each delivery up to `wait` (a comment of a hundred commands, say).
    pub fn patient(&mut self, wait: Duration) {
        self.wait = wait;
    }

    /// The key the server seals ledger commits with: what an operator gives another
    /// writer of the same ledger (the agent workflow's Action job, `ledger-key`).
    pub fn ledger_key(&self) -> Option<navin_ledger::store::SealKey> {
        self.engine_config.ledger_key.clone()
    }

    /// The dashboard's address (with [`World::with_dashboard`]).
    pub fn dashboard_url(&self) -> String {
        format!("http://localhost:{}", self.server.local_addr().port())
    }

    /// The running server (its queue, its address).
    pub fn server(&self) -> &RunningServer {
        &self.server
    }

    /// The server's data directory (ledger and source clones).
    pub fn data_dir(&self) -> &Path {
        &self.engine_config.data_dir
    }

    pub fn fake(&self) -> &FakeGitHub {
        self.sc.fake()
    }

    /// What a load balancer's probe sees: `GET /readyz`, status and body.
    pub async fn readyz(&self) -> (u16, String) {
        crate::server_support::http_get(self.server.local_addr(), "/readyz").await
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
        let deadline = Instant::now() + self.wait;
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

    /// `author` opens an issue; returns its number and the delivery's GUID once the
    /// engine handled `issues.opened`.
    pub async fn open_issue(&mut self, author: &str, title: &str, body: &str) -> (u64, String) {
        let (number, payload) = self.sc.open_issue(OWNER, REPO, title, body, author);
        (number, self.send(&payload).await)
    }

    /// `author` comments `body` on issue or PR `number`; returns once the engine handled it.
    pub async fn comment(&mut self, number: u64, author: &str, body: &str) -> u64 {
        let id = self.fake().add_comment(OWNER, REPO, number, author, body);
        let payload = self
            .sc
            .comment_payload(OWNER, REPO, number, author, body, id);
        self.send(&payload).await;
        id
    }

    /// As [`World::comment`], for a delivery that must end failed; returns its last error.
    pub async fn comment_that_fails(&mut self, number: u64, author: &str, body: &str) -> String {
        let id = self.fake().add_comment(OWNER, REPO, number, author, body);
        let payload = self
            .sc
            .comment_payload(OWNER, REPO, number, author, body, id);
        let guid = self.sc.send(&payload).await.guid;
        self.sent.push((guid.clone(), payload));
        let deadline = Instant::now() + self.wait;
        loop {
            self.check_panics();
            if let Some(status) = self.server.queue().status(&guid).await.unwrap() {
                match status.state.as_str() {
                    "failed" => return status.last_error.unwrap_or_default(),
                    "done" => panic!("delivery {guid} was expected to fail"),
                    _ => {}
                }
            }
            assert!(Instant::now() < deadline, "delivery {guid} did not end");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Its author edits comment `id` to `body` (`issue_comment.edited`); returns once handled.
    pub async fn edit_comment(&mut self, id: u64, body: &str) {
        let comment = self.fake().comment(id).expect("a comment to edit");
        self.fake().with_state(|m| {
            m.comments.get_mut(&id).unwrap().body = body.to_owned();
        });
        self.fake().with_state(|m| {
            m.comments.get_mut(&id).unwrap().updated_at = chrono::Utc::now();
        });
        let (number, author) = (comment.issue_number, comment.author.as_str());
        let created = self
            .sc
            .comment_payload(OWNER, REPO, number, author, body, id);
        let mut json = created.json().clone();
        json["action"] = "edited".into();
        json["changes"] = serde_json::json!({"body": {"from": comment.body}});
        self.send(&Payload::new("issue_comment", json)).await;
    }

    /// `author` posts `bodies` on `number` all at once (a burst); returns their ids once handled.
    pub async fn comments_at_once(
        &mut self,
        number: u64,
        author: &str,
        bodies: &[String],
    ) -> Vec<u64> {
        let comments: Vec<(u64, Payload)> = bodies
            .iter()
            .map(|body| {
                let id = self.fake().add_comment(OWNER, REPO, number, author, body);
                let payload = self
                    .sc
                    .comment_payload(OWNER, REPO, number, author, body, id);
                (id, payload)
            })
            .collect();
        let sends = comments.iter().map(|(_, payload)| self.sc.send(payload));
        let delivered = futures_util::future::join_all(sends).await;
        for (delivery, (_, payload)) in delivered.iter().zip(&comments) {
            self.sent.push((delivery.guid.clone(), payload.clone()));
        }
        for delivery in &delivered {
            self.handled(&delivery.guid).await;
        }
        comments.into_iter().map(|(id, _)| id).collect()
    }

    /// A person's comment GitHub has but whose webhook the App never got; returns its id.
    pub fn stored_comment(&self, number: u64, author: &str, body: &str) -> u64 {
        self.fake().add_comment(OWNER, REPO, number, author, body)
    }

    /// The webhook of a comment GitHub stored earlier ([`World::stored_comment`]) arriving
    /// now: its payload says when it was written. Returns once the engine handled it.
    pub async fn deliver_comment(&mut self, id: u64) {
        let comment = self.fake().comment(id).expect("a stored comment");
        let payload = self.sc.comment_payload(
            OWNER,
            REPO,
            comment.issue_number,
            &comment.author,
            &comment.body,
            id,
        );
        self.send(&payload).await;
    }

    /// Another engine on the server's data directory and GitHub App, for the calls that
    /// come from no webhook (the dashboard's plan editor).
    pub fn engine(&self) -> Engine {
        Engine::new(self.server.github().clone(), self.engine_config.clone())
    }

    /// What the App's ledger seals name for this repository (an Action job sharing the
    /// App's key names the same, from GITHUB_REPOSITORY_ID).
    pub fn seal_repository(&self) -> String {
        navin_ledger::store::github_repository(
            Some(self.fake().repo_id(OWNER, REPO)),
            &format!("{OWNER}/{REPO}"),
        )
    }

    /// The repository as the engine's typed payloads carry it, and its installation.
    pub fn repository(&self) -> (navin_domain::event::Repository, u64) {
        let default_branch = self
            .fake()
            .with_state(|m| m.repo(OWNER, REPO).map(|r| r.default_branch.clone()));
        let repository = navin_domain::event::Repository {
            full_name: format!("{OWNER}/{REPO}"),
            id: Some(self.fake().repo_id(OWNER, REPO)),
            default_branch,
            html_url: None,
        };
        (repository, self.sc.installation_for(OWNER, REPO).unwrap())
    }

    /// A fixture payload (`"check_suite.completed"`) for this repository and its
    /// installation, to finish by hand and [`send`](Self::send).
    pub fn payload(&self, fixture: &str) -> Payload {
        let installation = self.sc.installation_for(OWNER, REPO).unwrap();
        let branch = self
            .fake()
            .with_state(|m| m.repo(OWNER, REPO).map(|r| r.default_branch.clone()));
        Payload::fixture(fixture)
            .repo(OWNER, REPO, self.fake().repo_id(OWNER, REPO))
            .default_branch(branch.as_deref().unwrap_or("main"))
            .installation(installation)
    }

    /// Delivers a hand-built payload (events GitHub sends that no action here models);
    /// returns its GUID once the engine handled it.
    pub async fn send(&mut self, payload: &Payload) -> String {
        let guid = self.sc.send(payload).await.guid;
        self.sent.push((guid.clone(), payload.clone()));
        self.handled(&guid).await;
        guid
    }

    /// The GUID of the last comment or payload sent, to redeliver or re-run it later.
    pub fn last_delivery(&self) -> String {
        self.sent.last().expect("nothing sent yet").0.clone()
    }

    fn sent_payload(&self, guid: &str) -> &Payload {
        let sent = self.sent.iter().find(|(g, _)| g == guid);
        &sent
            .unwrap_or_else(|| panic!("{guid} was not sent by comment or send"))
            .1
    }

    /// GitHub's "Redeliver": the same payload under the same GUID; returns the HTTP status
    /// (the queue knows the GUID, so there is nothing new to wait for).
    pub async fn redeliver(&self, guid: &str) -> u16 {
        let payload = self.sent_payload(guid);
        let sender = self.sc.sender();
        let sent = sender.send_with_guid(payload.event(), payload.json(), guid);
        sent.await.unwrap().status
    }

    /// The worker running delivery `guid` again (attempt 2, as after a crash mid-handler),
    /// in a fresh engine on the same data directory; its error fails the test.
    pub async fn rerun(&self, guid: &str) {
        let payload = self.sent_payload(guid);
        let delivery = ClaimedDelivery {
            seq: 1,
            delivery_id: guid.to_owned(),
            event: payload.event().to_owned(),
            action: payload.json()["action"].as_str().map(str::to_owned),
            repository: Some(format!("{OWNER}/{REPO}")),
            installation_id: self.sc.installation_for(OWNER, REPO),
            headers: Vec::new(),
            body: bytes::Bytes::from(serde_json::to_vec(payload.json()).unwrap()),
            received_at_ms: 0,
            attempt: 2,
            crashes: 0,
            final_attempt: false,
        };
        let config = self.engine_config.clone();
        let handler = EngineHandler::new(Engine::new(self.server.github().clone(), config));
        handler.handle(&delivery).await.unwrap();
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

    /// Asserts Navin posted nothing more (after a moment for stragglers).
    pub async fn no_reply(&self) {
        self.check_panics();
        self.sc.assert_no_comment(Duration::from_millis(300)).await;
    }

    /// The reactions on a comment, as GitHub lists them.
    pub fn reactions(&self, comment: u64) -> Vec<String> {
        self.fake().reactions(comment)
    }

    /// Opens a pull request by alice from `branch` whose body names `step`, with one
    /// real commit; returns its number and head SHA once the engine handled it.
    pub async fn open_pr(&mut self, step: &str, branch: &str) -> (u64, String) {
        self.open_pull(step_pr(step, branch)).await
    }

    /// Opens the pull request `spec` describes; returns its number and head SHA once
    /// the engine handled `pull_request.opened`.
    pub async fn open_pull(&mut self, spec: PullSpec) -> (u64, String) {
        let (number, sent) = self.sc.open_pull(OWNER, REPO, spec).await;
        self.handled(&sent.guid).await;
        (number, self.fake().pull(OWNER, REPO, number).head_sha)
    }

    /// Pushes a commit of `files` to PR `number`'s branch; returns the new head once the
    /// engine handled `pull_request.synchronize`.
    pub async fn push(&mut self, number: u64, files: &[(&str, &str)]) -> String {
        let (sha, sent) = self
            .sc
            .push_to_pull(OWNER, REPO, number, files, "more work")
            .await;
        self.handled(&sent.guid).await;
        sha
    }

    /// Merges PR `number`; returns the delivery once the engine handled it.
    pub async fn merge(&mut self, number: u64) -> String {
        let payload = self.sc.close_pull(OWNER, REPO, number, true);
        self.send(&payload).await
    }

    /// Closes PR `number` without merging it; returns the delivery once handled.
    pub async fn close_unmerged(&mut self, number: u64) -> String {
        let payload = self.sc.close_pull(OWNER, REPO, number, false);
        self.send(&payload).await
    }

    /// Reopens PR `number`; returns the delivery once the engine handled it.
    pub async fn reopen(&mut self, number: u64) -> String {
        let payload = self.sc.reopen_pull(OWNER, REPO, number);
        self.send(&payload).await
    }

    /// Marks draft PR `number` ready for review; returns the delivery once handled.
    pub async fn ready_for_review(&mut self, number: u64) -> String {
        let payload = self.sc.ready_pull(OWNER, REPO, number);
        self.send(&payload).await
    }

    /// `reviewer` reviews PR `number`'s head as `state` (`approved`…); returns the review id.
    pub async fn review(&mut self, number: u64, reviewer: &str, state: &str) -> u64 {
        let (id, sent) = self.sc.review(OWNER, REPO, number, reviewer, state).await;
        self.handled(&sent.guid).await;
        id
    }

    /// A maintainer dismisses review `review` on PR `number`; returns once handled.
    pub async fn dismiss(&mut self, number: u64, review: u64) {
        let sent = self.sc.dismiss_review(OWNER, REPO, number, review).await;
        self.handled(&sent.guid).await;
    }

    /// The `navin/plan` check runs on `sha`, oldest first.
    pub fn plan_checks(&self, sha: &str) -> Vec<CheckRun> {
        let runs = self.fake().check_runs(OWNER, REPO).into_iter();
        runs.filter(|r| r.name == "navin/plan" && r.head_sha == sha)
            .collect()
    }

    /// The `navin/plan` check run on `sha`: there is exactly one, updated in place.
    pub fn plan_check(&self, sha: &str) -> CheckRun {
        let runs = self.plan_checks(sha);
        assert_eq!(runs.len(), 1, "one navin/plan run on {sha}: {runs:#?}");
        runs[0].clone()
    }

    /// The identifiers of the buttons the `navin/plan` run on `sha` shows now.
    pub fn plan_buttons(&self, sha: &str) -> Vec<String> {
        let run = self.plan_check(sha);
        let ids = run.actions.iter().filter_map(|a| a["identifier"].as_str());
        ids.map(str::to_owned).collect()
    }

    /// `login` clicks the button `identifier` on check run `run` (it must be one the run
    /// shows or showed); returns the delivery's GUID once the engine handled it.
    pub async fn click(&mut self, run: u64, identifier: &str, login: &str) -> String {
        let payload = self
            .sc
            .requested_action(OWNER, REPO, run, identifier, login);
        self.send(&payload).await
    }

    /// GitHub Actions reports check `name` on `sha` as `conclusion`; returns the run id
    /// once the engine handled the event.
    pub async fn ci(&mut self, sha: &str, name: &str, conclusion: &str) -> u64 {
        self.ci_run(CheckRunSpec::new(name, sha).conclusion(conclusion))
            .await
    }

    /// The check run `spec` describes completes (any app, any times); returns its id once
    /// the engine handled `check_run.completed`.
    pub async fn ci_run(&mut self, spec: CheckRunSpec) -> u64 {
        let (id, sent) = self.sc.complete_check_run(OWNER, REPO, spec).await;
        self.handled(&sent.guid).await;
        id
    }

    /// A completed check run GitHub has but whose webhook the App never got; returns its id.
    pub fn stored_run(&self, spec: CheckRunSpec) -> u64 {
        self.fake().add_check_run(OWNER, REPO, spec)
    }

    /// A workflow file `file` named `name` in the repository's Actions.
    pub fn workflow(&self, file: &str, name: &str) {
        self.fake().add_workflow(OWNER, REPO, file, name);
    }

    /// A completed run of workflow `file` on `sha`, stored without a webhook; returns its id.
    pub fn workflow_run(&self, file: &str, sha: &str, conclusion: &str) -> u64 {
        self.fake()
            .add_workflow_run(OWNER, REPO, file, sha, conclusion)
    }

    /// Gives `login` `role` (`write`, `read`) on the repository, as an admin would.
    pub fn grant(&self, login: &str, role: &str) {
        self.fake().set_role(OWNER, REPO, login, role);
    }

    /// A maintainer commits `files` to `main` (configuration, say); no webhook.
    pub fn commit(&self, files: &[(&str, &str)]) {
        self.fake()
            .commit_files(OWNER, REPO, "main", files, "maintainer change");
    }

    /// The repository's issues carrying `label`, by number, as the filtered list shows them.
    pub fn issues(&self, label: &str) -> Vec<Issue> {
        let mut issues: Vec<Issue> = self.fake().with_state(|m| {
            let repo = m.repo(OWNER, REPO).unwrap();
            let labelled = repo
                .issues
                .values()
                .filter(|i| i.labels.iter().any(|l| l == label));
            labelled.cloned().collect()
        });
        issues.sort_by_key(|i| i.number);
        issues
    }

    /// Paths of the bot's `method` requests matching `path` (`/git/trees/*`) since the last clear.
    pub fn requested(&self, method: &str, path: &str) -> Vec<String> {
        let full = format!("/repos/{OWNER}/{REPO}{path}");
        let requests = self.fake().requests_to(method, &full).into_iter();
        requests.map(|r| r.path).collect()
    }

    /// REST requests the bot sent since the last count or clear, printed (`engine
    /// requests: …`) for the cost table in docs/engine.md, then forgotten.
    pub fn requests(&self, what: &str) -> usize {
        let n = self.fake().api_requests().len();
        println!("engine requests: {what} -> {n} REST requests");
        self.fake().clear_requests();
        n
    }

    /// Forgets the request log, so the next count starts here.
    pub fn clear_requests(&self) {
        self.fake().clear_requests();
    }

    /// Whether the bot sent `method` to `path` under the repository (`/actions/runs/7`)
    /// since the last count or clear.
    pub fn called(&self, method: &str, path: &str) -> bool {
        let full = format!("/repos/{OWNER}/{REPO}{path}");
        !self.fake().requests_to(method, &full).is_empty()
    }

    /// What the bot's comment starting with `marker` shows now: its newest edit, else
    /// its body as posted (the panel is edited in place).
    pub fn latest(&self, marker: &str) -> String {
        let fake = self.fake();
        let mut bodies = fake.bot_comment_edits().into_iter().rev();
        let edited = bodies.find(|c| c.body.starts_with(marker));
        let posted = || {
            fake.bot_comments()
                .into_iter()
                .rev()
                .find(|c| c.body.starts_with(marker))
        };
        let comment = edited.or_else(posted);
        comment
            .unwrap_or_else(|| panic!("no bot comment starts with {marker:?}"))
            .body
    }

    /// The newest edit of the bot's comment starting with `marker`, asserted to be in place.
    pub fn edited(&self, marker: &str) -> String {
        let fake = self.fake();
        let starts = |c: &BotComment| c.body.starts_with(marker);
        let edit = fake.bot_comment_edits().into_iter().rev().find(starts);
        let edit = edit.unwrap_or_else(|| panic!("no edit of a bot comment {marker:?}"));
        let posted = fake.bot_comments().into_iter().rev().find(starts);
        let posted = posted.unwrap_or_else(|| panic!("no bot comment {marker:?} posted"));
        assert_eq!(edit.id, posted.id, "the edit is of the comment posted");
        edit.body
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

    /// How many commits the ledger branch has (each change is one); 0 before the first.
    pub fn ledger_commits(&self) -> usize {
        let repo = git2::Repository::open_bare(self.fake().git_dir_path(OWNER, REPO)).unwrap();
        let Ok(tip) = repo.refname_to_id("refs/heads/navin/ledger") else {
            return 0;
        };
        let mut walk = repo.revwalk().unwrap();
        walk.push(tip).unwrap();
        walk.count()
    }

    /// Whether `name` (a checkpoint ref) exists in the repository on GitHub.
    pub fn ledger_ref(&self, name: &str) -> bool {
        let repo = git2::Repository::open_bare(self.fake().git_dir_path(OWNER, REPO)).unwrap();
        repo.refname_to_id(name).is_ok()
    }

    /// The newest ledger commit's message (its trailers name what it changed).
    pub fn ledger_message(&self) -> String {
        let repo = git2::Repository::open_bare(self.fake().git_dir_path(OWNER, REPO)).unwrap();
        let tip = repo.find_reference("refs/heads/navin/ledger").unwrap();
        let commit = tip.peel_to_commit().unwrap();
        commit.message().expect("a UTF-8 message").to_owned()
    }

    /// A file on the ledger branch as text: a plan's `.md`, the auto-accept count.
    pub fn ledger_text(&self, path: &str) -> Option<String> {
        let bytes = self.ledger_file(path)?;
        Some(String::from_utf8(bytes).expect("UTF-8 on the ledger branch"))
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
