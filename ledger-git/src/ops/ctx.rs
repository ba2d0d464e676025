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
    /// What `HEAD` changes since the step's base, measured by the front end (which has
    /// git) for the step the operation is about; `None` when nothing was measured.
    pub change: Option<Change>,
}

/// The files `HEAD` changes since `base`, as `git diff --name-only base HEAD` lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub base: String,
    pub files: Vec<String>,
}

impl Ctx {
    pub fn new(now: DateTime<Utc>, actor: Actor) -> Self {
        Self {
            now,
            actor,
            op_id: None,
            retry_since: None,
            checkout: None,
            scope_policy: crate::model::ScopePolicy::default(),
            fail_to_pass: crate::model::FailToPass::default(),
        }
    }

    /// Closing a step with changes outside its scope follows `policy`.
    pub fn with_fail_to_pass(mut self, policy: crate::model::FailToPass) -> Self {
        self.fail_to_pass = policy;
        self
    }

    pub fn with_scope_policy(mut self, policy: crate::model::ScopePolicy) -> Self {
        self.scope_policy = policy;
        self
    }

    /// The operation is made from `checkout` (see [`Ctx::checkout`]).
    pub fn with_checkout(mut self, checkout: Checkout) -> Self {
        self.checkout = Some(checkout);
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
