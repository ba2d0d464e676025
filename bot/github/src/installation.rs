//! Installation clients: cached installation tokens and the read/write API the engine uses.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use super::client::{
    kind_of, ApiRequest, ApiResponse, Auth, GitHubApp, InstallationAuth, ProbeFuture, Sent,
    APP_LANE,
};
use super::retry::RequestKind;
use super::token::{token_needs_refresh, CachedToken, TokenCache, TokenScope};
use super::GitHubError;

/// Acts as one installation. Cheap to clone.
#[derive(Clone)]
pub struct InstallationClient {
    app: GitHubApp,
    installation_id: u64,
    scope: TokenScope,
    cache: Arc<TokenCache>,
}

impl std::fmt::Debug for InstallationClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallationClient")
            .field("installation_id", &self.installation_id)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// Result of a write that may have been retried.
#[derive(Debug, Clone)]
pub enum WriteOutcome {
    /// GitHub accepted this request.
    Applied(ApiResponse),
    /// An attempt failed ambiguously (5xx, dropped connection) and the probe found the
    /// change already in place, so it was not sent again.
    AlreadyApplied,
}

/// Answers "did my write land?" after an ambiguous failure, by re-reading GitHub
/// (e.g. look for the hidden marker of the comment we tried to post). A write is only
/// sent again when the probe says no.
pub trait WriteProbe: Send + Sync {
    fn already_applied<'a>(&'a self, client: &'a InstallationClient) -> ProbeFuture<'a>;
}

/// Probe for comment creation: a comment whose body contains `marker` (a hidden
/// `<!-- navin:... -->` tag carrying the delivery id) already exists on the issue.
#[derive(Debug, Clone)]
pub struct MarkerInComments {
    /// `/repos/{owner}/{repo}/issues/{number}/comments`
    pub comments_path: String,
    pub marker: String,
}

impl WriteProbe for MarkerInComments {
    fn already_applied<'a>(&'a self, client: &'a InstallationClient) -> ProbeFuture<'a> {
        Box::pin(async move {
            #[derive(Deserialize)]
            struct Comment {
                #[serde(default)]
                body: Option<String>,
            }
            let mut next = Some(format!("{}?per_page=100", self.comments_path));
            while let Some(path) = next {
                let page = client.get(&path).await?;
                let comments: Vec<Comment> = page.json(&path)?;
                if comments
                    .iter()
                    .any(|c| c.body.as_deref().is_some_and(|b| b.contains(&self.marker)))
                {
                    return Ok(true);
                }
                next = page.next_page();
            }
            Ok(false)
        })
    }
}

impl GitHubApp {
    /// A client acting as `installation_id` with the installation's full grant.
    pub fn installation(&self, installation_id: u64) -> InstallationClient {
        self.installation_scoped(installation_id, TokenScope::default())
    }

    /// A client whose token is narrowed to `scope` (repositories and permissions).
    pub fn installation_scoped(
        &self,
        installation_id: u64,
        scope: TokenScope,
    ) -> InstallationClient {
        InstallationClient::new(self.clone(), installation_id, scope)
    }
}

impl InstallationAuth for InstallationClient {
    fn bearer(
        &self,
    ) -> Pin<Box<dyn Future<Output = Result<SecretString, GitHubError>> + Send + '_>> {
        Box::pin(self.token())
    }

    fn forget<'a>(
        &'a self,
        failed: &'a SecretString,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(self.invalidate_token(failed))
    }
}

#[derive(Deserialize)]
struct AccessToken {
    token: String,
    expires_at: DateTime<Utc>,
}

impl InstallationClient {
    pub(super) fn new(app: GitHubApp, installation_id: u64, scope: TokenScope) -> Self {
        let cache = {
            let mut tokens = app
                .inner
                .tokens
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            Arc::clone(tokens.entry((installation_id, scope.clone())).or_default())
        };
        Self {
            app,
            installation_id,
            scope,
            cache,
        }
    }

    pub fn installation_id(&self) -> u64 {
        self.installation_id
    }

    /// A valid installation token (cached; minted when missing or within five minutes
    /// of expiry). Opaque: no assumption about its length or shape. Also what git uses
    /// over HTTPS (user `x-access-token`).
    /// In token mode it is that token, never minted.
    pub async fn token(&self) -> Result<SecretString, GitHubError> {
        if let Some(fixed) = self.app.fixed_token() {
            return Ok(fixed.clone());
        }
        let mut slot = self.cache.0.lock().await;
        if let Some(cached) = slot.as_ref() {
            if !token_needs_refresh(cached.expires_at, Utc::now()) {
                return Ok(cached.token.clone());
            }
        }
        // Boxed: minting goes through the same request path that asks for tokens.
        let minted = Box::pin(self.mint()).await?;
        let token = minted.token.clone();
        *slot = Some(minted);
        Ok(token)
    }

    /// Drops the cached token if it is still `failed` (a 401 showed it was revoked),
    /// so the next [`Self::token`] mints a new one.
    pub(super) async fn invalidate_token(&self, failed: &SecretString) {
        let mut slot = self.cache.0.lock().await;
        if slot
            .as_ref()
            .is_some_and(|c| c.token.expose_secret() == failed.expose_secret())
        {
            *slot = None;
        }
    }

    /// [`Self::mint_once`], with its outcome told to the observer.
    async fn mint(&self) -> Result<CachedToken, GitHubError> {
        let minted = self.mint_once().await;
        self.app
            .inner
            .metrics
            .app_auth(crate::AppAuth::TokenMint, minted.as_ref().map(|_| ()));
        minted
    }

    async fn mint_once(&self) -> Result<CachedToken, GitHubError> {
        let path = format!("/app/installations/{}/access_tokens", self.installation_id);
        let mut request = ApiRequest::post(path.clone(), self.scope.request_body());
        if let Some(mode) = &self.app.inner.config.stateless_s2s_token {
            let value = http::HeaderValue::from_str(mode).map_err(|_| {
                GitHubError::InvalidRequest(format!("stateless token mode `{mode}`"))
            })?;
            request = request.header(
                http::HeaderName::from_static("x-github-stateless-s2s-token"),
                value,
            );
        }
        // Minting twice is harmless, so an ambiguous failure is simply retried (no probe).
        let response = match self
            .app
            .send(&Auth::App, APP_LANE, RequestKind::Write, &request, None)
            .await?
        {
            Sent::Response(r) => r,
            Sent::AlreadyApplied => unreachable_outcome(&path)?,
        };
        let minted: AccessToken = response.json(&path)?;
        tracing::debug!(installation = self.installation_id, expires_at = %minted.expires_at, "minted installation token");
        Ok(CachedToken {
            token: SecretString::from(minted.token),
            expires_at: minted.expires_at,
        })
    }

    /// GET with the ETag cache: an unchanged resource costs a 304 (free against the rate
    /// limit) and returns the cached body. 404 is final.
    pub async fn get(&self, path: &str) -> Result<ApiResponse, GitHubError> {
        self.read(path, false).await
    }

    /// GET of an object a webhook just announced: a 404 is retried twice with backoff,
    /// since GitHub's API can lag behind its webhooks.
    pub async fn get_after_webhook(&self, path: &str) -> Result<ApiResponse, GitHubError> {
        self.read(path, true).await
    }

    pub async fn get_json<T: DeserializeOwned>(&self, path: &str) -> Result<T, GitHubError> {
        self.get(path).await?.json(path)
    }

    async fn read(&self, path: &str, retry_not_found: bool) -> Result<ApiResponse, GitHubError> {
        let request = ApiRequest::get(path);
        match self
            .app
            .send(
                &Auth::Installation(self),
                self.installation_id,
                RequestKind::Read { retry_not_found },
                &request,
                None,
            )
            .await?
        {
            Sent::Response(r) => Ok(r),
            Sent::AlreadyApplied => unreachable_outcome(path),
        }
    }

    /// A state-changing request. After a 5xx or a dropped connection the write may or may
    /// not have happened, so `probe` re-reads before any retry; other 4xx are returned
    /// as errors untouched. Writes of one installation are serial and spaced.
    pub async fn write(
        &self,
        request: ApiRequest,
        probe: &dyn WriteProbe,
    ) -> Result<WriteOutcome, GitHubError> {
        let kind = kind_of(&request, false);
        let probe = || probe.already_applied(self);
        match self
            .app
            .send(
                &Auth::Installation(self),
                self.installation_id,
                kind,
                &request,
                Some(&probe),
            )
            .await?
        {
            Sent::Response(r) => Ok(WriteOutcome::Applied(r)),
            Sent::AlreadyApplied => Ok(WriteOutcome::AlreadyApplied),
        }
    }

    /// A write whose repetition is harmless (PUT of a whole value, DELETE, setting a
    /// label, a ref update with `force: false` to a known SHA): retried after a 5xx
    /// without a probe.
    pub async fn write_idempotent(&self, request: ApiRequest) -> Result<ApiResponse, GitHubError> {
        match self.write(request, &AlwaysRetry).await? {
            WriteOutcome::Applied(r) => Ok(r),
            WriteOutcome::AlreadyApplied => Err(GitHubError::InvalidRequest(
                "idempotent write reported as already applied".to_owned(),
            )),
        }
    }
}

/// The probe for idempotent writes: never "already applied", so they are re-sent.
struct AlwaysRetry;

impl WriteProbe for AlwaysRetry {
    fn already_applied<'a>(&'a self, _client: &'a InstallationClient) -> ProbeFuture<'a> {
        Box::pin(async { Ok(false) })
    }
}

fn unreachable_outcome<T>(path: &str) -> Result<T, GitHubError> {
    Err(GitHubError::InvalidRequest(format!(
        "{path}: a read cannot be 'already applied'"
    )))
}
