//! A simulated Actions job: a fake GitHub with one repository, a seeded ledger, and the real `navin-action` binary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use chrono::Utc;
use navin_e2e::fake::UserKind;
use navin_e2e::{FakeGitHub, Payload};
use navin_ledger::model::{Actor, Ledger, Origin, Validation};
use navin_ledger::store::{Store, StoreConfig};
use navin_ledger::{Ctx, InitArgs, NewTask, Operation};

pub const OWNER: &str = "octo-org";
pub const REPO: &str = "hello";
pub const BRANCH: &str = "navin/ledger";
pub const STEP_BRANCH: &str = "navin/S1-api";

/// The repository's root: where the shipped workflows, `action.yml` and fixtures live.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// Names each run's files apart, also for runs started at once from two threads.
static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn next_n() -> u64 {
    RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A fake GitHub holding `octo-org/hello`, plus the job's temp files.
pub struct Job {
    pub fake: FakeGitHub,
    pub dir: tempfile::TempDir,
    /// A token with every permission the evidence example grants.
    pub token: String,
}

/// What one run of the binary left behind.
#[derive(Debug)]
pub struct RunResult {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub outputs: HashMap<String, String>,
    pub summary: String,
}

impl RunResult {
    pub fn lines_starting(&self, prefix: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with(prefix))
            .collect()
    }
}

fn step(id: &str, deps: &[&str], validation: Validation) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("Build {id}"),
        validation,
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        ..NewTask::default()
    }
}

impl Job {
    pub fn new() -> Job {
        let fake = FakeGitHub::start();
        fake.create_repo(OWNER, REPO);
        let token = fake.actions_token(
            OWNER,
            REPO,
            &[
                ("contents", "write"),
                ("actions", "read"),
                ("checks", "read"),
                ("issues", "write"),
                ("pull_requests", "read"),
            ],
        );
        Job {
            fake,
            dir: tempfile::tempdir().expect("tempdir"),
            token,
        }
    }

    /// A store on its own temp clone of the fake's repository, as another writer would have.
    pub fn store(&self) -> (Store, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init_bare(dir.path()).expect("init");
        repo.remote("origin", &self.fake.git_remote_url(OWNER, REPO))
            .expect("remote");
        let store = Store::open(
            dir.path(),
            StoreConfig {
                branch: BRANCH.into(),
                remote: Some("origin".into()),
                token: Some(self.token.clone()),
                ..StoreConfig::default()
            },
        )
        .expect("store");
        (store, dir)
    }

    /// Seeds a running mission: S1 (test) and S3 (none) ready, S2 after S1;
    /// S1 linked to `head` on `navin/S1-api` when given.
    pub fn seed(&self, head: Option<&str>) -> Ledger {
        self.seed_from(head, None)
    }

    /// [`Job::seed`] for a mission started on issue `issue` (its panel lives there).
    pub fn seed_from(&self, head: Option<&str>, issue: Option<u64>) -> Ledger {
        let (store, _dir) = self.store();
        let ctx = Ctx::new(Utc::now(), Actor::Human("octocat".into()));
        store
            .transact(
                &Operation::Init(InitArgs {
                    goal: "Ship the widget API".into(),
                    steps: vec![
                        step("S1", &[], Validation::Test),
                        step("S2", &["S1"], Validation::Test),
                        step("S3", &[], Validation::None),
                    ],
                    origin: issue.map(|n| Origin {
                        repository: Some(format!("{OWNER}/{REPO}")),
                        issue: Some(n),
                        plan_id: None,
                    }),
                    ..InitArgs::default()
                }),
                &ctx,
            )
            .expect("init");
        if let Some(head) = head {
            store
                .transact(
                    &Operation::Link {
                        step: "S1".into(),
                        pr: None,
                        head_sha: Some(head.into()),
                        branch: Some(STEP_BRANCH.into()),
                    },
                    &ctx,
                )
                .expect("link");
        }
        self.ledger().expect("seeded ledger")
    }

    /// The ledger as the fake's repository holds it now.
    pub fn ledger(&self) -> Option<Ledger> {
        let (store, _dir) = self.store();
        store.read().expect("read ledger").map(|s| s.ledger)
    }

    pub fn ledger_tip(&self) -> Option<String> {
        self.fake.branch_sha(OWNER, REPO, BRANCH)
    }

    /// A commit on the step's branch, to serve as a PR head.
    pub fn commit_head(&self, content: &str) -> String {
        self.fake.commit_files(
            OWNER,
            REPO,
            STEP_BRANCH,
            &[("src/widget.rs", content)],
            "widget work",
        )
    }

    /// A completed `ci` workflow run on `sha` from branch `navin/S1-api`.
    pub fn workflow_run(&self, sha: &str, conclusion: &str) -> u64 {
        let known = self.fake.with_state(|m| {
            m.repo(OWNER, REPO)
                .is_some_and(|r| r.workflows.contains_key("ci.yml"))
        });
        if !known {
            self.fake.add_workflow(OWNER, REPO, "ci.yml", "ci");
        }
        let id = self
            .fake
            .add_workflow_run(OWNER, REPO, "ci.yml", sha, conclusion);
        self.fake.with_state(|m| {
            if let Some(run) = m.workflow_runs.get_mut(&id) {
                run.head_branch = STEP_BRANCH.into();
                run.created_at = Utc::now() - chrono::Duration::minutes(5);
            }
        });
        id
    }

    /// The real `workflow_run.completed` fixture pointed at `run_id` on `sha`.
    pub fn workflow_run_event(&self, run_id: u64, sha: &str, conclusion: &str) -> PathBuf {
        let payload = Payload::fixture("workflow_run.completed")
            .repo(OWNER, REPO, self.fake.repo_id(OWNER, REPO))
            .check_run_id(run_id)
            .head_sha(sha)
            .head_ref(STEP_BRANCH)
            .conclusion(conclusion);
        self.write_event("workflow_run", payload.json())
    }

    /// Writes `.github/navin.yml` into the job's checked-out workspace.
    /// `.github/navin.yml` on the default branch (where the engine reads it through the
    /// API) and in the checked-out workspace (where the read modes read it).
    pub fn write_config(&self, text: &str) {
        let dir = self.dir.path().join("workspace/.github");
        std::fs::create_dir_all(&dir).expect("config dir");
        std::fs::write(dir.join("navin.yml"), text).expect("write config");
        self.fake.commit_files(
            OWNER,
            REPO,
            "main",
            &[(".github/navin.yml", text)],
            "navin config",
        );
    }

    pub fn write_event(&self, name: &str, value: &serde_json::Value) -> PathBuf {
        let path = self.dir.path().join(format!("{name}-{}.json", next_n()));
        std::fs::write(&path, serde_json::to_vec(value).expect("json")).expect("write event");
        path
    }

    /// Runs `navin-action --mode <mode>` with a clean environment holding only
    /// what the runner and action.yml would set; each run is its own workflow run.
    pub fn run(
        &self,
        mode: &str,
        event: &str,
        event_path: Option<&Path>,
        token: Option<&str>,
    ) -> RunResult {
        self.run_with(mode, event, event_path, token, &[])
    }

    /// [`Job::run`] with extra or replaced variables (e.g. `GITHUB_RUN_ID` and
    /// `GITHUB_RUN_ATTEMPT` to re-run one workflow run).
    pub fn run_with(
        &self,
        mode: &str,
        event: &str,
        event_path: Option<&Path>,
        token: Option<&str>,
        extra: &[(&str, &str)],
    ) -> RunResult {
        let n = next_n();
        let output = self.dir.path().join(format!("output-{n}"));
        let summary = self.dir.path().join(format!("summary-{n}"));
        let workspace = self.dir.path().join("workspace");
        let runner_temp = self.dir.path().join("runner-temp");
        std::fs::create_dir_all(&workspace).expect("workspace");
        std::fs::create_dir_all(&runner_temp).expect("runner temp");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_navin-action"));
        cmd.env_clear()
            .arg("--mode")
            .arg(mode)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
            .env("GITHUB_API_URL", self.fake.base_url())
            .env("GITHUB_SERVER_URL", self.fake.base_url())
            .env("GITHUB_WORKSPACE", &workspace)
            .env("GITHUB_EVENT_NAME", event)
            .env("GITHUB_RUN_ID", (9000 + n).to_string())
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("NAVIN_WRITE_SPACING_MS", "0")
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNNER_TEMP", &runner_temp)
            .env("INPUT_MODE", mode)
            .env("INPUT_LEDGER_BRANCH", BRANCH)
            .env("INPUT_CONFIG", ".github/navin.yml")
            .env("INPUT_GITHUB_TOKEN", token.unwrap_or(""));
        if let Some(p) = event_path {
            cmd.env("GITHUB_EVENT_PATH", p);
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run navin-action");
        let raw = std::fs::read_to_string(&output).unwrap_or_default();
        let result = RunResult {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            outputs: parse_outputs(&raw),
            summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        };
        // NAVIN_TEST_DUMP=1 shows each run's log and outputs (with --nocapture).
        if std::env::var_os("NAVIN_TEST_DUMP").is_some() {
            eprintln!(
                "--- navin-action --mode {mode} ({event})\n{}{}\noutputs: {:?}",
                result.stdout, result.stderr, result.outputs
            );
        }
        result
    }
}

/// Reads `GITHUB_OUTPUT` the way the runner does: `name=value` or `name<<DELIM` blocks.
pub fn parse_outputs(raw: &str) -> HashMap<String, String> {
    navin_e2e::workflow::parse_key_values(raw)
        .into_iter()
        .collect()
}

/// Scopes the `navin.yml` example grants the event job (its `models: read` is for
/// GitHub Models, which the fake GitHub does not serve).
pub const EVENT_SCOPES: [(&str, &str); 4] = [
    ("contents", "write"),
    ("issues", "write"),
    ("pull_requests", "write"),
    ("checks", "write"),
];

impl Job {
    /// A job for `mode: event`: a small Rust repository on `main`, alice (write) and
    /// bob (read), and a token with the example's scopes.
    pub fn for_events() -> Job {
        let mut job = Job::new();
        job.fake.commit_files(
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
                    "//! Greetings.\npub fn hello() -> String {\n    \"hello\".into()\n}\n",
                ),
            ],
            "seed",
        );
        job.fake.set_role(OWNER, REPO, "alice", "write");
        job.fake.set_role(OWNER, REPO, "bob", "read");
        job.token = job.fake.actions_token(OWNER, REPO, &EVENT_SCOPES);
        job
    }

    /// A committed webhook fixture pointed at this repository (whose default branch is
    /// `main`, where GitHub's examples say `master`).
    pub fn fixture(&self, name: &str) -> Payload {
        Payload::fixture(name)
            .repo(OWNER, REPO, self.fake.repo_id(OWNER, REPO))
            .set("/repository/default_branch", serde_json::json!("main"))
    }

    /// Strips what a `GITHUB_TOKEN` run's payload lacks and points it at this repository.
    fn actions_payload(&self, payload: Payload) -> serde_json::Value {
        let mut value = payload.into_json();
        if let Some(map) = value.as_object_mut() {
            map.remove("installation");
        }
        value
    }

    /// `author` comments `body` on issue `number` (in the fake too); the event file.
    pub fn comment_event(&self, number: u64, author: &str, body: &str) -> (u64, PathBuf) {
        let id = self.fake.add_comment(OWNER, REPO, number, author, body);
        let issue = self.fake.issue(OWNER, REPO, number);
        let kind = if author.ends_with("[bot]") {
            UserKind::Bot
        } else {
            UserKind::User
        };
        let payload = self
            .fixture("issue_comment.created")
            .number(number)
            .issue_title(&issue.title)
            .issue_body(issue.body.as_deref().unwrap_or(""))
            .issue_author(
                &issue.author,
                self.fake.user_id(&issue.author),
                UserKind::User,
            )
            .comment_id(id)
            .comment_body(body)
            .comment_author(author, self.fake.user_id(author), kind);
        let value = self.actions_payload(payload);
        (id, self.write_event("issue_comment", &value))
    }

    /// A committed fixture (`pull_request.opened`, `check_run.completed`, …) for this
    /// repository, as a `GITHUB_TOKEN` run receives it.
    pub fn fixture_event(&self, fixture: &str, edit: impl FnOnce(Payload) -> Payload) -> PathBuf {
        let event = fixture.split('.').next().unwrap_or(fixture).to_string();
        let value = self.actions_payload(edit(self.fixture(fixture)));
        self.write_event(&event, &value)
    }

    /// Comments Navin posted (as `github-actions[bot]`) on issue `number`.
    pub fn navin_comments(&self, number: u64) -> Vec<String> {
        self.fake
            .bot_comments()
            .into_iter()
            .filter(|c| c.issue_number == number)
            .map(|c| {
                self.fake
                    .comment(c.id)
                    .map(|now| now.body)
                    .unwrap_or(c.body)
            })
            .collect()
    }
}

/// `git ARGS` in `dir` with a clean config and a fixed identity; its stdout. A failure
/// fails the test with git's own message.
pub fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
