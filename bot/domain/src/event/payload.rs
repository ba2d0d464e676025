//! The parts of each handled webhook payload the engine reads, as raw serde types (octocrab's models do not match every real payload).

use serde::Deserialize;

/// `issue_comment` (`created` or `edited`).
#[derive(Debug, Clone, Deserialize)]
pub struct CommentEvent {
    pub action: String,
    pub comment: Comment,
    pub issue: Issue,
    pub repository: Repository,
    pub installation: Option<Installation>,
    #[serde(default)]
    pub changes: Option<Changes>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    pub user: User,
    /// When the comment was written and last edited (ISO 8601, as GitHub sends them).
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub updated_at: Option<String>,
}

impl Comment {
    /// When the commands of this event were written: the comment's creation, or on
    /// `edited` its last edit (which added the new commands). A `/plan edit` is merged
    /// with the plan texts stored after this. `None` when absent or unreadable.
    pub fn written_at(&self, action: &str) -> Option<chrono::DateTime<chrono::Utc>> {
        let stamp = match action {
            "edited" => self.updated_at.as_deref(),
            _ => self.created_at.as_deref(),
        }?;
        chrono::DateTime::parse_from_rfc3339(stamp)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc))
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    /// The numeric user id: the identity that survives renames.
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

/// `issues` (`opened`): a new issue the classifier may plan without `/plan`.
#[derive(Debug, Clone, Deserialize)]
pub struct IssuesEvent {
    pub action: String,
    pub issue: Issue,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

/// `navin_sweep`: Navin's clock tick for one repository ([`crate::sweeps`]); the server
/// and the Action make it, GitHub never sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct SweepEvent {
    pub repository: Repository,
    pub installation: Option<Installation>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    pub number: u64,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    /// Who opened it.
    #[serde(default)]
    pub user: Option<User>,
    /// Present (with links) when the issue is a pull request's conversation.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
    /// `open` or `closed` (a closed or merged pull request's conversation is `closed`).
    #[serde(default)]
    pub state: Option<String>,
    /// Conversation locked to collaborators.
    #[serde(default)]
    pub locked: Option<bool>,
}

impl Issue {
    /// Why commands that change things should not run here: the issue or pull request
    /// is closed (merged included) or locked.
    pub fn closed_for_changes(&self) -> Option<&'static str> {
        if self.state.as_deref() == Some("closed") {
            Some(if self.pull_request.is_some() {
                "closed (or merged)"
            } else {
                "closed"
            })
        } else if self.locked == Some(true) {
            Some("locked")
        } else {
            None
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    pub full_name: String,
    /// The numeric id, which installation tokens are narrowed to.
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Installation {
    pub id: u64,
    /// Who installed the App; `installation` events carry it, and its `html_url` is
    /// the only web address they hold (GHES included).
    #[serde(default)]
    pub account: Option<Account>,
}

/// The account an App is installed on.
#[derive(Debug, Clone, Deserialize)]
pub struct Account {
    pub login: String,
    #[serde(default)]
    pub html_url: Option<String>,
}

/// On `edited`: what the body was before, so only newly added commands run.
#[derive(Debug, Clone, Deserialize)]
pub struct Changes {
    #[serde(default)]
    pub body: Option<ChangedText>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChangedText {
    pub from: String,
}

/// `pull_request` (`opened`, `synchronize`, `edited`, `closed`, …).
#[derive(Debug, Clone, Deserialize)]
pub struct PullRequestEvent {
    pub action: String,
    pub pull_request: PullRequest,
    pub repository: Repository,
    pub installation: Option<Installation>,
    #[serde(default)]
    pub sender: Option<User>,
    /// On `synchronize`: the head before the push.
    #[serde(default)]
    pub before: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    pub user: User,
    pub head: GitRef,
    pub base: GitRef,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub merged: Option<bool>,
    /// A draft is work in progress; see `evidence.drafts`.
    #[serde(default)]
    pub draft: Option<bool>,
    /// Set once merged; the one merge field the REST "list" shapes also carry.
    #[serde(default)]
    pub merged_at: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    /// How many files the pull request changes; in the single pull request's shape
    /// (`GET /pulls/{n}`, webhooks), not the list's. Zero for a head that changes
    /// nothing against its base (an empty commit pushed for green CI).
    #[serde(default)]
    pub changed_files: Option<u64>,
}

/// A pull request's `head` or `base`. `repo` is null when a fork was deleted.
#[derive(Debug, Clone, Deserialize)]
pub struct GitRef {
    #[serde(rename = "ref")]
    pub name: String,
    pub sha: String,
    #[serde(default)]
    pub repo: Option<RepoName>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RepoName {
    pub full_name: String,
}

/// `pull_request_review` (`submitted`, `edited`, `dismissed`). Webhook review states
/// are lowercase (`approved`, `changes_requested`, `commented`, `dismissed`).
#[derive(Debug, Clone, Deserialize)]
pub struct ReviewEvent {
    pub action: String,
    pub review: Review,
    pub pull_request: PullRequest,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Review {
    pub id: u64,
    /// Null when the reviewer's account was deleted.
    #[serde(default)]
    pub user: Option<User>,
    pub state: String,
    #[serde(default)]
    pub commit_id: Option<String>,
    #[serde(default)]
    pub submitted_at: Option<String>,
}

/// `check_run` (`completed`). The run object keeps its own tolerant type.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckRunEvent {
    pub action: String,
    pub check_run: crate::evidence::CheckRunPayload,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

/// `check_run` `requested_action`: a person clicked one of a check run's buttons (the
/// `actions` the App set on it). GitHub sends it only to the App that created the run,
/// and sends back only the button's `identifier`.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckRunActionEvent {
    pub action: String,
    pub check_run: ClickedRun,
    pub requested_action: RequestedAction,
    /// Who clicked.
    pub sender: User,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

/// The check run whose button was clicked, as the payload carries it.
#[derive(Debug, Clone, Deserialize)]
pub struct ClickedRun {
    pub id: u64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub head_sha: String,
    /// What the App stored with the run (Navin: the plan id); empty or null otherwise.
    #[serde(default)]
    pub external_id: Option<String>,
    #[serde(default)]
    pub app: Option<crate::evidence::AppRef>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RequestedAction {
    pub identifier: String,
}

/// `check_suite` (`completed`): the suite's head; its runs are read from the API.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckSuiteEvent {
    pub action: String,
    pub check_suite: CheckSuite,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CheckSuite {
    pub id: u64,
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    #[serde(default)]
    pub app: Option<crate::evidence::AppRef>,
    #[serde(default)]
    pub conclusion: Option<String>,
}

/// `workflow_run` (`completed`).
#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRunEvent {
    pub action: String,
    pub workflow_run: crate::evidence::WorkflowRunPayload,
    pub repository: Repository,
    pub installation: Option<Installation>,
}

/// `installation` and `installation_repositories`: which installation, and what happened to it.
#[derive(Debug, Clone, Deserialize)]
pub struct InstallationEvent {
    pub action: String,
    pub installation: Installation,
    /// `installation`: the repositories it covers (GitHub lists them on `created` and
    /// `deleted`); `null` or absent reads as none.
    #[serde(default)]
    pub repositories: Option<Vec<InstalledRepository>>,
    /// `installation_repositories` `added`.
    #[serde(default)]
    pub repositories_added: Option<Vec<InstalledRepository>>,
    /// `installation_repositories` `removed`.
    #[serde(default)]
    pub repositories_removed: Option<Vec<InstalledRepository>>,
}

/// A repository as installation events list it: no default branch and no URL.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InstalledRepository {
    pub full_name: String,
    #[serde(default)]
    pub id: Option<u64>,
}

impl CommentEvent {
    /// The web base (`https://github.com`) from the repository's `html_url`.
    pub fn html_base(&self) -> String {
        html_base(&self.repository)
    }
}

/// The web base (`https://github.com`, or a GHES host) from a repository's `html_url`.
pub fn html_base(repository: &Repository) -> String {
    let url = repository.html_url.as_deref().unwrap_or("");
    url.strip_suffix(&format!("/{}", repository.full_name))
        .filter(|base| !base.is_empty())
        .unwrap_or("https://github.com")
        .to_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn event(html_url: Option<&str>) -> CommentEvent {
        let mut v = serde_json::json!({
            "action": "created",
            "comment": {"id": 1, "body": "/help", "user": {"login": "alice", "type": "User"}},
            "issue": {"number": 7, "body": null},
            "repository": {"full_name": "o/r"},
            "installation": {"id": 3}
        });
        if let Some(url) = html_url {
            v["repository"]["html_url"] = url.into();
        }
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn web_base_comes_from_the_repository_url_with_github_as_fallback() {
        assert_eq!(
            event(Some("https://ghe.example.com/o/r")).html_base(),
            "https://ghe.example.com"
        );
        assert_eq!(event(None).html_base(), "https://github.com");
        assert_eq!(
            event(Some("https://x/other/repo")).html_base(),
            "https://github.com"
        );
    }

    #[test]
    fn a_null_issue_body_and_missing_changes_are_accepted() {
        let e = event(None);
        assert!(e.issue.body.is_none() && e.changes.is_none());
        assert_eq!(e.installation.unwrap().id, 3);
    }
    /// Real payloads (tests/fixtures/webhooks, from @octokit/webhooks-examples) parse
    /// into the engine's types, so a field the engine needs is never missing in practice.
    #[test]
    fn real_webhook_payloads_of_every_handled_event_parse() {
        const DIR: &str = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/webhooks/"
        );
        let read = |name: &str| std::fs::read_to_string(format!("{DIR}{name}")).unwrap();
        for name in [
            "pull_request.opened.json",
            "pull_request.synchronize.json",
            "pull_request.closed.json",
        ] {
            let e: PullRequestEvent = serde_json::from_str(&read(name)).unwrap();
            assert!(!e.pull_request.head.sha.is_empty(), "{name}");
        }
        for name in [
            "pull_request_review.submitted.json",
            "pull_request_review.submitted.approved.json",
            "pull_request_review.dismissed.json",
        ] {
            let e: ReviewEvent = serde_json::from_str(&read(name)).unwrap();
            assert!(e.review.id > 0, "{name}");
        }
        let run: CheckRunEvent = serde_json::from_str(&read("check_run.completed.json")).unwrap();
        assert_eq!(run.action, "completed");
        let click: CheckRunActionEvent =
            serde_json::from_str(&read("check_run.requested_action.json")).unwrap();
        assert_eq!(click.requested_action.identifier, "lgtm|26764");
        assert!(click.check_run.app.and_then(|a| a.id).is_some());
        assert!(!click.sender.login.is_empty());
        let suite: CheckSuiteEvent =
            serde_json::from_str(&read("check_suite.completed.json")).unwrap();
        assert!(!suite.check_suite.head_sha.is_empty());
        let wf: WorkflowRunEvent =
            serde_json::from_str(&read("workflow_run.completed.json")).unwrap();
        assert!(wf.workflow_run.id > 0);
        let on_pr: CommentEvent =
            serde_json::from_str(&read("issue_comment.created.on_pull_request.json")).unwrap();
        assert!(on_pr.issue.pull_request.is_some());
    }
}
