//! Check and workflow runs as Navin observes them, read tolerantly from webhook payloads and REST responses.

use std::fmt;

use chrono::{DateTime, NaiveDateTime, Utc};
use navin_ledger::model::EvidenceKind;
use serde::{Deserialize, Deserializer};

/// GitHub Actions' app id: every check run an Actions job creates carries it.
pub const GITHUB_ACTIONS_APP_ID: u64 = 15368;

/// Which API object an observation came from; it decides the evidence kind
/// and which endpoint re-reads the run (`check-runs/{id}` or `actions/runs/{id}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    CheckRun,
    WorkflowRun,
}

impl RunKind {
    pub fn evidence_kind(self) -> EvidenceKind {
        match self {
            RunKind::CheckRun => EvidenceKind::CheckRun,
            RunKind::WorkflowRun => EvidenceKind::WorkflowRun,
        }
    }
}

/// Where a run is in its life. GitHub also reports `waiting`, `requested`
/// and `pending`; all mean "not started" and read as [`CheckStatus::Queued`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CheckStatus {
    Queued,
    InProgress,
    Completed,
}

impl CheckStatus {
    /// Anything but `in_progress` and `completed` (including values GitHub may
    /// add later) is treated as not started: it blocks, it never proves.
    pub fn parse(s: &str) -> Self {
        match s {
            "completed" => CheckStatus::Completed,
            "in_progress" => CheckStatus::InProgress,
            _ => CheckStatus::Queued,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Queued => "queued",
            CheckStatus::InProgress => "in_progress",
            CheckStatus::Completed => "completed",
        }
    }
}

impl fmt::Display for CheckStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A completed run's conclusion, with how Navin's evidence policy counts it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Conclusion {
    Success,
    Failure,
    TimedOut,
    StartupFailure,
    Cancelled,
    ActionRequired,
    Neutral,
    Skipped,
    Stale,
    /// A value this build does not know; never green.
    Other(String),
}

/// How a conclusion counts towards a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConclusionClass {
    /// Proves the check: only `success`.
    Green,
    /// The check ran on this head and did not pass: a failed attempt.
    Red,
    /// Not green, but says nothing against the code: the step waits (a
    /// re-run, an approval, a job that actually runs).
    NotGreen,
}

impl Conclusion {
    pub fn parse(s: &str) -> Self {
        match s {
            "success" => Conclusion::Success,
            "failure" => Conclusion::Failure,
            "timed_out" => Conclusion::TimedOut,
            "startup_failure" => Conclusion::StartupFailure,
            "cancelled" => Conclusion::Cancelled,
            "action_required" => Conclusion::ActionRequired,
            "neutral" => Conclusion::Neutral,
            "skipped" => Conclusion::Skipped,
            "stale" => Conclusion::Stale,
            other => Conclusion::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Conclusion::Success => "success",
            Conclusion::Failure => "failure",
            Conclusion::TimedOut => "timed_out",
            Conclusion::StartupFailure => "startup_failure",
            Conclusion::Cancelled => "cancelled",
            Conclusion::ActionRequired => "action_required",
            Conclusion::Neutral => "neutral",
            Conclusion::Skipped => "skipped",
            Conclusion::Stale => "stale",
            Conclusion::Other(s) => s,
        }
    }

    /// Only `success` is green. Red is what says the code (or the workflow
    /// the PR carries) is broken on this head, and so spends a retry:
    /// `failure`; `timed_out` (the job hung or ran past its limit);
    /// `startup_failure` (the workflow could not start, usually a broken
    /// workflow file on the PR head). Everything else is merely not green and
    /// spends nothing, because it is not the code's fault and a retry budget
    /// burnt on it would let anyone who can cancel a run pause the mission:
    /// `cancelled` (a person or a concurrency group stopped it), `action_required`
    /// (waiting for someone to approve a fork's workflow), `skipped` (the job's
    /// `if:` was false: it tested nothing, even though GitHub may show a
    /// skipped required job as passing), `neutral`, `stale` (GitHub gave up
    /// on it) and unknown values.
    pub fn class(&self) -> ConclusionClass {
        match self {
            Conclusion::Success => ConclusionClass::Green,
            Conclusion::Failure | Conclusion::TimedOut | Conclusion::StartupFailure => {
                ConclusionClass::Red
            }
            Conclusion::Cancelled
            | Conclusion::ActionRequired
            | Conclusion::Neutral
            | Conclusion::Skipped
            | Conclusion::Stale
            | Conclusion::Other(_) => ConclusionClass::NotGreen,
        }
    }
}

impl fmt::Display for Conclusion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run on one commit, as the engine saw it (from a `check_run` or
/// `workflow_run` webhook, or from
/// `GET /repos/{o}/{r}/commits/{sha}/check-runs?filter=all`, paged to
/// `total_count`: the default `filter=latest` can hide a queued re-run).
/// Pass the newest known state of each run id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckObservation {
    /// The check run id, or the workflow run id for [`RunKind::WorkflowRun`].
    pub id: u64,
    pub kind: RunKind,
    /// The check run's name (an Actions job name) or the workflow's name.
    pub name: String,
    /// The app that created the run; `None` (absent in the payload) is never trusted.
    pub app_id: Option<u64>,
    pub head_sha: String,
    pub status: CheckStatus,
    /// Set once completed: `success`, `failure`, … as GitHub spells it.
    pub conclusion: Option<String>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub html_url: Option<String>,
    /// What the run reports about itself (`output` title, summary and text), bounded:
    /// the failure text a fingerprint is made of. Empty for workflow runs.
    pub output: String,
    /// How many annotations the run has (`output.annotations_count`): test reporters
    /// put each failure there, so a red run's are read for its fingerprint.
    pub annotations: u64,
}

/// Bytes of a run's own output kept for its fingerprint.
const MAX_OUTPUT: usize = 16 * 1024;

impl CheckObservation {
    /// The conclusion, parsed; `None` while the run is not completed.
    pub fn conclusion(&self) -> Option<Conclusion> {
        match self.status {
            CheckStatus::Completed => Some(Conclusion::parse(
                self.conclusion.as_deref().unwrap_or("missing"),
            )),
            _ => None,
        }
    }

    /// From a check run object (webhook `check_run` or a REST list item).
    pub fn from_check_run(run: &CheckRunPayload) -> Self {
        Self {
            id: run.id,
            kind: RunKind::CheckRun,
            name: run.name.clone(),
            app_id: run.app.as_ref().and_then(|a| a.id),
            head_sha: run.head_sha.clone(),
            status: CheckStatus::parse(run.status.as_deref().unwrap_or("queued")),
            conclusion: run.conclusion.clone(),
            started_at: run.started_at,
            completed_at: run.completed_at,
            html_url: run.html_url.clone(),
            output: run
                .output
                .as_ref()
                .map(CheckOutput::text)
                .unwrap_or_default(),
            annotations: run
                .output
                .as_ref()
                .and_then(|o| o.annotations_count)
                .unwrap_or(0),
        }
    }

    /// From a workflow run object (webhook `workflow_run` or
    /// `GET /repos/{o}/{r}/actions/runs/{id}`). Workflow runs are always
    /// GitHub Actions' (app 15368); they have no `completed_at`, so a
    /// completed run's `updated_at` stands in, and the current attempt's
    /// `run_started_at` (falling back to `created_at`) is its start. Some
    /// payloads carry an empty `name`: the workflow file's path stands in.
    pub fn from_workflow_run(run: &WorkflowRunPayload) -> Self {
        let status = CheckStatus::parse(run.status.as_deref().unwrap_or("queued"));
        Self {
            id: run.id,
            kind: RunKind::WorkflowRun,
            name: run
                .name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .or_else(|| run.path.clone())
                .unwrap_or_else(|| format!("workflow run {}", run.id)),
            app_id: Some(GITHUB_ACTIONS_APP_ID),
            head_sha: run.head_sha.clone(),
            status,
            conclusion: run.conclusion.clone(),
            started_at: run.run_started_at.or(run.created_at),
            completed_at: (status == CheckStatus::Completed)
                .then_some(run.updated_at)
                .flatten(),
            html_url: run.html_url.clone(),
            output: String::new(),
            annotations: 0,
        }
    }
}

/// The fields of a check run object Navin reads. Tolerant: missing or
/// null fields, unknown fields, and old `2018-04-25 20:42:10` dates all parse.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRunPayload {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default, deserialize_with = "lenient_time")]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "lenient_time")]
    pub completed_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub app: Option<AppRef>,
    #[serde(default)]
    pub output: Option<CheckOutput>,
}

/// `output` of a check run: what the check says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct CheckOutput {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub annotations_count: Option<u64>,
}

impl CheckOutput {
    /// Title, summary and text, one per line, at most [`MAX_OUTPUT`] bytes.
    pub fn text(&self) -> String {
        let joined = [&self.title, &self.summary, &self.text]
            .into_iter()
            .flatten()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let mut cut = joined.len().min(MAX_OUTPUT);
        while !joined.is_char_boundary(cut) {
            cut -= 1;
        }
        joined[..cut].to_owned()
    }
}

/// `app` of a check run; identified by id because `slug` is often absent.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AppRef {
    #[serde(default)]
    pub id: Option<u64>,
}

/// One page of `GET /repos/{o}/{r}/commits/{sha}/check-runs`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CheckRunList {
    pub total_count: u64,
    #[serde(default)]
    pub check_runs: Vec<CheckRunPayload>,
}

/// The fields of a workflow run object Navin reads; as tolerant as [`CheckRunPayload`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct WorkflowRunPayload {
    pub id: u64,
    #[serde(default)]
    pub name: Option<String>,
    /// The workflow file, e.g. `.github/workflows/ci.yml`.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub head_sha: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default, deserialize_with = "lenient_time")]
    pub run_started_at: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "lenient_time")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default, deserialize_with = "lenient_time")]
    pub updated_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub html_url: Option<String>,
}

/// RFC 3339, GitHub's older `YYYY-MM-DD HH:MM:SS[ +zzzz]` (UTC without an offset), or Unix seconds.
/// Anything else reads as unknown: an unknown time only ever makes a run
/// look newer (so it blocks) or unmeasurable (so it cannot beat `min_ci_time`).
fn lenient_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
    let value = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match value {
        Some(serde_json::Value::String(s)) => parse_time(&s),
        Some(serde_json::Value::Number(n)) => {
            n.as_i64().and_then(|s| DateTime::from_timestamp(s, 0))
        }
        _ => None,
    })
}

/// Parses the date spellings GitHub payloads use.
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S %z") {
        return Some(t.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
        .ok()
        .map(|t| t.and_utc())
}
