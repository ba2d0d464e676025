//! The command source: runs a configured program (no shell) that prints a plan on stdout, with a timeout and bounded output.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use navin_ledger::plan::PlanError;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::config::ExternalConfig;
use super::env::ENV_FEEDBACK;
use super::error::{excerpt, ExternalError};
use super::summary::RepoSummary;

/// Enough stderr to explain a failure; the rest is read and dropped so the
/// program never blocks on a full pipe.
const STDERR_KEEP_BYTES: usize = 16 * 1024;
const STDERR_EXCERPT_CHARS: usize = 600;

/// One configured plan command. Each [`Self::ask`] is a fresh run; the
/// second run learns why the first plan was rejected through
/// `NAVIN_PLAN_FEEDBACK` and the `"feedback"` key of its stdin JSON.
#[derive(Debug)]
pub(crate) struct CommandSource {
    /// As configured, for messages and the origin name.
    program: String,
    resolved: PathBuf,
    args: Vec<String>,
    workdir: PathBuf,
    request: String,
    summary: serde_json::Value,
    timeout: Duration,
    max_output_bytes: usize,
    feedback: Option<String>,
}

impl CommandSource {
    pub(crate) fn new(
        cfg: &ExternalConfig,
        workdir: &Path,
        request: &str,
        summary: &RepoSummary,
    ) -> Result<Self, ExternalError> {
        let argv = cfg.command_line()?;
        let program = argv[0].clone();
        let summary = serde_json::to_value(summary)
            .map_err(|e| ExternalError::Runtime(format!("cannot encode the summary: {e}")))?;
        Ok(Self {
            resolved: resolve_program(&program),
            program,
            args: argv[1..].to_vec(),
            workdir: workdir.to_path_buf(),
            request: request.to_owned(),
            summary,
            timeout: cfg.timeout,
            max_output_bytes: cfg.max_output_bytes,
            feedback: None,
        })
    }

    /// `command:<program>`, the name plans from this source are recorded under.
    pub(crate) fn origin(&self) -> String {
        format!("command:{}", self.program)
    }

    pub(crate) fn add_feedback(&mut self, error: &PlanError) {
        self.feedback = Some(error.to_string());
    }

    /// Runs the command once and returns its stdout.
    pub(crate) async fn ask(&mut self) -> Result<String, ExternalError> {
        let mut input = serde_json::json!({
            "request": self.request,
            "repository": self.summary,
        });
        if let Some(feedback) = &self.feedback {
            input["feedback"] = serde_json::Value::String(feedback.clone());
        }
        let input = input.to_string().into_bytes();

        let mut cmd = tokio::process::Command::new(&self.resolved);
        cmd.args(&self.args)
            .arg(&self.request)
            .current_dir(&self.workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match &self.feedback {
            Some(feedback) => cmd.env(ENV_FEEDBACK, feedback),
            None => cmd.env_remove(ENV_FEEDBACK),
        };
        // Its own process group, so a timeout also stops whatever it started.
        #[cfg(unix)]
        cmd.process_group(0);

        let mut child = cmd.spawn().map_err(|e| ExternalError::CommandStart {
            program: self.program.clone(),
            reason: start_failure(&e),
        })?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let max_out = self.max_output_bytes;

        let run = async {
            let feed = async {
                if let Some(mut stdin) = stdin {
                    // A command that ignores stdin may exit before reading it.
                    let _ = stdin.write_all(&input).await;
                    let _ = stdin.shutdown().await;
                }
            };
            let (_, out, err) = tokio::join!(
                feed,
                read_capped(stdout, max_out, false),
                read_capped(stderr, STDERR_KEEP_BYTES, true)
            );
            if matches!(out, Ok((_, true))) {
                let _ = child.start_kill();
            }
            (out, err, child.wait().await)
        };
        let Ok((out, err, status)) = tokio::time::timeout(self.timeout, run).await else {
            kill_group(pid);
            let _ = child.kill().await;
            return Err(ExternalError::Timeout {
                what: format!("the plan command `{}`", self.program),
                after: self.timeout,
            });
        };

        let io_failure = |e: io::Error| {
            ExternalError::Runtime(format!(
                "talking to the plan command `{}`: {e}",
                self.program
            ))
        };
        let (stdout, overflow) = out.map_err(io_failure)?;
        let (stderr, _) = err.map_err(io_failure)?;
        let status = status.map_err(io_failure)?;
        if overflow {
            return Err(ExternalError::OutputTooLarge {
                origin: self.origin(),
                limit: self.max_output_bytes,
            });
        }
        if !status.success() {
            return Err(ExternalError::CommandFailed {
                program: self.program.clone(),
                status: status.to_string(),
                stderr_excerpt: excerpt(
                    &String::from_utf8_lossy(&stderr),
                    STDERR_EXCERPT_CHARS,
                    None,
                ),
            });
        }
        let text = String::from_utf8(stdout).map_err(|_| ExternalError::NotUtf8 {
            program: self.program.clone(),
        })?;
        if text.trim().is_empty() {
            return Err(ExternalError::EmptyReply {
                origin: self.origin(),
            });
        }
        Ok(text)
    }
}

/// A relative path with a directory part (`./plan.sh`, `tools/plan.py`)
/// means the caller's current directory, where the user typed it, not the
/// repository the command runs in; a bare name is looked up on `PATH`.
fn resolve_program(program: &str) -> PathBuf {
    let path = Path::new(program);
    if path.is_relative() && path.components().count() > 1 {
        if let Ok(cwd) = std::env::current_dir() {
            return cwd.join(path);
        }
    }
    path.to_path_buf()
}

fn start_failure(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => "not found (is it installed and on PATH?)".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied (is it executable?)".to_owned(),
        _ => error.to_string(),
    }
}

/// Reads up to `limit` bytes. Past the limit it either keeps draining and
/// discarding (`drain`, for stderr) or stops and reports the overflow (for
/// stdout, whose excess makes the run fail anyway).
async fn read_capped<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    limit: usize,
    drain: bool,
) -> io::Result<(Vec<u8>, bool)> {
    let Some(mut pipe) = pipe else {
        return Ok((Vec::new(), false));
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            return Ok((kept, false));
        }
        let room = limit.saturating_sub(kept.len());
        if n > room {
            kept.extend_from_slice(&buf[..room]);
            if !drain {
                return Ok((kept, true));
            }
        } else {
            kept.extend_from_slice(&buf[..n]);
        }
    }
}

#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    use nix::sys::signal::{killpg, Signal};
    use nix::unistd::Pid;
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // The group may already be gone; nothing to do then.
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: Option<u32>) {}
