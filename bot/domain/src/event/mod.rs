//! The engine's only input: a webhook event parsed once into a typed payload, with the delivery it came in.
//!
//! The server builds an [`Event`] from a queued delivery and the Action from
//! `GITHUB_EVENT_PATH`, both through [`parse_event`], so the two front ends cannot
//! disagree about which events exist or what a payload must hold.

pub mod payload;

pub use payload::{
    html_base, Account, ChangedText, Changes, CheckRunActionEvent, CheckRunEvent, CheckSuite,
    CheckSuiteEvent, ClickedRun, Comment, CommentEvent, GitRef, Installation, InstallationEvent,
    InstalledRepository, Issue, IssuesEvent, PullRequest, PullRequestEvent, RepoName, Repository,
    RequestedAction, Review, ReviewEvent, SweepEvent, User, WorkflowRunEvent,
};

/// The event name of Navin's own clock tick ([`EventKind::Sweep`]).
pub const SWEEP_EVENT: &str = "navin_sweep";

use serde::Deserialize;

/// Where an event came from and how often it has been tried: every effect of the
/// event is keyed by [`Delivery::id`], so a retry or a redelivery changes nothing twice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `X-GitHub-Delivery` for webhooks; `actions-run-<run id>` in the Action.
    pub id: String,
    /// 1 on the first attempt; above 1 some effects may already have been applied.
    pub attempt: u32,
    /// The installation the event acts for: the payload's `installation.id`, else what
    /// the queue recorded at ingress. `None` in token mode (the Action) is fine.
    pub installation: Option<u64>,
    /// `owner/name` as in the payload.
    pub repository: Option<String>,
    /// When the delivery was first received (the queue's record); a retry looks for its
    /// earlier ledger operations back to then. `None`: unknown (the Action's re-runs).
    pub received_at: Option<chrono::DateTime<chrono::Utc>>,
    /// No attempt follows this one if it fails (the queue's last, or a failure that is
    /// never retried): the person whose command it carries is told it failed.
    pub final_attempt: bool,
}

impl Delivery {
    pub fn new(id: impl Into<String>, attempt: u32) -> Self {
        Self {
            id: id.into(),
            attempt,
            installation: None,
            repository: None,
            received_at: None,
            final_attempt: false,
        }
    }

    /// The installation to act for; an event without one cannot be handled by an App.
    pub fn installation(&self) -> Result<u64, NoInstallation> {
        self.installation.ok_or(NoInstallation)
    }

    /// A retried delivery may have applied some effects already: look before posting.
    pub fn is_retry(&self) -> bool {
        self.attempt > 1
    }
}

/// The events Navin handles. Everything else is acknowledged and dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// Slash commands (`created`, and `edited` for newly added commands).
    IssueComment,
    /// New issues (`opened`): the classifier's automatic plan (`plan_mode.auto_threshold`).
    Issues,
    /// Plan edits, stale approvals, step links, the plan-required gate.
    PullRequest,
    /// Plan approvals (`submitted`, `edited`, `dismissed`).
    PullRequestReview,
    /// Evidence (`completed`).
    CheckRun,
    /// A button on Navin's check clicked (`requested_action`): "Approve plan".
    CheckRunAction,
    CheckSuite,
    WorkflowRun,
    /// App installed, removed, suspended, permissions changed.
    Installation,
    InstallationRepositories,
    /// Navin's own clock tick for one repository (never sent by GitHub): timed rules.
    Sweep,
}

impl EventKind {
    /// The `X-GitHub-Event` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IssueComment => "issue_comment",
            Self::Issues => "issues",
            Self::PullRequest => "pull_request",
            Self::PullRequestReview => "pull_request_review",
            Self::CheckRun | Self::CheckRunAction => "check_run",
            Self::CheckSuite => "check_suite",
            Self::WorkflowRun => "workflow_run",
            Self::Installation => "installation",
            Self::InstallationRepositories => "installation_repositories",
            Self::Sweep => SWEEP_EVENT,
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
/// here is ignored rather than guessed at. `pull_request_target` (the Action's trigger
/// for fork PRs) carries the same payload as `pull_request`.
pub fn classify(event: &str, action: Option<&str>) -> Classification {
    use Classification::{Handle, Ignore, Ping};
    let action = action.unwrap_or("");
    match event {
        "ping" => Ping,
        "issue_comment" if matches!(action, "created" | "edited") => {
            Handle(EventKind::IssueComment)
        }
        "issues" if action == "opened" => Handle(EventKind::Issues),
        "pull_request" | "pull_request_target"
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
        "check_run" if action == "requested_action" => Handle(EventKind::CheckRunAction),
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
        SWEEP_EVENT => Handle(EventKind::Sweep),
        _ => Ignore,
    }
}

/// A handled event's payload, typed.
#[derive(Debug, Clone)]
pub enum Payload {
    IssueComment(Box<CommentEvent>),
    Issues(Box<IssuesEvent>),
    PullRequest(Box<PullRequestEvent>),
    PullRequestReview(Box<ReviewEvent>),
    CheckRun(Box<CheckRunEvent>),
    CheckRunAction(Box<CheckRunActionEvent>),
    CheckSuite(Box<CheckSuiteEvent>),
    WorkflowRun(Box<WorkflowRunEvent>),
    Installation(InstallationEvent),
    InstallationRepositories(InstallationEvent),
    Sweep(Box<SweepEvent>),
}

/// One event for the engine: what happened and the delivery that carried it.
#[derive(Debug, Clone)]
pub struct Event {
    pub delivery: Delivery,
    pub payload: Payload,
}

impl Event {
    pub fn kind(&self) -> EventKind {
        match self.payload {
            Payload::IssueComment(_) => EventKind::IssueComment,
            Payload::Issues(_) => EventKind::Issues,
            Payload::PullRequest(_) => EventKind::PullRequest,
            Payload::PullRequestReview(_) => EventKind::PullRequestReview,
            Payload::CheckRun(_) => EventKind::CheckRun,
            Payload::CheckRunAction(_) => EventKind::CheckRunAction,
            Payload::CheckSuite(_) => EventKind::CheckSuite,
            Payload::WorkflowRun(_) => EventKind::WorkflowRun,
            Payload::Installation(_) => EventKind::Installation,
            Payload::InstallationRepositories(_) => EventKind::InstallationRepositories,
            Payload::Sweep(_) => EventKind::Sweep,
        }
    }
}

/// A payload that does not hold what its event promises: it will never parse, so the
/// delivery is failed at once, naming the field.
/// A delivery an App cannot act on: it names no installation to get a token for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the delivery names no installation")]
pub struct NoInstallation;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{event} payload: {path}: {message}")]
pub struct PayloadError {
    pub event: &'static str,
    /// The JSON path of the offending field (`.` for the document itself).
    pub path: String,
    pub message: String,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    action: Option<String>,
}

/// Parses one delivery body. `Ok(None)` for events and actions Navin does not handle.
/// The payload's `installation.id` and `repository.full_name`, when present, fill in
/// `delivery`'s fields (the payload is the authority; the queue's record is a fallback).
pub fn parse_event(
    mut delivery: Delivery,
    event: &str,
    body: &[u8],
) -> Result<Option<Event>, PayloadError> {
    let head: Head = decode("payload", body)?;
    let kind = match classify(event, head.action.as_deref()) {
        Classification::Handle(kind) => kind,
        Classification::Ping | Classification::Ignore => return Ok(None),
    };
    let name = kind.as_str();
    let payload = match kind {
        EventKind::IssueComment => Payload::IssueComment(Box::new(decode(name, body)?)),
        EventKind::Issues => Payload::Issues(Box::new(decode(name, body)?)),
        EventKind::PullRequest => Payload::PullRequest(Box::new(decode(name, body)?)),
        EventKind::PullRequestReview => Payload::PullRequestReview(Box::new(decode(name, body)?)),
        EventKind::CheckRun => Payload::CheckRun(Box::new(decode(name, body)?)),
        EventKind::CheckRunAction => Payload::CheckRunAction(Box::new(decode(name, body)?)),
        EventKind::CheckSuite => Payload::CheckSuite(Box::new(decode(name, body)?)),
        EventKind::WorkflowRun => Payload::WorkflowRun(Box::new(decode(name, body)?)),
        EventKind::Installation => Payload::Installation(decode(name, body)?),
        EventKind::InstallationRepositories => {
            Payload::InstallationRepositories(decode(name, body)?)
        }
        EventKind::Sweep => Payload::Sweep(Box::new(decode(name, body)?)),
    };
    let (installation, repository) = payload.origin();
    if let Some(id) = installation {
        delivery.installation = Some(id);
    }
    if let Some(repo) = repository {
        delivery.repository = Some(repo.to_owned());
    }
    Ok(Some(Event { delivery, payload }))
}

impl Payload {
    fn origin(&self) -> (Option<u64>, Option<&str>) {
        fn of<'p>(i: &Option<Installation>, r: &'p Repository) -> (Option<u64>, Option<&'p str>) {
            (i.as_ref().map(|i| i.id), Some(r.full_name.as_str()))
        }
        match self {
            Payload::IssueComment(e) => of(&e.installation, &e.repository),
            Payload::Issues(e) => of(&e.installation, &e.repository),
            Payload::PullRequest(e) => of(&e.installation, &e.repository),
            Payload::PullRequestReview(e) => of(&e.installation, &e.repository),
            Payload::CheckRun(e) => of(&e.installation, &e.repository),
            Payload::CheckRunAction(e) => of(&e.installation, &e.repository),
            Payload::CheckSuite(e) => of(&e.installation, &e.repository),
            Payload::WorkflowRun(e) => of(&e.installation, &e.repository),
            Payload::Sweep(e) => of(&e.installation, &e.repository),
            Payload::Installation(e) | Payload::InstallationRepositories(e) => {
                (Some(e.installation.id), None)
            }
        }
    }
}

fn decode<T: serde::de::DeserializeOwned>(
    event: &'static str,
    body: &[u8],
) -> Result<T, PayloadError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        PayloadError {
            event,
            path,
            message: e.into_inner().to_string(),
        }
    })
}

/// 40 (SHA-1) or 64 (SHA-256) hex digits: the only head ids put into API paths.
pub fn is_commit_sha(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    const DIR: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/webhooks/"
    );

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{DIR}{name}")).unwrap()
    }

    #[test]
    fn handled_events_and_actions_are_routed() {
        assert_eq!(classify("ping", None), Classification::Ping);
        for (event, action, kind) in [
            ("issue_comment", "created", EventKind::IssueComment),
            ("issues", "opened", EventKind::Issues),
            ("pull_request", "synchronize", EventKind::PullRequest),
            ("pull_request_target", "opened", EventKind::PullRequest),
            (
                "pull_request_review",
                "submitted",
                EventKind::PullRequestReview,
            ),
            ("check_run", "completed", EventKind::CheckRun),
            ("check_run", "requested_action", EventKind::CheckRunAction),
            ("workflow_run", "completed", EventKind::WorkflowRun),
            (
                "installation_repositories",
                "added",
                EventKind::InstallationRepositories,
            ),
        ] {
            assert_eq!(
                classify(event, Some(action)),
                Classification::Handle(kind),
                "{event}.{action}"
            );
        }
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

    #[test]
    fn real_payloads_parse_into_their_event_with_installation_and_repository() {
        for (file, event, kind) in [
            (
                "issue_comment.created.json",
                "issue_comment",
                EventKind::IssueComment,
            ),
            (
                "pull_request.opened.json",
                "pull_request",
                EventKind::PullRequest,
            ),
            (
                "pull_request_review.submitted.json",
                "pull_request_review",
                EventKind::PullRequestReview,
            ),
            ("check_run.completed.json", "check_run", EventKind::CheckRun),
            (
                "check_run.requested_action.json",
                "check_run",
                EventKind::CheckRunAction,
            ),
            (
                "check_suite.completed.json",
                "check_suite",
                EventKind::CheckSuite,
            ),
            (
                "workflow_run.completed.json",
                "workflow_run",
                EventKind::WorkflowRun,
            ),
            (
                "installation.created.json",
                "installation",
                EventKind::Installation,
            ),
            (
                "installation_repositories.added.json",
                "installation_repositories",
                EventKind::InstallationRepositories,
            ),
            (
                "installation_repositories.removed.json",
                "installation_repositories",
                EventKind::InstallationRepositories,
            ),
        ] {
            let parsed = parse_event(Delivery::new("d-1", 1), event, &fixture(file))
                .unwrap()
                .unwrap_or_else(|| panic!("{file} was ignored"));
            assert_eq!(parsed.kind(), kind, "{file}");
            assert!(parsed.delivery.installation.is_some(), "{file}");
            if let Payload::Installation(e) | Payload::InstallationRepositories(e) = &parsed.payload
            {
                let listed = [
                    &e.repositories,
                    &e.repositories_added,
                    &e.repositories_removed,
                ];
                let names: Vec<&str> = listed
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|r| r.full_name.as_str())
                    .collect();
                assert_eq!(names.len(), 1, "{file}: {names:?}");
            }
            if !matches!(
                kind,
                EventKind::Installation | EventKind::InstallationRepositories
            ) {
                assert!(parsed.delivery.repository.is_some(), "{file}");
            }
        }
    }

    #[test]
    fn an_ignored_action_parses_to_nothing() {
        let body = br#"{"action":"deleted","comment":{}}"#;
        assert!(parse_event(Delivery::new("d", 1), "issue_comment", body)
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_payload_error_names_the_field_that_is_wrong() {
        let mut v: serde_json::Value =
            serde_json::from_slice(&fixture("issue_comment.created.json")).unwrap();
        v["installation"]["id"] = "seven".into();
        let body = serde_json::to_vec(&v).unwrap();
        let e = parse_event(Delivery::new("d", 1), "issue_comment", &body).unwrap_err();
        assert_eq!(e.event, "issue_comment");
        assert_eq!(e.path, "installation.id");
        let mut v: serde_json::Value =
            serde_json::from_slice(&fixture("check_run.completed.json")).unwrap();
        v.as_object_mut().unwrap().remove("repository");
        let e = parse_event(
            Delivery::new("d", 1),
            "check_run",
            &serde_json::to_vec(&v).unwrap(),
        )
        .unwrap_err();
        assert!(e.message.contains("repository"), "{e}");
    }

    #[test]
    fn the_payloads_installation_wins_over_the_queues_record() {
        let mut delivery = Delivery::new("d", 2);
        delivery.installation = Some(999);
        let event = parse_event(
            delivery,
            "issue_comment",
            &fixture("issue_comment.created.json"),
        )
        .unwrap()
        .unwrap();
        assert_ne!(event.delivery.installation, Some(999));
        assert!(event.delivery.is_retry());
    }
}
