//! Where and by whom an event arose: fixed before any handler runs, so no handler can
//! change what another one sees about the event.

use chrono::{DateTime, Utc};

/// The issue or pull request an event is about and who acted on it.
#[derive(Clone, Debug, Default)]
pub(crate) struct EventOrigin {
    /// The issue or pull request number (0 when there is none, e.g. a sweep tick).
    pub(crate) issue: u64,
    pub(crate) issue_body: String,
    /// The command came from a pull request (its issue number is the PR's).
    pub(crate) on_pull_request: bool,
    /// The comment that carried the command, for reactions; `None` for other events.
    pub(crate) comment_id: Option<u64>,
    /// When that comment's commands were written: a `/plan edit` is merged with the
    /// plan texts stored since. `None`: edits apply to the text as it is.
    pub(crate) written_at: Option<DateTime<Utc>>,
    /// Why the issue or PR takes no changes (`closed`, `locked`), if it does not.
    pub(crate) closed: Option<&'static str>,
    /// Who acted: the comment's or review's author, or the event's sender.
    pub(crate) author: String,
    /// The author's numeric user id, when the event carried it: roles and approvals are
    /// keyed by it, since logins can be renamed and reused.
    pub(crate) author_id: Option<u64>,
}

impl EventOrigin {
    /// An event on issue `issue` (0: none) by `author`.
    pub(crate) fn new(issue: u64, author: &str) -> Self {
        EventOrigin {
            issue,
            author: author.to_owned(),
            ..EventOrigin::default()
        }
    }

    /// An event of Navin's own (sweeps, installation, CI completion on no issue).
    pub(crate) fn navin() -> Self {
        EventOrigin::new(0, "navin")
    }

    pub(crate) fn on_pull_request(self, yes: bool) -> Self {
        EventOrigin {
            on_pull_request: yes,
            ..self
        }
    }

    pub(crate) fn author_id(self, id: Option<u64>) -> Self {
        EventOrigin {
            author_id: id,
            ..self
        }
    }

    pub(crate) fn body(self, body: Option<&str>) -> Self {
        EventOrigin {
            issue_body: body.unwrap_or_default().to_owned(),
            ..self
        }
    }

    pub(crate) fn comment(self, id: u64, written_at: Option<DateTime<Utc>>) -> Self {
        EventOrigin {
            comment_id: Some(id),
            written_at,
            ..self
        }
    }

    pub(crate) fn closed(self, why: Option<&'static str>) -> Self {
        EventOrigin {
            closed: why,
            ..self
        }
    }
}
