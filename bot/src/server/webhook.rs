//! `POST /webhook`: cap the body, verify the signature over the raw bytes, then store.
//!
//! Order matters: nothing in the body is parsed before its HMAC has been checked, and
//! an unsigned request costs at most `max_body_bytes` of reading, never more.

use axum::extract::{FromRequest, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::BodyExt;
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

/// Longest `X-GitHub-Delivery` accepted. GitHub's are GUIDs (36 characters); the bound
/// keeps an attacker's header out of logs and the queue whatever its size.
pub const MAX_DELIVERY_ID_LEN: usize = 128;

/// Whether `id` looks like a delivery id GitHub sends: a GUID, or any short token of
/// letters, digits and `-_.:` (what redeliveries and test tools send). Nothing else is
/// logged or stored.
pub fn valid_delivery_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_DELIVERY_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// Whether `name` can be an `X-GitHub-Event`: GitHub's event names are short
/// lowercase words joined by `_` (`issue_comment`, `pull_request_review`).
pub fn valid_event_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Why ingress refused a request. The response body is a short text: no internals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    MissingHeader(&'static str),
    BadDeliveryId,
    BadEventName,
    UnsupportedMediaType,
    TooLarge,
    BadSignature,
    UnreadableBody,
    /// The body did not arrive in time ([`super::ingress::BODY_READ_TIMEOUT`]).
    SlowBody,
    /// The budgets of bodies being read are spent: try again shortly.
    Busy,
    NotJson,
    /// A signed payload whose field has the wrong shape: the field and why.
    BadField(String),
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let (status, text) = match self {
            Self::MissingHeader("X-GitHub-Event") => {
                (StatusCode::BAD_REQUEST, "missing X-GitHub-Event\n")
            }
            Self::MissingHeader(_) => (StatusCode::BAD_REQUEST, "missing X-GitHub-Delivery\n"),
            Self::BadEventName => (
                StatusCode::BAD_REQUEST,
                "X-GitHub-Event must be a GitHub event name\n",
            ),
            Self::BadDeliveryId => (
                StatusCode::BAD_REQUEST,
                "X-GitHub-Delivery must be a GUID (at most 128 letters, digits and -_.:)\n",
            ),
            Self::UnsupportedMediaType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/json (set the webhook's content type to JSON)\n",
            ),
            Self::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload too large\n"),
            Self::BadSignature => (StatusCode::UNAUTHORIZED, "signature missing or invalid\n"),
            Self::UnreadableBody => (StatusCode::BAD_REQUEST, "cannot read body\n"),
            Self::SlowBody => (StatusCode::REQUEST_TIMEOUT, "body not received in time\n"),
            Self::Busy => {
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(axum::http::header::RETRY_AFTER, "1")],
                    "busy, try again shortly\n",
                )
                    .into_response()
            }
            Self::NotJson => (StatusCode::BAD_REQUEST, "body is not a JSON object\n"),
            Self::BadField(why) => {
                return (StatusCode::BAD_REQUEST, format!("payload {why}\n")).into_response()
            }
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
        // Checked before anything is logged: the headers are unauthenticated input.
        if !valid_event_name(event) {
            metrics.reject("headers");
            if let Some(more) = state.warn_allowed("event_name") {
                tracing::warn!(
                    length = event.len(),
                    more,
                    "webhook with a malformed X-GitHub-Event refused"
                );
            }
            return Err(Rejection::BadEventName);
        }
        if !valid_delivery_id(delivery_id) {
            metrics.reject("headers");
            if let Some(more) = state.warn_allowed("delivery_id") {
                tracing::warn!(
                    length = delivery_id.len(),
                    more,
                    "webhook with a malformed X-GitHub-Delivery refused"
                );
            }
            return Err(Rejection::BadDeliveryId);
        }
        // GitHub sends `application/json` when the hook's content type is JSON (Navin
        // reads nothing else); a missing header is taken as JSON, as the body decides.
        if let Some(kind) = header_str(headers, "content-type") {
            let essence = kind.split(';').next().unwrap_or_default().trim();
            if !essence.eq_ignore_ascii_case("application/json") {
                metrics.reject("media_type");
                if let Some(more) = state.warn_allowed("media_type") {
                    tracing::warn!(delivery = %delivery_id, more, "webhook content type is not JSON");
                }
                return Err(Rejection::UnsupportedMediaType);
            }
        }
        let cap = state.max_body_bytes();
        // A declared length over the cap is refused before a single body byte is read.
        let declared = header_str(headers, "content-length").and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > cap as u64) {
            metrics.reject("too_large");
            if let Some(more) = state.warn_allowed("too_large") {
                tracing::warn!(delivery = %delivery_id, more, "webhook body over the size cap");
            }
            return Err(Rejection::TooLarge);
        }
        // A slot before reading, and the bytes as they arrive: past the budgets, anyone's
        // slow or huge bodies would crowd out GitHub's.
        let sender = parts.extensions.get::<super::ClientAddr>().map(|c| c.0);
        let mut admission = match state.ingress().admit(sender) {
            Ok(admission) => admission,
            Err(refused) => {
                let (reason, what) = match refused {
                    super::ingress::Refused::Full => ("busy", "too many bodies being read"),
                    super::ingress::Refused::SenderShare => (
                        "sender_busy",
                        "this sender holds its share of the bodies being read",
                    ),
                };
                metrics.reject(reason);
                if let Some(more) = state.warn_allowed(reason) {
                    tracing::warn!(delivery = %delivery_id, client = ?sender, more, "webhook refused: {what}");
                }
                return Err(Rejection::Busy);
            }
        };
        // Chunked or lying bodies are cut off at the cap while streaming, slow ones at
        // the read deadline.
        let read = tokio::time::timeout(
            state.ingress().body_timeout(),
            read_body(body, cap, &mut admission),
        )
        .await;
        let body = match read {
            Ok(Ok(body)) => body,
            Ok(Err(rejection)) => {
                let reason = match rejection {
                    Rejection::TooLarge => "too_large",
                    Rejection::Busy => "busy",
                    _ => "body",
                };
                metrics.reject(reason);
                if let Some(more) = state.warn_allowed("body") {
                    tracing::warn!(delivery = %delivery_id, reason, more, "webhook body refused");
                }
                return Err(rejection);
            }
            Err(_) => {
                metrics.reject("slow_body");
                if let Some(more) = state.warn_allowed("slow_body") {
                    tracing::warn!(delivery = %delivery_id, more, "webhook body not received in time");
                }
                return Err(Rejection::SlowBody);
            }
        };
        let signature = headers.get("x-hub-signature-256").map(|v| v.as_bytes());
        if let Err(why) = state.secrets().verify(signature, &body) {
            metrics.reject("signature");
            // Only the delivery id is logged: the body is unauthenticated input.
            if let Some(more) = state.warn_allowed("signature") {
                tracing::warn!(delivery = %delivery_id, reason = %why, more, "webhook signature rejected");
            }
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

/// Reads a body of at most `cap` bytes, holding its bytes in `admission` as they arrive.
async fn read_body(
    mut body: axum::body::Body,
    cap: usize,
    admission: &mut super::ingress::Admission,
) -> Result<Bytes, Rejection> {
    let mut buf = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Rejection::UnreadableBody)?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let len = buf.len() + data.len();
        if len > cap {
            return Err(Rejection::TooLarge);
        }
        if !admission.hold(len) {
            return Err(Rejection::Busy);
        }
        buf.extend_from_slice(&data);
    }
    Ok(buf.freeze())
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
    let mut de = serde_json::Deserializer::from_slice(&webhook.body);
    let envelope: Envelope = match serde_path_to_error::deserialize(&mut de) {
        Ok(envelope) => envelope,
        Err(e) if e.inner().is_data() => {
            // Valid JSON with a field of the wrong shape: say which.
            metrics.reject("body");
            let why = format!("field {}: {}", e.path(), e.inner());
            tracing::warn!(delivery = %webhook.delivery_id, error = %why, "signed webhook payload has a malformed field");
            return Rejection::BadField(why).into_response();
        }
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
    let repository = delivery.repository.clone();
    match state.queue().enqueue(delivery).await {
        Ok(EnqueueOutcome::Queued) => {
            metrics.receive(kind.as_str());
            state.wake_workers();
            tracing::info!(delivery = %delivery_id, event = kind.as_str(), repository = repository.as_deref().unwrap_or(""), outcome = "queued", "delivery queued");
            (StatusCode::ACCEPTED, "queued\n").into_response()
        }
        Ok(EnqueueOutcome::Duplicate) => {
            metrics.duplicates.inc();
            tracing::info!(delivery = %delivery_id, event = kind.as_str(), repository = repository.as_deref().unwrap_or(""), outcome = "duplicate", "duplicate delivery ignored");
            (StatusCode::ACCEPTED, "duplicate\n").into_response()
        }
        Err(e) => {
            tracing::error!(delivery = %delivery_id, error = %e, "cannot store delivery");
            (StatusCode::SERVICE_UNAVAILABLE, "try again later\n").into_response()
        }
    }
}
