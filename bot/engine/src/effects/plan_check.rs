//! Navin's check runs on a pull request's head (`navin/plan`, `navin/config`): found by name on that SHA and updated in place, created once per head.

use chrono::{SecondsFormat, Utc};
pub use navin_domain::check::{
    CheckAction, CheckAnnotation, CheckState, PlanCheck, BROKEN_TITLE, CHECK_NAME, MAX_ACTIONS,
};
use navin_github::ops;
use navin_github::{GitHubError, InstallationClient, WriteProbe};
use serde::Deserialize;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;

/// GitHub takes at most 50 annotations per request.
const MAX_ANNOTATIONS: usize = 50;

/// What [`sync`] did, for logs and request accounting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synced {
    Created,
    Updated,
    Unchanged,
}

#[derive(Debug, Deserialize)]
struct RunList {
    check_runs: Vec<Run>,
}

#[derive(Debug, Deserialize)]
struct Run {
    id: u64,
    name: String,
    #[serde(default)]
    conclusion: Option<String>,
    #[serde(default)]
    output: Option<Output>,
}

#[derive(Debug, Deserialize)]
struct Output {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

/// GitHub's limit on `output.summary` (characters).
const MAX_SUMMARY: usize = 65_535;

/// At most `max` characters, cut on a character boundary with an ellipsis.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The newest run named `name` on `sha`, if any.
async fn find(
    client: &InstallationClient,
    repo: &str,
    sha: &str,
    name: &str,
) -> Result<Option<Run>, GitHubError> {
    let path = ops::check_runs_named(repo, sha, name);
    let list: RunList = client.get_json(&path).await?;
    Ok(list
        .check_runs
        .into_iter()
        .filter(|r| r.name == name)
        .max_by_key(|r| r.id))
}

/// A completed run's writable fields. `details_url` must be absolute http(s); GitHub
/// shows it as the place to act when the conclusion is `action_required`.
fn body(check: &PlanCheck, details_url: Option<&str>, external_id: &str) -> Value {
    let summary = clip(&check.summary, MAX_SUMMARY);
    let mut body = json!({
        "status": "completed",
        "conclusion": check.conclusion(),
        "completed_at": Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true),
        "external_id": external_id,
        "output": { "title": check.title, "summary": summary },
    });
    if let Some(url) = details_url.filter(|u| u.starts_with("http")) {
        body["details_url"] = json!(url);
    }
    let actions: Vec<Value> = check
        .actions
        .iter()
        .take(MAX_ACTIONS)
        .map(|a| {
            json!({
                "label": clip(&a.label, 20),
                "description": clip(&a.description, 40),
                "identifier": a.identifier,
            })
        })
        .collect();
    body["actions"] = json!(actions);
    if !check.annotations.is_empty() {
        let marks: Vec<Value> = check
            .annotations
            .iter()
            .take(MAX_ANNOTATIONS)
            .map(|a| {
                json!({
                    "path": a.path,
                    "start_line": a.line.max(1),
                    "end_line": a.line.max(1),
                    "annotation_level": a.level,
                    "title": clip(&a.title, 255),
                    "message": clip(&a.message, 64 * 1024),
                })
            })
            .collect();
        body["output"]["annotations"] = json!(marks);
    }
    body
}

/// Puts `check` on `sha`: edits the existing `navin/plan` run when it says something
/// else, leaves it when it already says this, creates one when the head has none.
/// "Says" is conclusion, title and summary: GitHub does not return a run's `actions`,
/// so a check's buttons must follow from what it says (the plan check's summary names
/// the button and the text it approves).
pub async fn sync(
    client: &InstallationClient,
    repo: &str,
    sha: &str,
    check: &PlanCheck,
    details_url: Option<&str>,
    external_id: &str,
) -> Result<Synced, GitHubError> {
    let target = Target {
        repo,
        sha,
        name: CHECK_NAME,
    };
    sync_named(client, target, check, details_url, external_id).await
}

/// Which check run: its name on one head of one repository.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub repo: &'a str,
    pub sha: &'a str,
    /// `navin/plan`, `navin/config`: each of Navin's checks has one run per head.
    pub name: &'a str,
}

/// [`sync`] for any of Navin's checks: the same find-edit-or-create on one head, so
/// `navin/config` is written exactly as `navin/plan` is.
pub async fn sync_named(
    client: &InstallationClient,
    target: Target<'_>,
    check: &PlanCheck,
    details_url: Option<&str>,
    external_id: &str,
) -> Result<Synced, GitHubError> {
    let Target { repo, sha, name } = target;
    if let Some(run) = find(client, repo, sha, name).await? {
        let output = run.output.as_ref();
        // A head's files never change, so its broken plan file stays broken: a review or
        // an edit of the PR body must not turn that run green or back to waiting.
        let broken_file = run.conclusion.as_deref() == Some("failure")
            && output
                .and_then(|o| o.title.as_deref())
                .is_some_and(|t| t.starts_with(BROKEN_TITLE));
        if broken_file && check.verdict != CheckState::Broken {
            return Ok(Synced::Unchanged);
        }
        let summary = clip(&check.summary, MAX_SUMMARY);
        let same = run.conclusion.as_deref() == Some(check.conclusion())
            && output.and_then(|o| o.title.as_deref()) == Some(check.title.as_str())
            && output.and_then(|o| o.summary.as_deref()) == Some(summary.as_str());
        if same {
            return Ok(Synced::Unchanged);
        }
        match client
            .write_idempotent(ops::update_check_run(
                repo,
                run.id,
                body(check, details_url, external_id),
            ))
            .await
        {
            Ok(_) => return Ok(Synced::Updated),
            // Another app's run of the same name: ours is created beside it.
            Err(e) if e.status() == Some(403) => {}
            Err(e) => return Err(e),
        }
    }
    let mut create = body(check, details_url, external_id);
    create["name"] = json!(name);
    create["head_sha"] = json!(sha);
    let probe = RunOnHead {
        repo: repo.to_owned(),
        sha: sha.to_owned(),
        name: name.to_owned(),
    };
    client
        .write(ops::create_check_run(repo, create), &probe)
        .await?;
    Ok(Synced::Created)
}

/// After an ambiguous failure of the create: a run of that name now on the head means
/// it landed (the next event corrects its conclusion if needed).
struct RunOnHead {
    repo: String,
    sha: String,
    name: String,
}

impl WriteProbe for RunOnHead {
    fn already_applied<'a>(
        &'a self,
        client: &'a InstallationClient,
    ) -> Pin<Box<dyn Future<Output = Result<bool, GitHubError>> + Send + 'a>> {
        Box::pin(async move {
            Ok(find(client, &self.repo, &self.sha, &self.name)
                .await?
                .is_some())
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn bodies_carry_the_conclusion_and_only_absolute_details_urls() {
        let check = PlanCheck {
            verdict: CheckState::Waiting,
            title: "t".into(),
            summary: "s".into(),
            annotations: vec![],
            actions: vec![],
        };
        let b = body(&check, Some("https://github.com/o/r/pull/1"), "pr-1");
        assert_eq!(
            b["actions"],
            json!([]),
            "sent empty, so an update clears them"
        );
        assert_eq!(b["conclusion"], "action_required");
        assert_eq!(b["status"], "completed");
        assert_eq!(b["output"]["summary"], "s");
        assert_eq!(b["details_url"], "https://github.com/o/r/pull/1");
        assert!(body(&check, Some("/relative"), "pr-1")
            .get("details_url")
            .is_none());
        let long = PlanCheck {
            summary: "é".repeat(MAX_SUMMARY + 10),
            ..check.clone()
        };
        let summary = body(&long, None, "pr-1")["output"]["summary"].clone();
        assert_eq!(summary.as_str().unwrap().chars().count(), MAX_SUMMARY);
        let ok = PlanCheck {
            verdict: CheckState::Approved,
            ..check.clone()
        };
        assert_eq!(ok.conclusion(), "success");
        let broken = PlanCheck {
            verdict: CheckState::Broken,
            ..check
        };
        assert_eq!(broken.conclusion(), "failure");
    }

    #[test]
    fn buttons_go_out_within_githubs_limits() {
        let action = CheckAction {
            label: "A label longer than twenty".into(),
            description: "d".repeat(60),
            identifier: "approve-0123456789ab".into(),
        };
        let check = PlanCheck {
            verdict: CheckState::Waiting,
            title: "t".into(),
            summary: "s".into(),
            annotations: vec![],
            actions: vec![action; 5],
        };
        let b = body(&check, None, "pr-1");
        let sent = b["actions"].as_array().unwrap();
        assert_eq!(sent.len(), MAX_ACTIONS);
        assert_eq!(sent[0]["label"].as_str().unwrap().chars().count(), 20);
        assert_eq!(sent[0]["description"].as_str().unwrap().chars().count(), 40);
        assert_eq!(sent[0]["identifier"], "approve-0123456789ab");
    }
}
