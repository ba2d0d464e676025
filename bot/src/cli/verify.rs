//! `navin board verify`: run a step's validation command in the checkout and record the run.
//!
//! This is how a coding agent working locally proves a step: it cannot hand in evidence,
//! so Navin runs the command itself (no shell), and records what ran, on which commit,
//! whether the tree was clean, how it ended and a digest of the output. Only such a run,
//! green, for the checkout's current `HEAD` of a clean tree, lets the agent mark the
//! step done.
//!
//! The command runs in a process group of its own, with a time limit (`--timeout`,
//! NAVIN_VERIFY_TIMEOUT); past it the whole group is killed and the run is recorded red,
//! as timed out.
//!
//! When the step has a base other than `HEAD`, the command runs on the base too (once;
//! later verifies read the cached result), and the run is red only for what fails on the
//! head and not on the base: a failure already there is named and does not block, and
//! the tests the change repaired are recorded by id (`navin_runner::baseline`).

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use navin_ledger::model::{CommandSource, Evidence, EvidenceKind, RunRecord, Validation};
use navin_ledger::ops::{Checkout, Operation};
use navin_ledger::store::Store;
use navin_runner::baseline::{self, BaseRuns};
use navin_runner::{keep, run_bounded, RunError};
use sha2::{Digest as _, Sha256};

use super::CliError;

/// The repository's working tree, with the CLI's errors.
pub(super) struct WorkTree(crate::local::WorkTree);

impl WorkTree {
    pub(super) fn discover(path: &Path) -> Result<Self, CliError> {
        crate::local::WorkTree::discover(path)
            .map(Self)
            .map_err(CliError::usage)
    }

    pub(super) fn checkout(&self) -> Result<Checkout, CliError> {
        self.0.checkout().map_err(CliError::usage)
    }

    fn root(&self) -> &Path {
        self.0.root()
    }

    fn repo(&self) -> &git2::Repository {
        self.0.repo()
    }

    /// `.github/navin.yml` on the default branch (never the checkout's own), and the
    /// branch's name.
    fn verification_config(
        &self,
    ) -> Result<(navin_domain::config::RepoConfig, Option<String>), CliError> {
        crate::local::default_branch_config(self.root()).map_err(CliError::usage)
    }
}

/// The evidence kind a run of a step with `validation` records.
fn run_kind(validation: Validation) -> EvidenceKind {
    match validation {
        Validation::Test => EvidenceKind::TestRun,
        Validation::Lint => EvidenceKind::LintRun,
        _ => EvidenceKind::VerifyRun,
    }
}

/// Runs step `id`'s validation commands (or `given`) in order and records each run; the
/// first red one stops the rest. A red run is recorded too, and then reported as a
/// refusal (exit 1) so scripts can tell; so is a run that took longer than
/// `timeout_secs` and was killed. Runs are recorded once all have ended, so an
/// interrupted verify leaves no green run of a first command standing for the rest.
pub(super) fn verify(
    store: &Store,
    tree: &WorkTree,
    ctx: navin_ledger::Ctx,
    id: &str,
    given: &[String],
    timeout_secs: u64,
    json: bool,
) -> Result<(), CliError> {
    let ledger = super::show::load(store)?;
    let task = ledger.board.task(id).ok_or_else(|| {
        CliError::from(navin_ledger::store::StoreError::Rule(
            navin_ledger::RuleError::UnknownStep { id: id.to_owned() },
        ))
    })?;
    let (config, branch) = tree.verification_config()?;
    // The commands the mission recorded when it was made win over the default branch's
    // config now: a local default branch or `origin/HEAD` is the agent's to move.
    let recorded = ledger.mission.commands.as_ref();
    let configured: Vec<(String, CommandSource)> = if task.commands.is_empty() {
        recorded
            .map(|c| c.for_validation(task.validation))
            .unwrap_or_else(|| config.validation.commands.for_validation(task.validation))
            .map(|c| vec![(c.to_owned(), CommandSource::Config)])
            .unwrap_or_default()
    } else {
        task.commands
            .iter()
            .map(|c| (c.clone(), CommandSource::Step))
            .collect()
    };
    let commands: Vec<(Vec<String>, CommandSource)> = if given.is_empty() {
        if configured.is_empty() {
            let acceptance = task
                .acceptance
                .as_deref()
                .map(|a| format!(" ({a})"))
                .unwrap_or_default();
            return Err(CliError {
                message: match task.validation {
                    Validation::None => format!(
                        "step {id} has validation none: there is nothing to run, and `navin board done {id}` closes it"
                    ),
                    Validation::Manual => format!(
                        "step {id} is manual: its verification is for a person to judge{acceptance}, so there is nothing to run; a human closes it with `navin board done {id} --evidence \"what was checked\"`"
                    ),
                    _ => format!(
                        "step {id} has no validation command: its plan named none and .github/navin.yml on {} sets no validation.commands.{}; set one there (a command given after `--` is recorded but proves nothing)",
                        branch.as_deref().unwrap_or("the default branch"),
                        run_kind(task.validation).as_str().trim_end_matches("_run")
                    ),
                },
                code: super::EXIT_REFUSED,
            });
        }
        configured
            .iter()
            .map(|(line, source)| {
                let argv = shlex::split(line).filter(|a| !a.is_empty()).ok_or_else(|| {
                    CliError::usage(format!(
                        "step {id}'s validation command {line:?} is not a valid command line (unbalanced quotes?)"
                    ))
                })?;
                // Nothing runs that can never pass, or that would rewrite the tree it judges.
                let argv = navin_runner::checks::prepare(&argv, tree.root()).map_err(|e| CliError {
                    message: format!(
                        "step {id}'s validation command cannot run: {e}; fix it in the plan or validation.commands, and verify again"
                    ),
                    code: super::EXIT_REFUSED,
                })?;
                Ok((argv, *source))
            })
            .collect::<Result<_, CliError>>()?
    } else {
        if ctx.actor.is_agent() {
            let own = match configured.first() {
                Some((line, _)) => {
                    format!("run `navin board verify {id}` without `--` to run its own ({line:?})")
                }
                None => format!("{id} has none, so CI on its pull request proves it"),
            };
            return Err(CliError {
                message: format!(
                    "{} runs a step's own validation commands, not ones of its choosing: {own}",
                    ctx.actor
                ),
                code: super::EXIT_REFUSED,
            });
        }
        let argv = navin_runner::checks::prepare(given, tree.root()).map_err(|e| CliError {
            message: format!("the command given after `--` cannot run: {e}"),
            code: super::EXIT_REFUSED,
        })?;
        vec![(argv, CommandSource::Given)]
    };

    let kind = run_kind(task.validation);
    let before = tree.checkout()?;
    let base_runs = BaseRuns::new(
        tree.repo().path(),
        tree.root(),
        store.seal_key(),
        store.repository(),
    );
    base_runs.sweep();
    // The base is held against only when it is another commit: on the base itself
    // there is nothing to compare.
    let base = task
        .base
        .as_deref()
        .filter(|b| *b != before.head)
        .map(|b| (&base_runs, b));
    let total = commands.len();
    let mut runs = Vec::with_capacity(total);
    let mut notes = Vec::new();
    for (argv, source) in commands {
        let run = run_one(
            tree,
            &before,
            kind,
            argv,
            source,
            timeout_secs,
            base,
            &mut notes,
        )?;
        let ok = run.ok;
        runs.push(run);
        if !ok {
            break;
        }
    }
    let mut version = 0;
    for run in &runs {
        let done = store.transact(
            &Operation::RecordRun {
                step: id.to_owned(),
                evidence: run.evidence.clone(),
            },
            &ctx.clone().with_checkout(before.clone()),
        )?;
        version = match done {
            navin_ledger::store::Committed::Written { version, .. }
            | navin_ledger::store::Committed::AlreadyApplied { version } => version,
        };
    }
    let failed = runs.iter().find(|r| !r.ok);
    if json {
        let each: Vec<serde_json::Value> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "command": r.shown, "ok": r.ok, "exit_code": r.exit_code,
                    "timed_out": r.timed_out, "source": r.source.as_str(),
                    "summary": r.evidence.summary,
                    "baseline": r.evidence.run.as_ref().and_then(|run| run.baseline.as_ref()),
                })
            })
            .collect();
        let last = runs.last();
        println!(
            "{}",
            serde_json::json!({
                "step": id,
                "kind": kind,
                "ok": failed.is_none() && runs.len() == total,
                "exit_code": last.and_then(|r| r.exit_code),
                "timed_out": runs.iter().any(|r| r.timed_out),
                "head": before.head,
                "dirty": before.dirty,
                "source": last.map(|r| r.source.as_str()),
                "summary": last.map(|r| r.evidence.summary.clone()),
                "runs": each,
                "skipped": total - runs.len(),
                "notes": notes,
                "base_trees": base_runs.trees(),
                "version": version,
            })
        );
    } else {
        let mut out = std::io::stdout().lock();
        for r in &runs {
            let _ = writeln!(out, "{}", r.output_tail);
            let _ = writeln!(
                out,
                "{id} {kind} {}: {}",
                if r.ok { "passed" } else { "failed" },
                r.evidence.summary
            );
        }
        if total - runs.len() > 0 {
            let _ = writeln!(
                out,
                "{} later command(s) not run after the failure",
                total - runs.len()
            );
        }
        let _ = writeln!(out, "recorded {} run(s) at v{version}", runs.len());
        for note in &notes {
            let _ = writeln!(out, "note: {note}");
        }
        if before.dirty {
            let _ = writeln!(
                out,
                "note: the tree had uncommitted changes, so this run cannot close the step; commit and verify again"
            );
        }
        if runs.iter().any(|r| r.source == CommandSource::Given) {
            let _ = writeln!(
                out,
                "note: a command given after `--` is recorded but proves nothing; the step's own commands (its plan's, or validation.commands on the default branch) do"
            );
        }
    }
    match failed {
        None => Ok(()),
        Some(r) if r.timed_out => Err(CliError {
            message: format!(
                "{id}: the validation command timed out after {timeout_secs} s and was killed, with everything it started; recorded as a red {kind} ({}). Allow it longer with `navin board verify {id} --timeout SECS` or NAVIN_VERIFY_TIMEOUT=SECS",
                r.evidence.summary
            ),
            code: super::EXIT_REFUSED,
        }),
        Some(r) => Err(CliError {
            message: format!(
                "{id}: validation failed ({}); recorded as a red {kind}",
                r.evidence.summary
            ),
            code: super::EXIT_REFUSED,
        }),
    }
}

/// One command's run, ready to record.
struct OneRun {
    evidence: Evidence,
    shown: String,
    source: CommandSource,
    ok: bool,
    exit_code: Option<i32>,
    timed_out: bool,
    output_tail: String,
}

/// Runs `argv` in the checkout within the time limit and, when the step has a `base`
/// other than the head, on the base too (or from its cache), and describes the run as
/// evidence. The runners that name only failures by default are asked to name every
/// test, on both sides, so a test the change repaired can be named; the argv that ran
/// is the one recorded.
#[allow(clippy::too_many_arguments)]
fn run_one(
    tree: &WorkTree,
    before: &Checkout,
    kind: EvidenceKind,
    argv: Vec<String>,
    source: CommandSource,
    timeout_secs: u64,
    base: Option<(&BaseRuns<'_>, &str)>,
    notes: &mut Vec<String>,
) -> Result<OneRun, CliError> {
    let argv = navin_runner::results::listing_args(&argv).unwrap_or(argv);
    let started_at = Utc::now();
    let clock = Instant::now();
    let (run, unstarted) = match run_bounded(&argv, tree.root(), Duration::from_secs(timeout_secs))
    {
        Ok(run) => (run, None),
        // A program that cannot be started (not installed, say) is a red run of this
        // command, recorded with the runs before it, not an error that throws them away.
        Err(RunError::Spawn { program, source }) => {
            let why = if source.kind() == std::io::ErrorKind::NotFound {
                format!("{program} is not installed (not found on PATH)")
            } else {
                format!("{program} could not be started: {source}")
            };
            let ran = navin_runner::Ran {
                stdout: Vec::new(),
                stderr: Vec::new(),
                output: format!("navin: {why}\n").into_bytes(),
                exit_code: None,
                timed_out: false,
            };
            (ran, Some(why))
        }
        Err(e) => return Err(CliError::usage(e.to_string())),
    };
    let duration_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
    let finished_at = Utc::now();
    let after = tree.checkout()?;
    if after.head != before.head {
        return Err(CliError::usage(format!(
            "HEAD moved from {} to {} while the command ran; nothing was recorded",
            before.head, after.head
        )));
    }
    let timed_out = run.timed_out;
    let output_sha256 = hex::encode(Sha256::digest(&run.output));
    let text = String::from_utf8_lossy(&run.output);
    let output_tail = keep(&text);
    let exit_code = run.exit_code;
    let baseline = match base {
        Some((runs, base)) if !timed_out => {
            match runs.run(tree.repo(), base, &argv, Duration::from_secs(timeout_secs)) {
                Ok(on_base) => Some(baseline::hold(
                    navin_runner::results::parse(&text).as_ref(),
                    &on_base,
                )),
                Err(e) => {
                    notes.push(format!(
                        "`{}` was not run on the step's base, so its verdict is its exit code alone: {e}",
                        argv.join(" ")
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let shown = argv.join(" ");
    let exit = match (exit_code, unstarted) {
        (_, Some(why)) => format!("did not run: {why}"),
        _ if timed_out => format!("timed out after {timeout_secs} s"),
        (Some(c), None) => format!("exited {c}"),
        (None, None) => "was killed by a signal".to_owned(),
    };
    let against = baseline
        .as_ref()
        .map(baseline::describe)
        .unwrap_or_default();
    let record = RunRecord {
        command: argv,
        source,
        exit_code,
        started_at,
        finished_at,
        duration_ms,
        output_sha256,
        output_tail: output_tail.clone(),
        head: before.head.clone(),
        dirty: before.dirty,
        timed_out,
        baseline,
    };
    let ok = record.passed();
    let mut evidence = Evidence::run(
        kind,
        ok,
        format!(
            "`{}` {exit} in {:.1} s at {}{}{against}",
            navin_domain::render::text::truncate_chars(&shown, 200),
            duration_ms as f64 / 1000.0,
            &before.head[..before.head.len().min(12)],
            if before.dirty { " (dirty tree)" } else { "" }
        ),
    );
    evidence.head_sha = Some(before.head.clone());
    evidence.run = Some(record);
    Ok(OneRun {
        evidence,
        shown,
        source,
        ok,
        exit_code,
        timed_out,
        output_tail,
    })
}
