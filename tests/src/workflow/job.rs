//! Jobs and steps of one workflow run: ordering, conditions, tokens, `run:` steps and composite actions.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Map, Value};
use serde_yaml_ng::Value as Yaml;

use super::expr::{self, Context};
use super::host::{Done, Host};
use super::{
    parse_key_values, plan, standins, JobRun, Outcome, Runner, StepRun, Trigger, NAVIN_PLACEHOLDER,
};

/// One workflow run in progress.
pub(super) struct RunScope<'a> {
    pub runner: &'a Runner,
    pub doc: &'a Yaml,
    pub file: &'a str,
    pub name: String,
    pub trigger: &'a Trigger,
    pub id: u64,
    pub number: u64,
    pub dir: PathBuf,
}

/// The expression context: named values and the status the status functions report.
pub(super) struct Cx {
    pub values: Map<String, Value>,
    /// Whether everything before (the needed jobs, or the earlier steps) succeeded.
    pub ok: bool,
}

impl Context for Cx {
    fn lookup(&self, name: &str) -> Value {
        self.values.get(name).cloned().unwrap_or(Value::Null)
    }
    fn status(&self, function: &str) -> bool {
        match function {
            "always" => true,
            "success" => self.ok,
            "failure" => !self.ok,
            _ => false,
        }
    }
}

impl Cx {
    pub fn text(&self, template: &str) -> String {
        expr::interpolate(template, self).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A YAML scalar as the text a workflow means by it (`true`, `0`, `'x'`).
    pub fn yaml_text(&self, value: &Yaml) -> String {
        match value {
            Yaml::String(s) => self.text(s),
            Yaml::Bool(b) => b.to_string(),
            Yaml::Number(n) => n.to_string(),
            Yaml::Null => String::new(),
            other => panic!("a scalar was expected, found {other:?}"),
        }
    }

    /// `env:`/`with:` mappings, each value interpolated.
    pub fn mapping(&self, value: &Yaml) -> BTreeMap<String, String> {
        value
            .as_mapping()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), self.yaml_text(v))))
            .collect()
    }
}

impl RunScope<'_> {
    pub fn run_jobs(&self) -> Vec<JobRun> {
        let mut finished: Vec<JobRun> = Vec::new();
        for (id, job) in plan::order(self.doc, self.file) {
            if self
                .runner
                .only_jobs
                .as_ref()
                .is_some_and(|only| !only.contains(&id))
            {
                continue;
            }
            let needed = plan::needs(&job);
            let mut needs_value: Map<String, Value> = Map::new();
            let mut ok = true;
            for n in &needed {
                // A matrix job is one need: success only when every instance succeeded.
                let runs: Vec<&JobRun> = finished.iter().filter(|j| &j.id == n).collect();
                let result = if runs.iter().any(|j| j.result == Outcome::Failure) {
                    Outcome::Failure
                } else if !runs.is_empty() && runs.iter().all(|j| j.result == Outcome::Skipped) {
                    Outcome::Skipped
                } else {
                    Outcome::Success
                };
                ok &= result == Outcome::Success;
                let mut outputs = BTreeMap::new();
                for j in &runs {
                    outputs.extend(j.outputs.clone());
                }
                needs_value.insert(
                    n.clone(),
                    json!({"result": result.as_str(), "outputs": outputs}),
                );
            }
            for matrix in plan::matrix_instances(&job, self.runner.only_matrix.as_ref()) {
                let mut cx = self.base_cx(&job, "", ok);
                cx.values
                    .insert("needs".into(), Value::Object(needs_value.clone()));
                cx.values
                    .insert("matrix".into(), Value::Object(matrix.clone()));
                let run = match job.get("if") {
                    Some(cond) => expr::condition(&cx.yaml_text_raw(cond), &cx)
                        .unwrap_or_else(|e| panic!("{}: job {id}: {e}", self.file)),
                    None => ok,
                };
                if !run {
                    finished.push(JobRun {
                        id: id.clone(),
                        name: id.clone(),
                        result: Outcome::Skipped,
                        outputs: BTreeMap::new(),
                        steps: Vec::new(),
                        permissions: Vec::new(),
                    });
                    continue;
                }
                finished.push(self.run_job(&id, &job, cx));
            }
        }
        finished
    }

    /// The context every expression of a job starts from.
    fn base_cx(&self, job: &Yaml, token: &str, ok: bool) -> Cx {
        let r = self.runner;
        let repository = format!("{}/{}", r.owner, r.repo);
        let mut inputs = Map::new();
        if self.trigger.event == "workflow_dispatch" {
            let declared = &self.doc["on"]["workflow_dispatch"]["inputs"];
            for (k, spec) in declared.as_mapping().into_iter().flatten() {
                let Some(k) = k.as_str() else { continue };
                let given = self.trigger.payload["inputs"][k]
                    .as_str()
                    .map(str::to_owned);
                let default = match &spec["default"] {
                    Yaml::String(s) => s.clone(),
                    Yaml::Bool(b) => b.to_string(),
                    Yaml::Number(n) => n.to_string(),
                    _ => String::new(),
                };
                inputs.insert(k.to_owned(), Value::String(given.unwrap_or(default)));
            }
        }
        let mut secrets: Map<String, Value> = r
            .secrets
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        if let Some(env) = job["environment"].as_str() {
            for (k, v) in r.environments.get(env).into_iter().flatten() {
                secrets.insert(k.clone(), Value::String(v.clone()));
            }
        }
        secrets.insert("GITHUB_TOKEN".into(), Value::String(token.to_owned()));
        let values = json!({
            "github": {
                "event_name": self.trigger.event,
                "event": self.trigger.payload,
                "repository": repository,
                "repository_owner": r.owner,
                "actor": self.trigger.actor,
                "triggering_actor": self.trigger.actor,
                "token": token,
                "sha": self.sha(),
                "ref": self.git_ref(),
                "ref_name": self.git_ref().trim_start_matches("refs/heads/").trim_start_matches("refs/tags/"),
                "run_id": self.id.to_string(),
                "run_number": self.number.to_string(),
                "run_attempt": "1",
                "server_url": r.fake.base_url(),
                "api_url": r.fake.base_url(),
                "workflow": self.name,
            },
            "inputs": inputs,
            "secrets": secrets,
            "vars": {},
            "matrix": {},
            "runner": {"os": "Linux", "arch": plan::runner_arch(), "temp": ""},
            "env": {},
        });
        let Value::Object(values) = values else {
            unreachable!("an object literal")
        };
        Cx { values, ok }
    }

    fn sha(&self) -> String {
        self.trigger.sha.clone().unwrap_or_else(|| {
            let r = self.runner;
            let main = self.default_branch();
            r.fake
                .branch_sha(&r.owner, &r.repo, &main)
                .unwrap_or_default()
        })
    }

    fn default_branch(&self) -> String {
        let r = self.runner;
        r.fake
            .with_state(|m| m.repo(&r.owner, &r.repo).map(|x| x.default_branch.clone()))
            .unwrap_or_else(|| "main".into())
    }

    fn git_ref(&self) -> String {
        self.trigger
            .git_ref
            .clone()
            .unwrap_or_else(|| format!("refs/heads/{}", self.default_branch()))
    }

    fn run_job(&self, id: &str, job: &Yaml, mut cx: Cx) -> JobRun {
        let r = self.runner;
        let block = job
            .get("permissions")
            .or_else(|| self.doc.get("permissions"));
        let (scopes, id_token) = plan::permissions(block);
        let pairs: Vec<(&str, &str)> = scopes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let token = r.fake.actions_token(&r.owner, &r.repo, &pairs);
        // Each job, matrix instances included, gets directories of its own.
        static JOBS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = JOBS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self.dir.join(format!("{id}-{n}"));
        let work = dir.join("work").join(&r.repo);
        let temp = dir.join("temp");
        let home = dir.join("home");
        for d in [&work, &temp, &home] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        }
        let mut with_token = self.base_cx(job, &token, cx.ok);
        with_token.values.insert(
            "needs".into(),
            cx.values.remove("needs").unwrap_or(Value::Null),
        );
        with_token.values.insert(
            "matrix".into(),
            cx.values.remove("matrix").unwrap_or(Value::Null),
        );
        with_token.values["runner"]["temp"] = json!(temp.display().to_string());
        let mut env: BTreeMap<String, String> = BTreeMap::new();
        env.extend(with_token.mapping(&self.doc["env"]));
        env.extend(with_token.mapping(&job["env"]));
        let mut state = JobState {
            scope: self,
            job_id: id.to_owned(),
            cx: with_token,
            env,
            path: r
                .tool_path
                .iter()
                .cloned()
                .chain(std::iter::once(standins::gh_dir(r)))
                .collect(),
            work,
            temp,
            home,
            files: dir.clone(),
            steps: Map::new(),
            log: Vec::new(),
            failed: false,
            id_token,
            n: 0,
        };
        for (i, step) in job["steps"].as_sequence().into_iter().flatten().enumerate() {
            state.step(step, i);
        }
        let outputs = {
            state
                .cx
                .values
                .insert("steps".into(), Value::Object(state.steps.clone()));
            state.cx.mapping(&job["outputs"])
        };
        let name = job["name"]
            .as_str()
            .map_or_else(|| id.to_owned(), |n| state.cx.text(n));
        JobRun {
            id: id.to_owned(),
            name,
            result: if state.failed {
                Outcome::Failure
            } else {
                Outcome::Success
            },
            outputs,
            steps: state.log,
            permissions: scopes,
        }
    }
}

impl Cx {
    /// An `if:` as written (a string, or a bare boolean).
    fn yaml_text_raw(&self, value: &Yaml) -> String {
        match value {
            Yaml::String(s) => s.clone(),
            Yaml::Bool(b) => b.to_string(),
            other => panic!("an `if:` must be a string, found {other:?}"),
        }
    }
}

/// A job in progress: its context, environment and files.
pub(crate) struct JobState<'a> {
    scope: &'a RunScope<'a>,
    pub job_id: String,
    pub cx: Cx,
    pub env: BTreeMap<String, String>,
    /// `GITHUB_PATH` entries, newest first.
    pub path: Vec<PathBuf>,
    pub work: PathBuf,
    pub temp: PathBuf,
    pub home: PathBuf,
    files: PathBuf,
    steps: Map<String, Value>,
    log: Vec<StepRun>,
    pub failed: bool,
    pub id_token: bool,
    n: u64,
}

impl Host for JobState<'_> {
    fn runner(&self) -> &Runner {
        self.scope.runner
    }

    fn run_id(&self) -> u64 {
        self.scope.id
    }

    fn trigger(&self) -> &Trigger {
        self.scope.trigger
    }

    fn work(&self) -> &Path {
        &self.work
    }

    fn temp(&self) -> &Path {
        &self.temp
    }

    fn home(&self) -> &Path {
        &self.home
    }

    fn id_token(&self) -> bool {
        self.id_token
    }

    fn expr_text(&self, value: &Yaml) -> String {
        self.cx.yaml_text(value)
    }

    fn github(&self, key: &str) -> String {
        self.cx.values["github"][key]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

impl JobState<'_> {
    /// Whether `step` runs: its `if:` against the steps so far (a job's or a composite
    /// action's), or, without one, whether nothing before it failed.
    fn runs(&mut self, step: &Yaml, place: &str) -> bool {
        self.cx
            .values
            .insert("steps".into(), Value::Object(self.steps.clone()));
        self.cx.ok = !self.failed;
        match step.get("if") {
            Some(cond) => expr::condition(&self.cx.yaml_text_raw(cond), &self.cx)
                .unwrap_or_else(|e| panic!("{place}: {e}")),
            None => !self.failed,
        }
    }

    fn step(&mut self, step: &Yaml, index: usize) {
        let run = self.runs(step, &format!("job {}: step {index}", self.job_id));
        let name = step["name"]
            .as_str()
            .map(|n| self.cx.text(n))
            .or_else(|| step["uses"].as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("step {index}"));
        let id = step["id"].as_str().map(str::to_owned);
        if !run {
            self.log.push(StepRun {
                name,
                outcome: Outcome::Skipped,
                log: String::new(),
            });
            if let Some(id) = id {
                self.steps.insert(
                    id,
                    json!({"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}),
                );
            }
            return;
        }
        let mut step_env = self.env.clone();
        step_env.extend(self.cx.mapping(&step["env"]));
        let done = if let Some(script) = step["run"].as_str() {
            let script = self.cx.text(script);
            let dir = step["working-directory"]
                .as_str()
                .map(|d| self.work.join(self.cx.text(d)));
            self.shell(&script, &step_env, dir.as_deref(), None)
        } else if let Some(uses) = step["uses"].as_str() {
            let with = self.cx.mapping(&step["with"]);
            self.uses(uses, &with, &step_env)
        } else {
            panic!("job {}: step {name} has neither run nor uses", self.job_id)
        };
        let continue_on_error = step["continue-on-error"].as_bool().unwrap_or(false);
        if !done.ok && !continue_on_error {
            self.failed = true;
        }
        if let Some(id) = id {
            let outcome = if done.ok { "success" } else { "failure" };
            self.steps.insert(
                id,
                json!({"outputs": done.outputs, "outcome": outcome, "conclusion": outcome}),
            );
        }
        self.log.push(StepRun {
            name,
            outcome: if done.ok {
                Outcome::Success
            } else {
                Outcome::Failure
            },
            log: done.log,
        });
    }

    /// The variables GitHub sets for every step, plus the job's.
    fn step_env(
        &mut self,
        env: &BTreeMap<String, String>,
        action_path: Option<&Path>,
    ) -> (BTreeMap<String, String>, [PathBuf; 4]) {
        self.n += 1;
        let files = [
            self.files.join(format!("output-{}", self.n)),
            self.files.join(format!("env-{}", self.n)),
            self.files.join(format!("path-{}", self.n)),
            self.files.join(format!("summary-{}", self.n)),
        ];
        for f in &files {
            std::fs::write(f, "").unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        }
        let r = self.runner();
        let scope = self.scope;
        let event_path = self.files.join("event.json");
        if !event_path.exists() {
            std::fs::write(
                &event_path,
                serde_json::to_vec(&scope.trigger.payload).unwrap_or_default(),
            )
            .unwrap_or_else(|e| panic!("event: {e}"));
        }
        let mut path: Vec<String> = self.path.iter().map(|p| p.display().to_string()).collect();
        path.push(std::env::var("PATH").unwrap_or_default());
        let mut all: BTreeMap<String, String> = r.machine_env.clone();
        let g = |k: &str| {
            self.cx.values["github"][k]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        };
        for (k, v) in [
            ("CI", "true".to_owned()),
            ("GITHUB_ACTIONS", "true".to_owned()),
            ("GITHUB_REPOSITORY", g("repository")),
            ("GITHUB_REPOSITORY_OWNER", r.owner.clone()),
            (
                "GITHUB_REPOSITORY_ID",
                r.fake.repo_id(&r.owner, &r.repo).to_string(),
            ),
            ("GITHUB_API_URL", r.fake.base_url().to_owned()),
            ("GITHUB_SERVER_URL", r.fake.base_url().to_owned()),
            (
                "GITHUB_GRAPHQL_URL",
                format!("{}/graphql", r.fake.base_url()),
            ),
            ("GITHUB_WORKSPACE", self.work.display().to_string()),
            ("GITHUB_EVENT_NAME", scope.trigger.event.clone()),
            ("GITHUB_EVENT_PATH", event_path.display().to_string()),
            ("GITHUB_RUN_ID", scope.id.to_string()),
            ("GITHUB_RUN_NUMBER", scope.number.to_string()),
            ("GITHUB_RUN_ATTEMPT", "1".to_owned()),
            ("GITHUB_SHA", g("sha")),
            ("GITHUB_REF", g("ref")),
            ("GITHUB_REF_NAME", g("ref_name")),
            ("GITHUB_ACTOR", scope.trigger.actor.clone()),
            ("GITHUB_TRIGGERING_ACTOR", scope.trigger.actor.clone()),
            ("GITHUB_JOB", self.job_id.clone()),
            ("GITHUB_WORKFLOW", scope.name.clone()),
            ("GITHUB_OUTPUT", files[0].display().to_string()),
            ("GITHUB_ENV", files[1].display().to_string()),
            ("GITHUB_PATH", files[2].display().to_string()),
            ("GITHUB_STEP_SUMMARY", files[3].display().to_string()),
            ("RUNNER_TEMP", self.temp.display().to_string()),
            ("RUNNER_OS", "Linux".to_owned()),
            ("RUNNER_ARCH", plan::runner_arch().to_owned()),
            ("HOME", self.home.display().to_string()),
            ("PATH", path.join(":")),
            ("GIT_TERMINAL_PROMPT", "0".to_owned()),
            ("GIT_CONFIG_NOSYSTEM", "1".to_owned()),
        ] {
            all.insert(k.to_owned(), v);
        }
        if let Some(p) = action_path {
            all.insert("GITHUB_ACTION_PATH".into(), p.display().to_string());
        }
        all.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));
        (all, files)
    }

    /// Runs `script` with bash as GitHub's `shell: bash` does (`-eo pipefail`).
    pub fn shell(
        &mut self,
        script: &str,
        env: &BTreeMap<String, String>,
        dir: Option<&Path>,
        action_path: Option<&Path>,
    ) -> Done {
        let (vars, files) = self.step_env(env, action_path);
        let script_file = self.files.join(format!("script-{}.sh", self.n));
        std::fs::write(&script_file, script).unwrap_or_else(|e| panic!("script: {e}"));
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail"])
            .arg(&script_file)
            .env_clear()
            .envs(&vars)
            .current_dir(dir.unwrap_or(&self.work))
            .output()
            .unwrap_or_else(|e| panic!("bash: {e}"));
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.after_step(out.status.success(), log, &files)
    }

    /// Applies what a step wrote to `GITHUB_ENV` and `GITHUB_PATH`; reads its outputs.
    fn after_step(&mut self, ok: bool, log: String, files: &[PathBuf; 4]) -> Done {
        let read = |p: &PathBuf| std::fs::read_to_string(p).unwrap_or_default();
        let outputs: BTreeMap<String, String> =
            parse_key_values(&read(&files[0])).into_iter().collect();
        for (k, v) in parse_key_values(&read(&files[1])) {
            self.env.insert(k, v);
        }
        for line in read(&files[2]).lines().filter(|l| !l.trim().is_empty()) {
            self.path.insert(0, PathBuf::from(line.trim()));
        }
        Done { ok, outputs, log }
    }

    fn uses(
        &mut self,
        uses: &str,
        with: &BTreeMap<String, String>,
        env: &BTreeMap<String, String>,
    ) -> Done {
        let (action, git_ref) = uses.split_once('@').unwrap_or((uses, ""));
        if let Some(local) = action.strip_prefix("./") {
            let dir = self.work.join(local);
            return self.composite(&dir, with, env);
        }
        if let Some(rest) = action.strip_prefix(NAVIN_PLACEHOLDER) {
            let dir = self
                .runner()
                .actions_dir()
                .join(NAVIN_PLACEHOLDER)
                .join(git_ref)
                .join(rest.trim_start_matches('/'));
            if !dir.join("action.yml").exists() {
                return Done {
                    ok: false,
                    outputs: BTreeMap::new(),
                    log: format!(
                        "Unable to resolve action {uses}: no release {git_ref} on the runner"
                    ),
                };
            }
            return self.composite(&dir, with, env);
        }
        standins::run(self, action, git_ref, with)
    }

    /// A composite action: its inputs (with defaults) and steps, and its outputs' values.
    fn composite(
        &mut self,
        dir: &Path,
        with: &BTreeMap<String, String>,
        env: &BTreeMap<String, String>,
    ) -> Done {
        let text = std::fs::read_to_string(dir.join("action.yml"))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let meta: Yaml =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("action.yml: {e}"));
        let declared = meta["inputs"].as_mapping().cloned().unwrap_or_default();
        for key in with.keys() {
            if !declared.contains_key(key.as_str()) {
                return Done {
                    ok: false,
                    outputs: BTreeMap::new(),
                    log: format!(
                        "Unexpected input '{key}': {} declares no such input",
                        dir.display()
                    ),
                };
            }
        }
        let mut inputs = Map::new();
        for (k, spec) in &declared {
            let Some(k) = k.as_str() else { continue };
            let value = match with.get(k) {
                Some(v) => v.clone(),
                None => {
                    if spec["required"].as_bool() == Some(true) && spec["default"].is_null() {
                        return Done {
                            ok: false,
                            outputs: BTreeMap::new(),
                            log: format!("Input required and not supplied: {k}"),
                        };
                    }
                    self.cx.yaml_text(&spec["default"])
                }
            };
            inputs.insert(k.to_owned(), Value::String(value));
        }
        let saved = (
            self.cx.values.get("inputs").cloned(),
            self.cx.values.get("steps").cloned(),
            std::mem::take(&mut self.steps),
            std::mem::take(&mut self.log),
            self.failed,
        );
        self.cx
            .values
            .insert("inputs".into(), Value::Object(inputs));
        self.cx.values["github"]["action_path"] = json!(dir.display().to_string());
        let repository = dir
            .strip_prefix(self.runner().actions_dir())
            .ok()
            .map(|p| {
                p.iter()
                    .take(2)
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        self.cx.values["github"]["action_repository"] = json!(repository);
        self.failed = false;
        let mut log = String::new();
        for (i, step) in meta["runs"]["steps"]
            .as_sequence()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let run = self.runs(step, &format!("{}: step {i}", dir.display()));
            let name = step["name"].as_str().unwrap_or("step").to_owned();
            if !run {
                if let Some(id) = step["id"].as_str() {
                    self.steps
                        .insert(id.into(), json!({"outputs": {}, "outcome": "skipped"}));
                }
                continue;
            }
            let mut step_env = env.clone();
            step_env.extend(self.cx.mapping(&step["env"]));
            let done = if let Some(script) = step["run"].as_str() {
                assert!(
                    step["shell"].as_str().is_some(),
                    "{}: a composite run step needs `shell`",
                    dir.display()
                );
                let script = self.cx.text(script);
                self.shell(&script, &step_env, None, Some(dir))
            } else if let Some(uses) = step["uses"].as_str() {
                let with = self.cx.mapping(&step["with"]);
                self.uses(uses, &with, &step_env)
            } else {
                panic!("{}: step {name} has neither run nor uses", dir.display())
            };
            log.push_str(&format!("> {name}\n{}\n", done.log));
            if !done.ok {
                self.failed = true;
            }
            if let Some(id) = step["id"].as_str() {
                let outcome = if done.ok { "success" } else { "failure" };
                self.steps.insert(
                    id.into(),
                    json!({"outputs": done.outputs, "outcome": outcome}),
                );
            }
        }
        self.cx
            .values
            .insert("steps".into(), Value::Object(self.steps.clone()));
        let outputs: BTreeMap<String, String> = meta["outputs"]
            .as_mapping()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), self.cx.yaml_text(&v["value"]))))
            .collect();
        let ok = !self.failed;
        // Back to the calling job's context.
        if let Some(v) = saved.0 {
            self.cx.values.insert("inputs".into(), v);
        }
        if let Some(v) = saved.1 {
            self.cx.values.insert("steps".into(), v);
        }
        self.steps = saved.2;
        self.log = saved.3;
        self.failed = saved.4;
        Done { ok, outputs, log }
    }
}
