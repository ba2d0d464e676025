//! The one call made with no credential at all: turning an App manifest's one-time code into the new App's id, key and secrets.

use std::time::Duration;

use bytes::Bytes;
use http::header::{ACCEPT, USER_AGENT};
use http::{Method, Uri};
use http_body_util::BodyExt;
use octocrab::Octocrab;

use crate::response::transport_message;
use crate::GitHubError;

/// GitHub's answer to `POST /app-manifests/{code}/conversions`, unparsed: the status
/// and the body, so the caller can say what a 404 (a spent or expired code) means.
#[derive(Debug)]
pub struct ManifestAnswer {
    pub status: http::StatusCode,
    pub body: Bytes,
}

/// Exchanges `code` at `api_url` (`https://api.github.com` or a GHES `/api/v3`). The
/// endpoint takes no authentication; the code itself is the credential, so it is sent
/// once and never retried.
pub async fn convert_manifest(api_url: &str, code: &str) -> Result<ManifestAnswer, GitHubError> {
    // The code lands in the URL's path: anything but a plain token is refused, not sent.
    if code.is_empty()
        || !code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(GitHubError::InvalidRequest(format!(
            "the manifest code `{}` is not one GitHub hands out",
            code.chars().take(40).collect::<String>()
        )));
    }
    let base = api_url.trim_end_matches('/');
    let uri: Uri = format!("{base}/app-manifests/{code}/conversions")
        .parse()
        .map_err(|e| GitHubError::Client(format!("API URL `{api_url}`: {e}")))?;
    let http = Octocrab::builder()
        .base_uri(base)
        .map_err(|e| GitHubError::Client(e.to_string()))?
        .add_header(
            USER_AGENT,
            concat!("navin/", env!("CARGO_PKG_VERSION")).to_owned(),
        )
        .set_read_timeout(Some(Duration::from_secs(60)))
        .build()
        .map_err(|e| GitHubError::Client(e.to_string()))?;
    let request = http::Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(ACCEPT, "application/vnd.github+json")
        .header("x-github-api-version", "2022-11-28")
        .body(String::new())
        .map_err(|e| GitHubError::Client(e.to_string()))?;
    let response = http.execute(request).await.map_err(|e| transport(&e))?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map_err(|e| transport(&e))?.to_bytes();
    Ok(ManifestAnswer {
        status: parts.status,
        body,
    })
}

fn transport(e: &dyn std::error::Error) -> GitHubError {
    GitHubError::Transport {
        method: "POST".to_owned(),
        path: "/app-manifests/{code}/conversions".to_owned(),
        message: transport_message(e),
    }
}
