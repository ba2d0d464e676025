//! Runs one tool call against the ledger store: typed input in, JSON or a typed refusal out.
//!
//! Every write is one compare-and-swap transaction with an op id, so a client that
//! retries a call (same request in this session, or the same `op_id` key at any time)
//! applies it once. A refusal changes nothing and names the rule that fired.

use std::path::Path;

use chrono::Utc;
use navin_ledger::model::{Evidence, PauseReason};
use navin_ledger::ops::{Ctx, Operation, ProgressArgs, UpdateArgs};
use navin_ledger::store::{Committed, Store, StoreError};
use navin_ledger::{Actor, Ledger, RuleError};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::error::ToolError;
use super::tools::{
    AskInput, CloseAs, FailInput, InitInput, NoInput, PauseInput, PlanGetInput, ProgressInput,
    ReplanInput, ResumeInput, StepInput, ToolSpec, UpdateInput,
};

/// Parses `args` as `T`, naming the field that was wrong.
fn input<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            String::new()
        } else {
            format!(" at `{path}`")
        };
        ToolError::new(
            "invalid_input",
            format!("{tool}: bad arguments{at}: {}", e.into_inner()),
        )
        .hint("see the tool's input schema in tools/list")
    })
}

/// Where calls run: the store, who acts, and which checkout they are made from.
#[derive(Debug)]
pub struct Desk<'a> {
    pub store: &'a Store,
    pub actor: &'a Actor,
    /// The repository path (`--repo`): its checkout's `HEAD` judges recorded runs.
    pub repo: &'a Path,
    /// Inside a GitHub Actions job: the REST client `board_done` reads CI with, and the
    /// runtime to run its requests on.
    pub github: Option<(&'a super::github::GitHubCi, tokio::runtime::Handle)>,
    /// How far back the commit log is searched for a write's op id, beyond the history
    /// `mission.json` keeps (its newest 100 entries).
    pub retry_since: chrono::DateTime<Utc>,
}

impl Desk<'_> {
    fn ledger(&self) -> Result<(Ledger, String), ToolError> {
        match self.store.read()? {
            Some(s) => Ok((s.ledger, s.commit)),
            None => Err(ToolError::from(StoreError::Rule(RuleError::NoMission))),
        }
    }

    fn write(&self, op: Operation, op_id: String, in_checkout: bool) -> Result<Value, ToolError> {
        self.write_as(op, op_id, self.actor.clone(), in_checkout)
    }

    fn write_as(
        &self,
        op: Operation,
        op_id: String,
        actor: Actor,
        in_checkout: bool,
    ) -> Result<Value, ToolError> {
        let mut ctx = self.ctx(op_id, actor);
        // What CI proved on GitHub is recorded as GitHub judged it, not against this
        // checkout; an agent's own start and done are judged here.
        if in_checkout {
            ctx = crate::local::in_checkout(ctx, self.repo, self.store, &op)
                .map_err(|e| ToolError::new("base_missing", e.to_string()))?;
        }
        self.write_in(op, ctx)
    }

    fn ctx(&self, op_id: String, actor: Actor) -> Ctx {
        Ctx::new(Utc::now(), actor)
            .with_op_id(op_id)
            .with_retry_since(self.retry_since)
    }

    fn write_in(&self, op: Operation, ctx: Ctx) -> Result<Value, ToolError> {
        Ok(committed_json(&self.store.transact(&op, &ctx)?))
    }

    /// An own `op_id` already used for a different call (another tool, or other
    /// arguments) in the history the ledger keeps is refused: a retry must be the same
    /// call, and a new call needs a new key.
    fn refuse_reused_key(&self, args: &Value, digest: &str) -> Result<(), ToolError> {
        let Some(own) = args
            .get("op_id")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|k| !k.is_empty())
        else {
            return Ok(());
        };
        let Some(snapshot) = self.store.read()? else {
            return Ok(());
        };
        let reused = snapshot.ledger.mission.history.iter().any(|h| {
            h.op_id
                .as_deref()
                .and_then(parse_own_key)
                .is_some_and(|(d, id)| {
                    let same_key =
                        id == own || id.strip_prefix(own).is_some_and(|r| r.starts_with('#'));
                    same_key && d != digest
                })
        });
        if reused {
            return Err(ToolError::new(
                "op_id_reused",
                format!("op_id {own:?} was already used for a different call (another tool or other arguments); nothing was applied"),
            )
            .hint("use a fresh op_id for each distinct call; send the same op_id only to retry the very same call"));
        }
        Ok(())
    }

    /// Runs `tool` with `args`. `request_key` identifies this request within the
    /// session; a write without its own `op_id` uses it.
    pub fn call(
        &self,
        tool: &ToolSpec,
        args: Value,
        request_key: &str,
    ) -> Result<Value, ToolError> {
        let digest = call_digest(tool.name, &args);
        if !tool.read_only {
            self.refuse_reused_key(&args, &digest)?;
        }
        let key = |own: Option<String>| own_key(own.as_deref(), &digest, request_key);
        match tool.name {
            "ledger_get" => {
                input::<NoInput>(tool.name, args)?;
                let (ledger, commit) = self.ledger()?;
                Ok(json!({ "commit": commit, "mission": ledger.mission, "board": ledger.board }))
            }
            "board_digest" | "ledger_digest" => {
                input::<NoInput>(tool.name, args)?;
                let (ledger, _) = self.ledger()?;
                Ok(serde_json::to_value(navin_ledger::digest::digest(&ledger))
                    .unwrap_or(Value::Null))
            }
            "board_next" => {
                input::<NoInput>(tool.name, args)?;
                let (ledger, _) = self.ledger()?;
                let ready: Vec<Value> = ledger
                    .ready()
                    .iter()
                    .map(|t| {
                        json!({ "id": t.id, "title": t.title, "validation": t.validation,
                                "acceptance": t.acceptance, "agent": t.agent, "commands": t.commands })
                    })
                    .collect();
                Ok(
                    json!({ "version": ledger.mission.version, "status": ledger.mission.status, "ready": ready }),
                )
            }
            "board_brief" => {
                let i: StepInput = input(tool.name, args)?;
                let (ledger, _) = self.ledger()?;
                let task = ledger.board.task(&i.step).ok_or_else(|| {
                    ToolError::from(StoreError::Rule(RuleError::UnknownStep {
                        id: i.step.clone(),
                    }))
                })?;
                let (title, body) = brief(self.store, self.repo, &ledger, task)?;
                Ok(json!({ "step": task.id, "title": title, "brief": body }))
            }
            "plan_get" => {
                let i: PlanGetInput = input(tool.name, args)?;
                let id = match i.plan_id {
                    Some(id) => id,
                    None => {
                        let (ledger, _) = self.ledger()?;
                        ledger
                            .mission
                            .origin
                            .and_then(|o| o.plan_id)
                            .ok_or_else(|| {
                                ToolError::new("no_plan", "the mission was not started from a plan")
                                    .hint("pass plan_id (e.g. issue-12) to read another plan")
                            })?
                    }
                };
                if !navin_ledger::model::valid_step_id(&id) {
                    return Err(ToolError::new(
                        "invalid_input",
                        format!("plan_get: {id:?} is not a plan id (letters, digits and -_. only)"),
                    ));
                }
                let path = navin_ledger::plan::record::record_path(&id);
                let bytes = self.store.read_file(&path)?.ok_or_else(|| {
                    ToolError::new(
                        "unknown_plan",
                        format!("there is no plan {id:?} on the ledger branch"),
                    )
                })?;
                let record: Value = serde_json::from_slice(&bytes).map_err(|e| {
                    ToolError::new("ledger_corrupt", format!("{path} does not parse: {e}"))
                })?;
                Ok(json!({ "plan_id": id, "record": record }))
            }
            "ledger_init" => {
                let i: InitInput = input(tool.name, args)?;
                let op = Operation::Init(navin_ledger::ops::InitArgs {
                    goal: i.goal,
                    constraints: i.constraints,
                    acceptance_criteria: i.acceptance_criteria,
                    replace: i.replace,
                    ..navin_ledger::ops::InitArgs::default()
                });
                self.write(op, key(i.op_id), false)
            }
            "board_start" => {
                let i: StepInput = input(tool.name, args)?;
                if let Some(held) =
                    crate::questions::hold_before_start(self.store, &i.step, Utc::now())?
                {
                    return Err(ToolError::new("missing_info", held.message()).hint(
                        "wait for a person to answer (`/answer N TEXT` on GitHub, `navin ledger answer N TEXT` locally); the mission resumes by itself",
                    ));
                }
                self.write(Operation::Start { step: i.step }, key(i.op_id), true)
            }
            "ask_user" => {
                let i: AskInput = input(tool.name, args)?;
                let op_id = key(i.op_id);
                let mut answer = self.write(
                    Operation::Ask {
                        question: i.question.clone(),
                        step: i.step,
                    },
                    op_id.clone(),
                    false,
                )?;
                if let Some((github, handle)) = &self.github {
                    let (ledger, _) = self.ledger()?;
                    let posted = github.ask(handle, &ledger, &i.question, &op_id, self.actor);
                    if let Value::Object(map) = &mut answer {
                        map.insert("posted_on_issue".into(), posted.into());
                    }
                }
                Ok(answer)
            }
            "board_done" => {
                let i: StepInput = input(tool.name, args)?;
                if let Some((github, handle)) = &self.github {
                    let (ledger, _) = self.ledger()?;
                    let task = ledger.board.task(&i.step).ok_or_else(|| {
                        ToolError::from(StoreError::Rule(RuleError::UnknownStep {
                            id: i.step.clone(),
                        }))
                    })?;
                    if task.validation.needs_run() {
                        // On GitHub CI is the proof, read now from the API with the
                        // config on the default branch (not the agent's checkout, which
                        // it could edit); Navin records it.
                        let (ops, on) = github.judge(handle, &ledger, task)?;
                        // The App (or the Action) seals this ledger with a key this job
                        // does not hold, so a record written here would be refused as
                        // forged: CI has proved the step, and the ledger's owner records
                        // it from GitHub's own events.
                        if self.store.sealed_by_another_key()? {
                            let names: Vec<&str> = ops.iter().map(Operation::name).collect();
                            return Ok(json!({
                                "step": i.step,
                                "proven": true,
                                "recorded": false,
                                "operations": names,
                                "message": format!(
                                    "CI proves {} done; Navin records it on the ledger from GitHub's events (the merge, the green checks), usually within seconds. Read board_digest to see it.",
                                    i.step
                                ),
                            }));
                        }
                        let key = key(i.op_id);
                        let mut last = Value::Null;
                        for (n, op) in ops.into_iter().enumerate() {
                            let ctx = self.ctx(format!("{key}#{n}"), ci_actor());
                            last = self.write_in(op, on.ctx(ctx))?;
                        }
                        return Ok(last);
                    }
                }
                self.write(
                    Operation::Done {
                        step: i.step,
                        evidence: None,
                    },
                    key(i.op_id),
                    true,
                )
            }
            "ledger_progress" => {
                let i: ProgressInput = input(tool.name, args)?;
                if !i.cost_usd.is_finite() || i.cost_usd < 0.0 {
                    return Err(ToolError::new(
                        "invalid_input",
                        format!("ledger_progress: cost_usd must be a finite amount of 0 or more, not {}", i.cost_usd),
                    ));
                }
                self.write(
                    Operation::Progress(ProgressArgs {
                        step: i.step,
                        real_progress: i.real_progress,
                        fingerprint: i.fingerprint.filter(|f| !f.trim().is_empty()),
                        tokens: i.tokens,
                        cost_usd: i.cost_usd,
                        evidence: i.evidence.map(Evidence::prose),
                    }),
                    key(i.op_id),
                    false,
                )
            }
            "board_fail" => {
                let i: FailInput = input(tool.name, args)?;
                self.write(
                    Operation::Fail {
                        step: i.step,
                        evidence: i.evidence.map(|e| {
                            let mut e = Evidence::prose(e);
                            e.ok = false;
                            e
                        }),
                        reason: i.reason,
                        outcome: navin_ledger::AttemptOutcome::Failed,
                    },
                    key(i.op_id),
                    false,
                )
            }
            "board_retry" => {
                let i: StepInput = input(tool.name, args)?;
                self.write(Operation::Retry { step: i.step }, key(i.op_id), false)
            }
            "ledger_replan" => {
                let i: ReplanInput = input(tool.name, args)?;
                self.write(
                    Operation::Replan {
                        step: i.step,
                        reason: i.reason,
                    },
                    key(i.op_id),
                    false,
                )
            }
            "ledger_pause" => {
                let i: PauseInput = input(tool.name, args)?;
                let reason = if self.actor.is_human() {
                    PauseReason::Human
                } else {
                    PauseReason::Manual
                };
                self.write(
                    Operation::Pause {
                        reason,
                        note: i.reason,
                    },
                    key(i.op_id),
                    false,
                )
            }
            "ledger_resume" => {
                let i: ResumeInput = input(tool.name, args)?;
                self.write(
                    Operation::Resume {
                        note: i.note.unwrap_or_default(),
                    },
                    key(i.op_id),
                    false,
                )
            }
            "ledger_update" => {
                let i: UpdateInput = input(tool.name, args)?;
                let key = key(i.op_id);
                let update = UpdateArgs {
                    add_facts: i.add_facts,
                    add_missing_info: i.add_missing_info,
                    resolve_missing_info: i.resolve_missing_info,
                    add_constraints: i.add_constraints,
                    reason: i.reason.clone(),
                    ..UpdateArgs::default()
                };
                let edits = update
                    != UpdateArgs {
                        reason: i.reason.clone(),
                        ..UpdateArgs::default()
                    };
                // An edit and a close in one call land as two writes, each keyed.
                let (edit_key, close_key) = match (edits, i.status.is_some()) {
                    (true, true) => (format!("{key}#edit"), format!("{key}#close")),
                    _ => (key.clone(), key),
                };
                let mut last = Value::Null;
                if edits || i.status.is_none() {
                    last = self.write(Operation::Update(update), edit_key, false)?;
                    if let Some(resumed) =
                        crate::questions::resume_if_answered(self.store, self.actor, Utc::now())?
                    {
                        last = committed_json(&resumed);
                    }
                }
                if let Some(status) = i.status {
                    let status = match status {
                        CloseAs::Done => navin_ledger::model::MissionStatus::Done,
                        CloseAs::Failed => navin_ledger::model::MissionStatus::Failed,
                    };
                    last = self.write(
                        Operation::Close {
                            status,
                            reason: i.reason,
                        },
                        close_key,
                        false,
                    )?;
                }
                Ok(last)
            }
            other => Err(ToolError::unknown_tool(other)),
        }
    }
}

/// A write's op key: the caller's own `op_id` when it gave one, else this request's.
///
/// An own key carries a digest of the call (tool and arguments), so the same key on a
/// different call is told apart from a retry: `mcp:key:<digest>:<op_id>`.
fn own_key(own: Option<&str>, digest: &str, request_key: &str) -> String {
    match own.map(str::trim).filter(|k| !k.is_empty()) {
        Some(k) => format!("mcp:key:{digest}:{k}"),
        None => format!("mcp:{request_key}"),
    }
}

/// The op key a call of `tool` with `args` is written under (what the journal keeps).
pub fn op_key(tool: &str, args: &Value, request_key: &str) -> String {
    own_key(
        args.get("op_id").and_then(Value::as_str),
        &call_digest(tool, args),
        request_key,
    )
}

/// 12 hex digits of SHA-256 over the tool's name and its arguments without `op_id`, in
/// a canonical form (object keys sorted), so a client's key order does not matter.
fn call_digest(tool: &str, args: &Value) -> String {
    use sha2::{Digest, Sha256};
    fn canonical(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().filter(|k| *k != "op_id").collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    canonical(&map[k], out);
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    canonical(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut text = String::from(tool);
    text.push('\n');
    canonical(args, &mut text);
    hex::encode(&Sha256::digest(text.as_bytes())[..6])
}

/// The digest and op id of an own key, when `op_id` is one (`mcp:key:<digest>:<id>`,
/// with any `#…` suffix a multi-write call adds).
fn parse_own_key(op_id: &str) -> Option<(&str, &str)> {
    let rest = op_id.strip_prefix("mcp:key:")?;
    let (digest, id) = rest.split_at_checked(12)?;
    let id = id.strip_prefix(':')?;
    digest
        .chars()
        .all(|c| c.is_ascii_hexdigit())
        .then_some((digest, id))
}

/// What a write did, as the tool answers it.
fn committed_json(done: &Committed) -> Value {
    match done {
        Committed::AlreadyApplied { version } => {
            json!({ "already_applied": true, "version": version })
        }
        Committed::Written {
            version,
            reason,
            effects,
            ledger,
            ..
        } => json!({
            "already_applied": false,
            "version": version,
            "reason": reason,
            "status": ledger.mission.status,
            "effects": crate::local::effect_lines(effects),
            "digest": navin_ledger::digest::digest(ledger).text,
        }),
    }
}

/// The brief of `task` as a local agent reads it (`board_brief`, `navin board brief`):
/// the same text a dispatched step's issue carries, with the same options: the checks
/// and model the checkout's `.github/navin.yml` names, and the plan's binding edits
/// read from the ledger branch.
pub fn brief(
    store: &Store,
    repo: &Path,
    ledger: &Ledger,
    task: &navin_ledger::Task,
) -> Result<(String, String), ToolError> {
    let config =
        crate::local::repo_config(repo).map_err(|e| ToolError::new("config_invalid", e))?;
    let edits = navin_ledger::plan::record::mission_plan_edits(store, ledger)?;
    let policy = navin_domain::evidence::policy_from(&config);
    let options = navin_domain::render::BriefOptions {
        required_checks: policy.required_for(task.validation),
        model: config.models.for_mode(ledger.mission.mode),
        plan_edits: edits.as_deref(),
        // A mission made in a checkout has no pull requests or CI behind it.
        checkout: ledger
            .mission
            .origin
            .as_ref()
            .and_then(|o| o.repository.as_ref())
            .is_none(),
    };
    let at = local_repo_ref(ledger, store.branch());
    Ok(navin_domain::render::step_brief(ledger, task, &at, options))
}

/// Where links in a brief point when Navin runs outside GitHub: the mission's own
/// repository when it came from one.
fn local_repo_ref(ledger: &Ledger, branch: &str) -> navin_domain::render::RepoRef {
    let full_name = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.repository.clone())
        .unwrap_or_else(|| "this repository".to_owned());
    let mut repo = navin_domain::render::RepoRef::new(full_name, "https://github.com");
    repo.ledger_branch = branch.to_owned();
    repo
}

/// Who records what CI proved: Navin, never the agent that asked.
fn ci_actor() -> navin_ledger::Actor {
    navin_ledger::Actor::App("navin".to_owned())
}
