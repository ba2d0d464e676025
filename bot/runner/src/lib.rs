//! Runs a step's validation command the way Navin trusts: no shell, stdin empty, output drained, a time limit that kills the whole process group, interrupts passed on.
//!
//! Shared by `navin board verify` (a checkout on a person's or agent's machine) and
//! `navin-action --mode verify` (a pull request's checkout in CI), so a command means
//! the same wherever it proves a step.

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
}
