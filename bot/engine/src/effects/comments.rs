//! Navin's own comments on GitHub: find by hidden marker, create once, edit in place; replies and reactions.

use navin_domain::render::{parse_marker, Marker};
use navin_github::ops;
use navin_github::{GitHubError, InstallationClient, MarkerInComments, WriteProbe};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct IssueComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    user: Option<Author>,
}

#[derive(Debug, Deserialize)]
struct Author {
    #[serde(default)]
    login: String,
    #[serde(rename = "type", default)]
    kind: String,
}

impl IssueComment {
    /// Only a bot's comment can be Navin's: a person pasting a marker into their own
    /// comment must not get it edited (or counted as the panel).
    fn by_a_bot(&self) -> bool {
        self.user.as_ref().is_some_and(|u| {
            u.kind.eq_ignore_ascii_case("bot") || u.login.to_ascii_lowercase().ends_with("[bot]")
        })
    }
}

/// An existing comment of ours.
#[derive(Debug, Clone)]
pub struct Found {
    pub id: u64,
    pub body: String,
    /// Where people see it (the Action's `plan-url` output).
    pub html_url: Option<String>,
}

fn comments_path(repo: &str, issue: u64) -> String {
    ops::issue_comments(repo, issue)
}

/// The first comment on the issue whose first-line marker satisfies `wanted`.
/// Pages through every comment, so a crash between create and remember never leads
/// to a second comment.
pub async fn find_marked(
    client: &InstallationClient,
    repo: &str,
    issue: u64,
    wanted: impl Fn(&Marker) -> bool,
) -> Result<Option<Found>, GitHubError> {
    let mut next = Some(format!("{}?per_page=100", comments_path(repo, issue)));
    while let Some(path) = next {
        let page = client.get(&path).await?;
        let comments: Vec<IssueComment> = page.json(&path)?;
        for c in comments {
            if !c.by_a_bot() {
                continue;
            }
            let body = c.body.unwrap_or_default();
            if parse_marker(&body).is_some_and(|m| wanted(&m)) {
                return Ok(Some(Found {
                    id: c.id,
                    body,
                    html_url: c.html_url,
                }));
            }
        }
        next = page.next_page();
    }
    Ok(None)
}

/// What [`upsert`] did, for logs and request accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upserted {
    Created,
    Edited,
    Unchanged,
}

/// Creates the comment identified by `wanted`, or edits it in place when its body differs.
pub async fn upsert(
    client: &InstallationClient,
    repo: &str,
    issue: u64,
    wanted: impl Fn(&Marker) -> bool,
    probe_marker: &str,
    body: String,
) -> Result<Upserted, GitHubError> {
    match find_marked(client, repo, issue, wanted).await? {
        Some(found) if found.body == body => Ok(Upserted::Unchanged),
        Some(found) => {
            client
                .write_idempotent(ops::update_issue_comment(repo, found.id, &body))
                .await?;
            Ok(Upserted::Edited)
        }
        None => {
            let probe = MarkerInComments {
                comments_path: comments_path(repo, issue),
                marker: probe_marker.to_owned(),
            };
            let request = ops::create_issue_comment(repo, issue, &body);
            client.write(request, &probe).await?;
            Ok(Upserted::Created)
        }
    }
}

/// The hidden line that ties a reply to the command that caused it (delivery id and
/// command index), so a retried delivery finds its earlier reply instead of posting again.
pub fn op_tag(op_id: &str) -> String {
    let safe: String = op_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '#' | '.'))
        .collect();
    format!("<!-- navin:op {safe} -->")
}

/// Posts a reply once per command: on a retried delivery (`recheck`) the issue is
/// searched for the reply's op tag first.
pub async fn reply_once(
    client: &InstallationClient,
    repo: &str,
    issue: u64,
    op_id: &str,
    body: &str,
    recheck: bool,
) -> Result<(), GitHubError> {
    let tag = op_tag(op_id);
    let probe = MarkerInComments {
        comments_path: comments_path(repo, issue),
        marker: tag.clone(),
    };
    if recheck && probe.already_applied(client).await? {
        return Ok(());
    }
    let body = format!("{}\n{tag}\n", body.trim_end());
    let request = ops::create_issue_comment(repo, issue, &body);
    client.write(request, &probe).await?;
    Ok(())
}

/// Reacts to the command's comment (`+1` accepted, `eyes` seen and answered).
/// Reacting twice with the same content is harmless on GitHub.
pub async fn react(
    client: &InstallationClient,
    repo: &str,
    comment_id: u64,
    content: &str,
) -> Result<(), GitHubError> {
    client
        .write_idempotent(ops::create_comment_reaction(repo, comment_id, content))
        .await?;
    Ok(())
}
