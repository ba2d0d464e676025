//! Turns the engine's typed failures into the Action's one error line, naming the `permissions:` scope GitHub refused a call for.

use navin_engine::{EngineError, Setback};
use navin_github::{GitHubError, Permission};

use crate::error::ActionError;

fn permission(p: Permission, what: String) -> ActionError {
    ActionError::Permission {
        scope: p.to_string(),
        what,
    }
}

/// The job's failure when the engine gave up on the event.
pub fn from_engine(e: &EngineError, branch: &str) -> ActionError {
    if let EngineError::Store(store) = e {
        if let Some(mapped) = crate::ledger::refused(store, branch) {
            return mapped;
        }
    }
    if let Some(p) = e.missing_permission() {
        return permission(p, refused_call(p, e));
    }
    ActionError::Engine {
        message: e.to_string(),
        transient: e.is_transient(),
    }
}

/// What GitHub refused, for the message: the call when the error names one.
fn refused_call(p: Permission, e: &EngineError) -> String {
    match e {
        EngineError::GitHub(GitHubError::Status { method, path, .. }) => {
            format!("{} (GitHub refused {method} {path})", p.purpose())
        }
        _ => p.purpose().to_owned(),
    }
}

/// A permission refusal the engine met while still finishing the event (it answered
/// the command with an error reply, or fell back to defaults): the job fails naming
/// the scope, since the fix is the workflow's `permissions:`.
pub fn from_setbacks(setbacks: &[Setback], branch: &str) -> Option<ActionError> {
    setbacks.iter().find_map(|s| match s.permission {
        Some(p) => Some(permission(p, format!("{} ({})", p.purpose(), s.what))),
        // The job was given no `ledger-key` on a sealed ledger: the error names the input.
        None if s.needs_ledger_key => Some(ActionError::Ledger {
            branch: branch.to_owned(),
            message: s.message.clone(),
        }),
        None => None,
    })
}

/// A GitHub call the Action made itself.
pub fn from_github(e: &GitHubError) -> ActionError {
    match e.missing_permission() {
        Some(p) => permission(p, p.purpose().to_owned()),
        None => ActionError::Engine {
            message: e.to_string(),
            transient: e.is_transient(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use navin_ledger::store::{RemoteOp, StoreError};

    #[test]
    fn a_403_from_github_names_the_scope_and_the_call() {
        let e = EngineError::GitHub(GitHubError::Status {
            status: 403,
            method: "POST".into(),
            path: "/repos/o/r/issues/3/comments".into(),
            message: "Resource not accessible by integration".into(),
            permission: Permission::needed_for("POST", "/repos/o/r/issues/3/comments"),
        });
        let text = from_engine(&e, "navin/ledger").to_string();
        assert!(text.contains("`issues: write`"), "{text}");
        assert!(text.contains("POST /repos/o/r/issues/3/comments"), "{text}");
    }

    #[test]
    fn a_refused_push_names_contents_write_and_the_branch() {
        let e = EngineError::Store(StoreError::Refused {
            remote: "origin".into(),
            op: RemoteOp::Push,
            status: Some(403),
        });
        let text = from_engine(&e, "navin/ledger").to_string();
        assert!(text.contains("`contents: write`"), "{text}");
        assert!(text.contains("navin/ledger"), "{text}");
    }

    #[test]
    fn a_404_is_not_a_permission_error_and_keeps_the_engines_words() {
        let e = EngineError::GitHub(GitHubError::Status {
            status: 404,
            method: "GET".into(),
            path: "/repos/o/r".into(),
            message: "Not Found".into(),
            permission: None,
        });
        let text = from_engine(&e, "b").to_string();
        assert!(text.contains("GitHub answered 404"), "{text}");
        let e = EngineError::Invalid("check_run: head_sha \"x\" is not a commit id".into());
        assert!(from_engine(&e, "b").to_string().contains("head_sha"));
    }
}
