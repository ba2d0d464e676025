//! A workflow runner for the tests: runs the shipped workflows and composite actions as GitHub Actions would, against the fake GitHub.
//!
//! What it covers is what Navin's workflows use: jobs in `needs:` order with `if:`,
//! `permissions:` turned into the job token's scopes on the fake (a `contents: read` job
//! cannot push), `environment:` secrets, `with:` → `INPUT_*` through `action.yml`,
//! composite actions, `run:` steps in bash with `GITHUB_OUTPUT`/`GITHUB_ENV`/`GITHUB_PATH`,
//! job outputs and artifacts between jobs. Third-party actions are stand-ins
//! ([`standins`]) held to the `action.yml` vendored at their pinned commit, and `gh` is a
//! stand-in script over the fake's REST API. Navin's own action (`OWNER/REPO/action@…`,
//! the examples' placeholder) is this repository's, installed from a loopback release
//! server ([`release`]) by its real `install.sh`.

pub mod expr;
mod host;
mod job;
mod plan;
pub mod release;
pub mod standins;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use serde_yaml_ng::Value as Yaml;

use crate::FakeGitHub;

/// The placeholder the shipped examples use for Navin's own repository.
pub const NAVIN_PLACEHOLDER: &str = "OWNER/REPO";

/// How a job or step ended, as `needs.<job>.result` and `steps.<id>.outcome` spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failure,
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Skipped => "skipped",
        }
    }
}

/// One step as it ran: its name, outcome and combined output.
#[derive(Debug, Clone)]
pub struct StepRun {
    pub name: String,
    pub outcome: Outcome,
    pub log: String,
}

/// One job as it ran.
#[derive(Debug, Clone)]
pub struct JobRun {
    pub id: String,
    pub name: String,
    pub result: Outcome,
    pub outputs: BTreeMap<String, String>,
    pub steps: Vec<StepRun>,
    /// The scopes its token had on the fake.
    pub permissions: Vec<(String, String)>,
}

impl JobRun {
    /// Every step's log, for assertion messages.
    pub fn log(&self) -> String {
        let mut out = String::new();
        for s in &self.steps {
            out.push_str(&format!(
                "--- {} ({})\n{}\n",
                s.name,
                s.outcome.as_str(),
                s.log
            ));
        }
        out
    }
}

/// One run of a workflow file.
#[derive(Debug, Clone)]
pub struct WorkflowRun {
    pub id: u64,
    pub file: String,
    pub name: String,
    pub event: String,
    pub jobs: Vec<JobRun>,
}

impl WorkflowRun {
    pub fn job(&self, id: &str) -> &JobRun {
        self.jobs
            .iter()
            .find(|j| j.id == id)
            .unwrap_or_else(|| panic!("no job {id} in {}: {self:#?}", self.file))
    }

    /// `success` when no job failed (skipped jobs do not fail a run).
    pub fn conclusion(&self) -> Outcome {
        if self.jobs.iter().any(|j| j.result == Outcome::Failure) {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    }

    /// All jobs' logs.
    pub fn log(&self) -> String {
        self.jobs
            .iter()
            .map(|j| format!("=== job {} ({})\n{}", j.id, j.result.as_str(), j.log()))
            .collect()
    }
}

/// What started a run: the event, its payload and who caused it.
#[derive(Debug, Clone)]
pub struct Trigger {
    pub event: String,
    pub payload: Value,
    /// `github.actor` and `github.triggering_actor`.
    pub actor: String,
    /// `github.sha`; the default branch's tip when `None`.
    pub sha: Option<String>,
    /// `github.ref`; the default branch when `None`.
    pub git_ref: Option<String>,
}

impl Trigger {
    pub fn new(event: &str, payload: Value, actor: &str) -> Trigger {
        Trigger {
            event: event.into(),
            payload,
            actor: actor.into(),
            sha: None,
            git_ref: None,
        }
    }
}

/// What an agent stand-in hands the scripted agent: the checkout, the prompt, and the
/// MCP configuration the workflow wrote for it.
#[derive(Debug, Clone)]
pub struct AgentTask {
    /// `anthropics/claude-code-action` or `openai/codex-action`.
    pub action: String,
    pub workspace: PathBuf,
    pub prompt: String,
    pub mcp_config: Option<PathBuf>,
    pub model: Option<String>,
    /// The workflow_dispatch inputs of the run (`step`, `attempt`, …).
    pub inputs: Value,
}

/// What the scripted agent spent, reported in the form its action reports it.
#[derive(Debug, Clone, Default)]
pub struct AgentSpend {
    pub tokens: u64,
    pub cost_usd: f64,
}

/// The agent inside the agent actions' stand-ins: edits the checkout, never pushes.
pub trait Agent: Send + Sync {
    fn work(&self, task: &AgentTask) -> Result<AgentSpend, String>;
}

/// Runs workflows for one repository of a fake GitHub.
#[allow(missing_debug_implementations)]
pub struct Runner {
    pub fake: FakeGitHub,
    pub owner: String,
    pub repo: String,
    source: PathBuf,
    root: tempfile::TempDir,
    secrets: BTreeMap<String, String>,
    environments: BTreeMap<String, BTreeMap<String, String>>,
    /// Variables every job sees, as a self-hosted runner's `.env` sets them.
    machine_env: BTreeMap<String, String>,
    agent: Option<Arc<dyn Agent>>,
    artifacts: Mutex<BTreeMap<(u64, String), PathBuf>>,
    caches: Mutex<BTreeMap<String, PathBuf>>,
    runs: AtomicU64,
    /// Only these jobs run (the others are left out, not skipped); `None`: all.
    only_jobs: Option<Vec<String>>,
    /// Only matrix instances whose value for the key is this run, as a runner that
    /// serves one platform would.
    only_matrix: Option<(String, String)>,
    /// Directories first on every job's PATH: the tools this machine's runner has.
    tool_path: Vec<PathBuf>,
}

/// Names each runner's directories apart.
static RUN_IDS: AtomicU64 = AtomicU64::new(7_000_000);

impl Runner {
    /// A runner for `owner/repo` whose `OWNER/REPO` actions come from `source` (this
    /// repository's root) and whose releases are served by `releases`.
    pub fn new(
        fake: &FakeGitHub,
        owner: &str,
        repo: &str,
        source: &Path,
        releases: &release::Releases,
    ) -> Runner {
        let root = tempfile::Builder::new()
            .prefix("navin-runner-")
            .tempdir()
            .unwrap_or_else(|e| panic!("runner dir: {e}"));
        let mut machine_env = BTreeMap::new();
        machine_env.insert("NAVIN_DOWNLOAD_BASE_URL".to_owned(), releases.base_url());
        // Ledger writes are spaced for GitHub's secondary rate limits; the fake has none.
        machine_env.insert("NAVIN_WRITE_SPACING_MS".to_owned(), "0".to_owned());
        let runner = Runner {
            fake: fake.clone(),
            owner: owner.into(),
            repo: repo.into(),
            source: source.to_path_buf(),
            root,
            secrets: BTreeMap::new(),
            environments: BTreeMap::new(),
            machine_env,
            agent: None,
            artifacts: Mutex::new(BTreeMap::new()),
            caches: Mutex::new(BTreeMap::new()),
            runs: AtomicU64::new(0),
            only_jobs: None,
            only_matrix: None,
            tool_path: Vec::new(),
        };
        runner.install_navin_action(&releases.version());
        runner
    }

    /// A repository secret.
    pub fn secret(&mut self, name: &str, value: &str) -> &mut Runner {
        self.secrets.insert(name.into(), value.into());
        self
    }

    /// A secret only jobs naming `environment` can read.
    pub fn environment_secret(
        &mut self,
        environment: &str,
        name: &str,
        value: &str,
    ) -> &mut Runner {
        self.environments
            .entry(environment.into())
            .or_default()
            .insert(name.into(), value.into());
        self
    }

    /// The agent the agent actions' stand-ins run.
    pub fn agent(&mut self, agent: Arc<dyn Agent>) -> &mut Runner {
        self.agent = Some(agent);
        self
    }

    /// A variable every job sees, as a runner's `.env` sets it.
    pub fn env(&mut self, key: &str, value: &str) -> &mut Runner {
        self.machine_env.insert(key.into(), value.into());
        self
    }

    /// Runs only `jobs` of each workflow from now on (their `needs` must be among them).
    pub fn only_jobs(&mut self, jobs: &[&str]) -> &mut Runner {
        self.only_jobs = Some(jobs.iter().map(|j| (*j).to_owned()).collect());
        self
    }

    /// Runs only the matrix instances whose `key` is `value` (this machine's target).
    pub fn only_matrix(&mut self, key: &str, value: &str) -> &mut Runner {
        self.only_matrix = Some((key.into(), value.into()));
        self
    }

    /// Puts `dir` first on every job's PATH, as a runner's tool cache is.
    pub fn tool_dir(&mut self, dir: &Path) -> &mut Runner {
        self.tool_path.push(dir.to_path_buf());
        self
    }

    /// Where run `run`'s artifact `name` was kept, when it was uploaded.
    pub fn artifact(&self, run: u64, name: &str) -> Option<PathBuf> {
        self.artifacts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(run, name.to_owned()))
            .cloned()
    }

    /// Where remote actions live: `<root>/_actions/<owner>/<repo>/<ref>`, as on a runner.
    fn actions_dir(&self) -> PathBuf {
        self.root.path().join("_actions")
    }

    /// Puts this repository's action at `_actions/OWNER/REPO/<version>`: the files a
    /// release checkout of it holds that the action runs (action.yml files, the scripts,
    /// the workspace manifest install.sh reads its version from).
    fn install_navin_action(&self, version: &str) {
        let dir = self.actions_dir().join(NAVIN_PLACEHOLDER).join(version);
        copy_navin_source(&self.source, &dir);
    }

    /// Runs `workflow` (YAML text; `file` is its name under `.github/workflows/`) for
    /// `trigger`, all jobs to the end.
    pub fn run(&self, file: &str, workflow: &str, trigger: &Trigger) -> WorkflowRun {
        let doc: Yaml =
            serde_yaml_ng::from_str(workflow).unwrap_or_else(|e| panic!("{file} is not YAML: {e}"));
        let id = RUN_IDS.fetch_add(1, Ordering::Relaxed);
        let n = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        let name = doc["name"].as_str().unwrap_or(file).to_owned();
        let run = job::RunScope {
            runner: self,
            doc: &doc,
            file,
            name: name.clone(),
            trigger,
            id,
            number: n,
            dir: self.root.path().join(format!("run-{id}")),
        };
        let jobs = run.run_jobs();
        let _ = std::fs::remove_dir_all(self.root.path().join(format!("run-{id}")));
        WorkflowRun {
            id,
            file: file.into(),
            name,
            event: trigger.event.clone(),
            jobs,
        }
    }

    /// Whether `workflow` runs for `event` with `action` (its `on:` and `types:`).
    pub fn triggered_by(workflow: &str, event: &str, action: Option<&str>) -> bool {
        let Ok(doc) = serde_yaml_ng::from_str::<Yaml>(workflow) else {
            return false;
        };
        let on = &doc["on"];
        let spec = match on {
            Yaml::String(s) => return s == event,
            Yaml::Sequence(items) => return items.iter().any(|i| i.as_str() == Some(event)),
            Yaml::Mapping(m) => match m.get(event) {
                Some(spec) => spec,
                None => return false,
            },
            _ => return false,
        };
        match (&spec["types"], action) {
            (Yaml::Sequence(types), Some(action)) => {
                types.iter().any(|t| t.as_str() == Some(action))
            }
            _ => true,
        }
    }
}

/// Copies the parts of Navin's source a release of its action needs to run.
fn copy_navin_source(source: &Path, dir: &Path) {
    let files = [
        "action.yml",
        "Cargo.toml",
        "action/action.yml",
        "action/install.sh",
        "action/run.sh",
    ];
    for f in files {
        let to = dir.join(f);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{}: {e}", parent.display()));
        }
        std::fs::copy(source.join(f), &to).unwrap_or_else(|e| panic!("copy {f}: {e}"));
    }
}

/// Reads a `GITHUB_OUTPUT`/`GITHUB_ENV` file: `name=value` lines and `name<<DELIM` blocks.
pub fn parse_key_values(raw: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = raw.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.push((name.to_string(), value.join("\n")));
        } else if let Some((name, value)) = line.split_once('=') {
            out.push((name.to_string(), value.to_string()));
        }
    }
    out
}
