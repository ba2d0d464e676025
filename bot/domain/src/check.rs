//! What Navin's check runs on a pull request's head say (`navin/plan`, `navin/config`): their state, text, annotations and buttons, decided without GitHub.

/// The check's name; branch protection can require it.
pub const CHECK_NAME: &str = "navin/plan";

/// Where the head stands: the check's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckState {
    /// The plan is approved (or none is needed): `success`.
    Approved,
    /// A person has to approve: `action_required`, pointing at the PR.
    Waiting,
    /// The head's plan file does not parse: `failure`, fixed by a push like a failing lint.
    Broken,
}

/// What the check should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanCheck {
    pub verdict: CheckState,
    pub title: String,
    pub summary: String,
    /// Marks on the pull request's "Files changed" view (a broken plan file's line).
    pub annotations: Vec<CheckAnnotation>,
    /// Buttons GitHub shows on the run ("Approve plan" while a plan waits). Always sent,
    /// empty included, so an update takes a button away. GitHub does not return them,
    /// so whatever decides them must also change the title or summary (the engine's
    /// sync compares those).
    pub actions: Vec<CheckAction>,
}

/// A requested-action button: clicking it sends `check_run` `requested_action` with
/// `identifier` to the App that created the run. GitHub takes at most
/// [`MAX_ACTIONS`] per run, a label of up to 20 characters, a description of up to
/// 40 and an identifier of up to 20.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckAction {
    pub label: String,
    pub description: String,
    pub identifier: String,
}

/// GitHub's limit on a check run's `actions`.
pub const MAX_ACTIONS: usize = 3;

/// One `failure` annotation at a file's line, as GitHub shows it in the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckAnnotation {
    pub path: String,
    pub line: usize,
    /// `failure`, `warning` or `notice`.
    pub level: &'static str,
    pub title: String,
    pub message: String,
}

impl PlanCheck {
    pub fn conclusion(&self) -> &'static str {
        match self.verdict {
            CheckState::Approved => "success",
            CheckState::Waiting => "action_required",
            CheckState::Broken => "failure",
        }
    }
}

/// How a [`CheckState::Broken`] check's title starts (`Plan file <path> is not valid`).
pub const BROKEN_TITLE: &str = "Plan file ";
