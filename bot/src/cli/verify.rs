//! `navin board verify`: run a step's validation command in the checkout and record the run.
//!
//! This is how a coding agent working locally proves a step: it cannot hand in evidence,
//! so Navin runs the command itself (no shell), and records what ran, on which commit,
//! whether the tree was clean, how it ended and a digest of the output. Only such a run,
//! green, for the checkout's current `HEAD` of a clean tree, lets the agent mark the
//! step done.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use chrono::Utc;
use navin_ledger::model::{CommandSource, Evidence, EvidenceKind, RunRecord, Validation};
use navin_ledger::ops::{Checkout, Operation};
use navin_ledger::store::Store;
use sha2::{Digest as _, Sha256};

use super::CliError;

/// Lines of output kept on the ledger, and their bound in bytes.
const TAIL_LINES: usize = 40;
const TAIL_BYTES: usize = 4000;

/// The repository's working tree: where commands run and `HEAD` is read.
pub(super) struct WorkTree {
    repo: git2::Repository,
    root: PathBuf,
}

impl WorkTree {
    pub(super) fn discover(path: &Path) -> Result<Self, CliError> {
        let repo = git2::Repository::discover(path).map_err(|e| {
            CliError::usage(format!(
                "{}: not inside a git repository ({})",
                path.display(),
                e.message()
            ))
        })?;
        let root = repo
            .workdir()
            .ok_or_else(|| {
                CliError::usage(format!(
                    "{}: a bare repository has no checkout to verify in",
                    path.display()
                ))
            })?
            .to_path_buf();
        Ok(Self { repo, root })
    }

    /// `HEAD` and whether tracked or untracked (not ignored) files differ from it.
    pub(super) fn checkout(&self) -> Result<Checkout, CliError> {
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map_err(|e| {
                CliError::usage(format!(
                    "the checkout has no commit checked out ({}); commit first",
                    e.message()
                ))
            })?
            .id()
            .to_string();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .include_ignored(false)
            .recurse_untracked_dirs(true);
        let statuses = self
            .repo
            .statuses(Some(&mut opts))
            .map_err(|e| CliError::usage(format!("reading the checkout's status: {e}")))?;
        let dirty = statuses.iter().any(|s| s.status() != git2::Status::CURRENT);
        Ok(Checkout { head, dirty })
    }

    /// `.github/navin.yml` of the checkout, or defaults when there is none.
    fn repo_config(&self) -> Result<navin_engine::config::RepoConfig, CliError> {
        let path = self.root.join(".github/navin.yml");
        match std::fs::read_to_string(&path) {
            Ok(text) => navin_engine::config::parse_repo_config(&text)
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
            Err(e) => Err(CliError::usage(format!("reading {}: {e}", path.display()))),
        }
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

/// Runs step `id`'s validation (or `given`) and records it. A red run is recorded too,
/// and then reported as a refusal (exit 1) so scripts can tell.
pub(super) fn verify(
    store: &Store,
    tree: &WorkTree,
    ctx: navin_ledger::Ctx,
    id: &str,
    given: &[String],
    json: bool,
) -> Result<(), CliError> {
    let ledger = super::show::load(store)?;
    let task = ledger.board.task(id).ok_or_else(|| {
        CliError::from(navin_ledger::store::StoreError::Rule(
            navin_ledger::RuleError::UnknownStep { id: id.to_owned() },
        ))
    })?;
    let config = tree.repo_config()?;
    let configured = task
        .command
        .clone()
        .map(|c| (c, CommandSource::Step))
        .or_else(|| {
            config
                .validation
                .commands
                .for_validation(task.validation)
                .map(|c| (c.to_owned(), CommandSource::Config))
        });
    let (argv, source) = if given.is_empty() {
        let Some((line, source)) = configured else {
            return Err(CliError::usage(format!(
                "step {id} has no validation command: pass one after `--`, or set validation.commands.{} in .github/navin.yml",
                run_kind(task.validation).as_str().trim_end_matches("_run")
            )));
        };
        let argv = shlex::split(&line).filter(|a| !a.is_empty()).ok_or_else(|| {
            CliError::usage(format!(
                "step {id}'s validation command {line:?} is not a valid command line (unbalanced quotes?)"
            ))
        })?;
        (argv, source)
    } else {
        if ctx.actor.is_agent() {
            if let Some((line, _)) = configured {
                return Err(CliError {
                    message: format!(
                        "{} runs the step's own validation command ({line:?}), not one of its choosing: run `navin board verify {id}` without `--`",
                        ctx.actor
                    ),
                    code: super::EXIT_REFUSED,
                });
            }
        }
        (given.to_vec(), CommandSource::Given)
    };

    let before = tree.checkout()?;
    let started_at = Utc::now();
    let clock = Instant::now();
    let output = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(&tree.root)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| CliError::usage(format!("cannot run {:?}: {e}", argv[0])))?;
    let duration_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
    let finished_at = Utc::now();
    let after = tree.checkout()?;
    if after.head != before.head {
        return Err(CliError::usage(format!(
            "HEAD moved from {} to {} while the command ran; nothing was recorded",
            before.head, after.head
        )));
    }
    let mut combined = output.stdout;
    combined.extend_from_slice(&output.stderr);
    let output_sha256 = hex::encode(Sha256::digest(&combined));
    let output_tail = tail(&String::from_utf8_lossy(&combined));
    let exit_code = output.status.code();
    let ok = exit_code == Some(0);
    let kind = run_kind(task.validation);
    let shown = argv.join(" ");
    let exit = exit_code.map_or_else(
        || "was killed by a signal".to_owned(),
        |c| format!("exited {c}"),
    );
    let mut evidence = Evidence::run(
        kind,
        ok,
        format!(
            "`{}` {exit} in {:.1} s at {}{}",
            navin_engine::render::text::truncate_chars(&shown, 200),
            duration_ms as f64 / 1000.0,
            &before.head[..before.head.len().min(12)],
            if before.dirty { " (dirty tree)" } else { "" }
        ),
    );
    evidence.head_sha = Some(before.head.clone());
    evidence.run = Some(RunRecord {
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
    });
    let summary = evidence.summary.clone();
    let done = store.transact(
        &Operation::RecordRun {
            step: id.to_owned(),
            evidence,
        },
        &ctx.with_checkout(before.clone()),
    )?;
    let version = match done {
        navin_ledger::store::Committed::Written { version, .. }
        | navin_ledger::store::Committed::AlreadyApplied { version } => version,
    };
    if json {
        println!(
            "{}",
            serde_json::json!({
                "step": id,
                "kind": kind,
                "ok": ok,
                "exit_code": exit_code,
                "head": before.head,
                "dirty": before.dirty,
                "source": source.as_str(),
                "summary": summary,
                "version": version,
            })
        );
    } else {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{output_tail}");
        let _ = writeln!(
            out,
            "v{version}: {id} {kind} {}: {summary}",
            if ok { "passed" } else { "failed" }
        );
        if before.dirty {
            let _ = writeln!(
                out,
                "note: the tree had uncommitted changes, so this run cannot close the step; commit and verify again"
            );
        }
    }
    if ok {
        Ok(())
    } else {
        Err(CliError {
            message: format!("{id}: validation failed ({summary}); recorded as a red {kind}"),
            code: super::EXIT_REFUSED,
        })
    }
}

/// The last [`TAIL_LINES`] lines of `text`, at most [`TAIL_BYTES`] bytes.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(TAIL_LINES);
    let joined = lines[start..].join("\n");
    if joined.len() <= TAIL_BYTES {
        return joined;
    }
    let mut cut = joined.len() - TAIL_BYTES;
    while !joined.is_char_boundary(cut) {
        cut += 1;
    }
    joined[cut..].to_owned()
}
