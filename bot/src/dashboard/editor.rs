//! The plan editor's handlers: the edit page, live validation by the one plan parser, and saving as a base-hash-checked ledger edit merged section by section.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::{Form, Json};
use navin_ledger::plan::PlanDocument;
use serde::Deserialize;

use super::access::Role;
use super::markdown;
use super::pages::editor::{ConflictView, EditorPage, Problem};
use super::pages::{self};
use super::session::random_token;
use super::signed_in::{readable, view_of, SignedIn};
use super::{Dashboard, DashboardError};

/// The largest plan text the editor takes (a plan is a few KB; this bounds the parser's
/// work per keystroke and what a save can store).
pub const MAX_PLAN_BYTES: usize = navin_engine::MAX_PLAN_BYTES;

fn must_write(role: Role) -> Result<(), DashboardError> {
    if role >= Role::Write {
        Ok(())
    } else {
        Err(DashboardError::Forbidden(
            "Editing a plan needs write access to the repository (the same as `/plan edit`). Ask a maintainer for it, or comment on the plan's issue instead.".into(),
        ))
    }
}

pub async fn edit(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name, id)): Path<(String, String, String)>,
) -> Result<Response, DashboardError> {
    let access = who.access(&dashboard).await?;
    let repo = readable(&access, &owner, &name)?;
    must_write(repo.role)?;
    let view = view_of(&dashboard, &repo).await?;
    let entry = view.plan(&id).ok_or(DashboardError::NotFound)?;
    let record = entry.record.as_ref().map_err(|p| {
        DashboardError::BadRequest(format!(
            "This plan's record cannot be read, so it cannot be edited here: {p}"
        ))
    })?;
    let edit_id = random_token();
    let chrome = who.chrome(&dashboard, &access);
    let page = pages::editor::render(
        &chrome,
        &EditorPage {
            repo: &repo.full_name,
            plan_id: &entry.id,
            text: &entry.text,
            base_hash: &record.hash,
            edit_id: &edit_id,
            problem: None,
            conflicts: Vec::new(),
        },
    );
    Ok(Html(page.into_string()).into_response())
}

#[derive(Debug, Deserialize)]
pub struct ValidateBody {
    text: String,
}

/// `POST …/validate`: the first problem the plan parser finds, at its line and
/// section, and the rendered preview. Read access suffices; nothing is stored.
pub async fn validate(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    headers: HeaderMap,
    Path((owner, name, _id)): Path<(String, String, String)>,
    Json(body): Json<ValidateBody>,
) -> Result<Response, DashboardError> {
    who.check_csrf(headers.get("x-csrf-token").and_then(|v| v.to_str().ok()))?;
    let access = who.access(&dashboard).await?;
    readable(&access, &owner, &name)?;
    if body.text.len() > MAX_PLAN_BYTES {
        return Ok((
            StatusCode::PAYLOAD_TOO_LARGE,
            Json(serde_json::json!({"ok": false, "message": format!("the plan is {} bytes; the editor takes at most {MAX_PLAN_BYTES}", body.text.len())})),
        )
            .into_response());
    }
    let preview = markdown::to_html(&body.text);
    let answer = match PlanDocument::parse(&body.text) {
        Ok(doc) => serde_json::json!({"ok": true, "hash": doc.hash(), "preview_html": preview}),
        Err(e) => {
            let p = Problem::from_error(&e);
            serde_json::json!({"ok": false, "line": p.line, "section": p.section, "message": p.message, "preview_html": preview})
        }
    };
    Ok(Json(answer).into_response())
}

#[derive(Debug, Deserialize)]
pub struct SaveForm {
    #[serde(default)]
    csrf: Option<String>,
    base_hash: String,
    edit_id: String,
    text: String,
}

/// `POST …/plans/{id}`: the engine records the edit against the base the editor
/// started from; others' edits since are merged section by section, and a real
/// conflict comes back with both versions for the saver to resolve.
pub async fn save(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name, id)): Path<(String, String, String)>,
    Form(form): Form<SaveForm>,
) -> Result<Response, DashboardError> {
    who.check_csrf(form.csrf.as_deref())?;
    let access = who.access(&dashboard).await?;
    let repo = readable(&access, &owner, &name)?;
    must_write(repo.role)?;
    if form.text.len() > MAX_PLAN_BYTES {
        return Err(DashboardError::BadRequest(format!(
            "The plan is {} bytes; the editor takes at most {MAX_PLAN_BYTES}. Shorten it and save again.",
            form.text.len()
        )));
    }
    if form.edit_id.len() > 64 || form.base_hash.len() > 128 {
        return Err(DashboardError::BadRequest(
            "This form is damaged; reload the editor.".into(),
        ));
    }
    let request = navin_engine::PlanEditRequest {
        installation: repo.installation,
        repository: repo.repository(),
        plan_id: id.clone(),
        base_hash: form.base_hash.clone(),
        text: form.text.clone(),
        editor: who.user.login.clone(),
        editor_id: who.user.user_id,
        edit_id: format!("dashboard-{}", form.edit_id),
    };
    use navin_engine::PlanEditOutcome as Outcome;
    let outcome = dashboard.engine.edit_plan(request).await?;
    let plan_url = dashboard.path(&format!("/r/{}/plans/{id}", repo.full_name));
    let chrome = who.chrome(&dashboard, &access);
    // The editor again; `edit_id` is a fresh one when the text to save next is a new
    // save (a resolution), not a retry of this one.
    let editor_again = |text: &str,
                        base: &str,
                        edit_id: &str,
                        problem: Option<Problem>,
                        conflicts: Vec<ConflictView>,
                        status: StatusCode| {
        let page = pages::editor::render(
            &chrome,
            &EditorPage {
                repo: &repo.full_name,
                plan_id: &id,
                text,
                base_hash: base,
                edit_id,
                problem,
                conflicts,
            },
        );
        (status, Html(page.into_string())).into_response()
    };
    Ok(match outcome {
        Outcome::Saved {
            hash,
            merged_sections,
        } => {
            let merged: Vec<String> = merged_sections.iter().map(ToString::to_string).collect();
            let url = format!(
                "{plan_url}?saved={}&merged={}",
                super::oauth::urlencode(hash.get(..12).unwrap_or(&hash)),
                super::oauth::urlencode(&merged.join(", "))
            );
            Redirect::to(&url).into_response()
        }
        Outcome::Unchanged => Redirect::to(&plan_url).into_response(),
        Outcome::Invalid(e) => editor_again(
            &form.text,
            &form.base_hash,
            &form.edit_id,
            Some(Problem::from_error(&e)),
            Vec::new(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        Outcome::Conflict {
            current_hash,
            draft,
            conflicts,
            invalid,
            ..
        } => {
            let views = conflicts
                .into_iter()
                .map(|c| ConflictView {
                    section: c.section.to_string(),
                    yours: c.ours,
                    current: c.theirs,
                })
                .collect();
            editor_again(
                &draft,
                &current_hash,
                &random_token(),
                invalid.as_ref().map(Problem::from_error),
                views,
                StatusCode::CONFLICT,
            )
        }
        Outcome::UnknownBase {
            current_hash,
            current_text,
        } => {
            // Too old a base to merge with: both whole texts side by side, the current
            // one in the editor, as for a conflict of every section.
            let whole = ConflictView {
                section:
                    "The whole plan (your editor was opened on a version too old to merge with)"
                        .to_owned(),
                yours: form.text.clone(),
                current: current_text.clone(),
            };
            editor_again(
                &current_text,
                &current_hash,
                &random_token(),
                None,
                vec![whole],
                StatusCode::CONFLICT,
            )
        }
        Outcome::NotAllowed { reason } => return Err(DashboardError::Forbidden(reason)),
        Outcome::NotFound => return Err(DashboardError::NotFound),
    })
}
