//! The evidence rule: which runs count for a step, and whether they prove it, fail it, or leave it waiting.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use navin_ledger::model::{Evidence, Task, Validation};

use super::observation::{
    CheckObservation, CheckStatus, Conclusion, ConclusionClass, RunKind, GITHUB_ACTIONS_APP_ID,
};
use crate::render::text::{human_duration, short_sha};

/// Check names Navin itself publishes start with this.
pub const OWN_CHECK_PREFIX: &str = "navin/";

/// The check a stage's verification commands are run under: the job that runs
/// `navin-action --mode verify` on the step's pull request is named this.
pub const VERIFY_CHECK: &str = "navin/verify";

/// Checks `task` needs green besides those the config names: a plan stage's verification
/// commands become that stage's required check, [`VERIFY_CHECK`], so a stage is done only
/// when its own commands passed on its head, not merely whatever else CI ran.
pub fn own_checks(task: &Task) -> Vec<String> {
    if task.stage.is_some() && !task.commands.is_empty() {
        vec![VERIFY_CHECK.to_owned()]
    } else {
        Vec::new()
    }
}

/// Which runs can prove a step (from `.github/navin.yml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvidencePolicy {
    /// Apps whose runs count; a same-named run from any other app is ignored,
    /// since anyone with write access can post a check run under any name.
    pub trusted_app_ids: Vec<u64>,
    /// Check names each validation needs green. A validation with no entry,
    /// or an empty list, needs every trusted check on the head to be green,
    /// except Navin's own `navin/…` checks (such as `navin/plan`, which the
    /// Action creates under GitHub Actions' app id): they judge the plan,
    /// not the code.
    pub required_checks: HashMap<Validation, Vec<String>>,
    /// A green run shorter than this counts as failed ("finished suspiciously
    /// fast", as bors puts it): a workflow that exits early proves nothing.
    pub min_ci_time: Option<Duration>,
    /// Whether green checks close a step at once or only on a merged pull request.
    pub done_on: crate::config::DoneOn,
    /// Whether CI on a draft pull request moves its step.
    pub drafts: crate::config::Drafts,
    /// Whether a pull request changing files outside its step's scope closes it.
    pub scope: navin_ledger::ScopePolicy,
}

impl Default for EvidencePolicy {
    fn default() -> Self {
        Self {
            trusted_app_ids: vec![GITHUB_ACTIONS_APP_ID],
            required_checks: HashMap::new(),
            min_ci_time: None,
            done_on: crate::config::DoneOn::Merged,
            drafts: crate::config::Drafts::Wait,
            scope: navin_ledger::ScopePolicy::Warn,
        }
    }
}

impl EvidencePolicy {
    /// The check names `validation` requires; empty means "every trusted check".
    pub fn required_for(&self, validation: Validation) -> &[String] {
        self.required_checks
            .get(&validation)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Whether runs of this app count; a run without an app id never does.
    pub fn trusts(&self, app_id: Option<u64>) -> bool {
        app_id.is_some_and(|id| self.trusted_app_ids.contains(&id))
    }
}

/// What the runs on a step's head say about it.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every required check is green: one evidence entry per check, ready to record.
    Green { evidence: Vec<Evidence> },
    /// A required check failed on this head: a failed attempt. `evidence`
    /// holds one `ok: false` entry per failed check, for the ledger.
    Red {
        failed: Vec<FinishedCheck>,
        evidence: Vec<Evidence>,
    },
    /// Not proven yet: required checks never seen on the head, still queued
    /// or running, or finished without being green or red (cancelled,
    /// skipped, …). All three empty means no trusted check has reported at
    /// all while every trusted check is required.
    Pending {
        missing: Vec<String>,
        running: Vec<RunningCheck>,
        not_green: Vec<FinishedCheck>,
    },
    /// CI evidence does not apply to this step.
    NotApplicable { reason: NotApplicable },
}

/// A required check that finished without being green.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedCheck {
    pub name: String,
    pub conclusion: String,
    pub url: Option<String>,
    pub run_id: u64,
    pub kind: RunKind,
    /// Why a `success` did not count (too fast, unmeasurable), when it did not.
    pub note: Option<String>,
}

/// A required check whose newest run has not completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningCheck {
    pub name: String,
    pub status: CheckStatus,
    /// How long since it started (or, when not started, since nothing is known).
    pub for_how_long: Option<Duration>,
    pub url: Option<String>,
}

/// Why CI evidence does not apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotApplicable {
    /// `manual` or `none` without acceptance: prose from a writer (manual) or
    /// nothing at all (none) closes it.
    NoRunNeeded { validation: Validation },
    /// The step has no linked PR head to look for runs on.
    NoLinkedHead,
}

impl std::fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotApplicable::NoRunNeeded { validation } => {
                write!(f, "validation is {validation}: no check run is needed")
            }
            NotApplicable::NoLinkedHead => {
                f.write_str("no pull request head is linked to the step")
            }
        }
    }
}

impl Verdict {
    pub fn is_green(&self) -> bool {
        matches!(self, Verdict::Green { .. })
    }

    /// The verdict's evidence that `task` has not recorded yet (matched by run
    /// kind and id), so a failure seen on several webhooks counts once.
    pub fn unrecorded_evidence(&self, task: &Task) -> Vec<Evidence> {
        let evidence = match self {
            Verdict::Green { evidence } | Verdict::Red { evidence, .. } => evidence,
            _ => return Vec::new(),
        };
        let known: HashSet<(bool, u64)> = task.evidence.iter().filter_map(run_key).collect();
        evidence
            .iter()
            .filter(|e| run_key(e).is_none_or(|k| !known.contains(&k)))
            .cloned()
            .collect()
    }
}

/// `(is workflow run, id)` of run evidence.
fn run_key(e: &Evidence) -> Option<(bool, u64)> {
    e.check_run_id
        .map(|id| (false, id))
        .or(e.workflow_run_id.map(|id| (true, id)))
}

/// Decides what `observations` prove about `step` under `policy`.
///
/// * Only runs on the step's linked head (`links.head_sha`, compared
///   case-insensitively) count: runs on older heads are ignored, and fork PRs,
///   whose runs carry no `pull_requests`, match by SHA alone.
/// * Only runs from a trusted app count; an untrusted run is ignored
///   entirely, even when it is newer or shares a required name.
/// * Per check name the newest run wins (by start time, then id; a run with
///   no start time is taken as newest because it has not started). A newer
///   queued or running run therefore blocks even after an older success.
/// * Only `completed` + `success` is green (see [`Conclusion::class`] for
///   which other conclusions are red and which merely not green). A success
///   shorter than `min_ci_time` is red; one whose duration cannot be
///   measured is not green.
/// * Red wins over pending: a failed required check is a failed attempt even
///   while other checks still run.
///
/// `now` only measures how long running checks have been waiting.
pub fn evaluate(
    step: &Task,
    observations: &[CheckObservation],
    policy: &EvidencePolicy,
    now: DateTime<Utc>,
) -> Verdict {
    if !step.validation.needs_run() && !step.has_acceptance() {
        return Verdict::NotApplicable {
            reason: NotApplicable::NoRunNeeded {
                validation: step.validation,
            },
        };
    }
    let Some(head) = step
        .links
        .head_sha
        .as_deref()
        .map(str::trim)
        .filter(|h| !h.is_empty())
    else {
        return Verdict::NotApplicable {
            reason: NotApplicable::NoLinkedHead,
        };
    };

    // Several states of one run (queued, then completed) collapse to the latest.
    let mut latest_state: HashMap<(RunKind, u64), &CheckObservation> = HashMap::new();
    for o in observations
        .iter()
        .filter(|o| o.head_sha.trim().eq_ignore_ascii_case(head) && policy.trusts(o.app_id))
    {
        let slot = latest_state.entry((o.kind, o.id)).or_insert(o);
        if state_key(o) > state_key(slot) {
            *slot = o;
        }
    }
    let mut newest: HashMap<&str, &CheckObservation> = HashMap::new();
    for o in latest_state.into_values() {
        let slot = newest.entry(o.name.as_str()).or_insert(o);
        if order_key(o) > order_key(slot) {
            *slot = o;
        }
    }

    let required: Vec<String> = {
        let configured = policy.required_for(step.validation);
        let mut names: Vec<String> = if configured.is_empty() {
            newest
                .keys()
                .filter(|n| !n.starts_with(OWN_CHECK_PREFIX))
                .map(|n| n.to_string())
                .collect()
        } else {
            configured.iter().map(|n| n.trim().to_owned()).collect()
        };
        names.extend(own_checks(step));
        names.sort();
        names.dedup();
        names
    };

    let mut green = Vec::new();
    let mut red = Vec::new();
    let mut red_evidence = Vec::new();
    let mut missing = Vec::new();
    let mut running = Vec::new();
    let mut not_green = Vec::new();
    for name in &required {
        let Some(run) = newest.get(name.as_str()) else {
            missing.push(name.clone());
            continue;
        };
        let Some(conclusion) = run.conclusion() else {
            running.push(RunningCheck {
                name: name.clone(),
                status: run.status,
                for_how_long: run.started_at.and_then(|s| (now - s).to_std().ok()),
                url: run.html_url.clone(),
            });
            continue;
        };
        match judge(run, &conclusion, policy) {
            Judged::Green => green.push(evidence(run, true, &conclusion, None)),
            Judged::Red(note) => {
                red_evidence.push(evidence(run, false, &conclusion, note.as_deref()));
                red.push(finished(run, &conclusion, note));
            }
            Judged::NotGreen(note) => not_green.push(finished(run, &conclusion, note)),
        }
    }

    if !red.is_empty() {
        Verdict::Red {
            failed: red,
            evidence: red_evidence,
        }
    } else if required.is_empty()
        || !(missing.is_empty() && running.is_empty() && not_green.is_empty())
    {
        Verdict::Pending {
            missing,
            running,
            not_green,
        }
    } else {
        Verdict::Green { evidence: green }
    }
}

/// Newest-run order between runs of one name: start time (unknown = not
/// started yet = newest), then id.
fn order_key(o: &CheckObservation) -> (DateTime<Utc>, u64) {
    (o.started_at.unwrap_or(DateTime::<Utc>::MAX_UTC), o.id)
}

/// Latest-state order between states of one run: a later start (a workflow
/// re-run attempt keeps its id but starts again), then further along. Here an
/// unknown start is the earliest: the state from before the run started.
fn state_key(o: &CheckObservation) -> (DateTime<Utc>, CheckStatus) {
    (o.started_at.unwrap_or(DateTime::<Utc>::MIN_UTC), o.status)
}

enum Judged {
    Green,
    Red(Option<String>),
    NotGreen(Option<String>),
}

fn judge(run: &CheckObservation, conclusion: &Conclusion, policy: &EvidencePolicy) -> Judged {
    match conclusion.class() {
        ConclusionClass::Red => Judged::Red(None),
        ConclusionClass::NotGreen => Judged::NotGreen(None),
        ConclusionClass::Green => {
            let Some(min) = policy.min_ci_time else {
                return Judged::Green;
            };
            let took = match (run.started_at, run.completed_at) {
                (Some(s), Some(c)) => (c - s).to_std().unwrap_or(Duration::ZERO),
                _ => {
                    return Judged::NotGreen(Some(
                        "no start or finish time, so the minimum CI time cannot be checked"
                            .to_owned(),
                    ))
                }
            };
            if took < min {
                Judged::Red(Some(format!(
                    "finished suspiciously fast: {} is under the {} minimum",
                    human_duration(took),
                    human_duration(min)
                )))
            } else {
                Judged::Green
            }
        }
    }
}

fn finished(
    run: &CheckObservation,
    conclusion: &Conclusion,
    note: Option<String>,
) -> FinishedCheck {
    FinishedCheck {
        name: run.name.clone(),
        conclusion: conclusion.as_str().to_owned(),
        url: run.html_url.clone(),
        run_id: run.id,
        kind: run.kind,
        note,
    }
}

/// The ledger entry for one run as it stands (its own conclusion, or
/// `missing` when it has none), for a green run recorded before the step can
/// be done.
pub fn run_evidence(run: &CheckObservation, ok: bool) -> Evidence {
    let conclusion = run
        .conclusion()
        .unwrap_or_else(|| Conclusion::parse(run.status.as_str()));
    evidence(run, ok, &conclusion, None)
}

/// The ledger entry for a run: everything needed to re-read and re-verify
/// it. Check runs fill `check_run_id`, workflow runs `workflow_run_id`.
fn evidence(
    run: &CheckObservation,
    ok: bool,
    conclusion: &Conclusion,
    note: Option<&str>,
) -> Evidence {
    let what = match run.kind {
        RunKind::CheckRun => "check run",
        RunKind::WorkflowRun => "workflow run",
    };
    let mut summary = format!(
        "{what} {} {} on {}",
        run.name,
        conclusion,
        short_sha(&run.head_sha)
    );
    if let (Some(s), Some(c)) = (run.started_at, run.completed_at) {
        if let Ok(took) = (c - s).to_std() {
            summary.push_str(&format!(" in {}", human_duration(took)));
        }
    }
    if let Some(note) = note {
        summary.push_str(&format!(" ({note})"));
    }
    let mut e = Evidence::run(run.kind.evidence_kind(), ok, summary);
    e.url = run.html_url.clone();
    match run.kind {
        RunKind::CheckRun => e.check_run_id = Some(run.id),
        RunKind::WorkflowRun => e.workflow_run_id = Some(run.id),
    }
    e.name = Some(run.name.clone());
    e.app_id = run.app_id;
    e.head_sha = Some(run.head_sha.clone());
    e.conclusion = Some(conclusion.as_str().to_owned());
    e.completed_at = run.completed_at;
    e
}
