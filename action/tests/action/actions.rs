//! GitHub Actions around the fake for the journeys: the shipped workflows committed to the repository, events delivered to the workflows whose `on:` matches, and what GitHub does between runs (workflow dispatches, pushes moving pull requests, CI runs recorded as check runs and `workflow_run` events).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use navin_e2e::fake::{CheckRunSpec, UserKind};
use navin_e2e::workflow::release::Releases;
use navin_e2e::workflow::{Agent, Outcome, Runner, Trigger, WorkflowRun};
use serde_json::{json, Value};

use crate::harness::{workspace, Job, OWNER, REPO};

/// The release the examples pin (`OWNER/REPO/action@v0.1.0`).
pub const RELEASE: &str = "v0.1.0";

/// This build's `navin-action` and `navin`, packed once per test process.
pub fn releases() -> &'static Releases {
    static RELEASES: OnceLock<Releases> = OnceLock::new();
    RELEASES.get_or_init(|| {
        let action = Path::new(env!("CARGO_BIN_EXE_navin-action"));
        let navin = action.with_file_name("navin");
        assert!(
            navin.exists(),
            "{} is missing: the agent workflow installs `navin`; build it first \
             (`cargo test --workspace` does, or `cargo build -p navin-bot`)",
            navin.display()
        );
        Releases::start(RELEASE, &[(action, "navin-action"), (&navin, "navin")])
    })
}

/// A shipped example workflow's text.
pub fn example(name: &str) -> String {
    std::fs::read_to_string(workspace().join("action/examples").join(name)).expect("example")
}

/// The repository's workflows, its runner and what has run.
pub struct Actions {
    pub job: Job,
    pub runner: Runner,
    workflows: Vec<(String, String)>,
    dispatches_seen: usize,
    pulls_seen: Vec<u64>,
    pub runs: Vec<WorkflowRun>,
}

impl Actions {
    /// Commits `workflows` (file name, text) under `.github/workflows/` on the default
    /// branch and registers them, as pushing them to GitHub would.
    pub fn new(job: Job, workflows: Vec<(&str, String)>, agent: Arc<dyn Agent>) -> Actions {
        let mut runner = Runner::new(&job.fake, OWNER, REPO, &workspace(), releases());
        runner.agent(agent);
        let files: Vec<(String, String)> = workflows
            .into_iter()
            .map(|(f, t)| (f.to_owned(), t))
            .collect();
        let commits: Vec<(String, &str)> = files
            .iter()
            .map(|(f, t)| (format!(".github/workflows/{f}"), t.as_str()))
            .collect();
        let refs: Vec<(&str, &str)> = commits.iter().map(|(p, t)| (p.as_str(), *t)).collect();
        job.fake
            .commit_files(OWNER, REPO, "main", &refs, "workflows");
        for (file, text) in &files {
            let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).expect("workflow yaml");
            let name = doc["name"].as_str().unwrap_or(file).to_owned();
            job.fake.add_workflow(OWNER, REPO, file, &name);
        }
        Actions {
            job,
            runner,
            workflows: files,
            dispatches_seen: 0,
            pulls_seen: Vec::new(),
            runs: Vec::new(),
        }
    }

    /// Delivers `event` to every workflow whose `on:` takes it, as `actor` caused it;
    /// CI runs are recorded on the fake with their check runs and announced to
    /// `workflow_run` subscribers.
    pub fn deliver(&mut self, event: &str, payload: Value, actor: &str, sha: Option<String>) {
        let action = payload["action"].as_str().map(str::to_owned);
        let matching: Vec<(String, String)> = self
            .workflows
            .iter()
            .filter(|(_, text)| Runner::triggered_by(text, event, action.as_deref()))
            .filter(|(_, text)| event != "workflow_run" || subscribes_to(text, &payload))
            .cloned()
            .collect();
        for (file, text) in matching {
            let mut trigger = Trigger::new(event, payload.clone(), actor);
            trigger.sha = sha.clone();
            let run = self.runner.run(&file, &text, &trigger);
            if std::env::var_os("NAVIN_TEST_DUMP").is_some() {
                eprintln!("### {file} on {event}\n{}", run.log());
            }
            self.runs.push(run.clone());
            // GitHub records every run on a pull request as check runs on its head.
            if let (Some(sha), "pull_request") = (sha.as_deref(), event) {
                self.record_ci(&run, sha, &payload);
            }
        }
    }

    /// GitHub's record of a CI run: the run, one check run per job (named after the
    /// job, by GitHub Actions, its log as the output), then `workflow_run.completed`.
    fn record_ci(&mut self, run: &WorkflowRun, sha: &str, payload: &Value) {
        let fake = &self.job.fake;
        let conclusion = run.conclusion().as_str();
        let file = run.file.clone();
        let id = fake.add_workflow_run(OWNER, REPO, &file, sha, conclusion);
        let branch = payload["pull_request"]["head"]["ref"]
            .as_str()
            .unwrap_or("main")
            .to_owned();
        fake.with_state(|m| {
            if let Some(r) = m.workflow_runs.get_mut(&id) {
                r.head_branch = branch.clone();
                r.event = "pull_request".into();
            }
        });
        for job in run.jobs.iter().filter(|j| j.result != Outcome::Skipped) {
            let log = job.log();
            let tail: String = log
                .lines()
                .rev()
                .take(40)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            let spec = CheckRunSpec::new(&job.name, sha)
                .conclusion(job.result.as_str())
                .output(job.result.as_str(), &tail);
            fake.add_check_run(OWNER, REPO, spec);
        }
        let event = self
            .job
            .fixture("workflow_run.completed")
            .check_run_id(id)
            .head_sha(sha)
            .head_ref(&branch)
            .conclusion(conclusion)
            .set("/workflow_run/name", json!(run.name))
            .set(
                "/workflow_run/path",
                json!(format!(".github/workflows/{file}")),
            )
            .into_json();
        let mut event = event;
        if let Some(map) = event.as_object_mut() {
            map.remove("installation");
        }
        self.deliver("workflow_run", event, "github-actions[bot]", None);
    }

    /// What GitHub does after runs, until nothing is left: each new `workflow_dispatch`
    /// runs its workflow; a push to a pull request's branch sends `synchronize`; a new
    /// pull request sends `opened`. Events caused by a job's `GITHUB_TOKEN` start no
    /// workflow, as on GitHub.
    pub fn settle(&mut self) {
        for _ in 0..40 {
            let mut moved = false;
            let dispatches = self.job.fake.dispatches();
            for d in dispatches
                .iter()
                .skip(self.dispatches_seen)
                .cloned()
                .collect::<Vec<_>>()
            {
                self.dispatches_seen += 1;
                moved = true;
                let text = self
                    .workflows
                    .iter()
                    .find(|(f, _)| *f == d.workflow)
                    .map(|(_, t)| t.clone())
                    .expect("a dispatch of a committed workflow");
                let payload = json!({
                    "inputs": d.inputs,
                    "ref": format!("refs/heads/{}", d.git_ref),
                    "repository": {"full_name": format!("{OWNER}/{REPO}"), "default_branch": "main"},
                    "sender": {"login": d.by, "type": if d.by.ends_with("[bot]") { "Bot" } else { "User" }},
                    "workflow": format!(".github/workflows/{}", d.workflow),
                });
                let run = self.runner.run(
                    &d.workflow,
                    &text,
                    &Trigger::new("workflow_dispatch", payload, &d.by),
                );
                if std::env::var_os("NAVIN_TEST_DUMP").is_some() {
                    eprintln!("### {} dispatched\n{}", d.workflow, run.log());
                }
                self.runs.push(run);
            }
            for sync in self.job.fake.sync_pull_heads(OWNER, REPO) {
                moved = true;
                let (payload, author) = self.pull_payload(sync.number, "synchronize");
                let mut payload = payload;
                payload["before"] = json!(sync.before);
                payload["after"] = json!(sync.after);
                if !author.ends_with("[bot]") {
                    self.deliver("pull_request", payload, &author, Some(sync.after.clone()));
                }
            }
            let open = self.pull_numbers();
            for number in open {
                if self.pulls_seen.contains(&number) {
                    continue;
                }
                self.pulls_seen.push(number);
                moved = true;
                let (payload, author) = self.pull_payload(number, "opened");
                let head = payload["pull_request"]["head"]["sha"]
                    .as_str()
                    .map(str::to_owned);
                if !author.ends_with("[bot]") {
                    self.deliver("pull_request", payload, &author, head);
                }
            }
            if !moved {
                return;
            }
        }
        panic!("GitHub never settled: {} runs", self.runs.len());
    }

    /// Every pull request's number, open or closed.
    fn pull_numbers(&self) -> Vec<u64> {
        self.job.fake.with_state(|m| {
            m.repo(OWNER, REPO)
                .map(|r| {
                    r.issues
                        .values()
                        .filter(|i| i.pull.is_some())
                        .map(|i| i.number)
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    /// Marks pull requests already open as seen (their `opened` went out before).
    pub fn seen_pulls(&mut self) {
        self.pulls_seen = self.pull_numbers();
    }

    /// A `pull_request` payload for `number` as the fake holds it; and its author.
    pub fn pull_payload(&self, number: u64, action: &str) -> (Value, String) {
        let issue = self.job.fake.issue(OWNER, REPO, number);
        let pull = issue.pull.clone().expect("a pull request");
        let author = issue.author.clone();
        let kind = if author.ends_with("[bot]") {
            UserKind::Bot
        } else {
            UserKind::User
        };
        let mut value = self
            .job
            .fixture("pull_request.opened")
            .number(number)
            .head_sha(&pull.head_sha)
            .head_ref(&pull.head_ref)
            .sender(&author, self.job.fake.user_id(&author), kind)
            .set("/action", json!(action))
            .set("/pull_request/title", json!(issue.title))
            .set("/pull_request/body", json!(issue.body))
            .set("/pull_request/user/login", json!(author))
            .set(
                "/pull_request/head/repo/full_name",
                json!(format!("{OWNER}/{REPO}")),
            )
            .set("/pull_request/state", json!(issue.state))
            .set("/pull_request/merged", json!(pull.merged_at.is_some()))
            .into_json();
        if let Some(map) = value.as_object_mut() {
            map.remove("installation");
        }
        (value, author)
    }

    /// Runs of `file` so far.
    pub fn runs_of(&self, file: &str) -> Vec<&WorkflowRun> {
        self.runs.iter().filter(|r| r.file == file).collect()
    }
}

/// Whether a `workflow_run` workflow lists the finished run's workflow by name.
fn subscribes_to(text: &str, payload: &Value) -> bool {
    let Ok(doc) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text) else {
        return false;
    };
    let name = payload["workflow_run"]["name"].as_str().unwrap_or_default();
    doc["on"]["workflow_run"]["workflows"]
        .as_sequence()
        .is_some_and(|w| w.iter().any(|n| n.as_str() == Some(name)))
}
