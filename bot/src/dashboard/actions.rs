//! `POST /r/{owner}/{repo}/act`: a writer's action on a mission or plan, run by the engine as its slash command, and the repository page again with what it did.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Form;
use navin_engine::{ActOutcome, ActRequest, Action};
use serde::Deserialize;

use super::access::Role;
use super::pages::actions::Acts;
use super::pages::repo::Flash;
use super::pages::{self};
use super::session::random_token;
use super::signed_in::{links, readable, view_of, SignedIn};
use super::{Dashboard, DashboardError};

#[derive(Debug, Deserialize)]
pub struct ActForm {
    #[serde(default)]
    csrf: Option<String>,
    act_id: String,
    action: String,
    /// The plan an approval or rejection is for (`issue-<n>`).
    #[serde(default)]
    plan: String,
    #[serde(default)]
    step: String,
    #[serde(default)]
    question: Option<usize>,
    #[serde(default)]
    text: String,
}

impl ActForm {
    /// The form's key, once its signature shows the server made it for this very
    /// action and target on `repo`.
    fn checked_key(&self, dashboard: &Dashboard, repo: &str) -> Result<String, DashboardError> {
        let damaged = || {
            DashboardError::BadRequest(
                "This form is damaged; reload the page and try again.".into(),
            )
        };
        let (key, signature) = self.act_id.rsplit_once('.').ok_or_else(damaged)?;
        let key_ok = !key.is_empty()
            && key.len() <= 100
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '-'));
        let question = self.question.map(|q| q.to_string()).unwrap_or_default();
        let binding = super::pages::actions::act_binding(
            repo,
            key,
            &self.action,
            &self.plan,
            self.step.trim(),
            &question,
        );
        if !key_ok || !super::session::same_token(&dashboard.sessions.sign(&binding), signature) {
            return Err(damaged());
        }
        Ok(key.to_owned())
    }

    fn action(&self) -> Result<Action, DashboardError> {
        let text = self.text.clone();
        Ok(match self.action.as_str() {
            "approve" => Action::Approve,
            "reject" => Action::Reject { feedback: text },
            "pause" => Action::Pause { reason: text },
            "resume" => Action::Resume,
            "continue" => Action::Continue { note: text },
            "retry" if !self.step.trim().is_empty() => Action::Retry {
                step: self.step.trim().to_owned(),
            },
            "answer" => match (self.question, text.trim().is_empty()) {
                (Some(question), false) if question > 0 => Action::Answer { question, text },
                _ => {
                    return Err(DashboardError::BadRequest(
                        "An answer needs its question and some text. Write the answer and send it again.".into(),
                    ))
                }
            },
            _ => {
                return Err(DashboardError::BadRequest(
                    "This form asks for an action the dashboard does not know; reload the page."
                        .into(),
                ))
            }
        })
    }
}

/// The issue the command belongs on: a plan's own issue for approvals and rejections,
/// the mission's panel issue for the rest. Taken from the ledger, never from the form,
/// so a form cannot aim a command at another issue.
fn issue_for(
    action: &Action,
    form: &ActForm,
    view: &navin_engine::view::RepoView,
) -> Result<u64, DashboardError> {
    if matches!(action, Action::Approve | Action::Reject { .. }) {
        let entry = view.plan(&form.plan).ok_or(DashboardError::NotFound)?;
        return entry
            .id
            .strip_prefix("issue-")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                DashboardError::BadRequest(
                    "A pull request's plan is approved by a review on GitHub, not from here."
                        .into(),
                )
            });
    }
    let ledger = match &view.ledger {
        Ok(Some(ledger)) => ledger,
        Ok(None) => return Err(DashboardError::NotFound),
        Err(problem) => {
            return Err(DashboardError::BadRequest(format!(
                "The ledger branch cannot be read, so nothing can change it: {problem}"
            )))
        }
    };
    ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.issue)
        .ok_or_else(|| {
            DashboardError::BadRequest(
                "This mission has no issue on GitHub to record the change on; use the CLI where it was started."
                    .into(),
            )
        })
}

pub async fn act(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name)): Path<(String, String)>,
    Form(form): Form<ActForm>,
) -> Result<Response, DashboardError> {
    who.check_csrf(form.csrf.as_deref())?;
    let access = who.access(&dashboard).await?;
    let repo = readable(&access, &owner, &name)?;
    let key = form.checked_key(&dashboard, &repo.full_name)?;
    let action = form.action()?;
    let view = view_of(&dashboard, &repo).await?;
    let issue = issue_for(&action, &form, &view)?;
    // The role on the page may be minutes old: the engine reads it from GitHub again.
    let outcome = dashboard
        .engine
        .act(ActRequest {
            installation: repo.installation,
            repository: repo.repository(),
            issue,
            action,
            actor: who.user.login.clone(),
            actor_id: who.user.user_id,
            act_id: key,
        })
        .await?;
    let (status, flash) = match outcome {
        ActOutcome::Done { command } => (
            StatusCode::OK,
            Flash {
                text: format!("Done: {command} (recorded on #{issue})."),
                ok: true,
            },
        ),
        ActOutcome::Refused { reason, todo } => (
            StatusCode::FORBIDDEN,
            Flash {
                text: format!("Nothing changed: {reason}. {todo}"),
                ok: false,
            },
        ),
        ActOutcome::NotFound => return Err(DashboardError::NotFound),
    };
    let view = view_of(&dashboard, &repo).await?;
    let chrome = who.chrome(&dashboard, &access);
    let token = random_token();
    let sign = |binding: &str| dashboard.sessions.sign(binding);
    let acts = (repo.role >= Role::Write).then_some(Acts {
        repo: &repo.full_name,
        token: &token,
        sign: &sign,
    });
    let links = links(&dashboard, &repo);
    let page = pages::repo::render(&chrome, &view, &links, acts, Some(&flash));
    Ok((status, Html(page.into_string())).into_response())
}
