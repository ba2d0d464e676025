//! GitHub's user sign-in for Apps (web application flow with PKCE): authorize, code exchange, sign-out.
//!
//! `/login/oauth/*` lives on GitHub's web host, not the API, so it is not in the REST
//! description: it follows GitHub's "Generating a user access token for a GitHub App"
//! instead, and the request log marks it `RequestKind::Web`. Where GitHub would show a
//! consent page the fake signs the browser's user in at once. Who that is comes from, in
//! order: the `login=` hint, the browser's fake session cookie (`sign_in_url`), and
//! `set_oauth_user`, so concurrent browsers can be different people.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::Router;
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use rand::distr::{Alphanumeric, SampleString};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::auth::{new_token, rate_counter};
use super::faults::path_matches;
use super::http::{encode, parse_body, str_field, ApiError, ApiResult};
use super::model::{Model, OAuthCode, RefreshToken, Token, TokenFormat, TokenKind};
use super::{FakeGitHub, Inner};

/// The cookie `sign_in_url` sets: the fake's stand-in for GitHub's session cookie. Its
/// path is `/login/oauth`, so pages of a server under test on the same host never see it.
pub const SESSION_COOKIE: &str = "fake_github_user";
/// Authorization codes expire after ten minutes, as GitHub's do.
const CODE_TTL: Duration = Duration::minutes(10);
/// A user access token lives eight hours (`expires_in: 28800`).
const ACCESS_TTL_SECS: i64 = 28_800;
/// A refresh token lives six months (`refresh_token_expires_in: 15897600`).
const REFRESH_TTL_SECS: i64 = 15_897_600;
const TROUBLESHOOTING: &str =
    "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors";
const DELETE_TOKEN: &str = "/applications/*/token";

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/login", get(sign_in))
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/login/oauth/authorize", get(authorize))
        .route("/login/oauth/access_token", post(access_token))
        .route("/applications/{client_id}/token", delete(delete_token))
}

/// Pages of GitHub's web host: no API credentials, not in the REST description. The
/// favicon keeps a browser that shows a fake page from logging a failed load.
pub(super) fn is_web(_method: &str, path: &str) -> bool {
    matches!(path, "/login" | "/favicon.ico") || path.starts_with("/login/oauth/")
}

/// REST requests that authenticate with the App's client id and secret (HTTP Basic),
/// which the route checks itself.
pub(super) fn is_public(method: &str, path: &str) -> bool {
    method == "DELETE" && path_matches(DELETE_TOKEN, path)
}

/// The PKCE S256 challenge of a verifier: base64url (no padding) of its SHA-256.
pub fn pkce_challenge(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A small HTML page, as GitHub shows for what it cannot redirect.
fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{t}</title></head>\
         <body><h1>{t}</h1><p id=\"message\">{m}</p></body></html>",
        t = escape(title),
        m = escape(text)
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response()
}

fn found(location: &str) -> Response {
    let mut resp = StatusCode::FOUND.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::LOCATION, value);
    }
    resp
}

/// `uri` with query parameters appended (GitHub appends to the callback URL as given).
fn with_params(uri: &str, params: &[(&str, &str)]) -> String {
    let query: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{k}={}", encode(v)))
        .collect();
    let sep = if uri.contains('?') { '&' } else { '?' };
    format!("{uri}{sep}{}", query.join("&"))
}

/// Back to the client with `error`, `error_description`, `error_uri` and its `state`.
fn redirect_error(to: &str, error: &str, description: &str, state: Option<&String>) -> Response {
    let error_uri = format!("{TROUBLESHOOTING}#{}", error.replace('_', "-"));
    let mut params = vec![
        ("error", error),
        ("error_description", description),
        ("error_uri", error_uri.as_str()),
    ];
    if let Some(state) = state {
        params.push(("state", state));
    }
    found(&with_params(to, &params))
}

fn random_hex(bytes: usize) -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..bytes)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

/// A PKCE challenge as RFC 7636 spells an S256 one: 43 base64url characters.
fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| {
            percent_encoding::percent_decode_str(v)
                .decode_utf8_lossy()
                .into_owned()
        })
        .filter(|v| !v.is_empty())
}

/// `GET /login?login=<who>[&return_to=<url>]`: the browser is now signed in to the fake
/// as `who` (a cookie), as a person would be on github.com before an App asks them.
async fn sign_in(Query(q): Query<HashMap<String, String>>) -> Response {
    let Some(login) = q.get("login").filter(|l| !l.is_empty()) else {
        return page(
            StatusCode::BAD_REQUEST,
            "Sign in to GitHub",
            "The fake GitHub signs in whoever `login=` names.",
        );
    };
    let mut resp = match q.get("return_to") {
        Some(to) => found(to),
        None => page(
            StatusCode::OK,
            "Signed in",
            &format!("Signed in to the fake GitHub as {login}."),
        ),
    };
    let value = format!(
        "{SESSION_COOKIE}={}; Path=/login/oauth; HttpOnly; SameSite=Lax",
        encode(login)
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        resp.headers_mut().insert(header::SET_COOKIE, value);
    }
    resp
}

/// `GET /login/oauth/authorize`: a one-time code for the signed-in person, sent to the
/// callback as `?code=..&state=..`. An unknown client id is a 404 page; a `redirect_uri`
/// other than a registered callback URL goes back to the first registered one with
/// `error=redirect_uri_mismatch`, as on GitHub.
async fn authorize(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let mut model = inner.model();
    let client_id = q.get("client_id").cloned().unwrap_or_default();
    if client_id != model.app.client_id {
        return page(
            StatusCode::NOT_FOUND,
            "Not Found",
            &format!("No GitHub App has the client id {client_id:?}."),
        );
    }
    let state = q.get("state");
    let registered = model.app.callback_urls.clone();
    let Some(first) = registered.first() else {
        return page(
            StatusCode::BAD_REQUEST,
            "No callback URL",
            "The App has no callback URL: register one (FakeGitHubBuilder::callback_url or FakeGitHub::add_callback_url).",
        );
    };
    let redirect = match q.get("redirect_uri") {
        None => first.clone(),
        Some(uri) if registered.contains(uri) => uri.clone(),
        Some(_) => {
            return redirect_error(
                first,
                "redirect_uri_mismatch",
                "The redirect_uri MUST match the registered callback URL for this application.",
                state,
            )
        }
    };
    let challenge = match (
        q.get("code_challenge"),
        q.get("code_challenge_method").map(String::as_str),
    ) {
        (None, None) => None,
        (Some(c), Some("S256")) if valid_challenge(c) => Some(c.clone()),
        (_, Some(method)) if method != "S256" => {
            return redirect_error(
                &redirect,
                "invalid_request",
                "code_challenge_method must be S256; plain is not supported.",
                state,
            )
        }
        _ => return redirect_error(
            &redirect,
            "invalid_request",
            "code_challenge (43 base64url characters) and code_challenge_method=S256 go together.",
            state,
        ),
    };
    let who = q
        .get("login")
        .filter(|l| !l.is_empty())
        .cloned()
        .or_else(|| cookie(&headers, SESSION_COOKIE))
        .or_else(|| model.oauth.default_user.clone());
    let Some(login) = who else {
        return page(
            StatusCode::UNAUTHORIZED,
            "Sign in to GitHub",
            "Nobody is signed in to the fake GitHub: call FakeGitHub::set_oauth_user, open FakeGitHub::sign_in_url in this browser, or pass login= here.",
        );
    };
    model.user(&login);
    let code = random_hex(10);
    model.oauth.codes.insert(
        code.clone(),
        OAuthCode {
            login,
            client_id,
            redirect_uri: q.get("redirect_uri").cloned(),
            code_challenge: challenge,
            expires_at: Utc::now() + CODE_TTL,
        },
    );
    let mut params = vec![("code", code.as_str())];
    if let Some(state) = state {
        params.push(("state", state.as_str()));
    }
    found(&with_params(&redirect, &params))
}

/// `key=value&...` with `+` for spaces, as forms and query strings are encoded.
fn form_pairs(text: &str) -> impl Iterator<Item = (String, String)> + '_ {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    text.split('&').filter(|p| !p.is_empty()).map(move |pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(k), decode(v))
    })
}

/// `Authorization: Basic base64(client_id:client_secret)`.
fn basic_pair(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let (id, secret) = String::from_utf8(decoded)
        .ok()?
        .split_once(':')
        .map(|(a, b)| (a.to_string(), b.to_string()))?;
    Some((id, secret))
}

/// Parameters from the query, a form or JSON body, and Basic client credentials.
fn token_params(headers: &HeaderMap, query: Option<&str>, body: &[u8]) -> HashMap<String, String> {
    let mut params: HashMap<String, String> = form_pairs(query.unwrap_or("")).collect();
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if json {
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(body) {
            for (k, v) in map {
                let v = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                params.insert(k, v);
            }
        }
    } else {
        params.extend(form_pairs(&String::from_utf8_lossy(body)));
    }
    if let Some((id, secret)) = basic_pair(headers) {
        params.entry("client_id".into()).or_insert(id);
        params.entry("client_secret".into()).or_insert(secret);
    }
    params
}

/// Answers in JSON when the client accepts it, else form-encoded as GitHub does by default.
fn token_reply(headers: &HeaderMap, fields: &[(&str, Value)]) -> Response {
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"));
    if wants_json {
        let body: serde_json::Map<String, Value> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        return (StatusCode::OK, axum::Json(Value::Object(body))).into_response();
    }
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={}", encode(s)),
            other => format!("{k}={other}"),
        })
        .collect();
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            "application/x-www-form-urlencoded; charset=utf-8",
        )],
        body.join("&"),
    )
        .into_response()
}

/// GitHub reports a failed exchange with status 200 and an `error` field.
fn token_error(headers: &HeaderMap, error: &str, description: &str) -> Response {
    token_reply(
        headers,
        &[
            ("error", json!(error)),
            ("error_description", json!(description)),
            (
                "error_uri",
                json!(format!("{TROUBLESHOOTING}/#{}", error.replace('_', "-"))),
            ),
        ],
    )
}

/// Records a user access token (`ghu_`) and its refresh token (`ghr_`) for `login`.
pub(super) fn issue_user_tokens(
    model: &mut Model,
    login: &str,
    now: DateTime<Utc>,
) -> (String, String) {
    let user = model.user(login);
    let access = new_token("ghu", TokenFormat::Classic, 0);
    let refresh = format!("ghr_{}", Alphanumeric.sample_string(&mut rand::rng(), 76));
    let app_id = model.app.id;
    model.tokens.insert(
        access.clone(),
        Token {
            token: access.clone(),
            kind: TokenKind::UserAccess,
            login: login.to_string(),
            user_id: user.id,
            repos: None,
            permissions: Default::default(),
            expires_at: now + Duration::seconds(ACCESS_TTL_SECS),
            app_id: Some(app_id),
            rate: rate_counter(5000, now),
            revoked: false,
        },
    );
    model.oauth.refresh_tokens.insert(
        refresh.clone(),
        RefreshToken {
            login: login.to_string(),
            expires_at: now + Duration::seconds(REFRESH_TTL_SECS),
        },
    );
    (access, refresh)
}

/// `POST /login/oauth/access_token`: a code (or a refresh token) for a user access token.
///
/// Checks the App's client id and secret, that the code is known, unexpired, unused and
/// was issued to this client, that `redirect_uri` (when sent) is the one authorized, and
/// the PKCE verifier when the authorization carried a challenge. The code is spent by
/// the first exchange that names it, right or wrong, so a verifier cannot be guessed.
/// GitHub does not document its wording for a failed PKCE check; the fake answers
/// RFC 7636's `invalid_grant`, so clients should treat any `error` as failure.
async fn access_token(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    uri: axum::http::Uri,
    body: Bytes,
) -> Response {
    let params = token_params(&headers, uri.query(), &body);
    let get = |k: &str| params.get(k).map(String::as_str).unwrap_or("");
    let now = Utc::now();
    let mut model = inner.model();
    if get("client_id") != model.app.client_id || get("client_secret") != model.app.client_secret {
        return token_error(
            &headers,
            "incorrect_client_credentials",
            "The client_id and/or client_secret passed are incorrect.",
        );
    }
    let login = match get("grant_type") {
        "" | "authorization_code" => {
            let Some(code) = model.oauth.codes.remove(get("code")) else {
                return token_error(
                    &headers,
                    "bad_verification_code",
                    "The code passed is incorrect or expired.",
                );
            };
            if code.client_id != get("client_id") || code.expires_at <= now {
                return token_error(
                    &headers,
                    "bad_verification_code",
                    "The code passed is incorrect or expired.",
                );
            }
            let authorized = code
                .redirect_uri
                .clone()
                .or_else(|| model.app.callback_urls.first().cloned())
                .unwrap_or_default();
            if params.contains_key("redirect_uri") && get("redirect_uri") != authorized {
                return token_error(
                    &headers,
                    "redirect_uri_mismatch",
                    "The redirect_uri MUST match the registered callback URL for this application.",
                );
            }
            if let Some(challenge) = &code.code_challenge {
                if pkce_challenge(get("code_verifier")) != *challenge {
                    return token_error(
                        &headers,
                        "invalid_grant",
                        "The code_verifier does not match the code_challenge of the authorization request.",
                    );
                }
            }
            code.login
        }
        "refresh_token" => match model.oauth.refresh_tokens.remove(get("refresh_token")) {
            Some(refresh) if refresh.expires_at > now => refresh.login,
            _ => {
                return token_error(
                    &headers,
                    "bad_refresh_token",
                    "The refresh token passed is incorrect or expired.",
                )
            }
        },
        _ => {
            return token_error(
                &headers,
                "unsupported_grant_type",
                "The grant type is not supported.",
            )
        }
    };
    let (access, refresh) = issue_user_tokens(&mut model, &login, now);
    token_reply(
        &headers,
        &[
            ("access_token", json!(access)),
            ("expires_in", json!(ACCESS_TTL_SECS)),
            ("refresh_token", json!(refresh)),
            ("refresh_token_expires_in", json!(REFRESH_TTL_SECS)),
            ("scope", json!("")),
            ("token_type", json!("bearer")),
        ],
    )
}

/// `DELETE /applications/{client_id}/token` (Basic auth with the App's client id and
/// secret, body `{"access_token"}`): revokes one user access token, as a sign-out does.
async fn delete_token(
    State(inner): State<Arc<Inner>>,
    Path(client_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let mut model = inner.model();
    let authorized = basic_pair(&headers).is_some_and(|(id, secret)| {
        id == client_id && id == model.app.client_id && secret == model.app.client_secret
    });
    if !authorized {
        return Err(ApiError::new(StatusCode::NOT_FOUND, "Not Found"));
    }
    let Some(token) = str_field(&body, "access_token") else {
        return Err(ApiError::validation(
            "Token",
            "access_token",
            "missing_field",
        ));
    };
    match model.tokens.get_mut(token) {
        Some(t) if t.kind == TokenKind::UserAccess => {
            t.revoked = true;
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        _ => Err(ApiError::not_found()),
    }
}

impl FakeGitHub {
    /// Who `/login/oauth/authorize` signs in when the request names nobody (no `login=`
    /// hint, no session cookie from `sign_in_url`).
    pub fn set_oauth_user(&self, login: &str) {
        let mut model = self.inner.model();
        model.user(login);
        model.oauth.default_user = Some(login.to_string());
    }

    /// Open this in a browser to sign that browser in to the fake as `login` (a cookie on
    /// the fake's `/login/oauth` path): then its sign-ins are `login`'s, whatever
    /// `set_oauth_user` says, so several browsers can be different people at once.
    pub fn sign_in_url(&self, login: &str) -> String {
        format!("{}/login?login={}", self.inner.base_url, encode(login))
    }

    /// Registers one more callback URL on the App (a server that learns its port after
    /// the fake started). `redirect_uri` must equal one of them exactly.
    pub fn add_callback_url(&self, url: &str) {
        self.inner.model().app.callback_urls.push(url.to_string());
    }

    /// Replaces the App's callback URLs; the first is where a request without
    /// `redirect_uri`, or with a wrong one, is sent.
    pub fn set_callback_urls(&self, urls: &[&str]) {
        self.inner.model().app.callback_urls = urls.iter().map(|u| u.to_string()).collect();
    }

    /// The App's client id (`client_id` of the sign-in flow).
    pub fn client_id(&self) -> String {
        self.inner.model().app.client_id.clone()
    }

    /// The App's client secret, which the code exchange requires.
    pub fn client_secret(&self) -> String {
        self.inner.model().app.client_secret.clone()
    }

    /// A user access token (`ghu_`) for `login`, as if the web flow had just run.
    pub fn mint_user_access_token(&self, login: &str) -> String {
        issue_user_tokens(&mut self.inner.model(), login, Utc::now()).0
    }

    /// Revokes a token (as GitHub does when a person revokes the App's authorization):
    /// it then answers 401 Bad credentials.
    pub fn revoke_token(&self, token: &str) {
        if let Some(t) = self.inner.model().tokens.get_mut(token) {
            t.revoked = true;
        }
    }

    /// Ages every unexchanged authorization code past its ten minutes.
    pub fn expire_oauth_codes(&self) {
        let past = Utc::now() - Duration::seconds(1);
        for code in self.inner.model().oauth.codes.values_mut() {
            code.expires_at = past;
        }
    }
}
