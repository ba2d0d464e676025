//! `POST /webhook`: cap the body, verify the signature over the raw bytes, then store.
//!
//! Order matters: nothing in the body is parsed before its HMAC has been checked, and
//! an unsigned request costs at most `max_body_bytes` of reading, never more.

use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Deserialize;

use super::AppState;
use crate::queue::worker::now_ms;
use crate::queue::{classify, Classification, EnqueueOutcome, NewDelivery};

/// GitHub headers kept with a stored delivery (the signatures are not needed after
/// verification and are dropped).
const KEPT_HEADERS: [&str; 7] = [
    "x-github-event",
    "x-github-delivery",
    "x-github-hook-id",
    "x-github-hook-installation-target-id",
    "x-github-hook-installation-target-type",
    "user-agent",
    "content-type",
];

/// Why ingress refused a request. The response body is a fixed short text: no internals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    MissingHeader(&'static str),
    TooLarge,
    BadSignature,
    UnreadableBody,
    NotJson,
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let (status, text) = match self {
            Self::MissingHeader("X-GitHub-Event") => {
                (StatusCode::BAD_REQUEST, "missing X-GitHub-Event\n")
            }
            Self::MissingHeader(_) => (StatusCode::BAD_REQUEST, "missing X-GitHub-Delivery\n"),
            Self::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload too large\n"),
            Self::BadSignature => (StatusCode::UNAUTHORIZED, "signature missing or invalid\n"),
            Self::UnreadableBody => (StatusCode::BAD_REQUEST, "cannot read body\n"),
            Self::NotJson => (StatusCode::BAD_REQUEST, "body is not a JSON object\n"),
        };
        (status, text).into_response()
    }
}

/// A delivery whose signature checked out: headers plus the raw body as signed.
#[derive(Debug)]
pub struct VerifiedWebhook {
    pub event: String,
    pub delivery_id: String,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

impl FromRequest<AppState> for VerifiedWebhook {
    type Rejection = Rejection;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let metrics = state.metrics();
        let (parts, body) = req.into_parts();
        let headers = &parts.headers;
        let Some(event) = header_str(headers, "x-github-event") else {
            metrics.reject("headers");
            return Err(Rejection::MissingHeader("X-GitHub-Event"));
        };
        let Some(delivery_id) = header_str(headers, "x-github-delivery") else {
            metrics.reject("headers");
            return Err(Rejection::MissingHeader("X-GitHub-Delivery"));
        };
        let cap = state.max_body_bytes();
        // A declared length over the cap is refused before a single body byte is read.
        let declared = header_str(headers, "content-length").and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > cap as u64) {
            metrics.reject("too_large");
            tracing::warn!(delivery = %delivery_id, "webhook body over the size cap");
            return Err(Rejection::TooLarge);
        }
        // Chunked or lying bodies are cut off at the cap while streaming.
        let body = match Limited::new(body, cap).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                metrics.reject("too_large");
                tracing::warn!(delivery = %delivery_id, "webhook body over the size cap");
                return Err(Rejection::TooLarge);
            }
            Err(_) => {
                metrics.reject("body");
                return Err(Rejection::UnreadableBody);
            }
        };
        let signature = headers.get("x-hub-signature-256").map(|v| v.as_bytes());
        if let Err(why) = state.secrets().verify(signature, &body) {
            metrics.reject("signature");
            // Only the delivery id is logged: the body is unauthenticated input.
            tracing::warn!(delivery = %delivery_id, reason = %why, "webhook signature rejected");
            return Err(Rejection::BadSignature);
        }
        let kept = KEPT_HEADERS
            .iter()
            .filter_map(|name| {
                header_str(headers, name).map(|v| ((*name).to_owned(), v.to_owned()))
            })
            .collect();
        Ok(Self {
            event: event.to_owned(),
            delivery_id: delivery_id.to_owned(),
            headers: kept,
            body,
        })
    }
}

/// The few payload fields the queue needs; the rest is skipped unparsed.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    repository: Option<RepositoryRef>,
    #[serde(default)]
    installation: Option<InstallationRef>,
}

#[derive(Deserialize)]
struct RepositoryRef {
    full_name: String,
}

#[derive(Deserialize)]
struct InstallationRef {
    id: u64,
}

/// Stores the delivery, then answers: 202 once it is durable (or already known), 200 for
/// `ping`, 202 without storing for events Navin ignores, 503 if the queue cannot write
/// (GitHub then records a failed delivery that the reconciler will redeliver).
pub async fn receive(State(state): State<AppState>, webhook: VerifiedWebhook) -> Response {
    let metrics = state.metrics();
    let envelope: Envelope = match serde_json::from_slice(&webhook.body) {
        Ok(envelope) => envelope,
        Err(_) => {
            metrics.reject("body");
            tracing::warn!(delivery = %webhook.delivery_id, "signed webhook body is not a JSON object");
            return Rejection::NotJson.into_response();
        }
    };
    let kind = match classify(&webhook.event, envelope.action.as_deref()) {
        Classification::Ping => {
            metrics.receive("ping");
            tracing::info!(delivery = %webhook.delivery_id, "ping");
            return (StatusCode::OK, "pong\n").into_response();
        }
        Classification::Ignore => {
            metrics.ignored.inc();
            tracing::debug!(delivery = %webhook.delivery_id, event = %webhook.event, "event not handled");
            return (StatusCode::ACCEPTED, "ignored\n").into_response();
        }
        Classification::Handle(kind) => kind,
    };
    let delivery = NewDelivery {
        delivery_id: webhook.delivery_id,
        event: webhook.event,
        action: envelope.action,
        repository: envelope.repository.map(|r| r.full_name),
        installation_id: envelope.installation.map(|i| i.id),
        headers: webhook.headers,
        body: webhook.body,
        received_at_ms: now_ms(),
    };
    let delivery_id = delivery.delivery_id.clone();
    match state.queue().enqueue(delivery).await {
        Ok(EnqueueOutcome::Queued) => {
            metrics.receive(kind.as_str());
            state.wake_workers();
            tracing::info!(delivery = %delivery_id, event = kind.as_str(), "delivery queued");
            (StatusCode::ACCEPTED, "queued\n").into_response()
        }
        Ok(EnqueueOutcome::Duplicate) => {
            metrics.duplicates.inc();
            tracing::info!(delivery = %delivery_id, "duplicate delivery ignored");
            (StatusCode::ACCEPTED, "duplicate\n").into_response()
        }
        Err(e) => {
            tracing::error!(delivery = %delivery_id, error = %e, "cannot store delivery");
            (StatusCode::SERVICE_UNAVAILABLE, "try again later\n").into_response()
        }
    }
}
