//! The parts of an `issue_comment` webhook payload the engine reads, as raw serde types (octocrab's models do not match every real payload).

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
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    pub number: u64,
    #[serde(default)]
    pub body: Option<String>,
    /// Present (with links) when the issue is a pull request's conversation.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    pub full_name: String,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Installation {
    pub id: u64,
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
}
