//! The fake GitHub server: an axum app over an in-memory model and real bare git repositories.
//!
//! It runs on its own thread and tokio runtime, so tests may block (run `git`,
//! spawn the bot) without starving it, and sync and async tests can both use it.

pub mod auth;
pub mod faults;
pub mod git;
mod handle;
pub mod http;
pub mod log;
pub mod model;
mod pushes;
pub mod render;
mod routes_apps;
mod routes_branches;
mod routes_checks;
mod routes_issues;
mod routes_manifests;
mod routes_oauth;
mod routes_pulls;
mod routes_repos;
mod routes_teams;
mod routes_user;
pub use pushes::Synchronized;
mod seed;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use chrono::Utc;

pub use auth::Caller;
pub use faults::{Fault, FaultAction, FaultId};
pub use log::{LoggedRequest, RequestKind};
pub use model::{
    BotComment, BypassActor, ClassicProtection, ManifestApp, Model, OAuthCode, PushRestrictions,
    TokenFormat, TokenKind, UserKind, GITHUB_ACTIONS_APP_ID,
};
pub use routes_oauth::{pkce_challenge, SESSION_COOKIE};
pub use seed::{CheckRunSpec, PullSpec};

use crate::keys::AppKey;
use faults::path_matches;
use http::ApiError;
use model::AppInfo;

/// Largest request body the fake buffers (GitHub's webhook cap is 25 MB; pushes can be bigger).
const BODY_LIMIT: usize = 256 * 1024 * 1024;

/// Where git smart-HTTP lives: `/{owner}/{repo}.git/...` or under a prefix like `/git`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitLayout {
    Root,
    Prefix(String),
}

/// State shared by the server and every `FakeGitHub` handle.
pub(crate) struct Inner {
    pub model: Mutex<Model>,
    pub faults: Mutex<Vec<Fault>>,
    pub log: Mutex<Vec<LoggedRequest>>,
    pub base_url: String,
    pub git_root: PathBuf,
    pub git_prefix: String,
    pub absolute_links: bool,
    _dir: tempfile::TempDir,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Inner {
    /// Prefix of `Link` header URLs: empty (path-only links) unless absolute links were asked for.
    ///
    /// octocrab sends credentials only to api.github.com or to relative URIs, so absolute
    /// links to 127.0.0.1 would make its `all_pages` lose App/installation auth.
    pub fn link_base(&self) -> &str {
        if self.absolute_links {
            &self.base_url
        } else {
            ""
        }
    }

    pub fn model(&self) -> MutexGuard<'_, Model> {
        lock(&self.model)
    }

    /// `(owner, repo, rest)` when `path` is a git smart-HTTP path.
    fn git_path<'p>(&self, path: &'p str) -> Option<(&'p str, &'p str, &'p str)> {
        let rest = path.strip_prefix(self.git_prefix.as_str())?;
        let rest = rest.strip_prefix('/')?;
        let mut parts = rest.splitn(3, '/');
        let owner = parts.next()?;
        let repo = parts.next()?.strip_suffix(".git")?;
        let tail = parts.next().unwrap_or("");
        Some((owner, repo, tail))
    }

    /// The first live fault matching this request, counted as used.
    fn take_fault(&self, method: &str, path: &str) -> Option<FaultAction> {
        let mut faults = lock(&self.faults);
        let fault = faults.iter_mut().find(|f| f.matches(method, path))?;
        fault.hits += 1;
        if let Some(n) = fault.remaining.as_mut() {
            *n -= 1;
        }
        Some(fault.action.clone())
    }
}

/// Configures a fake before it starts.
#[derive(Debug, Clone)]
pub struct FakeGitHubBuilder {
    app_id: u64,
    client_id: String,
    slug: String,
    name: String,
    owner: String,
    client_secret: String,
    callback_urls: Vec<String>,
    key: Option<AppKey>,
    layout: GitLayout,
    token_format: TokenFormat,
    absolute_links: bool,
}

impl Default for FakeGitHubBuilder {
    fn default() -> Self {
        FakeGitHubBuilder {
            app_id: 4242,
            client_id: "Iv23liFakeNavin".into(),
            slug: "navin".into(),
            name: "Navin".into(),
            owner: "navin-dev".into(),
            client_secret: "fake-client-secret-navin-0123456789abcdef".into(),
            callback_urls: Vec::new(),
            key: None,
            layout: GitLayout::Root,
            token_format: TokenFormat::Classic,
            absolute_links: false,
        }
    }
}

impl FakeGitHubBuilder {
    /// The App's id, client id and slug (its bot user is `{slug}[bot]`).
    pub fn app(mut self, app_id: u64, client_id: &str, slug: &str) -> Self {
        self.app_id = app_id;
        self.client_id = client_id.into();
        self.slug = slug.into();
        self
    }

    /// The App's client secret, which the OAuth code exchange checks.
    pub fn client_secret(mut self, secret: &str) -> Self {
        self.client_secret = secret.into();
        self
    }

    /// Registers a callback URL for the user sign-in flow (call again for more; GitHub
    /// allows 10). Servers that learn their port after start use
    /// `FakeGitHub::add_callback_url` instead.
    pub fn callback_url(mut self, url: &str) -> Self {
        self.callback_urls.push(url.into());
        self
    }

    /// The App key whose public half verifies JWTs (default: `AppKey::shared()`).
    pub fn key(mut self, key: AppKey) -> Self {
        self.key = Some(key);
        self
    }

    pub fn git_layout(mut self, layout: GitLayout) -> Self {
        self.layout = layout;
        self
    }

    /// Spelling of minted installation tokens (the 2026 ~520-char format, or classic).
    pub fn token_format(mut self, format: TokenFormat) -> Self {
        self.token_format = format;
        self
    }

    /// `Link` headers with absolute URLs like GitHub's (default: path-only, see `Inner::link_base`).
    pub fn absolute_links(mut self) -> Self {
        self.absolute_links = true;
        self
    }

    /// Binds 127.0.0.1:0 and serves on a background thread.
    pub fn start(self) -> FakeGitHub {
        match self.try_start() {
            Ok(fake) => fake,
            Err(e) => panic!("fake GitHub failed to start: {e}"),
        }
    }

    pub fn try_start(self) -> std::io::Result<FakeGitHub> {
        let key = self.key.unwrap_or_else(|| AppKey::shared().clone());
        let dir = tempfile::Builder::new().prefix("fake-github-").tempdir()?;
        let git_root = dir.path().join("git");
        std::fs::create_dir_all(&git_root)?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let git_prefix = match &self.layout {
            GitLayout::Root => String::new(),
            GitLayout::Prefix(p) => format!("/{}", p.trim_matches('/')),
        };
        let app = AppInfo {
            id: self.app_id,
            client_id: self.client_id,
            slug: self.slug,
            name: self.name,
            owner: self.owner,
            public_key_pem: key.public_pem.clone(),
            bot_user_id: 9_000_000 + self.app_id,
            client_secret: self.client_secret,
            callback_urls: self.callback_urls,
        };
        let mut model = Model::new(app);
        model.token_format = self.token_format;
        let inner = Arc::new(Inner {
            model: Mutex::new(model),
            faults: Mutex::new(Vec::new()),
            log: Mutex::new(Vec::new()),
            base_url: format!("http://{addr}"),
            git_root,
            git_prefix,
            absolute_links: self.absolute_links,
            _dir: dir,
        });
        let router = router(inner.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
        std::thread::Builder::new()
            .name("fake-github".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    tokio::select! {
                        _ = axum::serve(listener, router) => {}
                        _ = rx => {}
                    }
                });
                runtime.shutdown_background();
            })?;
        ready_rx
            .recv()
            .map_err(|e| std::io::Error::other(e.to_string()))??;
        Ok(FakeGitHub {
            inner,
            _guard: Arc::new(ServerGuard(Mutex::new(Some(tx)))),
            key,
        })
    }
}

/// Stops the server when the last handle goes away.
struct ServerGuard(Mutex<Option<tokio::sync::oneshot::Sender<()>>>);

impl Drop for ServerGuard {
    fn drop(&mut self) {
        if let Some(tx) = lock(&self.0).take() {
            let _ = tx.send(());
        }
    }
}

/// Handle to a running fake GitHub: its URLs, and state to seed, inspect and break.
#[derive(Clone)]
pub struct FakeGitHub {
    pub(crate) inner: Arc<Inner>,
    _guard: Arc<ServerGuard>,
    key: AppKey,
}

impl std::fmt::Debug for FakeGitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGitHub")
            .field("base_url", &self.inner.base_url)
            .finish()
    }
}

impl FakeGitHub {
    pub fn builder() -> FakeGitHubBuilder {
        FakeGitHubBuilder::default()
    }

    /// A fake with default App settings (id 4242, slug `navin`, the shared test key).
    pub fn start() -> FakeGitHub {
        Self::builder().start()
    }

    /// `http://127.0.0.1:PORT`: octocrab's `base_uri`.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// Remote URL template with `{owner}` and `{repo}` placeholders.
    pub fn git_url_template(&self) -> String {
        format!(
            "{}{}/{{owner}}/{{repo}}.git",
            self.inner.base_url, self.inner.git_prefix
        )
    }

    pub fn git_remote_url(&self, owner: &str, repo: &str) -> String {
        format!(
            "{}{}/{owner}/{repo}.git",
            self.inner.base_url, self.inner.git_prefix
        )
    }

    /// Remote URL carrying `x-access-token:<token>` credentials, as Actions and Apps push.
    pub fn git_remote_url_with_token(&self, owner: &str, repo: &str, token: &str) -> String {
        let host = self.inner.base_url.trim_start_matches("http://");
        format!(
            "http://x-access-token:{token}@{host}{}/{owner}/{repo}.git",
            self.inner.git_prefix
        )
    }

    /// The App key pair: give `private_pem` to the bot.
    pub fn app_key(&self) -> &AppKey {
        &self.key
    }

    /// Reads or changes the model directly.
    pub fn with_state<T>(&self, f: impl FnOnce(&mut Model) -> T) -> T {
        f(&mut self.inner.model())
    }

    // ---- faults -------------------------------------------------------------

    /// Adds a fault; earlier faults win when several match.
    pub fn inject(&self, fault: Fault) -> FaultId {
        let mut faults = lock(&self.inner.faults);
        faults.push(fault);
        FaultId(faults.len() - 1)
    }

    /// How many requests a fault has answered or delayed.
    pub fn fault_hits(&self, id: FaultId) -> u32 {
        lock(&self.inner.faults)
            .get(id.0)
            .map(|f| f.hits)
            .unwrap_or(0)
    }

    /// Disarms every fault (ids stay valid for `fault_hits`).
    pub fn clear_faults(&self) {
        for fault in lock(&self.inner.faults).iter_mut() {
            fault.remaining = Some(0);
        }
    }

    // ---- request log --------------------------------------------------------

    pub fn requests(&self) -> Vec<LoggedRequest> {
        lock(&self.inner.log).clone()
    }

    /// REST requests only (no git smart-HTTP).
    pub fn api_requests(&self) -> Vec<LoggedRequest> {
        lock(&self.inner.log)
            .iter()
            .filter(|r| r.kind == RequestKind::Rest)
            .cloned()
            .collect()
    }

    pub fn clear_requests(&self) {
        lock(&self.inner.log).clear();
    }

    /// Requests with this method (`*` = any) whose path matches `pattern`.
    pub fn requests_to(&self, method: &str, pattern: &str) -> Vec<LoggedRequest> {
        lock(&self.inner.log)
            .iter()
            .filter(|r| r.is(method, pattern))
            .cloned()
            .collect()
    }

    pub fn count(&self, method: &str, pattern: &str) -> usize {
        lock(&self.inner.log)
            .iter()
            .filter(|r| r.is(method, pattern))
            .count()
    }

    /// Panics listing every REST request not matching one of `allowed` `(method, pattern)` pairs.
    pub fn assert_only_called(&self, allowed: &[(&str, &str)]) {
        let unexpected: Vec<String> = self
            .api_requests()
            .iter()
            .filter(|r| !allowed.iter().any(|(m, p)| r.is(m, p)))
            .map(LoggedRequest::line)
            .collect();
        assert!(
            unexpected.is_empty(),
            "unexpected GitHub API calls:\n  {}",
            unexpected.join("\n  ")
        );
    }
}

fn router(inner: Arc<Inner>) -> Router {
    Router::new()
        .merge(routes_apps::routes())
        .merge(routes_repos::routes())
        .merge(routes_branches::routes())
        .merge(routes_issues::routes())
        .merge(routes_pulls::routes())
        .merge(routes_teams::routes())
        .merge(routes_checks::routes())
        .merge(routes_manifests::routes())
        .merge(routes_oauth::routes())
        .merge(routes_user::routes())
        .fallback(|| async { ApiError::not_found() })
        .layer(from_fn_with_state(inner.clone(), front))
        .with_state(inner)
}

fn rate_header_values(counter: &model::RateCounter) -> [(&'static str, String); 5] {
    let remaining = counter.limit.saturating_sub(counter.used);
    [
        ("x-ratelimit-limit", counter.limit.to_string()),
        ("x-ratelimit-remaining", remaining.to_string()),
        ("x-ratelimit-used", counter.used.to_string()),
        ("x-ratelimit-reset", counter.reset.to_string()),
        ("x-ratelimit-resource", "core".to_string()),
    ]
}

fn rate_headers(headers: &mut HeaderMap, counter: &model::RateCounter) {
    for (name, value) in rate_header_values(counter) {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    }
}

/// Charges one request to the caller's primary rate limit; `Err` once it is exhausted.
fn charge(inner: &Inner, caller: &Caller) -> Result<model::RateCounter, ApiError> {
    let now = Utc::now().timestamp();
    let mut model = inner.model();
    let counter = match caller {
        Caller::App { .. } => &mut model.app_rate,
        Caller::Token(t) => match model.tokens.get_mut(&t.token) {
            Some(token) => &mut token.rate,
            None => return Err(ApiError::bad_credentials()),
        },
    };
    if counter.reset <= now {
        counter.used = 0;
        counter.reset = now + 3600;
    }
    if counter.used >= counter.limit {
        let mut err = ApiError::new(
            StatusCode::FORBIDDEN,
            "API rate limit exceeded for installation.",
        );
        err.headers.extend(rate_header_values(counter));
        return Err(err);
    }
    counter.used += 1;
    Ok(counter.clone())
}

/// Outermost layer: buffers the body, applies faults, serves git, authenticates, logs.
async fn front(State(inner): State<Arc<Inner>>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = to_bytes(body, BODY_LIMIT).await.unwrap_or_default();
    let method = parts.method.as_str().to_string();
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().map(str::to_string);
    let git = inner
        .git_path(&path)
        .map(|(o, r, t)| (o.to_string(), r.to_string(), t.to_string()));
    let web = git.is_none() && routes_oauth::is_web(&method, &path);
    let mut faulted = false;
    let mut lost: Option<u16> = None;
    let mut caller_login = None;
    let mut response = None;
    match inner.take_fault(&method, &path) {
        Some(FaultAction::Respond {
            status,
            headers,
            body,
        }) => {
            faulted = true;
            let mut resp = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                axum::Json(body),
            )
                .into_response();
            for (k, v) in headers {
                if let (Ok(k), Ok(v)) = (
                    axum::http::HeaderName::from_bytes(k.as_bytes()),
                    HeaderValue::from_str(&v),
                ) {
                    resp.headers_mut().insert(k, v);
                }
            }
            response = Some(resp);
        }
        Some(FaultAction::Delay(latency)) => tokio::time::sleep(latency).await,
        Some(FaultAction::LandThenFail(status)) => lost = Some(status),
        None => {}
    }
    let response = match response {
        Some(r) => r,
        None => match &git {
            Some((owner, repo, tail)) => {
                let (resp, login) =
                    serve_git(&inner, &parts, owner, repo, tail, bytes.to_vec()).await;
                caller_login = login;
                resp
            }
            None if web
                || routes_manifests::is_public(&method, &path)
                || routes_oauth::is_public(&method, &path) =>
            {
                next.run(Request::from_parts(
                    parts.clone(),
                    Body::from(bytes.clone()),
                ))
                .await
            }
            None => {
                let authed = match auth::credential(&parts.headers) {
                    None => Err(ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "Requires authentication",
                    )),
                    Some(cred) => {
                        let model = inner.model();
                        auth::authenticate(&model, &cred, Utc::now())
                            .inspect(|c| caller_login = Some(c.login(&model)))
                    }
                };
                match authed
                    .and_then(|caller| charge(&inner, &caller).map(|counter| (caller, counter)))
                {
                    Err(e) => e.into_response(),
                    Ok((caller, counter)) => {
                        let mut req = Request::from_parts(parts.clone(), Body::from(bytes.clone()));
                        req.extensions_mut().insert(caller);
                        let mut resp = next.run(req).await;
                        rate_headers(resp.headers_mut(), &counter);
                        resp
                    }
                }
            }
        },
    };
    let response = match lost {
        Some(status) => {
            faulted = true;
            (
                StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY),
                "the request was carried out, but the answer was lost\n",
            )
                .into_response()
        }
        None => response,
    };
    let status = response.status().as_u16();
    let (response, response_json) = if git.is_none() {
        let (rparts, rbody) = response.into_parts();
        let rbytes = to_bytes(rbody, BODY_LIMIT).await.unwrap_or_default();
        let json = serde_json::from_slice(&rbytes).ok();
        (Response::from_parts(rparts, Body::from(rbytes)), json)
    } else {
        (response, None)
    };
    let mut log = lock(&inner.log);
    let seq = log.len();
    log.push(LoggedRequest {
        seq,
        kind: if git.is_some() {
            RequestKind::Git
        } else if web {
            RequestKind::Web
        } else {
            RequestKind::Rest
        },
        method,
        path,
        query,
        status,
        body: serde_json::from_slice(&bytes).ok(),
        raw_body_len: bytes.len(),
        response: response_json,
        faulted,
        caller: caller_login,
    });
    response
}

fn git_unauthorized(message: &str) -> Response {
    let mut resp = (StatusCode::UNAUTHORIZED, message.to_string()).into_response();
    resp.headers_mut().insert(
        "www-authenticate",
        HeaderValue::from_static("Basic realm=\"GitHub\""),
    );
    resp
}

/// Smart-HTTP through `git http-backend`, after checking the Basic-auth token.
async fn serve_git(
    inner: &Arc<Inner>,
    parts: &axum::http::request::Parts,
    owner: &str,
    repo: &str,
    tail: &str,
    body: Vec<u8>,
) -> (Response, Option<String>) {
    let query = parts.uri.query().unwrap_or("");
    let push = tail == "git-receive-pack" || query.contains("service=git-receive-pack");
    let checked = {
        let model = inner.model();
        let Some(cred) = auth::credential(&parts.headers) else {
            return (git_unauthorized("Authentication required"), None);
        };
        let caller = match auth::authenticate(&model, &cred, Utc::now()) {
            Ok(Caller::Token(t)) => t,
            _ => {
                return (
                    git_unauthorized(
                        "Invalid username or token. Password authentication is not supported.",
                    ),
                    None,
                )
            }
        };
        let Some(r) = model.repo(owner, repo) else {
            return (
                (StatusCode::NOT_FOUND, "Repository not found.").into_response(),
                Some(caller.login.clone()),
            );
        };
        let needed = if push { "write" } else { "read" };
        match auth::authorize_repo(&model, &caller, r, "contents", needed) {
            Ok(()) => Ok((caller.login.clone(), r.git_dir.clone())),
            Err(e) if e.status == StatusCode::NOT_FOUND => Err((
                (StatusCode::NOT_FOUND, "Repository not found.").into_response(),
                caller.login.clone(),
            )),
            Err(_) => Err((
                (
                    StatusCode::FORBIDDEN,
                    format!(
                        "Permission to {owner}/{repo}.git denied to {}.",
                        caller.login
                    ),
                )
                    .into_response(),
                caller.login.clone(),
            )),
        }
    };
    let (login, git_dir) = match checked {
        Ok(ok) => ok,
        Err((resp, login)) => return (resp, Some(login)),
    };
    // The on-disk name may differ in case from the URL; serve the real directory.
    let rel = git_dir
        .strip_prefix(&inner.git_root)
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let path_info = format!("/{}/{}", rel.display(), tail);
    let resp = match git::http_backend(
        &inner.git_root,
        parts.method.as_str(),
        &path_info,
        query,
        &parts.headers,
        &login,
        body,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    (resp, Some(login))
}

/// Is this (method, path) one of the patterns? Shared by conformance and tests.
pub fn matches_any(method: &str, path: &str, patterns: &[(&str, &str)]) -> bool {
    patterns
        .iter()
        .any(|(m, p)| (*m == "*" || m.eq_ignore_ascii_case(method)) && path_matches(p, path))
}

/// Waits until `check` holds or `timeout` passes; used by polling helpers.
pub async fn wait_until(timeout: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
