//! Turns the engine's failures into the Action's one error line, naming the `permissions:` scope when GitHub refused a call with 403.

use navin_bot::github::GitHubError;
use navin_bot::queue::HandlerError;

use crate::error::ActionError;

/// The scope a refused REST call needs and what it was for, from its method and path
/// (`/repos/{owner}/{repo}/<area>/…`); `None` for paths no job scope governs.
pub fn scope_for(method: &str, path: &str) -> Option<(&'static str, &'static str)> {
    let write = !matches!(method, "GET" | "HEAD");
    let rest: Vec<&str> = path
        .split('?')
        .next()
        .unwrap_or_default()
        .trim_start_matches('/')
        .split('/')
        .collect();
    // ["repos", owner, repo, area, ...]
    if rest.first() != Some(&"repos") {
        return None;
    }
    let area = *rest.get(3)?;
    let checks = rest.iter().any(|s| s.starts_with("check-"));
    Some(match (area, write) {
        ("issues", true) => ("issues: write", "comment and react on issues"),
        ("issues", false) => ("issues: read", "read issues and their comments"),
        ("pulls", true) => ("pull-requests: write", "write to pull requests"),
        ("pulls", false) => ("pull-requests: read", "read pull requests"),
        ("check-runs" | "check-suites", true) => ("checks: write", "write check runs"),
        ("check-runs" | "check-suites", false) => ("checks: read", "read check runs"),
        ("commits", _) if checks => ("checks: read", "read check runs"),
        ("contents" | "git" | "commits", true) => ("contents: write", "write repository contents"),
        ("contents" | "git" | "commits", false) => ("contents: read", "read repository contents"),
        ("actions", true) => ("actions: write", "change workflow runs"),
        ("actions", false) => ("actions: read", "read workflow runs"),
        _ => return None,
    })
}

/// Finds `answered 403 to METHOD PATH` (the GitHub client's wording) or a refused git
/// push in `message`, and names the scope that is missing.
pub fn permission_in(message: &str, branch: &str) -> Option<ActionError> {
    if let Some(at) = message.find("answered 403 to ") {
        let rest = &message[at + "answered 403 to ".len()..];
        let mut words = rest.split_whitespace();
        let method = words.next()?;
        let path = words.next()?.trim_end_matches(':');
        let (scope, what) = scope_for(method, path)?;
        return Some(ActionError::Permission {
            scope,
            what: format!("{what} (GitHub refused {method} {path})"),
        });
    }
    let lower = message.to_ascii_lowercase();
    // libgit2 words it `unexpected http status code: 403`; the store prefixes
    // `git:` or `remote <name>:`.
    let from_git = lower.contains("remote ") || lower.contains("git: ");
    let git_refused = from_git && (lower.contains("403") || lower.contains("permission to"));
    git_refused.then(|| ActionError::Permission {
        scope: "contents: write",
        what: format!("push the ledger branch {branch}"),
    })
}

/// The job's failure when the engine gave up on the event.
pub fn from_handler(e: &HandlerError, logged: &[String], branch: &str) -> ActionError {
    let message = crate::event::handler_message(e);
    if let Some(p) = permission_in(message, branch) {
        return p;
    }
    if let Some(p) = logged.iter().find_map(|m| permission_in(m, branch)) {
        return p;
    }
    ActionError::Engine {
        message: message.to_owned(),
        transient: matches!(e, HandlerError::Transient(_)),
    }
}

/// A permission refusal the engine logged while still finishing the event (it answered
/// the command with an error reply): the job fails naming the scope.
pub fn from_logged(logged: &[String], branch: &str) -> Option<ActionError> {
    logged.iter().find_map(|m| permission_in(m, branch))
}

/// A GitHub call the Action made itself.
pub fn from_github(e: &GitHubError, branch: &str) -> ActionError {
    let message = e.to_string();
    permission_in(&message, branch).unwrap_or(ActionError::Engine {
        message,
        transient: e.is_transient(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_calls_name_the_scope_by_area_and_method() {
        assert_eq!(
            scope_for("POST", "/repos/o/r/issues/3/comments").map(|s| s.0),
            Some("issues: write")
        );
        assert_eq!(
            scope_for("PATCH", "/repos/o/r/issues/comments/9").map(|s| s.0),
            Some("issues: write")
        );
        assert_eq!(
            scope_for("POST", "/repos/o/r/check-runs").map(|s| s.0),
            Some("checks: write")
        );
        assert_eq!(
            scope_for("GET", "/repos/o/r/commits/abc/check-runs?filter=all").map(|s| s.0),
            Some("checks: read")
        );
        assert_eq!(
            scope_for("GET", "/repos/o/r/pulls/2").map(|s| s.0),
            Some("pull-requests: read")
        );
        assert_eq!(
            scope_for("GET", "/repos/o/r/git/trees/main?recursive=1").map(|s| s.0),
            Some("contents: read")
        );
        assert_eq!(
            scope_for("GET", "/repos/o/r/collaborators/a/permission"),
            None
        );
        assert_eq!(scope_for("GET", "/app"), None);
    }

    #[test]
    fn a_403_in_an_engine_message_becomes_a_permission_error() {
        let e = permission_in(
            "permanent: GitHub answered 403 to POST /repos/o/r/issues/3/comments: Resource not accessible by integration",
            "navin/ledger",
        )
        .expect("mapped");
        let text = e.to_string();
        assert!(text.contains("`issues: write`"), "{text}");
        assert!(text.contains("POST /repos/o/r/issues/3/comments"), "{text}");
        let push = permission_in(
            "transient: remote origin: unexpected http status code: 403",
            "navin/ledger",
        )
        .expect("git");
        assert!(push.to_string().contains("`contents: write`"), "{push}");
        let libgit2 = permission_in(
            "git: unexpected http status code: 403; class=Http (34)",
            "navin/ledger",
        )
        .expect("libgit2");
        assert!(libgit2.to_string().contains("navin/ledger"), "{libgit2}");
        assert!(permission_in("GitHub answered 404 to GET /repos/o/r", "b").is_none());
    }

    #[test]
    fn other_failures_keep_the_engines_words() {
        let e = from_handler(
            &HandlerError::Permanent("issue_comment payload: missing field `issue`".into()),
            &[],
            "navin/ledger",
        );
        assert!(e.to_string().contains("missing field `issue`"), "{e}");
    }
}
