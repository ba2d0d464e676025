//! Response helpers shared by the fake's routes: GitHub's error shape, pagination, JSON bodies.

use std::collections::HashMap;

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

const DOCS: &str = "https://docs.github.com/rest";

/// An error as GitHub renders it: `{"message", "documentation_url", "status"}`.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub errors: Option<Box<Value>>,
    pub headers: Vec<(&'static str, String)>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            errors: None,
            headers: Vec::new(),
        }
    }

    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "Not Found")
    }

    pub fn bad_credentials() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Bad credentials")
    }

    pub fn forbidden_integration() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "Resource not accessible by integration",
        )
    }

    /// 422 with one `errors[]` entry, as GitHub reports a bad field.
    pub fn validation(resource: &str, field: &str, code: &str) -> Self {
        let mut err = Self::new(StatusCode::UNPROCESSABLE_ENTITY, "Validation Failed");
        err.errors = Some(Box::new(
            json!([{ "resource": resource, "field": field, "code": code }]),
        ));
        err
    }

    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    pub fn body(&self) -> Value {
        let mut body = json!({
            "message": self.message,
            "documentation_url": DOCS,
            "status": self.status.as_u16().to_string(),
        });
        if let Some(errors) = &self.errors {
            body["errors"] = (**errors).clone();
        }
        body
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.status, axum::Json(body)).into_response();
        for (name, value) in self.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().insert(name, value);
            }
        }
        response
    }
}

pub type ApiResult = Result<Response, ApiError>;

pub fn ok(value: Value) -> ApiResult {
    Ok((StatusCode::OK, axum::Json(value)).into_response())
}

pub fn created(value: Value) -> ApiResult {
    Ok((StatusCode::CREATED, axum::Json(value)).into_response())
}

pub fn no_content() -> ApiResult {
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Parses a JSON request body; GitHub answers 400 "Problems parsing JSON" otherwise.
pub fn parse_body(bytes: &[u8]) -> Result<Value, ApiError> {
    if bytes.is_empty() {
        return Ok(json!({}));
    }
    serde_json::from_slice(bytes)
        .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "Problems parsing JSON"))
}

pub fn str_field<'a>(body: &'a Value, field: &str) -> Option<&'a str> {
    body.get(field).and_then(Value::as_str)
}

/// `page`/`per_page` as GitHub reads them (defaults 1 and 30, per_page capped at 100).
pub fn page_params(query: &HashMap<String, String>) -> (usize, usize) {
    let page = query
        .get("page")
        .and_then(|p| p.parse().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(1);
    let per_page = query
        .get("per_page")
        .and_then(|p| p.parse().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(30usize)
        .min(100);
    (page, per_page)
}

/// Slices one page and builds the `Link` header GitHub sends (`next`, `last`, `first`, `prev`).
pub fn paginate(
    items: Vec<Value>,
    query: &HashMap<String, String>,
    page_url: &str,
) -> (Vec<Value>, Option<HeaderValue>) {
    let (page, per_page) = page_params(query);
    let total = items.len();
    let last = total.div_ceil(per_page).max(1);
    let slice: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let link_to = |p: usize| {
        let mut pairs: Vec<(String, String)> = query
            .iter()
            .filter(|(k, _)| *k != "page" && *k != "per_page")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        pairs.sort();
        pairs.push(("per_page".into(), per_page.to_string()));
        pairs.push(("page".into(), p.to_string()));
        let qs: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        format!("<{}?{}>", page_url, qs.join("&"))
    };
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("{}; rel=\"prev\"", link_to(page - 1)));
    }
    if page < last {
        links.push(format!("{}; rel=\"next\"", link_to(page + 1)));
        links.push(format!("{}; rel=\"last\"", link_to(last)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", link_to(1)));
    }
    let header = if links.is_empty() {
        None
    } else {
        HeaderValue::from_str(&links.join(", ")).ok()
    };
    (slice, header)
}

/// A JSON response with an optional `Link` header.
pub fn with_link(status: StatusCode, body: Value, link: Option<HeaderValue>) -> Response {
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(link) = link {
        response.headers_mut().insert("link", link);
    }
    response
}

pub fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Characters not allowed raw in a URL path segment (GitHub writes `navin%5Bbot%5D`).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

pub fn encode_segment(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()
}

/// RFC 3339 with a `Z`, the way GitHub prints timestamps.
pub fn ts(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
