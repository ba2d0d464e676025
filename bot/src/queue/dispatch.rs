//! Which webhook events Navin acts on, and routing of a claimed delivery to the engine's hooks.
//!
//! [`classify`] is used twice: at ingress (anything it does not recognise is answered
//! 202 and never stored) and again by the [`Dispatcher`] when the delivery is handled.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::Delivery;

/// The events Navin handles. Everything else is acknowledged and dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Slash commands (`created`, and `edited` for newly added commands).
    IssueComment,
    /// Plan edits, stale approvals, step links, the plan-required gate.
    PullRequest,
    /// Plan approvals (`submitted`, `dismissed`).
    PullRequestReview,
    /// Evidence (`completed`).
    CheckRun,
    CheckSuite,
    WorkflowRun,
    /// App installed, removed, suspended, permissions changed.
    Installation,
    InstallationRepositories,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IssueComment => "issue_comment",
            Self::PullRequest => "pull_request",
            Self::PullRequestReview => "pull_request_review",
            Self::CheckRun => "check_run",
            Self::CheckSuite => "check_suite",
            Self::WorkflowRun => "workflow_run",
            Self::Installation => "installation",
            Self::InstallationRepositories => "installation_repositories",
        }
    }
}

/// What to do with a delivery, from its `X-GitHub-Event` and payload `action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classification {
    /// GitHub's liveness check when a hook is created: answered 200, never stored.
    Ping,
    /// Stored and handled by the engine.
    Handle(EventKind),
    /// An event or action Navin does not act on: answered 202 and dropped.
    Ignore,
}

/// Pure routing table. GitHub keeps adding events and actions, so anything not listed
/// here is ignored rather than guessed at.
pub fn classify(event: &str, action: Option<&str>) -> Classification {
    use Classification::{Handle, Ignore, Ping};
    let action = action.unwrap_or("");
    match event {
        "ping" => Ping,
        "issue_comment" if matches!(action, "created" | "edited") => {
            Handle(EventKind::IssueComment)
        }
        "pull_request"
            if matches!(
                action,
                "opened"
                    | "reopened"
                    | "synchronize"
                    | "closed"
                    | "edited"
                    | "ready_for_review"
                    | "converted_to_draft"
            ) =>
        {
            Handle(EventKind::PullRequest)
        }
        "pull_request_review" if matches!(action, "submitted" | "dismissed" | "edited") => {
            Handle(EventKind::PullRequestReview)
        }
        "check_run" if action == "completed" => Handle(EventKind::CheckRun),
        "check_suite" if action == "completed" => Handle(EventKind::CheckSuite),
        "workflow_run" if action == "completed" => Handle(EventKind::WorkflowRun),
        "installation"
            if matches!(
                action,
                "created" | "deleted" | "suspend" | "unsuspend" | "new_permissions_accepted"
            ) =>
        {
            Handle(EventKind::Installation)
        }
        "installation_repositories" if matches!(action, "added" | "removed") => {
            Handle(EventKind::InstallationRepositories)
        }
        _ => Ignore,
    }
}

/// Why a handler did not finish a delivery.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandlerError {
    /// Worth another attempt later (GitHub 5xx, rate limit, lost compare-and-swap race).
    #[error("transient: {0}")]
    Transient(String),
    /// Will never succeed (malformed payload, a bug): marked failed without retrying.
    #[error("permanent: {0}")]
    Permanent(String),
}

pub type HandlerFuture<'a> = Pin<Box<dyn Future<Output = Result<(), HandlerError>> + Send + 'a>>;

/// Processes one claimed delivery. The delivery is marked done only after the returned
/// future resolves `Ok`, so effects must be idempotent: on a crash or a retry the same
/// delivery (same `delivery_id`) runs again.
pub trait DeliveryHandler: Send + Sync + 'static {
    fn handle<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a>;
}

/// The engine's entry points, one per handled event. Each default does nothing, so the
/// server runs (and acknowledges, queues, retries) before the engine exists.
pub trait EventHooks: Send + Sync + 'static {
    fn issue_comment<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn pull_request<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn pull_request_review<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn check_run<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn check_suite<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn workflow_run<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn installation<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
    fn installation_repositories<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        nothing(delivery)
    }
}

fn nothing(delivery: &Delivery) -> HandlerFuture<'_> {
    tracing::debug!(delivery = %delivery.delivery_id, event = %delivery.event, "no hook installed");
    Box::pin(async { Ok(()) })
}

/// Hooks that do nothing: what `navin serve` runs until the engine is wired in.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHooks;

impl EventHooks for NoHooks {}

/// Routes each delivery to the matching [`EventHooks`] method.
#[derive(Debug)]
pub struct Dispatcher<H> {
    hooks: Arc<H>,
}

impl<H: EventHooks> Dispatcher<H> {
    pub fn new(hooks: Arc<H>) -> Self {
        Self { hooks }
    }
}

impl<H: EventHooks> DeliveryHandler for Dispatcher<H> {
    fn handle<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        let span = tracing::info_span!(
            "delivery",
            delivery = %delivery.delivery_id,
            event = %delivery.event,
            action = delivery.action.as_deref().unwrap_or(""),
            repository = delivery.repository.as_deref().unwrap_or(""),
            attempt = delivery.attempt,
        );
        let hooks = &*self.hooks;
        let future = match classify(&delivery.event, delivery.action.as_deref()) {
            Classification::Handle(kind) => match kind {
                EventKind::IssueComment => hooks.issue_comment(delivery),
                EventKind::PullRequest => hooks.pull_request(delivery),
                EventKind::PullRequestReview => hooks.pull_request_review(delivery),
                EventKind::CheckRun => hooks.check_run(delivery),
                EventKind::CheckSuite => hooks.check_suite(delivery),
                EventKind::WorkflowRun => hooks.workflow_run(delivery),
                EventKind::Installation => hooks.installation(delivery),
                EventKind::InstallationRepositories => hooks.installation_repositories(delivery),
            },
            // Stored by an older version with a wider routing table: nothing to do now.
            Classification::Ping | Classification::Ignore => nothing(delivery),
        };
        Box::pin(tracing::Instrument::instrument(future, span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handled_events_and_actions_are_routed() {
        assert_eq!(classify("ping", None), Classification::Ping);
        assert_eq!(
            classify("issue_comment", Some("created")),
            Classification::Handle(EventKind::IssueComment)
        );
        assert_eq!(
            classify("pull_request", Some("synchronize")),
            Classification::Handle(EventKind::PullRequest)
        );
        assert_eq!(
            classify("pull_request_review", Some("submitted")),
            Classification::Handle(EventKind::PullRequestReview)
        );
        assert_eq!(
            classify("check_run", Some("completed")),
            Classification::Handle(EventKind::CheckRun)
        );
        assert_eq!(
            classify("workflow_run", Some("completed")),
            Classification::Handle(EventKind::WorkflowRun)
        );
        assert_eq!(
            classify("installation_repositories", Some("added")),
            Classification::Handle(EventKind::InstallationRepositories)
        );
    }

    #[test]
    fn unknown_events_and_unhandled_actions_are_ignored() {
        assert_eq!(classify("star", Some("created")), Classification::Ignore);
        assert_eq!(
            classify("issue_comment", Some("deleted")),
            Classification::Ignore
        );
        assert_eq!(
            classify("check_run", Some("created")),
            Classification::Ignore
        );
        assert_eq!(classify("pull_request", None), Classification::Ignore);
        assert_eq!(classify("", None), Classification::Ignore);
    }
}
