//! The plan record on the ledger branch (`.navin/plans/<id>.json`): status, approvals bound to content hashes, edits with their diff, and the texts a plan replaced.

use crate::plan::policy::{decide_auto_accept, AutoAcceptConfig};
use crate::plan::{PlanDiff, PlanDocument};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Op ids remembered per record, for redelivered commands.
const OP_WINDOW: usize = 50;

/// Where a plan stands on the ledger branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    Pending,
    Approved,
    Rejected,
    /// Replaced by a newer text (kept for texts listed in [`PlanRecord::superseded`]).
    Superseded,
}

impl RecordStatus {
    /// The status as its JSON spells it.
    pub fn word(self) -> &'static str {
        match self {
            RecordStatus::Pending => "pending",
            RecordStatus::Approved => "approved",
            RecordStatus::Rejected => "rejected",
            RecordStatus::Superseded => "superseded",
        }
    }
}

/// `.navin/plans/<id>.json`: the plan's status, who approved which text, and history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRecord {
    pub id: String,
    pub status: RecordStatus,
    /// Content hash of `.navin/plans/<id>.md`; approvals are bound to it.
    pub hash: String,
    pub source: String,
    pub request: String,
    pub repository: String,
    /// The issue or pull request number the plan belongs to.
    pub issue: u64,
    /// The plan lives on a pull request (approved by reviews, gated by `navin/plan`).
    #[serde(default)]
    pub pull_request: bool,
    pub requested_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When the current text was written: a review submitted before it approved
    /// another text. `None` on records written before edits existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_at: Option<DateTime<Utc>>,
    /// Every approval ever given, revoked or stale ones included (the log).
    pub approvals: Vec<ApprovalEntry>,
    pub rejections: Vec<RejectionEntry>,
    /// Person edits (`/plan edit`), oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edits: Vec<EditEntry>,
    /// The text as first written, kept once the plan was edited (the diff's base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// The current text against [`Self::original`], handed to execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<PlanDiff>,
    /// Texts this plan replaced (regenerated after feedback, edited), each superseded;
    /// the texts themselves stay in the branch's history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<SupersededEntry>,
    /// Safe operations in the current text (for the auto-accept count).
    #[serde(default)]
    pub safe_operations: u32,
    /// The text whose safe operations were added to the repository's auto-accept count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_hash: Option<String>,
    /// The auto-accept decision for the current text, in words, when auto-accept is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_accept: Option<String>,
    /// Commands already applied (`<delivery>#<index>`), newest last.
    pub op_ids: Vec<String>,
    /// Content hash of the pull request's plan file when its text was last taken: a push
    /// that leaves the file as it was does not undo a later `/plan edit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_hash: Option<String>,
    /// How the current text was written when a model or command wrote it: the
    /// read-only tool calls (never the model's prose) and what they cost, so a
    /// reviewer can see what the plan was based on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<PlannerRun>,
    /// The code owners' reviews requested on the pull request, once per text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_requests: Option<ReviewRequests>,
    /// Owned proposed files no code owner has approved yet, while
    /// `approval.require_codeowners` holds the plan pending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting_for_owners: Vec<FileOwners>,
}

/// The review requests made for one plan text on its pull request: asked once per
/// text, so a redelivered webhook or an unchanged text asks nobody again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRequests {
    /// The text the owners were asked to review.
    pub hash: String,
    /// `@login` and `@org/team` asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requested: Vec<String>,
    /// Owners who could not be asked, each with why (GitHub's answer, an e-mail owner).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_requested: Vec<String>,
}

/// One planner run behind a plan text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerRun {
    /// `llm:<model>`, `command:<program>` or `builtin`.
    pub source: String,
    /// The commit the planner read.
    pub commit: String,
    /// Chat requests sent (0 for a command).
    #[serde(default)]
    pub turns: u32,
    /// Tokens the endpoint reported, summed over the turns.
    #[serde(default)]
    pub tokens: u64,
    /// 1 when the first plan validated, 2 after one round of feedback.
    pub attempts: u32,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRecord>,
    /// Why the built-in plan was posted instead (`planner.fallback: builtin`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// The code owners of the proposed files at the planned commit (CODEOWNERS).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owners: Vec<FileOwners>,
}

impl PlannerRun {
    /// A run of `source` on `commit` before anything happened: no turns, tokens, attempts,
    /// tool calls, fallback or owners. Planners fill in what their run produced.
    pub fn new(source: impl Into<String>, commit: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            commit: commit.into(),
            turns: 0,
            tokens: 0,
            attempts: 0,
            tool_calls: Vec::new(),
            fallback: None,
            owners: Vec::new(),
        }
    }
}

/// Who owns one proposed file, by the repository's CODEOWNERS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileOwners {
    pub path: String,
    /// `@user`, `@org/team` or an e-mail address, as CODEOWNERS writes them.
    pub owners: Vec<String>,
}

/// One read-only tool call: which tool, with what arguments, how much it answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub turn: u32,
    pub tool: String,
    /// The arguments as the model sent them, clipped to 300 characters.
    pub arguments: String,
    /// Bytes of the answer handed back to the model.
    pub bytes: usize,
    /// Why the call was refused (a path outside the tree, a spent budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The approver recorded for plans the config accepted without a person.
pub const AUTO_ACCEPT: &str = "auto-accept";

/// One approval: who, for which text, through which review (none for `/approve` and
/// auto-accept), when; and when and why it stopped counting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalEntry {
    /// The login when the approval was given (for people to read).
    pub approver: String,
    /// The approver's numeric GitHub user id: who it really was, since logins can be
    /// renamed and reused. Absent for auto-accept and for records written before ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver_id: Option<u64>,
    pub plan_hash: String,
    pub at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_id: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_because: Option<String>,
    /// Why it was given, when not by a person (the auto-accept decision).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How a person gave it when not by a review or `/approve`: [`VIA_CHECK_RUN`] for the
    /// "Approve plan" button on the `navin/plan` check. Such an approval has no review
    /// behind it, so recounting a pull request's reviews keeps it; like every approval it
    /// is bound to [`Self::plan_hash`] and goes stale when the text changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// [`ApprovalEntry::via`] of an approval given with the `navin/plan` check's button.
pub const VIA_CHECK_RUN: &str = "check-run";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectionEntry {
    pub by: String,
    pub feedback: Option<String>,
    pub plan_hash: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditEntry {
    pub by: String,
    /// The editor's numeric GitHub user id, when known: who it was, since logins can
    /// be renamed and reused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_id: Option<u64>,
    pub at: DateTime<Utc>,
    pub from_hash: String,
    pub to_hash: String,
    /// How the text changed (`/plan edit`, or the plan file at a commit), for the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The command or save that made the edit: a replayed save answers with the text
    /// it made, not with whatever is current by then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SupersededEntry {
    pub hash: String,
    pub status: RecordStatus,
    pub by: String,
    pub reason: String,
    pub at: DateTime<Utc>,
}

/// A review approval that currently counts, from [`crate::rules::approvals::candidates`]
/// after the role check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedReview {
    pub review_id: u64,
    pub login: String,
    /// The reviewer's numeric user id, when GitHub sent it.
    pub user_id: Option<u64>,
    pub at: DateTime<Utc>,
}

impl ApprovalEntry {
    pub fn new(approver: &str, plan_hash: &str, at: DateTime<Utc>, review_id: Option<u64>) -> Self {
        Self {
            approver: approver.to_owned(),
            approver_id: None,
            plan_hash: plan_hash.to_owned(),
            at,
            review_id,
            revoked_at: None,
            revoked_because: None,
            note: None,
            via: None,
        }
    }

    /// The same approval, recording the approver's numeric user id.
    #[must_use]
    pub fn by_id(mut self, id: Option<u64>) -> Self {
        self.approver_id = id;
        self
    }

    /// Who approved: the numeric id when known, else the lowercase login. Two entries
    /// are the same person exactly when their identities are equal.
    pub fn identity(&self) -> String {
        match self.approver_id {
            Some(id) => format!("id:{id}"),
            None => format!("login:{}", self.approver.to_ascii_lowercase()),
        }
    }

    fn live(&self) -> bool {
        self.revoked_at.is_none()
    }
}

impl PlanRecord {
    /// A new plan's record, pending approval of the text with content hash `hash`, with
    /// no history yet. Callers set where it came from (source, request, repository,
    /// issue, who asked) with struct update syntax.
    pub fn pending(id: &str, hash: &str, now: DateTime<Utc>) -> Self {
        Self {
            id: id.to_owned(),
            status: RecordStatus::Pending,
            hash: hash.to_owned(),
            source: String::new(),
            request: String::new(),
            repository: String::new(),
            issue: 0,
            pull_request: false,
            requested_by: String::new(),
            created_at: now,
            updated_at: now,
            text_at: Some(now),
            approvals: Vec::new(),
            rejections: Vec::new(),
            edits: Vec::new(),
            original: None,
            diff: None,
            superseded: Vec::new(),
            safe_operations: 0,
            counted_hash: None,
            auto_accept: None,
            op_ids: Vec::new(),
            file_hash: None,
            run: None,
            review_requests: None,
            waiting_for_owners: Vec::new(),
        }
    }

    /// Rejects the current text: every live approval is revoked, naming `shown` (how
    /// the rejecter is written for people), and the rejection by `by` is logged.
    pub fn reject(&mut self, by: &str, shown: &str, feedback: Option<String>, now: DateTime<Utc>) {
        self.status = RecordStatus::Rejected;
        for a in self.approvals.iter_mut().filter(|a| a.revoked_at.is_none()) {
            a.revoked_at = Some(now);
            a.revoked_because = Some(format!("the plan was rejected by {shown}"));
        }
        self.rejections.push(RejectionEntry {
            by: by.to_owned(),
            feedback,
            plan_hash: self.hash.clone(),
            at: now,
        });
    }

    /// What people changed since the plan was first written, as Markdown: binding on
    /// whoever executes it (a step's brief carries it). `None` when never edited, or
    /// edited back to the first text.
    pub fn binding_edits(&self) -> Option<String> {
        self.diff
            .as_ref()
            .filter(|d| !d.is_empty())
            .map(PlanDiff::to_markdown)
    }

    pub fn remember(&mut self, op_id: &str, now: DateTime<Utc>) {
        self.op_ids.push(op_id.to_owned());
        if self.op_ids.len() > OP_WINDOW {
            let excess = self.op_ids.len() - OP_WINDOW;
            self.op_ids.drain(..excess);
        }
        self.updated_at = now;
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// Approvals that count for the current text: not revoked, bound to this hash.
    pub fn current_approvals(&self) -> impl Iterator<Item = &ApprovalEntry> {
        self.approvals
            .iter()
            .filter(move |a| a.live() && a.plan_hash == self.hash)
    }

    /// Distinct approvers of the current text, by numeric user id (a renamed account is
    /// one approver; a reused login is another person).
    pub fn approver_count(&self) -> usize {
        let mut who: Vec<String> = self
            .current_approvals()
            .map(ApprovalEntry::identity)
            .collect();
        who.sort();
        who.dedup();
        who.len()
    }

    /// Approved, and the approvals still hold for this exact text.
    pub fn is_approved(&self) -> bool {
        self.status == RecordStatus::Approved && self.approver_count() > 0
    }

    /// Approvals given to an earlier text that were never revoked: the plan changed
    /// under them.
    fn stale_approvals(&self) -> Vec<&ApprovalEntry> {
        self.approvals
            .iter()
            .filter(|a| a.live() && a.plan_hash != self.hash)
            .collect()
    }

    /// Replaces the text: the old one is superseded, approvals of it go stale (they stay
    /// in the log bound to the old hash) and the plan waits for approval again.
    pub fn replace_text(&mut self, hash: &str, by: &str, reason: &str, now: DateTime<Utc>) {
        if self.hash != hash {
            self.superseded.push(SupersededEntry {
                hash: self.hash.clone(),
                status: RecordStatus::Superseded,
                by: by.to_owned(),
                reason: reason.to_owned(),
                at: now,
            });
        }
        self.hash = hash.to_owned();
        self.text_at = Some(now);
        self.status = RecordStatus::Pending;
    }

    /// The hash of the text that was current at `at`: the first text replaced after
    /// `at`, else the current one. What a person who wrote an edit at `at` (a `/plan
    /// edit` comment) was looking at, so their edit can be merged with the texts stored
    /// since. A moment before the first text gives the first text.
    pub fn hash_at(&self, at: DateTime<Utc>) -> &str {
        self.superseded
            .iter()
            .find(|s| s.at > at)
            .map_or(self.hash.as_str(), |s| s.hash.as_str())
    }

    /// Brings the review-based approvals in line with the pull request's reviews as they
    /// are now. `standing` are the ids of reviews that are still their reviewer's latest
    /// approval; an approval whose review is not among them is revoked (dismissed, or
    /// changes requested since). `counted` approve the current text: new ones are bound
    /// to its hash. An approval of an earlier text whose review still stands stays in the
    /// log as stale. The status follows the count; a rejected or superseded plan keeps its
    /// status. Returns whether anything changed.
    pub fn reconcile_reviews(
        &mut self,
        standing: &[u64],
        counted: &[CountedReview],
        required: u32,
        now: DateTime<Utc>,
    ) -> bool {
        let before = self.clone();
        for entry in self.approvals.iter_mut().filter(|a| a.live()) {
            let Some(id) = entry.review_id else { continue };
            let stands = standing.contains(&id) || counted.iter().any(|c| c.review_id == id);
            let current = entry.plan_hash == self.hash;
            // An approval of the current text must count now; one of an earlier text
            // only has to stand (it is stale either way).
            let keep = if current {
                counted.iter().any(|c| c.review_id == id)
            } else {
                stands
            };
            if !keep {
                entry.revoked_at = Some(now);
                entry.revoked_because = Some(format!(
                    "review {id} is no longer @{}'s counted approval (dismissed, changes requested since, or write access lost)",
                    entry.approver
                ));
            }
        }
        for review in counted {
            let known = self
                .approvals
                .iter()
                .any(|a| a.review_id == Some(review.review_id));
            if !known {
                let hash = self.hash.clone();
                self.approvals.push(
                    ApprovalEntry::new(&review.login, &hash, review.at, Some(review.review_id))
                        .by_id(review.user_id),
                );
            }
        }
        self.settle(required);
        let changed = *self != before;
        if changed {
            self.updated_at = now;
        }
        changed
    }

    /// Pending ⇄ approved by the number of distinct current approvers; an auto-accept
    /// of the current text approves on its own.
    pub fn settle(&mut self, required: u32) {
        if matches!(self.status, RecordStatus::Pending | RecordStatus::Approved) {
            let auto = self
                .current_approvals()
                .any(|a| a.review_id.is_none() && a.approver == AUTO_ACCEPT);
            let enough = auto || self.approver_count() >= required.max(1) as usize;
            self.status = if enough {
                RecordStatus::Approved
            } else {
                RecordStatus::Pending
            };
        }
    }

    /// Runs the config's auto-accept policy on the current text (`doc`), with `seen` safe
    /// operations accepted so far in the repository. The decision's reason is kept either
    /// way; an acceptance is an approval by [`AUTO_ACCEPT`] logged like a person's.
    /// Returns whether the plan was accepted.
    pub fn auto_accept(
        &mut self,
        doc: &PlanDocument,
        config: &AutoAcceptConfig,
        seen: u32,
        required: u32,
        now: DateTime<Utc>,
    ) -> bool {
        let decision = decide_auto_accept(doc, config, seen);
        let reason = decision.reason.to_string();
        self.auto_accept = Some(reason.clone());
        if !decision.auto_accept || self.hash != doc.hash() {
            return false;
        }
        let mut entry = ApprovalEntry::new(AUTO_ACCEPT, &self.hash, now, None);
        entry.note = Some(reason);
        self.approvals.push(entry);
        self.settle(required);
        true
    }

    /// Why current approvals are stale, for the plan comment and the check.
    pub fn stale_note(&self) -> Option<String> {
        let stale = self.stale_approvals();
        if stale.is_empty() {
            return None;
        }
        let mut who: Vec<String> = stale.iter().map(|a| format!("@{}", a.approver)).collect();
        who.dedup();
        let change = match self.superseded.last() {
            Some(s) => format!(
                "{} by @{} at {}",
                s.reason,
                s.by,
                s.at.format("%Y-%m-%d %H:%M UTC")
            ),
            None => "the plan text changed".to_owned(),
        };
        Some(format!(
            "{} approved an earlier text; since then {change}. Approve the current text again.",
            who.join(", ")
        ))
    }
}

/// The plan id of an issue's plan.
pub fn plan_id(issue: u64) -> String {
    format!("issue-{issue}")
}

/// The plan id of a pull request's own plan.
pub fn pr_plan_id(number: u64) -> String {
    format!("pr-{number}")
}

/// Where plan `id`'s canonical text lives on the ledger branch (`.navin/plans/<id>.md`).
pub fn text_path(id: &str) -> String {
    format!("{}/{id}.md", crate::store::PLANS_DIR)
}

/// Where plan `id`'s record lives on the ledger branch (`.navin/plans/<id>.json`).
pub fn record_path(id: &str) -> String {
    format!("{}/{id}.json", crate::store::PLANS_DIR)
}

/// The binding edits ([`PlanRecord::binding_edits`]) of the plan `ledger`'s mission was
/// converted from, read from the ledger branch: what every front end puts in a brief.
/// `None` when the mission came from no plan, or its plan was never edited. A record
/// that does not parse is reported, never guessed around.
pub fn mission_plan_edits(
    store: &crate::store::Store,
    ledger: &crate::model::Ledger,
) -> Result<Option<String>, crate::store::StoreError> {
    let Some(id) = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.plan_id.as_deref())
    else {
        return Ok(None);
    };
    let path = record_path(id);
    let Some(bytes) = store.read_file(&path)? else {
        return Ok(None);
    };
    let record: PlanRecord =
        serde_json::from_slice(&bytes).map_err(|e| crate::store::StoreError::Corrupt {
            commit: "the branch tip".to_owned(),
            path: path.clone(),
            field: String::new(),
            message: e.to_string(),
        })?;
    Ok(record.binding_edits())
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;
