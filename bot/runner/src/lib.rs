//! Runs a step's validation command the way Navin trusts: no shell, stdin empty, output drained, a time limit that kills the whole process group, interrupts passed on.
//!
//! Shared by `navin board verify` (a checkout on a person's or agent's machine) and
//! `navin-action --mode verify` (a pull request's checkout in CI), so a command means
//! the same wherever it proves a step.

pub mod baseline;
pub mod checks;
pub mod results;

use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use rustix::process::{kill_process_group, test_kill_process_group, Pid, Signal};

/// Lines of output kept of a run, and their bound in bytes.
pub const TAIL_LINES: usize = 40;
pub const TAIL_BYTES: usize = 4000;

/// Why a command could not be run or watched to its end.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("there is no command to run")]
    Empty,
    #[error("cannot run {program:?}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("cannot watch {program:?}: {source}")]
    Watch {
        program: String,
        source: std::io::Error,
    },
    #[error("waiting for {program:?}: {source}")]
    Wait {
        program: String,
        source: std::io::Error,
    },
    #[error("lost track of {program:?}")]
    Lost { program: String },
}

/// What a bounded run of a command left behind.
#[derive(Debug)]
pub struct Ran {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Stdout and stderr together, chunk by chunk in the order they were read, so a
    /// failure's message stays beside the test line that printed it (two separate
    /// streams lose that).
    pub output: Vec<u8>,
    /// `None` when a signal ended the command, or the time limit did.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
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
pub fn run_bounded(argv: &[String], dir: &Path, timeout: Duration) -> Result<Ran, RunError> {
    let (program, args) = argv.split_first().ok_or(RunError::Empty)?;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| RunError::Spawn {
            program: program.clone(),
            source: e,
        })?;
    let deadline = Instant::now().checked_add(timeout);
    // With `process_group(0)` the group's id is the command's pid.
    let group = Pid::from_child(&child);
    RUNNING_GROUP.store(group.as_raw_nonzero().get(), Ordering::SeqCst);
    forward_interrupts();
    let cannot_watch = |e: std::io::Error| {
        let _ = kill_process_group(group, Signal::KILL);
        RunError::Watch {
            program: program.clone(),
            source: e,
        }
    };
    let (tx, rx) = mpsc::channel();
    let combined = Arc::new(Mutex::new(Vec::new()));
    let stdout = drain(child.stdout.take(), &combined, tx.clone()).map_err(cannot_watch)?;
    let stderr = drain(child.stderr.take(), &combined, tx.clone()).map_err(cannot_watch)?;
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
        Some(Err(e)) => {
            return Err(RunError::Wait {
                program: program.clone(),
                source: e,
            })
        }
        None => {
            return Err(RunError::Lost {
                program: program.clone(),
            })
        }
    };
    let take =
        |b: &Mutex<Vec<u8>>| std::mem::take(&mut *b.lock().unwrap_or_else(PoisonError::into_inner));
    Ok(Ran {
        stdout: take(&stdout),
        stderr: take(&stderr),
        output: take(&combined),
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
/// so output is kept even from a pipe that never closes) and into `combined`, shared
/// with the other pipe's thread, then reports [`Event::Closed`].
fn drain(
    pipe: Option<impl Read + Send + 'static>,
    combined: &Arc<Mutex<Vec<u8>>>,
    done: Sender<Event>,
) -> std::io::Result<Arc<Mutex<Vec<u8>>>> {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let Some(mut pipe) = pipe else {
        let _ = done.send(Event::Closed);
        return Ok(buf);
    };
    let into = buf.clone();
    let both = combined.clone();
    std::thread::Builder::new()
        .name("verify-output".to_owned())
        .spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        // The combined lock is held across both appends, so the two
                        // buffers never disagree about what has been read.
                        let mut both = both.lock().unwrap_or_else(PoisonError::into_inner);
                        both.extend_from_slice(&chunk[..n]);
                        into.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .extend_from_slice(&chunk[..n]);
                    }
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
pub fn tail(text: &str) -> String {
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

/// At most this many failing tests are named at the head of [`keep`]'s excerpt, in at
/// most [`KEEP_ID_BYTES`], so the first failure's message and the tail still fit.
pub const KEEP_IDS: usize = 20;
pub const KEEP_ID_BYTES: usize = 1200;

/// A bounded excerpt of a run's output (at most [`TAIL_BYTES`]) for the record. The
/// tail alone loses what a long run printed early, often the one failing test among
/// thousands that passed; so when the output names failures, the excerpt opens with
/// them (one per line, then `… and N more`) and the first failure's message, then
/// as much of the tail as fits. Otherwise it is [`tail`].
pub fn keep(output: &str) -> String {
    let Some(report) = results::parse(output).filter(|r| !r.failed.is_empty()) else {
        return tail(output);
    };
    let mut head = String::new();
    let mut shown = 0;
    for id in &report.failed {
        if shown == KEEP_IDS || head.len() + id.len() >= KEEP_ID_BYTES {
            break;
        }
        head.push_str(id);
        head.push('\n');
        shown += 1;
    }
    if shown < report.failed.len() {
        head.push_str(&format!("… and {} more\n", report.failed.len() - shown));
    }
    if let Some(first) = &report.first_failure {
        head.push('\n');
        head.push_str(first);
        head.push('\n');
    }
    const GAP: &str = "\n…\n";
    let mut cut = TAIL_BYTES.min(head.len());
    while !head.is_char_boundary(cut) {
        cut -= 1;
    }
    head.truncate(cut);
    let rest = tail(output);
    let room = TAIL_BYTES.saturating_sub(head.len() + GAP.len());
    if room == 0 || rest.is_empty() {
        return head;
    }
    let mut from = rest.len().saturating_sub(room);
    while !rest.is_char_boundary(from) {
        from += 1;
    }
    let mut kept = &rest[from..];
    if from > 0 {
        // Start on a whole line when one fits.
        if let Some((_, whole)) = kept.split_once('\n') {
            kept = whole;
        }
    }
    format!("{head}{GAP}{kept}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Ran {
        let argv = ["sh", "-c", script].map(str::to_owned);
        run_bounded(&argv, Path::new("."), Duration::from_secs(20)).expect("sh runs")
    }

    #[test]
    fn output_interleaves_stdout_and_stderr_in_the_order_they_were_written() {
        let ran = sh(
            "echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c; sleep 0.05; \
             echo d >&2; sleep 0.05; echo e",
        );
        assert_eq!(String::from_utf8_lossy(&ran.output), "a\nb\nc\nd\ne\n");
        assert_eq!(String::from_utf8_lossy(&ran.stdout), "a\nc\ne\n");
        assert_eq!(String::from_utf8_lossy(&ran.stderr), "b\nd\n");
        assert_eq!(ran.exit_code, Some(0));
        assert!(!ran.timed_out);
    }

    #[test]
    fn output_keeps_everything_both_streams_printed() {
        let ran = sh("for i in $(seq 1 2000); do echo out$i; echo err$i >&2; done; exit 3");
        assert_eq!(ran.output.len(), ran.stdout.len() + ran.stderr.len());
        assert_eq!(ran.exit_code, Some(3));
    }

    #[test]
    fn output_of_a_timed_out_command_holds_what_it_printed_before_the_kill() {
        let argv = ["sh", "-c", "echo started; echo warn >&2; sleep 30"].map(str::to_owned);
        let ran = run_bounded(&argv, Path::new("."), Duration::from_millis(300)).expect("runs");
        assert!(ran.timed_out);
        let text = String::from_utf8_lossy(&ran.output);
        assert!(text.contains("started") && text.contains("warn"), "{text}");
    }

    #[test]
    fn tail_keeps_the_last_lines_within_the_byte_bound() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let t = tail(&text);
        assert!(t.starts_with("line 60") && t.ends_with("line 99"), "{t}");
        let long = "x".repeat(10_000);
        assert_eq!(tail(&long).len(), TAIL_BYTES);
    }

    /// A 10,000-line `cargo test` run whose one failure is named on line 3.
    fn long_run() -> String {
        let mut out = String::from("running 10001 tests\ntest early::breaks ... FAILED\n");
        for i in 0..10_000 {
            out.push_str(&format!("test many::case_{i} ... ok\n"));
        }
        out.push_str(
            "\nfailures:\n\n---- early::breaks stdout ----\n\
             thread 'early::breaks' panicked at src/early.rs:4:5:\n\
             assertion failed: parsed.is_some()\n\n\
             failures:\n    early::breaks\n\n\
             test result: FAILED. 10000 passed; 1 failed; 0 ignored; 0 measured; \
             0 filtered out; finished in 2.31s\n",
        );
        out
    }

    #[test]
    fn keep_names_a_failing_test_printed_early_in_a_long_output() {
        let out = long_run();
        assert!(out.lines().count() > 10_000);
        assert!(!tail(&out).contains("test early::breaks"));
        let kept = keep(&out);
        assert!(kept.len() <= TAIL_BYTES, "{}", kept.len());
        assert!(kept.starts_with("early::breaks\n"), "{kept}");
        assert!(
            kept.contains("assertion failed: parsed.is_some()"),
            "{kept}"
        );
        assert!(kept.ends_with("finished in 2.31s"), "{kept}");
    }

    #[test]
    fn keep_lists_at_most_twenty_failures_then_how_many_more() {
        let mut out = String::new();
        for i in 0..50 {
            out.push_str(&format!(
                "--- FAIL: TestCase{i:02} (0.00s)\n    case_test.go:9: wrong\n"
            ));
        }
        out.push_str("FAIL\nFAIL\texample.com/cases\t0.01s\nFAIL\n");
        let kept = keep(&out);
        assert!(kept.len() <= TAIL_BYTES);
        let lines: Vec<&str> = kept.lines().collect();
        assert_eq!(lines[0], "example.com/cases.TestCase00");
        assert_eq!(lines[KEEP_IDS - 1], "example.com/cases.TestCase19");
        assert_eq!(lines[KEEP_IDS], "… and 30 more");
        assert!(kept.ends_with("FAIL"), "{kept}");
    }

    #[test]
    fn keep_is_the_tail_when_nothing_failed_or_nothing_is_recognised() {
        let passing = "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; \
                       0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert_eq!(keep(passing), tail(passing));
        let noise: String = (0..500).map(|i| format!("make[1]: step {i}\n")).collect();
        assert_eq!(keep(&noise), tail(&noise));
    }

    #[test]
    fn keep_stays_within_the_bound_with_huge_ids_and_messages() {
        let mut out = String::new();
        for i in 0..30 {
            out.push_str(&format!("test t{i}_{} ... FAILED\n", "x".repeat(400)));
        }
        out.push_str(&format!(
            "---- t0 stdout ----\n{}\n\nfailures:\n",
            "é".repeat(3000)
        ));
        let kept = keep(&out);
        assert!(kept.len() <= TAIL_BYTES, "{}", kept.len());
        assert!(kept.starts_with("t0_xxx"), "{kept}");
    }
}
