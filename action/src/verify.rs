//! `verify` mode: a plan stage's verification commands run on its pull request, so the job (named `navin/verify`) is the check that stage needs green.
//!
//! The step is the pull request's (`Navin-Step:` line, else its `navin/<step>-…` branch),
//! or the `step` input. Its commands come from the ledger, written when an approved plan
//! became the mission, never from the pull request; they run in the checkout with no
//! shell, one after another, each within the time limit, the same runner as
//! `navin board verify`, and, as there, once more on the step's base (its plan's commit,
//! else the pull request's base) when the checkout has it: a command fails the job, and
//! so the check, only for what fails on the head and not on the base.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use navin_runner::baseline::{self, BaseRuns};

use crate::commands;
use crate::error::ActionError;
use crate::run::Run;

/// Seconds one command may run (`NAVIN_VERIFY_TIMEOUT`), as `navin board verify` allows.
pub const DEFAULT_TIMEOUT_SECS: u64 = 1800;

/// One command's outcome, for the log and the job summary.
struct Outcome {
    command: String,
    ok: bool,
    how: String,
    tail: String,
}

pub fn verify(run: &Run<'_>) -> Result<(), ActionError> {
    let (_access, ledger) = run.read()?;
    let Some(ledger) = ledger else {
        println!(
            "{}",
            commands::notice("no mission yet: there is no stage to verify")
        );
        return Ok(());
    };
    let step = match run.env.step.clone() {
        Some(step) => Some(step),
        None => pull_request_step(run, &ledger.board)?,
    };
    let Some(step) = step else {
        println!(
            "{}",
            commands::notice(
                "this pull request names no step (no `Navin-Step:` line, no `navin/<step>-…` branch): nothing to verify"
            )
        );
        return Ok(());
    };
    let Some(task) = ledger.board.task(&step) else {
        return Err(ActionError::Step(format!(
            "the pull request names step {step:?}, which is not on the board"
        )));
    };
    if task.commands.is_empty() {
        println!(
            "{}",
            commands::notice(&match task.acceptance.as_deref() {
                Some(what) if task.validation == navin_ledger::Validation::Manual => format!(
                    "{step} is manual: its verification is for a person to judge ({what}); nothing to run"
                ),
                _ => format!("{step} has no verification commands: nothing to verify"),
            })
        );
        return Ok(());
    }
    let timeout = Duration::from_secs(timeout_secs(run)?);
    let checkout = workspace_head(&run.env.workspace);
    if let Err(why) = &checkout {
        println!("{}", commands::notice(why));
    }
    // The commit the step started from (its plan's), else the pull request's base.
    let base = checkout.as_ref().ok().and_then(|(repo, head)| {
        let base = task.base.clone().or_else(|| pull_request_base(run))?;
        (base != *head).then_some((repo, base))
    });
    // No key and no cache here: each job runs on a fresh machine.
    let base_runs = checkout
        .as_ref()
        .ok()
        .map(|(repo, _)| BaseRuns::new(repo.path(), &run.env.workspace, None, ""));
    if let Some(runs) = &base_runs {
        runs.sweep();
    }
    let mut outcomes = Vec::new();
    for line in &task.commands {
        let argv = shlex::split(line).filter(|a| !a.is_empty()).ok_or_else(|| {
            ActionError::Step(format!(
                "{step}'s command {line:?} cannot be split into words (an unclosed quote?); fix the plan"
            ))
        })?;
        println!("::group::{step}: {line}");
        // Nothing runs that can never pass, or that would rewrite the tree it judges.
        let argv = match navin_runner::checks::prepare(&argv, run.env.workspace.as_path()) {
            Ok(argv) => argv,
            Err(e) => {
                println!("::endgroup::");
                return Err(ActionError::Step(format!(
                    "{step}'s command cannot run: {e}; fix the plan's verification"
                )));
            }
        };
        let argv = navin_runner::results::listing_args(&argv).unwrap_or(argv);
        let against = base
            .as_ref()
            .zip(base_runs.as_ref())
            .map(|((repo, b), runs)| (runs, *repo, b.as_str()));
        let outcome = run_one(&argv, line, &run.env.workspace, timeout, against);
        println!("{}", outcome.tail);
        println!("::endgroup::");
        println!("{line}: {}", outcome.how);
        outcomes.push(outcome);
    }
    let summary = summary(&step, &outcomes);
    match &run.env.step_summary {
        Some(path) => commands::append(path, &summary)?,
        None => print!("{summary}"),
    }
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.ok)
        .map(|o| o.command.as_str())
        .collect();
    run.outputs(&[("step", step.clone())])?;
    if failed.is_empty() {
        return Ok(());
    }
    Err(ActionError::Step(format!(
        "{step}'s verification failed: {}",
        failed.join("; ")
    )))
}

/// The step the event's pull request works on, if any.
fn pull_request_step(
    run: &Run<'_>,
    board: &navin_ledger::model::Board,
) -> Result<Option<String>, ActionError> {
    if !run.env.event_name.starts_with("pull_request") {
        return Err(ActionError::Step(format!(
            "verify mode runs on pull_request events (or with the `step` input); this is {:?}",
            run.env.event_name
        )));
    }
    let path = run
        .env
        .event_path
        .as_deref()
        .ok_or(ActionError::MissingEnv("GITHUB_EVENT_PATH"))?;
    let text = std::fs::read_to_string(path).map_err(|e| ActionError::Payload {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let payload: Value = serde_json::from_str(&text).map_err(|e| ActionError::Payload {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let pr = &payload["pull_request"];
    let body = pr["body"].as_str().unwrap_or_default();
    let head_ref = pr["head"]["ref"].as_str().unwrap_or_default();
    Ok(navin_domain::evidence::step_from_pr_in(
        body, head_ref, board,
    ))
}

fn timeout_secs(run: &Run<'_>) -> Result<u64, ActionError> {
    match run.env.verify_timeout.as_deref() {
        None => Ok(DEFAULT_TIMEOUT_SECS),
        Some(text) => text.parse::<u64>().ok().filter(|&s| s > 0).ok_or_else(|| {
            ActionError::Step(format!(
                "NAVIN_VERIFY_TIMEOUT must be a whole number of seconds above 0, not {text:?}"
            ))
        }),
    }
}

/// The workspace's repository and the commit checked out in it; `None` (and the job
/// judges by exit codes, saying why) when the workspace is no git checkout.
fn workspace_head(dir: &Path) -> Result<(git2::Repository, String), String> {
    let repo = git2::Repository::open(dir).map_err(|e| {
        format!(
            "{} is not a git checkout ({}), so nothing ran on the step's base",
            dir.display(),
            e.message()
        )
    })?;
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map(|c| c.id().to_string())
        .map_err(|e| format!("the checkout has no commit checked out ({})", e.message()))?;
    Ok((repo, head))
}

/// The event's pull request base commit, when the event is a pull request's.
fn pull_request_base(run: &Run<'_>) -> Option<String> {
    let path = run.env.event_path.as_deref()?;
    let payload: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    payload
        .pointer("/pull_request/base/sha")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Runs `argv` on the head and, with `against`, on the base too; red only for what the
/// head breaks (see [`navin_ledger::model::run_passes`]).
fn run_one(
    argv: &[String],
    line: &str,
    dir: &Path,
    timeout: Duration,
    against: Option<(&BaseRuns<'_>, &git2::Repository, &str)>,
) -> Outcome {
    let clock = Instant::now();
    match navin_runner::run_bounded(argv, dir, timeout) {
        Ok(ran) => {
            let secs = clock.elapsed().as_secs_f64();
            let text = String::from_utf8_lossy(&ran.output);
            let (held, note) = match against {
                Some((runs, repo, base)) if !ran.timed_out => match runs.run(repo, base, argv, timeout) {
                    Ok(on_base) => {
                        let held = baseline::hold(navin_runner::results::parse(&text).as_ref(), &on_base);
                        let said = baseline::describe(&held);
                        (Some(held), said)
                    }
                    Err(e) => (
                        None,
                        format!("; not run on the base, so judged by its exit code: {e} (check out with `fetch-depth: 0` to compare)"),
                    ),
                },
                _ => (None, String::new()),
            };
            let how = match ran.exit_code {
                _ if ran.timed_out => format!(
                    "timed out after {} s and was killed, with everything it started",
                    timeout.as_secs()
                ),
                Some(0) => format!("passed in {secs:.1} s"),
                Some(code) => format!("exited {code} after {secs:.1} s"),
                None => "was killed by a signal".to_owned(),
            };
            Outcome {
                command: line.to_owned(),
                ok: navin_ledger::model::run_passes(ran.exit_code, ran.timed_out, held.as_ref()),
                how: format!("{how}{note}"),
                // The failing tests and the first failure first, then the last lines.
                tail: navin_runner::keep(&text),
            }
        }
        Err(e) => Outcome {
            command: line.to_owned(),
            ok: false,
            how: e.to_string(),
            tail: String::new(),
        },
    }
}

/// The job summary: one row per command, the output's tail of each that failed.
fn summary(step: &str, outcomes: &[Outcome]) -> String {
    let mut out = format!("## Navin verify: {step}\n\n| Command | Result |\n| --- | --- |\n");
    for o in outcomes {
        let mark = if o.ok { "✅" } else { "❌" };
        out.push_str(&format!(
            "| `{}` | {mark} {} |\n",
            o.command.replace('|', "\\|").replace('`', "'"),
            o.how.replace('|', "\\|")
        ));
    }
    for o in outcomes.iter().filter(|o| !o.ok && !o.tail.is_empty()) {
        out.push_str(&format!(
            "\n<details><summary>{}</summary>\n\n```text\n{}\n```\n</details>\n",
            o.command.replace('<', "&lt;"),
            o.tail.replace("```", "'''")
        ));
    }
    out
}
