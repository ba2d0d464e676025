//! Sign-in through the App's own user authorization (OAuth web flow with `state` and PKCE S256); the user token stays in the server's session table.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use navin_github::ApiRequest;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::session::{
    pkce_challenge, random_token, same_token, LOGIN_COOKIE, LOGIN_TTL, SESSION_COOKIE, SESSION_TTL,
};
use super::{Dashboard, DashboardError};

#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    #[serde(default)]
    return_to: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct CallbackQuery {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_description: Option<String>,
}

/// A cookie with the attributes every dashboard cookie carries.
pub fn cookie(name: &str, value: &str, path: &str, max_age_secs: u64) -> HeaderValue {
    let path = if path.is_empty() { "/" } else { path };
    let text = format!(
        "{name}={value}; Path={path}; Max-Age={max_age_secs}; HttpOnly; Secure; SameSite=Lax"
    );
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The value of cookie `name` in the request, if sent.
pub fn read_cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Where a sign-in may send the browser back to: only a path inside the dashboard,
/// never another site (`//evil`, `https://…`) or a path outside the prefix.
pub fn safe_return(dashboard: &Dashboard, wanted: Option<&str>) -> String {
    let home = dashboard.path("/missions");
    let Some(wanted) = wanted else { return home };
    let inside = if dashboard.base.is_empty() {
        wanted.starts_with('/')
    } else {
        wanted == dashboard.base || wanted.starts_with(&format!("{}/", dashboard.base))
    };
    // Checked on the decoded value, as a browser reads it: it drops tabs and newlines
    // and takes `\` for `/`, so `/\t/host` and `/\host` are other sites.
    let plain = !wanted
        .chars()
        .any(|c| c.is_control() || c.is_whitespace() || c == '\\');
    if inside && plain && !wanted.starts_with("//") {
        wanted.to_owned()
    } else {
        home
    }
}

/// `/login`: remembers a PKCE verifier under a fresh `state`, binds the state to this
/// browser with a short cookie, and sends the browser to GitHub.
pub async fn login(
    State(dashboard): State<Arc<Dashboard>>,
    client: Option<axum::Extension<crate::server::client_addr::ClientAddr>>,
    Query(query): Query<LoginQuery>,
) -> Response {
    let verifier = random_token();
    let challenge = pkce_challenge(&verifier);
    let return_to = safe_return(&dashboard, query.return_to.as_deref());
    let client = client.map(|axum::Extension(c)| c.0);
    let state = dashboard.sessions.start_login(verifier, return_to, client);
    let web = dashboard.config.web_url.trim_end_matches('/');
    let url = format!(
        "{web}/login/oauth/authorize?client_id={}&redirect_uri={}&state={state}&code_challenge={challenge}&code_challenge_method=S256",
        urlencode(&dashboard.config.client_id),
        urlencode(&dashboard.config.callback_url()),
    );
    let mut response = Redirect::to(&url).into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        cookie(
            LOGIN_COOKIE,
            &dashboard.sessions.signed(&state),
            &dashboard.path("/auth"),
            LOGIN_TTL.as_secs(),
        ),
    );
    response
}

#[derive(Debug, Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    access_token: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct GitHubUser {
    id: u64,
    login: String,
}

/// `/auth/callback`: checks `state` against the browser's cookie, exchanges the code
/// with the PKCE verifier, asks GitHub who the token belongs to and opens a session.
pub async fn callback(
    State(dashboard): State<Arc<Dashboard>>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Result<Response, DashboardError> {
    if let Some(error) = query.error.as_deref() {
        tracing::info!(
            error,
            description = query.error_description.as_deref().unwrap_or(""),
            "GitHub sign-in refused"
        );
        return Err(DashboardError::BadRequest(
            "GitHub did not complete the sign-in (it was cancelled or refused). Start again from the sign-in link.".into(),
        ));
    }
    let (Some(code), Some(state)) = (query.code.as_deref(), query.state.as_deref()) else {
        return Err(DashboardError::BadRequest(
            "This sign-in link is incomplete. Start again from the sign-in link.".into(),
        ));
    };
    let bound = read_cookie(&headers, LOGIN_COOKIE).and_then(|c| dashboard.sessions.verify(c));
    if !bound.is_some_and(|b| same_token(&b, state)) {
        return Err(DashboardError::BadRequest(
            "This sign-in was not started in this browser, or it expired. Start again from the sign-in link.".into(),
        ));
    }
    let Some(pending) = dashboard.sessions.finish_login(state) else {
        return Err(DashboardError::BadRequest(
            "This sign-in expired or was already used. Start again from the sign-in link.".into(),
        ));
    };
    let token = exchange(&dashboard, code, &pending.verifier).await?;
    let user_path = "/user";
    let user: GitHubUser = dashboard
        .github
        .user_request(&token, ApiRequest::get(user_path))
        .await?
        .json(user_path)?;
    tracing::info!(login = %user.login, user_id = user.id, "dashboard sign-in");
    let id = dashboard.sessions.create(user.login, user.id, token);
    dashboard.access.forget(user.id);
    let mut response = Redirect::to(&pending.return_to).into_response();
    let headers = response.headers_mut();
    headers.append(
        header::SET_COOKIE,
        cookie(
            SESSION_COOKIE,
            &dashboard.sessions.signed(&id),
            &dashboard.path(""),
            SESSION_TTL.as_secs(),
        ),
    );
    headers.append(
        header::SET_COOKIE,
        cookie(LOGIN_COOKIE, "", &dashboard.path("/auth"), 0),
    );
    Ok(response)
}

/// `POST <web>/login/oauth/access_token` with the client secret and the verifier.
async fn exchange(
    dashboard: &Dashboard,
    code: &str,
    verifier: &str,
) -> Result<SecretString, DashboardError> {
    let web = dashboard.config.web_url.trim_end_matches('/');
    let callback = dashboard.config.callback_url();
    let form = [
        ("client_id", dashboard.config.client_id.as_str()),
        (
            "client_secret",
            dashboard.config.client_secret.expose_secret(),
        ),
        ("code", code),
        ("redirect_uri", callback.as_str()),
        ("code_verifier", verifier),
    ];
    let response = dashboard
        .http
        .post(format!("{web}/login/oauth/access_token"))
        .header(header::ACCEPT, "application/json")
        .form(&form)
        .send()
        .await
        .map_err(|e| {
            DashboardError::Internal(format!("sign-in token exchange: {}", e.without_url()))
        })?;
    let status = response.status();
    let answer: TokenAnswer = response.json().await.map_err(|e| {
        DashboardError::Internal(format!(
            "sign-in token exchange answered {status}: {}",
            e.without_url()
        ))
    })?;
    match (answer.access_token, answer.error) {
        (Some(token), None) if !token.is_empty() => Ok(SecretString::from(token)),
        (_, error) => {
            tracing::warn!(
                status = status.as_u16(),
                error = error.as_deref().unwrap_or("no token"),
                "GitHub refused the sign-in code"
            );
            Err(DashboardError::BadRequest(
                "GitHub did not accept this sign-in (the code expired or was used). Start again from the sign-in link.".into(),
            ))
        }
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters kept).
pub fn urlencode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Revokes the user token at sign-out (`DELETE /applications/{client_id}/token`, the
/// App's client id and secret as Basic auth), so a copy of it is worthless. A failure is
/// logged: the session is gone either way.
pub async fn revoke(dashboard: &Dashboard, token: &SecretString) {
    let api = dashboard.github_api_url.trim_end_matches('/');
    let url = format!(
        "{api}/applications/{}/token",
        urlencode(&dashboard.config.client_id)
    );
    let sent = dashboard
        .http
        .delete(url)
        .basic_auth(
            &dashboard.config.client_id,
            Some(dashboard.config.client_secret.expose_secret()),
        )
        .header(header::ACCEPT, "application/vnd.github+json")
        .json(&serde_json::json!({ "access_token": token.expose_secret() }))
        .send()
        .await;
    match sent {
        Ok(r) if r.status().is_success() => {}
        Ok(r) => tracing::warn!(
            status = r.status().as_u16(),
            "GitHub did not revoke a signed-out user's token"
        ),
        Err(e) => {
            tracing::warn!(error = %e.without_url(), "cannot reach GitHub to revoke a signed-out user's token")
        }
    }
}
