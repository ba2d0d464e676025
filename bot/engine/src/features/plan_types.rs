//! The types the plan flows pass between them (a pull request as they see it, what a record change sees, a new plan text), kept below every flow so none imports another for them.

use navin_ledger::plan::PlanDocument;

/// A pull request as the plan flows need it: whose it is and what its head is.
#[derive(Debug, Clone)]
pub(crate) struct PullInfo {
    pub number: u64,
    pub author: String,
    pub head_sha: String,
    /// The branch it merges into: GitHub reads its CODEOWNERS from there.
    pub base_ref: String,
    pub body: String,
    pub html_url: Option<String>,
}

impl PullInfo {
    pub(crate) fn from_payload(pr: &navin_domain::event::PullRequest) -> Self {
        Self {
            number: pr.number,
            author: pr.user.login.clone(),
            head_sha: pr.head.sha.clone(),
            base_ref: pr.base.name.clone(),
            body: pr.body.clone().unwrap_or_default(),
            html_url: pr.html_url.clone(),
        }
    }
}

/// What a record change sees besides the record: the auto-accept count so far.
pub(crate) struct Seen {
    pub safe_operations: u32,
}

/// A new text for an existing plan, however it came (`/plan edit`, a plan file).
pub(crate) struct TextEdit {
    pub edited: PlanDocument,
    /// Why the text changed, in words: the superseded entry's reason and the edit's `via`.
    pub via: String,
    /// The plan file's hash when the text came from one.
    pub file_hash: Option<String>,
    /// Write only while the stored text has this hash: the text `edited` was merged
    /// with. `None`: replace whatever is stored (a plan file's text is the file's).
    pub expected: Option<String>,
}

/// Why a plan text edit wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditRefused {
    /// The record is missing or does not parse.
    Missing(String),
    /// Another text was stored since the edit was merged: merge again.
    Moved,
}

impl std::fmt::Display for EditRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditRefused::Missing(why) => f.write_str(why),
            EditRefused::Moved => f.write_str("the plan's text changed while it was edited"),
        }
    }
}
