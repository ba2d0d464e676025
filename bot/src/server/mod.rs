//! The webhook server: axum router, shared state, and the `navin serve` lifecycle
//! (start workers, reconciler and sweeper, serve, drain on SIGTERM or ctrl-c).

pub mod client_addr;
mod delivery_log;
mod http;
pub use client_addr::ClientAddr;
pub mod ingress;
pub mod metrics;
mod quiet;
pub mod readiness;
pub mod signature;
pub mod webhook;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use secrecy::ExposeSecret;
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};

pub use metrics::Metrics;
pub use signature::{sign, SignatureError, WebhookSecrets};

use crate::config::{ConfigError, ServeArgs};
use crate::queue::worker::ShutdownReport;
use crate::queue::{DeliveryHandler, DeliveryQueue, NoHandler, QueueError, WorkerConfig, Workers};
use navin_github::{
    AppKey, Credentials, GitHubApp, GitHubConfig, GitHubError, JwtError, RetryPolicy,
};

/// What the request handlers share.
#[derive(Clone, Debug)]
pub struct AppState(Arc<StateInner>);

#[derive(Debug)]
struct StateInner {
    secrets: WebhookSecrets,
    queue: DeliveryQueue,
    metrics: Arc<Metrics>,
    wake: Arc<Notify>,
    max_body_bytes: usize,
    app_key_loaded: bool,
    /// The App client `/readyz` re-probes GitHub with (set by [`start`]).
    github: std::sync::OnceLock<GitHubApp>,
    /// The bearer token `/metrics` requires, when the operator set one.
    metrics_token: std::sync::OnceLock<secrecy::SecretString>,
    /// What unauthenticated bodies may hold at once.
    ingress: std::sync::OnceLock<ingress::IngressLimits>,
    /// Rate limit on the warnings unauthenticated requests cause.
    quiet: quiet::Quiet,
}

/// Parts of an [`AppState`]; tests build one around a temporary queue.
#[derive(Debug)]
pub struct AppStateConfig {
    pub secrets: WebhookSecrets,
    pub queue: DeliveryQueue,
    pub metrics: Arc<Metrics>,
    /// Notified after each stored delivery so idle workers start at once.
    pub wake: Arc<Notify>,
    pub max_body_bytes: usize,
    /// Reported by `/readyz`: the App key parsed and a GitHub client exists.
    pub app_key_loaded: bool,
}

impl AppState {
    pub fn new(config: AppStateConfig) -> Self {
        Self(Arc::new(StateInner {
            secrets: config.secrets,
            queue: config.queue,
            metrics: config.metrics,
            wake: config.wake,
            max_body_bytes: config.max_body_bytes,
            app_key_loaded: config.app_key_loaded,
            github: std::sync::OnceLock::new(),
            metrics_token: std::sync::OnceLock::new(),
            ingress: std::sync::OnceLock::new(),
            quiet: quiet::Quiet::default(),
        }))
    }

    /// Other ingress budgets than the defaults (tests and benches narrow them); only
    /// before the first request, which fixes them.
    pub fn set_ingress(&self, limits: ingress::IngressLimits) {
        let _ = self.0.ingress.set(limits);
    }

    /// Whether a warning for `cause` may be logged now (`Some(count left out)`).
    pub(crate) fn warn_allowed(&self, cause: &'static str) -> Option<u64> {
        self.0.quiet.allow(cause, std::time::Instant::now())
    }

    pub(crate) fn ingress(&self) -> &ingress::IngressLimits {
        self.0.ingress.get_or_init(ingress::IngressLimits::default)
    }

    /// Lets `/readyz` ask GitHub again after a failure (see `readiness`).
    pub fn set_github(&self, github: GitHubApp) {
        let _ = self.0.github.set(github);
    }

    /// Makes `/metrics` answer only requests carrying `Authorization: Bearer <token>`.
    pub fn require_metrics_token(&self, token: secrecy::SecretString) {
        let _ = self.0.metrics_token.set(token);
    }

    pub fn metrics(&self) -> &Metrics {
        &self.0.metrics
    }

    pub fn queue(&self) -> &DeliveryQueue {
        &self.0.queue
    }

    pub(crate) fn secrets(&self) -> &WebhookSecrets {
        &self.0.secrets
    }

    pub(crate) fn max_body_bytes(&self) -> usize {
        self.0.max_body_bytes
    }

    pub(crate) fn wake_workers(&self) {
        self.0.wake.notify_one();
    }
}

/// The HTTP surface. Other methods on these paths get 405 from axum's method router.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/webhook", post(webhook::receive))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(render_metrics))
        .with_state(state)
}

/// [`app`] with the dashboard's routes beside it, when it is configured. The dashboard
/// carries its own concurrency limit, so its load never queues webhook deliveries.
pub fn app_with(state: AppState, dashboard: Option<Router>) -> Router {
    match dashboard {
        Some(dashboard) => app(state).merge(dashboard),
        None => app(state),
    }
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// Ready when the queue answers within a second, the App key is loaded and the App's
/// last token mint or App call did not fail (see `readiness`).
async fn readyz(State(state): State<AppState>) -> Response {
    let queue_ok = matches!(
        tokio::time::timeout(Duration::from_secs(1), state.queue().stats()).await,
        Ok(Ok(_))
    );
    let unavailable = |reason: String| (StatusCode::SERVICE_UNAVAILABLE, reason).into_response();
    match (queue_ok, state.0.app_key_loaded) {
        (false, _) => unavailable("queue unavailable\n".to_owned()),
        (true, false) => unavailable("app key not loaded\n".to_owned()),
        (true, true) if state.metrics().storage_unready().is_some() => unavailable(format!(
            "{}\n",
            state.metrics().storage_unready().unwrap_or_default()
        )),
        (true, true) => match state.metrics().github.health.unready_reason() {
            Some(reason) => {
                readiness::reprobe(&state.metrics().github.health, state.0.github.get());
                unavailable(format!("{reason}\n"))
            }
            None => (StatusCode::OK, "ready\n").into_response(),
        },
    }
}

/// Whether `headers` carry the bearer token `/metrics` requires (compared in constant
/// time); true when none is required.
fn metrics_allowed(state: &AppState, headers: &axum::http::HeaderMap) -> bool {
    use secrecy::ExposeSecret;
    use subtle::ConstantTimeEq;
    let Some(token) = state.0.metrics_token.get() else {
        return true;
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    bool::from(given.as_bytes().ct_eq(token.expose_secret().as_bytes()))
}

async fn render_metrics(State(state): State<AppState>, headers: axum::http::HeaderMap) -> Response {
    if !metrics_allowed(&state, &headers) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer realm=\"navin metrics\"")],
            "/metrics needs the bearer token configured with NAVIN_METRICS_TOKEN_FILE\n",
        )
            .into_response();
    }
    if let Ok(stats) = state.queue().stats().await {
        let depth = stats.queued.saturating_add(stats.running);
        state
            .metrics()
            .queue_depth
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
        state
            .metrics()
            .queue_failed
            .set(i64::try_from(stats.failed).unwrap_or(i64::MAX));
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics().render(),
    )
        .into_response()
}

/// Why the server could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Key(#[from] JwtError),
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[cfg(feature = "dashboard")]
    #[error("the dashboard: {0}")]
    Dashboard(#[from] crate::dashboard::DashboardError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("server error: {0}")]
    Serve(std::io::Error),
}

/// A started server. Dropping it does not stop it; call [`RunningServer::shutdown`].
#[derive(Debug)]
pub struct RunningServer {
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<Result<ShutdownReport, ServeError>>,
    github: GitHubApp,
    queue: DeliveryQueue,
}

impl RunningServer {
    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn github(&self) -> &GitHubApp {
        &self.github
    }

    pub fn queue(&self) -> &DeliveryQueue {
        &self.queue
    }

    /// Stops accepting, lets in-flight handlers finish within the grace period, leaves
    /// the rest queued, and closes the queue.
    pub async fn shutdown(self) -> Result<ShutdownReport, ServeError> {
        let _ = self.stop.send(true);
        self.wait().await
    }

    /// Waits until the server stops (after SIGTERM/ctrl-c when started by [`run_with`]).
    pub async fn wait(self) -> Result<ShutdownReport, ServeError> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(ServeError::Serve(std::io::Error::other(e.to_string()))),
        }
    }
}

/// Builds the GitHub client described by `args`.
pub fn github_from_args(args: &ServeArgs, metrics: &Metrics) -> Result<GitHubApp, ServeError> {
    let pem = args.private_key_pem()?;
    let key = AppKey::from_pem(pem.expose_secret().as_bytes())?;
    let config = GitHubConfig {
        api_url: args.api_url.clone(),
        credentials: Credentials::App {
            issuer: args.jwt_issuer(),
            key,
        },
        write_spacing: args.write_spacing(),
        policy: RetryPolicy::default(),
        git_url_template: args.git_url_template.clone(),
        stateless_s2s_token: args.stateless_s2s_token.clone(),
        read_timeout: Some(Duration::from_secs(60)),
    };
    let observer: Arc<dyn navin_github::RequestObserver> = metrics.github.clone();
    Ok(GitHubApp::new(config, observer)?)
}

/// Starts everything `navin serve` runs and returns once the listener is bound.
/// `make_handler` receives the GitHub client so the engine can be built around it.
/// No dashboard: it needs the engine, which [`start_engine`] builds.
pub async fn start(
    args: &ServeArgs,
    make_handler: impl FnOnce(&GitHubApp) -> Arc<dyn DeliveryHandler>,
) -> Result<RunningServer, ServeError> {
    start_inner(args, make_handler, |_, _| Ok(None)).await
}

/// `navin serve` as shipped: the engine handles deliveries, and the dashboard is served
/// beside the webhook when `--dashboard-url` is set.
pub async fn start_engine(
    args: &ServeArgs,
    config: navin_engine::EngineConfig,
) -> Result<RunningServer, ServeError> {
    start_engine_with(args, config, |handler| Arc::new(handler)).await
}

/// [`start_engine`] with the engine's handler wrapped by `wrap` (tests watch it for panics).
pub async fn start_engine_with(
    args: &ServeArgs,
    config: navin_engine::EngineConfig,
    wrap: impl FnOnce(crate::queue::EngineHandler) -> Arc<dyn DeliveryHandler>,
) -> Result<RunningServer, ServeError> {
    let dashboard = DashboardPlan::from_args(args)?;
    // Every server seals its ledger commits: the operator's key, else the webhook secret's.
    let mut config = config;
    if config.ledger_key.is_none() {
        config.ledger_key = Some(args.ledger_key()?);
    }
    let slot: Arc<std::sync::Mutex<Option<Arc<navin_engine::Engine>>>> = Arc::default();
    let kept = Arc::clone(&slot);
    start_inner(
        args,
        move |github| {
            let engine = Arc::new(navin_engine::Engine::new(github.clone(), config));
            *kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(&engine));
            wrap(crate::queue::EngineHandler::shared(engine))
        },
        move |github, queue| {
            let engine = slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            dashboard.router(github, queue, engine)
        },
    )
    .await
}

/// The dashboard the settings ask for, built once the engine exists.
#[cfg(feature = "dashboard")]
struct DashboardPlan {
    config: Option<crate::dashboard::DashboardConfig>,
    api_url: String,
}

#[cfg(feature = "dashboard")]
impl DashboardPlan {
    fn from_args(args: &ServeArgs) -> Result<Self, ServeError> {
        Ok(Self {
            config: args.dashboard()?,
            api_url: args.api_url.clone(),
        })
    }

    fn router(
        self,
        github: &GitHubApp,
        queue: &DeliveryQueue,
        engine: Option<Arc<navin_engine::Engine>>,
    ) -> Result<Option<Router>, ServeError> {
        let Some(config) = self.config else {
            // Said once at start: without it `/` is a bare 404 and nothing explains why.
            tracing::info!(
                "dashboard off: set NAVIN_DASHBOARD_URL (its public address), NAVIN_CLIENT_ID \
                 and NAVIN_CLIENT_SECRET_FILE (the App's OAuth client) to serve it"
            );
            return Ok(None);
        };
        let engine = engine.ok_or_else(|| {
            crate::dashboard::DashboardError::Internal("the engine was not built".into())
        })?;
        tracing::info!(url = %config.public_url, "dashboard enabled");
        let dashboard = crate::dashboard::Dashboard::new(
            config,
            self.api_url,
            github.clone(),
            engine,
            queue.clone(),
        )?;
        Ok(Some(crate::dashboard::router(Arc::new(dashboard))))
    }
}

/// A build without the dashboard: its settings are refused at start, naming the feature.
#[cfg(not(feature = "dashboard"))]
struct DashboardPlan;

#[cfg(not(feature = "dashboard"))]
impl DashboardPlan {
    fn from_args(args: &ServeArgs) -> Result<Self, ServeError> {
        match args.dashboard_url {
            Some(_) => Err(ConfigError::NoDashboardFeature.into()),
            None => Ok(Self),
        }
    }

    fn router(
        self,
        _github: &GitHubApp,
        _queue: &DeliveryQueue,
        _engine: Option<Arc<navin_engine::Engine>>,
    ) -> Result<Option<Router>, ServeError> {
        Ok(None)
    }
}

async fn start_inner(
    args: &ServeArgs,
    make_handler: impl FnOnce(&GitHubApp) -> Arc<dyn DeliveryHandler>,
    make_dashboard: impl FnOnce(&GitHubApp, &DeliveryQueue) -> Result<Option<Router>, ServeError>,
) -> Result<RunningServer, ServeError> {
    args.validate()?;
    let metrics = Arc::new(Metrics::new());
    let secrets = WebhookSecrets::new(args.webhook_secrets()?);
    let github = github_from_args(args, &metrics)?;
    let (queue, requeued) = match args.database_url()? {
        Some(url) => {
            let queue = DeliveryQueue::connect(url.expose_secret(), &args.queue_options()).await?;
            tracing::info!("delivery queue: shared PostgreSQL database");
            (queue, 0)
        }
        None => DeliveryQueue::open(&args.queue_path())?,
    };
    if requeued > 0 {
        tracing::warn!(
            requeued,
            "deliveries interrupted by the last shutdown will run again"
        );
    }
    let wake = Arc::new(Notify::new());
    let worker_config = WorkerConfig {
        concurrency: args.workers,
        max_attempts: args.max_attempts.max(1),
        ..WorkerConfig::default()
    };
    let inner_handler = make_handler(&github);
    let starting = Arc::clone(&inner_handler);
    let handler = delivery_log::LoggedHandler::new(inner_handler, args.max_attempts);
    let workers = Workers::spawn(
        queue.clone(),
        Arc::new(handler),
        worker_config,
        Arc::clone(&metrics),
        Arc::clone(&wake),
    );
    let (stop, stopped) = watch::channel(false);
    let reconciler = args.reconcile_interval().map(|interval| {
        tokio::spawn(crate::queue::reconcile::run_reconciler(
            github.clone(),
            queue.clone(),
            Arc::clone(&metrics),
            interval,
            stopped.clone(),
        ))
    });
    let sweeper = args.sweep_interval().map(|interval| {
        tokio::spawn(crate::queue::sweeper::run_sweeper(
            queue.clone(),
            navin_domain::sweeps::Sweeps::new(&args.data_dir),
            interval,
            Arc::clone(&wake),
            stopped.clone(),
        ))
    });
    let state = AppState::new(AppStateConfig {
        secrets,
        queue: queue.clone(),
        metrics,
        wake,
        max_body_bytes: args.max_body_bytes,
        app_key_loaded: true,
    });
    state.set_github(github.clone());
    if let Some(token) = args.metrics_token()? {
        state.require_metrics_token(token);
    }
    let dashboard = make_dashboard(&github, &queue)?;
    let listener = TcpListener::bind(args.listen)
        .await
        .map_err(|source| ServeError::Bind {
            addr: args.listen,
            source,
        })?;
    let local_addr = listener.local_addr().map_err(ServeError::Serve)?;
    tracing::info!(%local_addr, "navin webhook server listening");
    // After the listener is bound, in the background: never delays readiness or start.
    let on_start = tokio::spawn(async move {
        if let Err(e) = starting.on_start().await {
            tracing::warn!(error = %e, "start-up work failed");
        }
    });
    let grace = args.shutdown_grace();
    let trusted_proxies = args.trusted_proxies.clone();
    let task_queue = queue.clone();
    let mut http_stopped = stopped;
    let task = tokio::spawn(async move {
        let served = http::serve(
            listener,
            app_with(state, dashboard),
            trusted_proxies,
            async move {
                let _ = http_stopped.wait_for(|stop| *stop).await;
            },
        )
        .await;
        on_start.abort();
        let report = workers.shutdown(grace).await;
        if let Some(reconciler) = reconciler {
            reconciler.abort();
        }
        if let Some(sweeper) = sweeper {
            sweeper.abort();
        }
        task_queue.close().await;
        tracing::info!(
            finished = report.finished,
            abandoned = report.abandoned,
            "navin webhook server stopped"
        );
        served.map(|()| report).map_err(ServeError::Serve)
    });
    Ok(RunningServer {
        local_addr,
        stop,
        task,
        github,
        queue,
    })
}

/// `navin serve` with the engine (and the dashboard when configured): runs until
/// SIGTERM or ctrl-c, then drains.
pub async fn run_engine(
    args: ServeArgs,
    config: navin_engine::EngineConfig,
) -> Result<(), ServeError> {
    // The shipped server also checks every installed ledger branch's protection at start.
    let server = start_engine_with(&args, config, |handler| {
        Arc::new(handler.with_check_at_start())
    })
    .await?;
    shutdown_signal().await;
    tracing::info!("shutdown requested; finishing in-flight deliveries");
    server.shutdown().await.map(|_| ())
}

/// `navin serve` with the given handler: runs until SIGTERM or ctrl-c, then drains.
pub async fn run_with(
    args: ServeArgs,
    make_handler: impl FnOnce(&GitHubApp) -> Arc<dyn DeliveryHandler>,
) -> Result<(), ServeError> {
    let server = start(&args, make_handler).await?;
    shutdown_signal().await;
    tracing::info!("shutdown requested; finishing in-flight deliveries");
    server.shutdown().await.map(|_| ())
}

/// `navin serve` before the engine exists: deliveries are verified, stored and routed to
/// hooks that do nothing.
pub async fn run(args: ServeArgs) -> Result<(), ServeError> {
    run_with(args, |_| Arc::new(NoHandler)).await
}

/// Resolves on ctrl-c or SIGTERM (what container runtimes send).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
