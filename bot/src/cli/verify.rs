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

use std::io::{Read, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use chrono::Utc;
use navin_ledger::model::{CommandSource, Evidence, EvidenceKind, RunRecord, Validation};
use navin_ledger::ops::{Checkout, Operation};
use navin_ledger::store::Store;
use rustix::process::{kill_process_group, test_kill_process_group, Pid, Signal};
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
        super::plan_local::repo_config(&self.root)
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
    let config = tree.repo_config()?;
    let configured: Vec<(String, CommandSource)> = if task.commands.is_empty() {
        config
            .validation
            .commands
            .for_validation(task.validation)
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
            return Err(CliError::usage(format!(
                "step {id} has no validation command: pass one after `--`, or set validation.commands.{} in .github/navin.yml",
                run_kind(task.validation).as_str().trim_end_matches("_run")
            )));
        }
        configured
            .iter()
            .map(|(line, source)| {
                let argv = shlex::split(line).filter(|a| !a.is_empty()).ok_or_else(|| {
                    CliError::usage(format!(
                        "step {id}'s validation command {line:?} is not a valid command line (unbalanced quotes?)"
                    ))
                })?;
                Ok((argv, *source))
            })
            .collect::<Result<_, CliError>>()?
    } else {
        if ctx.actor.is_agent() {
            if let Some((line, _)) = configured.first() {
                return Err(CliError {
                    message: format!(
                        "{} runs the step's own validation command ({line:?}), not one of its choosing: run `navin board verify {id}` without `--`",
                        ctx.actor
                    ),
                    code: super::EXIT_REFUSED,
                });
            }
        }
        vec![(given.to_vec(), CommandSource::Given)]
    };

    let kind = run_kind(task.validation);
    let before = tree.checkout()?;
    let total = commands.len();
    let mut runs = Vec::with_capacity(total);
    for (argv, source) in commands {
        let run = run_one(tree, &before, kind, argv, source, timeout_secs)?;
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
        if before.dirty {
            let _ = writeln!(
                out,
                "note: the tree had uncommitted changes, so this run cannot close the step; commit and verify again"
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

/// Runs `argv` in the checkout within the time limit and describes it as evidence.
fn run_one(
    tree: &WorkTree,
    before: &Checkout,
    kind: EvidenceKind,
    argv: Vec<String>,
    source: CommandSource,
    timeout_secs: u64,
) -> Result<OneRun, CliError> {
    let started_at = Utc::now();
    let clock = Instant::now();
    let run = run_bounded(&argv, &tree.root, Duration::from_secs(timeout_secs))?;
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
    let mut combined = run.stdout;
    combined.extend_from_slice(&run.stderr);
    let output_sha256 = hex::encode(Sha256::digest(&combined));
    let output_tail = tail(&String::from_utf8_lossy(&combined));
    let exit_code = run.exit_code;
    let ok = exit_code == Some(0);
    let shown = argv.join(" ");
    let exit = match exit_code {
        _ if timed_out => format!("timed out after {timeout_secs} s"),
        Some(c) => format!("exited {c}"),
        None => "was killed by a signal".to_owned(),
    };
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
        timed_out,
    });
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

/// What a bounded run of a command left behind.
struct Ran {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// `None` when a signal ended the command, or the time limit did.
    exit_code: Option<i32>,
    timed_out: bool,
}

/// What the threads watching a run report.
enum Event {
    /// The command itself ended, and was reaped.
    Exited(std::io::Result<std::process::ExitStatus>),
    /// One of its output pipes reached end of file.
    Closed,
}

/// How long to wait for the output pipes once a timed-out group is dead: a process that
/// left the group may still hold them, and is not waited for.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// How long an interrupted command's group has to end before it is killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// Runs `argv` in `dir` in a process group of its own, stdin empty, stdout and stderr
/// each drained by a thread (a chatty command never blocks on a full pipe). The run is
/// over when the command has exited and both pipes are closed; when that has not
/// happened within `timeout`, the whole group (the command and whatever it started)
/// is killed and the run counts as timed out.
fn run_bounded(argv: &[String], dir: &Path, timeout: Duration) -> Result<Ran, CliError> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| CliError::usage("there is no command to run"))?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| CliError::usage(format!("cannot run {program:?}: {e}")))?;
    let deadline = Instant::now().checked_add(timeout);
    // With `process_group(0)` the group's id is the command's pid.
    let group = Pid::from_child(&child);
    RUNNING_GROUP.store(group.as_raw_nonzero().get(), Ordering::SeqCst);
    forward_interrupts();
    let cannot_watch = |e: std::io::Error| {
        let _ = kill_process_group(group, Signal::KILL);
        CliError::usage(format!("cannot watch {program:?}: {e}"))
    };
    let (tx, rx) = mpsc::channel();
    let stdout = drain(child.stdout.take(), tx.clone()).map_err(cannot_watch)?;
    let stderr = drain(child.stderr.take(), tx.clone()).map_err(cannot_watch)?;
    std::thread::Builder::new()
        .name("verify-wait".to_owned())
        .spawn(move || {
            let _ = tx.send(Event::Exited(child.wait()));
        })
        .map_err(cannot_watch)?;

    let mut status = None;
    let mut open = 2;
    let mut timed_out = false;
    // Every sender lives on a watching thread, so the channel disconnects only after
    // all three have reported.
    while status.is_none() || open > 0 {
        match next(&rx, deadline) {
            Ok(Event::Exited(s)) => status = Some(s),
            Ok(Event::Closed) => open -= 1,
            Err(RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if timed_out {
        // ESRCH (the group is gone already) is fine.
        let _ = kill_process_group(group, Signal::KILL);
        // The command is dead: reap it.
        while status.is_none() {
            match rx.recv() {
                Ok(Event::Exited(s)) => status = Some(s),
                Ok(Event::Closed) => open -= 1,
                Err(_) => break,
            }
        }
        // The pipes close with the last process holding them, normally now.
        let grace = Instant::now().checked_add(PIPE_GRACE);
        while open > 0 {
            match next(&rx, grace) {
                Ok(Event::Closed) => open -= 1,
                Ok(Event::Exited(_)) => {}
                Err(_) => break,
            }
        }
    }
    RUNNING_GROUP.store(0, Ordering::SeqCst);
    let status = match status {
        Some(Ok(status)) => status,
        Some(Err(e)) => return Err(CliError::usage(format!("waiting for {program:?}: {e}"))),
        None => return Err(CliError::usage(format!("lost track of {program:?}"))),
    };
    let take =
        |b: &Mutex<Vec<u8>>| std::mem::take(&mut *b.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(Ran {
        stdout: take(&stdout),
        stderr: take(&stderr),
        exit_code: if timed_out { None } else { status.code() },
        timed_out,
    })
}

/// The next event, waiting until `until` (forever when `None`).
fn next(rx: &Receiver<Event>, until: Option<Instant>) -> Result<Event, RecvTimeoutError> {
    match until {
        Some(t) => rx.recv_timeout(t.saturating_duration_since(Instant::now())),
        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
    }
}

/// Reads `pipe` to its end on a thread, into the returned buffer (readable at any time,
/// so output is kept even from a pipe that never closes), then reports [`Event::Closed`].
fn drain(
    pipe: Option<impl Read + Send + 'static>,
    done: Sender<Event>,
) -> std::io::Result<Arc<Mutex<Vec<u8>>>> {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let Some(mut pipe) = pipe else {
        let _ = done.send(Event::Closed);
        return Ok(buf);
    };
    let into = buf.clone();
    std::thread::Builder::new()
        .name("verify-output".to_owned())
        .spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => into
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(Event::Closed);
        })?;
    Ok(buf)
}

/// The process group of the command running now, 0 between commands.
static RUNNING_GROUP: AtomicI32 = AtomicI32::new(0);

/// In a group of its own, the command no longer gets the terminal's Ctrl-C: while one
/// runs, SIGINT, SIGTERM and SIGHUP to Navin are passed on to its group, what is left of
/// the group after [`INTERRUPT_GRACE`] is killed (a shell's background jobs ignore
/// SIGINT), and Navin ends as the signal would have ended it (nothing is recorded). One
/// watcher serves every command of a verify, so no stale one exits first.
fn forward_interrupts() {
    static WATCHING: OnceLock<()> = OnceLock::new();
    WATCHING.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("verify-signals".to_owned())
            .spawn(watch_interrupts);
    });
}

fn watch_interrupts() {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let got = runtime.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return None;
        };
        tokio::select! {
            _ = int.recv() => Some(Signal::INT),
            _ = term.recv() => Some(Signal::TERM),
            _ = hup.recv() => Some(Signal::HUP),
        }
    });
    let Some(signal) = got else { return };
    if let Some(group) = Pid::from_raw(RUNNING_GROUP.load(Ordering::SeqCst)) {
        let _ = kill_process_group(group, signal);
        let until = Instant::now() + INTERRUPT_GRACE;
        while Instant::now() < until && test_kill_process_group(group).is_ok() {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = kill_process_group(group, Signal::KILL);
    }
    std::process::exit(128 + signal.as_raw());
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
