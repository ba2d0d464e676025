//! The deliveries page and its redeliver button: admins only, the role re-checked per request, the request sent through the App's deliveries API.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use chrono::{DateTime, Duration as Span, Utc};
use serde::Deserialize;

use super::access::Role;
use super::pages::deliveries::DeliveryView;
use super::pages::{self};
use super::signed_in::{CsrfFormFields, SignedIn};
use super::{Dashboard, DashboardError};
use crate::queue::{DeliveryFilter, DeliveryRow, DeliveryState, MAX_LIST_LIMIT};

/// Rows shown on the page.
const PAGE_ROWS: usize = 100;
/// Pages of GitHub's delivery log searched for a delivery's attempt id.
const LOG_PAGES: usize = 10;

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    redelivered: Option<String>,
    #[serde(default)]
    problem: Option<String>,
}

fn view(row: DeliveryRow) -> DeliveryView {
    DeliveryView {
        received_at: DateTime::<Utc>::from_timestamp_millis(row.received_at_ms),
        delivery_id: row.delivery_id,
        event: row.event,
        action: row.action,
        repository: row.repository,
        state: row.state.as_str().to_owned(),
        attempts: row.attempts,
        last_error: row.last_error,
    }
}

/// The repositories this person administers: whose deliveries they may see.
fn administered(access: &super::access::AccessList) -> Vec<String> {
    access
        .repos
        .iter()
        .filter(|r| r.role == Role::Admin)
        .map(|r| r.full_name.clone())
        .collect()
}

fn not_admin() -> DashboardError {
    DashboardError::Forbidden(
        "Deliveries are shown to administrators of a repository the App is installed on.".into(),
    )
}

pub async fn list(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Query(query): Query<ListQuery>,
) -> Result<Response, DashboardError> {
    let access = who.access(&dashboard).await?;
    let admin_of = administered(&access);
    if admin_of.is_empty() {
        return Err(not_admin());
    }
    let rows = dashboard
        .queue
        .list(DeliveryFilter {
            states: vec![
                DeliveryState::Queued,
                DeliveryState::Running,
                DeliveryState::Failed,
            ],
            repositories: Some(admin_of),
            before_seq: None,
            limit: PAGE_ROWS,
        })
        .await
        .map_err(|e| DashboardError::Internal(format!("queue: {e}")))?;
    let rows: Vec<DeliveryView> = rows.into_iter().map(view).collect();
    let flash = match (&query.redelivered, &query.problem) {
        (Some(id), _) => Some((
            format!("Asked GitHub to redeliver {id}; it runs again when it arrives."),
            true,
        )),
        (None, Some(p)) => Some((p.clone(), false)),
        _ => None,
    };
    let chrome = who.chrome(&dashboard, &access);
    let page = pages::deliveries::render(
        &chrome,
        &rows,
        flash.as_ref().map(|(t, ok)| (t.as_str(), *ok)),
    );
    Ok(Html(page.into_string()).into_response())
}

/// `POST /deliveries/{id}/redeliver`: the delivery must be one of an administered
/// repository, by the role the commands' lookup gives now (not the cached list).
pub async fn redeliver(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path(delivery_id): Path<String>,
    Form(form): Form<CsrfFormFields>,
) -> Result<Response, DashboardError> {
    who.check_csrf(form.csrf.as_deref())?;
    if delivery_id.len() > 100 {
        return Err(DashboardError::NotFound);
    }
    let access = who.access(&dashboard).await?;
    let admin_of = administered(&access);
    let row = failed_delivery(&dashboard, admin_of, &delivery_id)
        .await?
        .ok_or(DashboardError::NotFound)?;
    let repo = row
        .repository
        .as_deref()
        .and_then(|full| full.split_once('/'))
        .and_then(|(o, n)| access.find(o, n))
        .ok_or(DashboardError::NotFound)?;
    let role = dashboard
        .engine
        .role_of(
            repo.installation,
            &repo.repository(),
            &who.user.login,
            who.user.user_id,
        )
        .await?;
    if role != "admin" {
        return Err(not_admin());
    }
    let back =
        |q: String| Redirect::to(&format!("{}?{q}", dashboard.path("/deliveries"))).into_response();
    let since = DateTime::<Utc>::from_timestamp_millis(row.received_at_ms).unwrap_or_else(Utc::now)
        - Span::minutes(10);
    let log = dashboard.github.hook_deliveries(since, LOG_PAGES).await?;
    let Some(attempt) = log
        .iter()
        .filter(|d| d.guid == delivery_id)
        .max_by_key(|d| d.delivered_at)
    else {
        return Ok(back(format!("problem={}", super::oauth::urlencode("GitHub's delivery log no longer lists this delivery (it keeps them for a few days), so it cannot be redelivered."))));
    };
    dashboard.github.redeliver(attempt.id).await?;
    tracing::info!(delivery = %delivery_id, by = %who.user.login, "redelivery requested from the dashboard");
    Ok(back(format!(
        "redelivered={}",
        super::oauth::urlencode(&delivery_id)
    )))
}

/// Pages of failed deliveries searched for the one to redeliver.
const FIND_PAGES: usize = 10;

/// The failed delivery `id` among the administered repositories' deliveries; `None`
/// when it is not there (another repository's, not failed, or pruned).
async fn failed_delivery(
    dashboard: &Dashboard,
    repositories: Vec<String>,
    id: &str,
) -> Result<Option<DeliveryRow>, DashboardError> {
    let mut before_seq = None;
    for _ in 0..FIND_PAGES {
        let page = dashboard
            .queue
            .list(DeliveryFilter {
                states: vec![DeliveryState::Failed],
                repositories: Some(repositories.clone()),
                before_seq,
                limit: MAX_LIST_LIMIT,
            })
            .await
            .map_err(|e| DashboardError::Internal(format!("queue: {e}")))?;
        let Some(last) = page.last().map(|r| r.seq) else {
            return Ok(None);
        };
        if let Some(row) = page.into_iter().find(|r| r.delivery_id == id) {
            return Ok(Some(row));
        }
        before_seq = Some(last);
    }
    Ok(None)
}
