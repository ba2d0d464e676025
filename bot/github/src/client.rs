//! The shared GitHub App client: one octocrab transport, per-installation request lanes,
//! the ETag cache, and the retry loop every request goes through.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::header::{
    HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, ETAG, IF_NONE_MATCH, USER_AGENT,
};
use http::{HeaderMap, Method, StatusCode, Uri};
use http_body_util::BodyExt;
use octocrab::Octocrab;
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::etag::{CachedGet, EtagCache};
use super::jwt::AppKey;
use super::response::{github_message, next_link, transport_message};
use super::retry::{
    self, Attempts, GiveUpReason, Observed, RequestKind, RetryCause, RetryDecision, RetryPolicy,
};
use super::token::{TokenCache, TokenScope};
use super::{GitHubError, RequestObserver};

/// Lane used for requests authenticated as the App itself (no installation has id 0).
pub(super) const APP_LANE: u64 = 0;

/// How the client proves who it is.
#[derive(Clone)]
pub enum Credentials {
    /// A GitHub App: JWTs signed with `key` mint installation tokens on demand.
    App {
        /// JWT `iss`: client id (preferred) or app id.
        issuer: String,
        key: AppKey,
    },
    /// A token that is already minted, such as a workflow's `GITHUB_TOKEN`: every
    /// installation client uses it as it is, and App-only calls are refused, since
    /// nothing can be minted or re-minted from it.
    Token(SecretString),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::App { issuer, .. } => f
                .debug_struct("App")
                .field("issuer", issuer)
                .finish_non_exhaustive(),
            Self::Token(_) => f.write_str("Token(redacted)"),
        }
    }
}

/// Settings for [`GitHubApp::new`].
#[derive(Debug, Clone)]
pub struct GitHubConfig {
    /// `https://api.github.com`, or `https://HOST/api/v3` on GHES.
    pub api_url: String,
    pub credentials: Credentials,
    /// Gap between state-changing requests of one installation.
    pub write_spacing: Duration,
    pub policy: RetryPolicy,
    /// `{owner}`, `{repo}`, `{full_name}` are substituted.
    pub git_url_template: String,
    /// Sent as `X-GitHub-Stateless-S2S-Token` when minting tokens, if set.
    pub stateless_s2s_token: Option<String>,
    /// Per-request read timeout; `None` waits as long as the connection lives.
    pub read_timeout: Option<Duration>,
}

impl GitHubConfig {
    /// Settings for a plain token (a workflow's `GITHUB_TOKEN`): the default retry
    /// policy, a 60 s read timeout, and `write_spacing` between writes.
    pub fn with_token(
        api_url: impl Into<String>,
        token: SecretString,
        git_url_template: impl Into<String>,
        write_spacing: Duration,
    ) -> Self {
        Self {
            api_url: api_url.into(),
            credentials: Credentials::Token(token),
            write_spacing,
            policy: RetryPolicy::default(),
            git_url_template: git_url_template.into(),
            stateless_s2s_token: None,
            read_timeout: Some(Duration::from_secs(60)),
        }
    }
}

/// A request to the REST API. `path` is relative to the API base (raw slashes kept,
/// e.g. `/repos/o/r/contents/.github/navin.yml`) or an absolute URL on the same host
/// (a `Link: rel="next"` target).
#[derive(Debug, Clone)]
pub struct ApiRequest {
    pub method: Method,
    pub path: String,
    pub body: Option<serde_json::Value>,
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiRequest {
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        Self {
            method,
            path: path.into(),
            body: None,
            headers: Vec::new(),
        }
    }

    pub fn get(path: impl Into<String>) -> Self {
        Self::new(Method::GET, path)
    }

    pub fn post(path: impl Into<String>, body: serde_json::Value) -> Self {
        Self::new(Method::POST, path).json(body)
    }

    pub fn patch(path: impl Into<String>, body: serde_json::Value) -> Self {
        Self::new(Method::PATCH, path).json(body)
    }

    pub fn put(path: impl Into<String>, body: serde_json::Value) -> Self {
        Self::new(Method::PUT, path).json(body)
    }

    pub fn delete(path: impl Into<String>) -> Self {
        Self::new(Method::DELETE, path)
    }

    #[must_use]
    pub fn json(mut self, body: serde_json::Value) -> Self {
        self.body = Some(body);
        self
    }

    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    fn is_read(&self) -> bool {
        self.method == Method::GET || self.method == Method::HEAD
    }
}

/// A response GitHub gave (or the ETag cache gave back on a 304).
#[derive(Debug, Clone)]
pub struct ApiResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// True when GitHub answered 304 and this is the cached copy.
    pub from_cache: bool,
}

impl ApiResponse {
    pub fn json<T: DeserializeOwned>(&self, path: &str) -> Result<T, GitHubError> {
        serde_json::from_slice(&self.body).map_err(|e| GitHubError::Decode {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// The `rel="next"` page, if any.
    pub fn next_page(&self) -> Option<String> {
        next_link(&self.headers)
    }
}

/// Serialises one installation's requests and spaces its writes.
#[derive(Debug, Default)]
pub(super) struct Lane {
    last_write: Option<Instant>,
    /// Set by a rate-limit answer: nobody on this lane sends before then.
    blocked_until: Option<Instant>,
}

pub(super) struct Inner {
    pub(super) http: Octocrab,
    pub(super) config: GitHubConfig,
    base: Uri,
    pub(super) tokens: Mutex<HashMap<(u64, TokenScope), Arc<TokenCache>>>,
    lanes: Mutex<HashMap<u64, Arc<tokio::sync::Mutex<Lane>>>>,
    etags: Mutex<EtagCache>,
    pub(super) metrics: Arc<dyn RequestObserver>,
}

/// The App's client. Cheap to clone; one per process.
#[derive(Clone)]
pub struct GitHubApp {
    pub(super) inner: Arc<Inner>,
}

impl std::fmt::Debug for GitHubApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubApp")
            .field("api_url", &self.inner.config.api_url)
            .field("credentials", &self.inner.config.credentials)
            .finish_non_exhaustive()
    }
}

/// How a request authenticates.
pub(super) enum Auth<'a> {
    App,
    Installation(&'a dyn InstallationAuth),
    /// A person's user-to-server token (the dashboard's signed-in user).
    User(&'a SecretString),
}

/// What a write probe returns: whether the write had landed.
pub type ProbeFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, GitHubError>> + Send + 'a>>;

/// A write's probe bound to the installation it writes as: after an ambiguous failure,
/// true when the write had landed.
pub(super) type Probe<'a> = &'a (dyn Fn() -> ProbeFuture<'a> + Sync + 'a);

/// The installation's side of the retry loop. A trait because installation clients
/// send through this loop: it names what the loop needs of them without importing them.
pub(super) trait InstallationAuth: Sync {
    /// The bearer token to send (cached, minted when due).
    fn bearer(
        &self,
    ) -> Pin<Box<dyn Future<Output = Result<SecretString, GitHubError>> + Send + '_>>;

    /// Forgets `failed` if it is still the cached token, after GitHub refused it.
    fn forget<'a>(
        &'a self,
        failed: &'a SecretString,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

/// What came back from one attempt.
struct Exchange {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

/// The result of a request after retries.
pub(super) enum Sent {
    Response(ApiResponse),
    /// A write's probe found the change already in place after an ambiguous failure.
    AlreadyApplied,
}

pub(super) fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl GitHubApp {
    /// Must be called inside a Tokio runtime: octocrab spawns its connection buffer task.
    pub fn new(
        config: GitHubConfig,
        metrics: Arc<dyn RequestObserver>,
    ) -> Result<Self, GitHubError> {
        let base: Uri = config
            .api_url
            .parse()
            .map_err(|e| GitHubError::Client(format!("API URL `{}`: {e}", config.api_url)))?;
        // A relative URI parses too, and would fail every request later.
        if base.scheme().is_none() || base.authority().is_none() {
            return Err(GitHubError::Client(format!(
                "API URL `{}`: expected an absolute http(s) URL",
                config.api_url
            )));
        }
        let http = Octocrab::builder()
            .base_uri(base.clone())
            .map_err(|e| GitHubError::Client(e.to_string()))?
            .add_header(USER_AGENT, "navin-bot".to_owned())
            .set_read_timeout(config.read_timeout)
            .build()
            .map_err(|e| GitHubError::Client(e.to_string()))?;
        Ok(Self {
            inner: Arc::new(Inner {
                http,
                config,
                base,
                tokens: Mutex::new(HashMap::new()),
                lanes: Mutex::new(HashMap::new()),
                etags: Mutex::new(EtagCache::default()),
                metrics,
            }),
        })
    }

    /// The same API, retry policy and timeouts, authenticated with someone's own
    /// `token` instead: for the calls GitHub refuses to installation tokens (assigning
    /// an issue to the Copilot coding agent needs a user token). Its own token, rate
    /// lanes and ETag cache, so nothing is shared with the App's.
    pub fn with_token(&self, token: SecretString) -> Result<GitHubApp, GitHubError> {
        let config = GitHubConfig {
            credentials: Credentials::Token(token),
            ..self.inner.config.clone()
        };
        GitHubApp::new(config, Arc::clone(&self.inner.metrics))
    }

    /// A signed App JWT for now. Refused in token mode: there is no App key.
    pub fn app_jwt(&self) -> Result<SecretString, GitHubError> {
        match &self.inner.config.credentials {
            Credentials::App { issuer, key } => Ok(key.sign(issuer, now_secs())?),
            Credentials::Token(_) => Err(GitHubError::NotAnApp {
                what: "an App JWT".to_owned(),
            }),
        }
    }

    /// The fixed token when built with [`Credentials::Token`].
    pub(super) fn fixed_token(&self) -> Option<&SecretString> {
        match &self.inner.config.credentials {
            Credentials::Token(token) => Some(token),
            Credentials::App { .. } => None,
        }
    }

    /// True when built from a plain token rather than App credentials.
    pub fn is_token_mode(&self) -> bool {
        self.fixed_token().is_some()
    }

    /// The git remote for `owner/repo`, from the configured template.
    pub fn git_remote_url(&self, full_name: &str) -> String {
        let (owner, repo) = full_name.split_once('/').unwrap_or((full_name, ""));
        self.inner
            .config
            .git_url_template
            .replace("{owner}", owner)
            .replace("{repo}", repo)
            .replace("{full_name}", full_name)
    }

    /// A request authenticated as the App (JWT): `/app/...` endpoints.
    pub async fn app_request(&self, request: ApiRequest) -> Result<ApiResponse, GitHubError> {
        if self.is_token_mode() {
            return Err(GitHubError::NotAnApp {
                what: format!("{} {}", request.method, request.path),
            });
        }
        let kind = kind_of(&request, false);
        let sent = self.send(&Auth::App, APP_LANE, kind, &request, None).await;
        self.inner
            .metrics
            .app_auth(crate::AppAuth::AppCall, sent.as_ref().map(|_| ()));
        match sent? {
            Sent::Response(r) => Ok(r),
            Sent::AlreadyApplied => Err(GitHubError::InvalidRequest(
                "app requests have no probe".to_owned(),
            )),
        }
    }

    /// A request made as a person with their own user-to-server token: what GitHub
    /// says *they* may see (`/user/installations`, their repositories). Each token gets
    /// its own rate lane and ETag entries, so one person's answers are never served to
    /// another and a busy person cannot stall the App's lanes.
    pub async fn user_request(
        &self,
        token: &SecretString,
        request: ApiRequest,
    ) -> Result<ApiResponse, GitHubError> {
        let lane = user_lane(token);
        let kind = kind_of(&request, false);
        match self
            .send(&Auth::User(token), lane, kind, &request, None)
            .await?
        {
            Sent::Response(r) => Ok(r),
            Sent::AlreadyApplied => Err(GitHubError::InvalidRequest(
                "user requests have no probe".to_owned(),
            )),
        }
    }

    fn lane(&self, key: u64) -> Arc<tokio::sync::Mutex<Lane>> {
        let mut lanes = self
            .inner
            .lanes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(lanes.entry(key).or_default())
    }

    /// The retry loop shared by every request. See `retry::decide` for the rules.
    pub(super) async fn send(
        &self,
        auth: &Auth<'_>,
        lane_key: u64,
        kind: RequestKind,
        request: &ApiRequest,
        probe: Option<Probe<'_>>,
    ) -> Result<Sent, GitHubError> {
        let uri = self.resolve(&request.path)?;
        let cache_key = (lane_key, request.path.clone());
        let mut spent = Attempts::default();
        loop {
            let bearer = match auth {
                Auth::App => self.app_jwt()?,
                Auth::Installation(client) => client.bearer().await?,
                Auth::User(token) => (*token).clone(),
            };
            let cached_etag = if request.is_read() {
                self.cached_etag(&cache_key)
            } else {
                None
            };
            let exchange = self
                .attempt(lane_key, request, &uri, &bearer, cached_etag.as_ref())
                .await;
            // A fixed token cannot be re-minted, so a 401 on it is final at once.
            let mintable = matches!(auth, Auth::Installation(_)) && !self.is_token_mode();
            let seen = observe(&exchange, mintable);
            self.inner
                .metrics
                .record(lane_key, seen.status, seen.remaining);
            if seen.remaining == Some(0) {
                if let Some(reset) = seen.reset {
                    // Everyone on this lane waits for the reset, not just this request.
                    let wait =
                        Duration::from_secs(reset.saturating_sub(now_secs()).max(0).unsigned_abs());
                    self.block_lane(lane_key, wait).await;
                }
            }
            match retry::decide(&self.inner.config.policy, kind, spent, seen, now_secs()) {
                RetryDecision::Accept => {
                    return match exchange {
                        Ok(ex) => self.finish(request, ex, cache_key).map(Sent::Response),
                        Err(message) => Err(GitHubError::Transport {
                            method: request.method.to_string(),
                            path: request.path.clone(),
                            message,
                        }),
                    };
                }
                RetryDecision::RetryAfter(wait, cause) => match cause {
                    RetryCause::RateLimited => {
                        spent.rate_limited += 1;
                        tracing::warn!(path = %request.path, wait_secs = wait.as_secs(), "GitHub rate limit; waiting");
                        self.block_lane(lane_key, wait).await;
                    }
                    RetryCause::ServerError => {
                        spent.server_errors += 1;
                        tokio::time::sleep(wait).await;
                    }
                    RetryCause::NotFound => {
                        spent.not_found += 1;
                        tokio::time::sleep(wait).await;
                    }
                },
                RetryDecision::ProbeThenRetry(wait) => {
                    spent.server_errors += 1;
                    tokio::time::sleep(wait).await;
                    // Without a probe the caller declared the write safe to repeat.
                    if let (Some(probe), Auth::Installation(_)) = (probe, auth) {
                        if probe().await? {
                            tracing::info!(path = %request.path, "write had landed despite the error; not repeating it");
                            return Ok(Sent::AlreadyApplied);
                        }
                    }
                }
                RetryDecision::Reauthorize => {
                    spent.reauthorized = true;
                    if let Auth::Installation(client) = auth {
                        client.forget(&bearer).await;
                    }
                }
                RetryDecision::GiveUp(reason) => {
                    let method = request.method.to_string();
                    let path = request.path.clone();
                    return Err(match reason {
                        GiveUpReason::RateLimited { wait } => GitHubError::RateLimited {
                            method,
                            path,
                            wait_secs: wait.as_secs(),
                        },
                        GiveUpReason::ServerError => GitHubError::Unavailable {
                            method,
                            path,
                            last: match &exchange {
                                Ok(ex) => format!("HTTP {}", ex.status.as_u16()),
                                Err(message) => message.clone(),
                            },
                        },
                        GiveUpReason::Unauthorized => GitHubError::Unauthorized { method, path },
                    });
                }
            }
        }
    }

    async fn block_lane(&self, lane_key: u64, wait: Duration) {
        let lane = self.lane(lane_key);
        let mut lane = lane.lock().await;
        let until = Instant::now() + wait;
        lane.blocked_until = Some(lane.blocked_until.map_or(until, |b| b.max(until)));
    }

    /// One HTTP exchange, holding the installation's lane: requests of one installation
    /// go out one at a time, writes at least `write_spacing` apart.
    async fn attempt(
        &self,
        lane_key: u64,
        request: &ApiRequest,
        uri: &Uri,
        bearer: &SecretString,
        etag: Option<&HeaderValue>,
    ) -> Result<Exchange, String> {
        let lane = self.lane(lane_key);
        let mut lane = lane.lock().await;
        if let Some(until) = lane.blocked_until.take() {
            tokio::time::sleep_until(until).await;
        }
        // Spacing protects content creation; app-level calls (token mints, redelivery
        // requests) are serial but not spaced.
        let is_write = !request.is_read() && lane_key != APP_LANE;
        if is_write {
            if let Some(last) = lane.last_write {
                tokio::time::sleep_until(last + self.inner.config.write_spacing).await;
            }
        }
        let result = self.exchange(request, uri, bearer, etag).await;
        if is_write {
            lane.last_write = Some(Instant::now());
        }
        result
    }

    async fn exchange(
        &self,
        request: &ApiRequest,
        uri: &Uri,
        bearer: &SecretString,
        etag: Option<&HeaderValue>,
    ) -> Result<Exchange, String> {
        let mut builder = http::Request::builder()
            .method(request.method.clone())
            .uri(uri.clone())
            .header(ACCEPT, "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28");
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        if let Some(etag) = etag {
            builder = builder.header(IF_NONE_MATCH, etag);
        }
        let mut auth = HeaderValue::from_str(&format!("Bearer {}", bearer.expose_secret()))
            .map_err(|_| "credential is not a valid header value".to_owned())?;
        auth.set_sensitive(true);
        builder = builder.header(AUTHORIZATION, auth);
        let body = match &request.body {
            Some(json) => {
                builder = builder.header(http::header::CONTENT_TYPE, "application/json");
                serde_json::to_string(json).map_err(|e| e.to_string())?
            }
            None => String::new(),
        };
        let http_request = builder.body(body).map_err(|e| e.to_string())?;
        let response = self
            .inner
            .http
            .execute(http_request)
            .await
            .map_err(|e| transport_message(&e))?;
        let (parts, body) = response.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| transport_message(&e))?
            .to_bytes();
        Ok(Exchange {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    fn finish(
        &self,
        request: &ApiRequest,
        ex: Exchange,
        cache_key: (u64, String),
    ) -> Result<ApiResponse, GitHubError> {
        let mut etags = self
            .inner
            .etags
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ex.status == StatusCode::NOT_MODIFIED {
            if let Some(hit) = etags.entries.get(&cache_key) {
                return Ok(ApiResponse {
                    status: StatusCode::OK,
                    headers: hit.headers.clone(),
                    body: hit.body.clone(),
                    from_cache: true,
                });
            }
        }
        if ex.status.is_success() && request.is_read() {
            if let Some(etag) = ex.headers.get(ETAG) {
                etags.insert(
                    cache_key,
                    CachedGet {
                        etag: etag.clone(),
                        headers: ex.headers.clone(),
                        body: ex.body.clone(),
                    },
                );
            }
        }
        drop(etags);
        if ex.status.is_client_error() || ex.status.is_server_error() {
            return Err(GitHubError::Status {
                status: ex.status.as_u16(),
                method: request.method.to_string(),
                path: request.path.clone(),
                message: github_message(&ex.body),
                permission: crate::Permission::needed_for(request.method.as_str(), &request.path),
            });
        }
        Ok(ApiResponse {
            status: ex.status,
            headers: ex.headers,
            body: ex.body,
            from_cache: false,
        })
    }

    fn cached_etag(&self, key: &(u64, String)) -> Option<HeaderValue> {
        let etags = self
            .inner
            .etags
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        etags.entries.get(key).map(|c| c.etag.clone())
    }

    /// A relative path is joined to the API base by octocrab; an absolute URL (from a
    /// `Link` header) must point at the same host, or our credentials would leave it.
    fn resolve(&self, path: &str) -> Result<Uri, GitHubError> {
        let uri: Uri = path
            .parse()
            .map_err(|e| GitHubError::InvalidRequest(format!("`{path}` is not a URL path: {e}")))?;
        match uri.authority() {
            None if path.starts_with('/') => Ok(uri),
            None => Err(GitHubError::InvalidRequest(format!(
                "`{path}` must start with /"
            ))),
            Some(authority) if Some(authority) == self.inner.base.authority() => Ok(uri),
            Some(authority) => Err(GitHubError::InvalidRequest(format!(
                "refusing to send credentials to {authority}, which is not the API host"
            ))),
        }
    }
}

pub(super) fn kind_of(request: &ApiRequest, retry_not_found: bool) -> RequestKind {
    if request.is_read() {
        RequestKind::Read { retry_not_found }
    } else {
        RequestKind::Write
    }
}

fn observe(exchange: &Result<Exchange, String>, installation_auth: bool) -> Observed {
    let Ok(ex) = exchange else {
        return Observed {
            installation_auth,
            ..Observed::default()
        };
    };
    let header = |name: &str| ex.headers.get(name).and_then(|v| v.to_str().ok());
    let mentions_rate_limit = ex.status.as_u16() == 403
        && String::from_utf8_lossy(&ex.body)
            .to_ascii_lowercase()
            .contains("rate limit");
    Observed {
        status: Some(ex.status.as_u16()),
        retry_after_secs: header("retry-after").and_then(retry::parse_retry_after),
        remaining: header("x-ratelimit-remaining").and_then(|v| v.trim().parse().ok()),
        reset: header("x-ratelimit-reset").and_then(|v| v.trim().parse().ok()),
        body_mentions_rate_limit: mentions_rate_limit,
        installation_auth,
    }
}

/// The lane of a user token: the top bit set keeps it apart from installation ids (which
/// GitHub hands out far below 2^63) and from [`APP_LANE`].
fn user_lane(token: &SecretString) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    token.expose_secret().hash(&mut hasher);
    (1 << 63) | (hasher.finish() >> 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_link_is_found_among_other_relations() {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::LINK,
            HeaderValue::from_static(
                "<https://api.github.com/app/hook/deliveries?cursor=v1_2&per_page=100>; rel=\"next\", <https://api.github.com/app/hook/deliveries?per_page=100>; rel=\"first\"",
            ),
        );
        assert_eq!(
            next_link(&headers).as_deref(),
            Some("https://api.github.com/app/hook/deliveries?cursor=v1_2&per_page=100")
        );
        headers.insert(
            http::header::LINK,
            HeaderValue::from_static("<https://x/y?page=1>; rel=\"prev\""),
        );
        assert_eq!(next_link(&headers), None);
    }
}
