//! Who does an operation, when, from which checkout, and under which policies.

use chrono::{DateTime, Utc};

use crate::model::Actor;

/// Who does an operation, when, and under which idempotency key.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub now: DateTime<Utc>,
    pub actor: Actor,
    /// A webhook delivery id or request id. An operation whose key already
    /// appears in the history window is recognised as applied and skipped.
    pub op_id: Option<String>,
    /// Set when the operation's delivery is being retried: it was first received then,
    /// so its earlier operations may lie beyond the history window. The store then also
    /// looks for `op_id` in the commit log back to this time (commit trailers), so a
    /// retry applies nothing twice however many operations the delivery has.
    pub retry_since: Option<DateTime<Utc>>,
    /// The checkout the actor works in, when there is one. An agent's recorded run proves
    /// a step only for this `HEAD` of a clean tree.
    pub checkout: Option<Checkout>,
    /// What the step the operation is about changes, measured by the front end: in a
    /// checkout, `HEAD` against the step's base; on GitHub, the step's pull request.
    /// `None` when nothing was measured.
    pub change: Option<Change>,
    /// Whether closing a step with changes outside its scope is refused or reported
    /// (`evidence.scope`).
    pub scope_policy: crate::model::ScopePolicy,
    /// Whether a test step closed from a checkout needs a fail-to-pass test
    /// (`evidence.fail_to_pass`).
    pub fail_to_pass: crate::model::FailToPass,
}

/// A working tree's state when an operation is made: its `HEAD` and whether tracked or
/// untracked files differ from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub head: String,
    pub dirty: bool,
}

/// The files a step's work changes from `base` to `head`, as `git diff --name-only base
/// head` lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub base: String,
    pub head: String,
    /// The changed paths. A pull request's are listed only for a step with a scope to
    /// hold them to; its [`ChangeFrom::PullRequest`] says how many there are either way.
    pub files: Vec<String>,
    pub from: ChangeFrom,
}

impl Change {
    /// Whether the change changes nothing.
    pub fn is_empty(&self) -> bool {
        match self.from {
            ChangeFrom::PullRequest { changed_files, .. } => changed_files == 0,
            ChangeFrom::Checkout => self.files.is_empty(),
        }
    }
}

/// Where a [`Change`] was measured, which decides the base it must start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeFrom {
    /// A checkout's `HEAD` against the step's recorded base (the CLI, `navin mcp`): it
    /// counts only when `base` is that recorded base.
    Checkout,
    /// The step's pull request against its base branch, as GitHub reports it: the pull
    /// request is the step's change whatever the step's recorded base.
    PullRequest { number: u64, changed_files: u64 },
}

impl Ctx {
    pub fn new(now: DateTime<Utc>, actor: Actor) -> Self {
        Self {
            now,
            actor,
            op_id: None,
            retry_since: None,
            checkout: None,
            change: None,
            scope_policy: crate::model::ScopePolicy::default(),
            fail_to_pass: crate::model::FailToPass::default(),
        }
    }

    /// A test step closed from a checkout needs a fail-to-pass test under `policy`.
    pub fn with_fail_to_pass(mut self, policy: crate::model::FailToPass) -> Self {
        self.fail_to_pass = policy;
        self
    }

    /// Closing a step with changes outside its scope follows `policy`.
    pub fn with_scope_policy(mut self, policy: crate::model::ScopePolicy) -> Self {
        self.scope_policy = policy;
        self
    }

    /// The operation is made from `checkout` (see [`Ctx::checkout`]).
    pub fn with_checkout(mut self, checkout: Checkout) -> Self {
        self.checkout = Some(checkout);
        self
    }

    /// The step's change was measured as `change` (see [`Ctx::change`]).
    pub fn with_change(mut self, change: Change) -> Self {
        self.change = Some(change);
        self
    }

    /// A retried delivery first received at `since` (see [`Ctx::retry_since`]).
    pub fn with_retry_since(mut self, since: DateTime<Utc>) -> Self {
        self.retry_since = Some(since);
        self
    }

    pub fn with_op_id(mut self, op_id: impl Into<String>) -> Self {
        self.op_id = Some(op_id.into());
        self
    }
}
