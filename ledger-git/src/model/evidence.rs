//! Evidence on a step: what proved it or failed it (CI runs, runs Navin recorded itself, prose), with the record of a local run.

use std::fmt;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Actor, Validation};

/// What a piece of evidence is. Only run kinds can prove test/lint/verify steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    CheckRun,
    WorkflowRun,
    TestRun,
    LintRun,
    VerifyRun,
    Prose,
}

impl EvidenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::CheckRun => "check_run",
            EvidenceKind::WorkflowRun => "workflow_run",
            EvidenceKind::TestRun => "test_run",
            EvidenceKind::LintRun => "lint_run",
            EvidenceKind::VerifyRun => "verify_run",
            EvidenceKind::Prose => "prose",
        }
    }

    /// Whether this kind of evidence can prove a step with `validation`.
    /// CI runs (check or workflow runs) prove any; a local run proves its own kind.
    pub fn proves(self, validation: Validation) -> bool {
        match self {
            EvidenceKind::CheckRun | EvidenceKind::WorkflowRun => true,
            EvidenceKind::TestRun => validation == Validation::Test,
            EvidenceKind::LintRun => validation == Validation::Lint,
            EvidenceKind::VerifyRun => validation == Validation::Verify,
            EvidenceKind::Prose => false,
        }
    }
}

impl fmt::Display for EvidenceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A recorded result. Check-run evidence carries what is needed to re-read and
/// re-verify the run (id, app, head SHA, conclusion, completion time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub kind: EvidenceKind,
    pub ok: bool,
    pub summary: String,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub check_run_id: Option<u64>,
    #[serde(default)]
    pub workflow_run_id: Option<u64>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub app_id: Option<u64>,
    #[serde(default)]
    pub head_sha: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub completed_at: Option<DateTime<Utc>>,
    /// Set by the ledger when the evidence is recorded.
    #[serde(default)]
    pub recorded_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub recorded_by: Option<Actor>,
    /// For a local run (`test_run`, `lint_run`, `verify_run`) recorded by `navin board
    /// verify`: what ran, where and how it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunRecord>,
}

/// A validation command Navin ran itself in a checkout. Only such a record, green, for
/// the checkout's current `HEAD` of a clean tree, lets an agent close a test, lint or
/// verify step locally.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The program and its arguments, run with no shell.
    pub command: Vec<String>,
    /// Where the command came from: the step, the repository config, or the caller.
    pub source: CommandSource,
    /// The exit status; `None` when the process was ended by a signal.
    pub exit_code: Option<i32>,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub duration_ms: u64,
    /// sha256 of the whole output, stdout and stderr interleaved as they were written
    /// (stdout then stderr on runs recorded before), hex.
    pub output_sha256: String,
    /// What matters of the output, at most a few KB: the failing tests and the first
    /// failure's message when the runner's output names them, then the last lines.
    pub output_tail: String,
    /// The commit checked out when the command ran.
    pub head: String,
    /// Whether tracked or untracked files differed from `head` when it ran.
    pub dirty: bool,
    /// The command ran past its time limit and was killed (with everything it started).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The same command run on the step's base, and what holding this run against it
    /// found. Absent when the step has no base, the base is this run's head, or the run
    /// was recorded before verification compared with the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaseRun>,
}

impl RunRecord {
    /// Whether this run proves its step green: it exited 0, or every test that failed
    /// on the head failed on the base as well (read test by test from the runner's
    /// output, on both sides, with the base run failing too). A run whose output could
    /// not be read test by test is judged by its exit code alone; so is a run killed by
    /// a signal or its time limit, which is never green.
    pub fn passed(&self) -> bool {
        run_passes(self.exit_code, self.timed_out, self.baseline.as_ref())
    }
}

/// The verdict of [`RunRecord::passed`] for a run not (yet) recorded, so the Action's
/// verify job and `navin board verify` judge alike.
pub fn run_passes(exit_code: Option<i32>, timed_out: bool, baseline: Option<&BaseRun>) -> bool {
    if timed_out {
        return false;
    }
    match exit_code {
        Some(0) => true,
        Some(_) => baseline.is_some_and(BaseRun::excuses),
        None => false,
    }
}

/// A step's command run on the step's base commit (in a temporary tree), held against
/// the run on the head: what the change broke, what was broken already and what it
/// repaired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BaseRun {
    /// The base commit the command ran on.
    pub base: String,
    /// The base run's exit status; `None` when a signal or the time limit ended it.
    pub exit_code: Option<i32>,
    /// sha256 of the base run's whole output, hex.
    pub output_sha256: String,
    /// Taken from an earlier verify of the same base and command.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// The test runner both outputs were read as, test by test; `None` when either
    /// could not be read, and the verdict fell back to exit codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    /// Tests failing on the head and not on the base: what the change broke.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_failures: Vec<String>,
    /// Tests failing on both: reported, not the change's fault.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pre_existing: Vec<String>,
    /// Tests passing on the head that failed on the base or did not run there: what the
    /// change repaired or added.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_to_pass: Vec<String>,
}

impl BaseRun {
    /// Whether a red head run is nonetheless green because its failures are all the
    /// base's: both outputs read test by test, the base red too, nothing new failing,
    /// and at least one failure to account for the head's exit status.
    pub fn excuses(&self) -> bool {
        self.runner.is_some()
            && self.exit_code.is_some_and(|c| c != 0)
            && self.new_failures.is_empty()
            && !self.pre_existing.is_empty()
    }
}

/// Where a recorded run's command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommandSource {
    Step,
    Config,
    Given,
}

impl CommandSource {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandSource::Step => "step",
            CommandSource::Config => "config",
            CommandSource::Given => "given",
        }
    }
}

impl Evidence {
    /// What CI-run evidence (`check_run`, `workflow_run`) lacks to be traced back to its
    /// run on GitHub and re-read: the run id, the app that ran it, the head SHA and a
    /// `success` conclusion. Empty for complete CI evidence and for other kinds. Only
    /// complete CI evidence can pass the done-gate, so `{"kind":"check_run","ok":true}`
    /// typed by hand proves nothing.
    pub fn missing_run_fields(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        match self.kind {
            EvidenceKind::CheckRun if self.check_run_id.is_none() => missing.push("check_run_id"),
            EvidenceKind::WorkflowRun if self.workflow_run_id.is_none() => {
                missing.push("workflow_run_id")
            }
            EvidenceKind::CheckRun | EvidenceKind::WorkflowRun => {}
            _ => return missing,
        }
        if self.app_id.is_none() {
            missing.push("app_id");
        }
        if self.head_sha.as_deref().is_none_or(|s| s.trim().is_empty()) {
            missing.push("head_sha");
        }
        if self.ok && self.conclusion.as_deref() != Some("success") {
            missing.push("conclusion \"success\"");
        }
        missing
    }

    /// Prose evidence: a person's word, valid only for manual steps closed by a human.
    pub fn prose(summary: impl Into<String>) -> Self {
        Self {
            kind: EvidenceKind::Prose,
            ok: true,
            summary: summary.into(),
            url: None,
            check_run_id: None,
            workflow_run_id: None,
            name: None,
            app_id: None,
            head_sha: None,
            conclusion: None,
            completed_at: None,
            recorded_at: None,
            recorded_by: None,
            run: None,
        }
    }

    /// A run result of `kind` (test_run, check_run, …).
    pub fn run(kind: EvidenceKind, ok: bool, summary: impl Into<String>) -> Self {
        Self {
            kind,
            ok,
            ..Self::prose(summary)
        }
    }
}
