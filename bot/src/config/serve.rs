//! Process configuration for `navin serve`: clap flags with environment fallbacks, secrets wrapped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use secrecy::{ExposeSecret, SecretString};

/// GitHub's webhook payload cap is 25 MB; anything larger is never delivered, so a
/// larger body on `/webhook` is not from GitHub.
pub const DEFAULT_MAX_BODY_BYTES: usize = 25 * 1024 * 1024;

/// Flags of `navin serve`. Every flag also reads an environment variable so that
/// secrets need not appear on a command line (where `ps` would show them).
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address and port the webhook server listens on.
    #[arg(long, env = "NAVIN_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Numeric GitHub App id (the JWT issuer unless --client-id is given).
    #[arg(long, env = "NAVIN_APP_ID")]
    pub app_id: u64,

    /// GitHub App client id (`Iv23…`); GitHub recommends it as the JWT issuer.
    #[arg(long, env = "NAVIN_CLIENT_ID")]
    pub client_id: Option<String>,

    /// Path of the App's PEM private key (preferred: keeps the key out of the environment).
    #[arg(long, env = "NAVIN_PRIVATE_KEY_PATH", conflicts_with = "private_key")]
    pub private_key_path: Option<PathBuf>,

    /// The App's PEM private key itself, when a file is not practical.
    #[arg(long, env = "NAVIN_PRIVATE_KEY", hide_env_values = true, allow_hyphen_values = true, value_parser = parse_secret)]
    pub private_key: Option<SecretString>,

    /// Webhook secret configured on the App; signatures are checked against it.
    #[arg(long, env = "NAVIN_WEBHOOK_SECRET", hide_env_values = true, value_parser = parse_secret)]
    pub webhook_secret: Option<SecretString>,

    /// File holding the webhook secret (trailing newline ignored), instead of --webhook-secret.
    #[arg(
        long,
        env = "NAVIN_WEBHOOK_SECRET_FILE",
        conflicts_with = "webhook_secret"
    )]
    pub webhook_secret_file: Option<PathBuf>,

    /// Previous webhook secret, still accepted while a rotation is under way.
    #[arg(long, env = "NAVIN_WEBHOOK_SECRET_PREVIOUS", hide_env_values = true, value_parser = parse_secret)]
    pub webhook_secret_previous: Option<SecretString>,

    /// Key Navin seals its ledger commits with (at least 16 bytes; `openssl rand -hex
    /// 32`). Default: one derived from the webhook secret. Set it when the webhook
    /// secret may rotate, or to share one key with CLIs or Action jobs writing the same
    /// ledgers.
    #[arg(long, env = "NAVIN_LEDGER_KEY", hide_env_values = true, value_parser = parse_secret)]
    pub ledger_key: Option<SecretString>,

    /// File holding the ledger key (trailing newline ignored), instead of --ledger-key.
    #[arg(long, env = "NAVIN_LEDGER_KEY_FILE", conflicts_with = "ledger_key")]
    pub ledger_key_file: Option<PathBuf>,

    /// REST API base URL; `https://HOST/api/v3` for GitHub Enterprise Server.
    #[arg(long, env = "NAVIN_API_URL", default_value = "https://api.github.com")]
    pub api_url: String,

    /// Git remote URL template; `{owner}`, `{repo}` and `{full_name}` are substituted.
    /// The token is never put in the URL; git authenticates with a header.
    #[arg(
        long,
        env = "NAVIN_GIT_URL_TEMPLATE",
        default_value = "https://github.com/{owner}/{repo}.git"
    )]
    pub git_url_template: String,

    /// Directory for the delivery queue database (created if missing).
    #[arg(long, env = "NAVIN_DATA_DIR", default_value = "navin-data")]
    pub data_dir: PathBuf,

    /// PostgreSQL queue shared by several replicas
    /// (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`); without it the queue is SQLite in
    /// the data directory, for one process. Each replica still keeps its own data
    /// directory for git clones.
    #[arg(long, env = "NAVIN_DATABASE_URL", hide_env_values = true, value_parser = parse_secret)]
    pub database_url: Option<SecretString>,

    /// File holding the PostgreSQL connection string; replaces NAVIN_DATABASE_URL.
    #[arg(long, env = "NAVIN_DATABASE_URL_FILE", conflicts_with = "database_url")]
    pub database_url_file: Option<PathBuf>,

    /// PEM file of the CA certificates to trust for the database's TLS instead of the
    /// system's (RDS, Cloud SQL and other managed services sign with their own). Whether
    /// TLS is used follows `sslmode` in the URL.
    #[arg(long, env = "NAVIN_DATABASE_CA_FILE")]
    pub database_ca_file: Option<PathBuf>,

    /// Seconds a replica holds a delivery it runs without renewing; after a replica
    /// dies, its deliveries wait this long before another takes them (PostgreSQL only).
    #[arg(long, env = "NAVIN_QUEUE_LEASE_SECS", default_value_t = 60)]
    pub queue_lease_secs: u64,

    /// Largest accepted webhook body in bytes; larger requests get 413 unread.
    #[arg(long, env = "NAVIN_MAX_BODY_BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,

    /// Addresses of reverse proxies in front of Navin (comma-separated IPs, e.g.
    /// `127.0.0.1` behind Caddy on the same host). Only a request from one of them has
    /// its sender read from `X-Forwarded-For`, which anyone else could forge; every
    /// sender gets its own share of the webhook body budget by that address.
    #[arg(long, env = "NAVIN_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<std::net::IpAddr>,

    /// Commits of history `/plan` fetches with the planned commit (0 or 1: that commit
    /// alone). The built-in planner ranks with them: files changed together with the
    /// best candidates, past commits about the same thing. Costs fetch time and disk on
    /// the first plan of a repository (docs/plan.md §10).
    #[arg(long, env = "NAVIN_PLAN_HISTORY", default_value_t = navin_planner::DEFAULT_HISTORY_DEPTH)]
    pub plan_history: usize,

    /// Deliveries handled at once (always one at a time per repository).
    #[arg(long, env = "NAVIN_WORKERS", default_value_t = 8)]
    pub workers: usize,

    /// Attempts per delivery before it is marked failed.
    #[arg(long, env = "NAVIN_MAX_ATTEMPTS", default_value_t = 6)]
    pub max_attempts: u32,

    /// Minimum gap between content-creating requests of one installation, in milliseconds
    /// (GitHub asks for at least one second).
    #[arg(long, env = "NAVIN_WRITE_SPACING_MS", default_value_t = 1000)]
    pub write_spacing_ms: u64,

    /// Seconds between redelivery sweeps of failed webhook deliveries; 0 disables them.
    #[arg(long, env = "NAVIN_RECONCILE_INTERVAL_SECS", default_value_t = 600)]
    pub reconcile_interval_secs: u64,

    /// Seconds between Navin's clock ticks for repositories with a live mission (the
    /// closed agent loop's `agents.idle_after` and `agents.timeout`); 0 disables them.
    #[arg(long, env = "NAVIN_SWEEP_INTERVAL_SECS", default_value_t = 60)]
    pub sweep_interval_secs: u64,

    /// Seconds in-flight deliveries may take to finish after SIGTERM; the rest stay queued.
    #[arg(long, env = "NAVIN_SHUTDOWN_GRACE_SECS", default_value_t = 20)]
    pub shutdown_grace_secs: u64,

    /// Send `X-GitHub-Stateless-S2S-Token: enabled|disabled` when minting installation
    /// tokens, to force a token format while testing.
    #[arg(long, env = "NAVIN_STATELESS_S2S_TOKEN", value_parser = ["enabled", "disabled"])]
    pub stateless_s2s_token: Option<String>,

    /// File holding a user token (fine-grained PAT or a GitHub App user-to-server token)
    /// for what GitHub refuses installation tokens: assigning step issues to the Copilot
    /// coding agent (`dispatch.agent: copilot`). Trailing newline ignored.
    #[arg(long, env = "NAVIN_AGENT_TOKEN_FILE")]
    pub agent_token_file: Option<PathBuf>,

    /// File holding a bearer token `/metrics` then requires (`Authorization: Bearer
    /// TOKEN`), for a server whose port is reachable beyond the scraper. Trailing
    /// newline ignored. Without it `/metrics` is open, as Prometheus expects by default.
    #[arg(long, env = "NAVIN_METRICS_TOKEN_FILE")]
    pub metrics_token_file: Option<PathBuf>,

    /// File holding the key of the LLM planner's endpoint (for repositories with
    /// `planner.source: llm`); replaces NAVIN_LLM_API_KEY. The endpoint and default
    /// model are NAVIN_LLM_BASE_URL and NAVIN_LLM_MODEL. Trailing newline ignored.
    #[arg(long, env = "NAVIN_LLM_API_KEY_FILE")]
    pub llm_api_key_file: Option<PathBuf>,

    /// Log lines as `text` (for a person) or `json` (one object a line, for a log
    /// collector) [default: text on a terminal, json otherwise].
    #[arg(long, env = "NAVIN_LOG_FORMAT", value_enum, value_name = "FORMAT")]
    pub log_format: Option<crate::logging::LogFormat>,

    /// The web dashboard's public address (e.g. https://navin.example.com); the
    /// dashboard is off unless set. Sign-in returns to `<url>/auth/callback`, which must
    /// be the App's callback URL. Needs NAVIN_CLIENT_ID and NAVIN_CLIENT_SECRET_FILE.
    #[arg(long, env = "NAVIN_DASHBOARD_URL")]
    pub dashboard_url: Option<String>,

    /// File holding the App's client secret, for the dashboard's GitHub sign-in.
    /// Trailing newline ignored.
    #[arg(long, env = "NAVIN_CLIENT_SECRET_FILE")]
    pub client_secret_file: Option<PathBuf>,

    /// GitHub's web address, where people sign in (a GHES host's own address there).
    #[arg(
        long,
        env = "NAVIN_GITHUB_WEB_URL",
        default_value = "https://github.com"
    )]
    pub github_web_url: String,

    /// Dashboard requests served at once; the webhook route is not counted against it.
    #[arg(long, env = "NAVIN_DASHBOARD_CONCURRENCY", default_value_t = 32)]
    pub dashboard_concurrency: usize,
}

/// What is wrong with the process configuration; each variant names the setting.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no private key: set NAVIN_PRIVATE_KEY_PATH (--private-key-path) or NAVIN_PRIVATE_KEY"
    )]
    MissingPrivateKey,
    #[error("cannot read private key file {path}: {source}")]
    PrivateKeyFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the planner settings: {0}")]
    Planner(String),
    #[error("cannot read the LLM key file {path} (NAVIN_LLM_API_KEY_FILE): {source}")]
    LlmKeyFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no webhook secret: set NAVIN_WEBHOOK_SECRET or NAVIN_WEBHOOK_SECRET_FILE")]
    MissingWebhookSecret,
    #[error("cannot read webhook secret file {path}: {source}")]
    WebhookSecretFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the database URL file {path} (NAVIN_DATABASE_URL_FILE): {source}")]
    DatabaseUrlFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the agent token file {path} (--agent-token-file): {source}")]
    AgentTokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the agent token file {path} is empty: put a user token in it, or drop --agent-token-file"
    )]
    EmptyAgentToken { path: PathBuf },
    #[error("webhook secret is empty")]
    EmptyWebhookSecret,
    #[error("cannot read the ledger key file {path} (NAVIN_LEDGER_KEY_FILE): {source}")]
    LedgerKeyFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the ledger key (NAVIN_LEDGER_KEY): {0}")]
    LedgerKey(navin_ledger::store::ShortKey),
    #[error("cannot read the metrics token file {path} (NAVIN_METRICS_TOKEN_FILE): {source}")]
    MetricsTokenFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the metrics token file {path} is empty: put a token in it, or drop NAVIN_METRICS_TOKEN_FILE")]
    EmptyMetricsToken { path: PathBuf },
    #[error(
        "this navin was built without the `dashboard` feature, so NAVIN_DASHBOARD_URL cannot \
         be used; install it with the default features (cargo install --locked --path bot), \
         or unset NAVIN_DASHBOARD_URL"
    )]
    NoDashboardFeature,
    #[error(
        "this navin was built without the `llm` feature, so NAVIN_LLM_BASE_URL cannot be \
         used; install it with the default features (cargo install --locked --path bot), \
         or unset NAVIN_LLM_BASE_URL and plan with NAVIN_PLAN_COMMAND or the built-in planner"
    )]
    NoLlmFeature,
    #[error("the dashboard (NAVIN_DASHBOARD_URL) needs {0}")]
    DashboardNeeds(&'static str),
    #[error("cannot read the client secret file {path} (NAVIN_CLIENT_SECRET_FILE): {source}")]
    ClientSecretFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A setting outside what the server can run with. `value` is `None` for a setting
    /// whose value may carry a credential (a URL's user part).
    #[error("{setting} is {}: expected {expected}", value.as_deref().map_or_else(|| "not valid (value not shown)".to_owned(), |v| format!("`{v}`")))]
    Invalid {
        setting: &'static str,
        value: Option<String>,
        expected: &'static str,
    },
}

/// clap value parsers must return a `Result`; wrapping cannot fail.
fn parse_secret(value: &str) -> Result<SecretString, std::convert::Infallible> {
    Ok(SecretString::from(value.to_owned()))
}

impl ServeArgs {
    /// The PEM text of the App key, from the file or the inline value.
    pub fn private_key_pem(&self) -> Result<SecretString, ConfigError> {
        if let Some(path) = &self.private_key_path {
            let text =
                std::fs::read_to_string(path).map_err(|source| ConfigError::PrivateKeyFile {
                    path: path.clone(),
                    source,
                })?;
            return Ok(SecretString::from(text));
        }
        let inline = self
            .private_key
            .as_ref()
            .ok_or(ConfigError::MissingPrivateKey)?;
        // Hosting dashboards often store a PEM on one line with literal `\n`s.
        let pem = inline.expose_secret();
        if !pem.contains('\n') && pem.contains("\\n") {
            return Ok(SecretString::from(pem.replace("\\n", "\n")));
        }
        Ok(inline.clone())
    }

    /// Current secret first, then the previous one during a rotation.
    pub fn webhook_secrets(&self) -> Result<Vec<SecretString>, ConfigError> {
        let current = if let Some(path) = &self.webhook_secret_file {
            let text =
                std::fs::read_to_string(path).map_err(|source| ConfigError::WebhookSecretFile {
                    path: path.clone(),
                    source,
                })?;
            SecretString::from(text.trim_end_matches(['\n', '\r']).to_owned())
        } else {
            self.webhook_secret
                .clone()
                .ok_or(ConfigError::MissingWebhookSecret)?
        };
        if current.expose_secret().is_empty() {
            return Err(ConfigError::EmptyWebhookSecret);
        }
        let mut secrets = vec![current];
        if let Some(previous) = &self.webhook_secret_previous {
            if !previous.expose_secret().is_empty() {
                secrets.push(previous.clone());
            }
        }
        Ok(secrets)
    }

    /// The key sealing ledger commits: NAVIN_LEDGER_KEY (or its file), else one derived
    /// from the current webhook secret.
    pub fn ledger_key(&self) -> Result<navin_ledger::store::SealKey, ConfigError> {
        use navin_ledger::store::SealKey;
        let configured = match (&self.ledger_key_file, &self.ledger_key) {
            (Some(path), _) => Some(std::fs::read_to_string(path).map_err(|source| {
                ConfigError::LedgerKeyFile {
                    path: path.clone(),
                    source,
                }
            })?),
            (None, Some(key)) => Some(key.expose_secret().to_owned()),
            (None, None) => None,
        };
        if let Some(text) = configured {
            return SealKey::from_text(&text).map_err(ConfigError::LedgerKey);
        }
        let secrets = self.webhook_secrets()?;
        let current = secrets.first().ok_or(ConfigError::MissingWebhookSecret)?;
        SealKey::derived_from(current.expose_secret().as_bytes())
            .ok_or(ConfigError::EmptyWebhookSecret)
    }

    /// The user token for agent dispatch, when a file is configured; an empty file is
    /// an error rather than a silently missing token.
    pub fn agent_token(&self) -> Result<Option<SecretString>, ConfigError> {
        let Some(path) = &self.agent_token_file else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::AgentTokenFile {
            path: path.clone(),
            source,
        })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(ConfigError::EmptyAgentToken { path: path.clone() });
        }
        Ok(Some(SecretString::from(token.to_owned())))
    }

    /// The bearer token `/metrics` requires, when a file is configured; an empty file
    /// is an error rather than an open endpoint by mistake.
    pub fn metrics_token(&self) -> Result<Option<SecretString>, ConfigError> {
        let Some(path) = &self.metrics_token_file else {
            return Ok(None);
        };
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::MetricsTokenFile {
                path: path.clone(),
                source,
            })?;
        let token = text.trim();
        if token.is_empty() {
            return Err(ConfigError::EmptyMetricsToken { path: path.clone() });
        }
        Ok(Some(SecretString::from(token.to_owned())))
    }

    /// The operator's planner settings: NAVIN_LLM_BASE_URL, NAVIN_LLM_MODEL, the key
    /// (NAVIN_LLM_API_KEY or the key file), NAVIN_PLAN_COMMAND, NAVIN_PLAN_TIMEOUT_SECS.
    pub fn planner(&self) -> Result<navin_planner::external::ExternalConfig, ConfigError> {
        let mut cfg = navin_planner::external::ExternalConfig::from_env()
            .map_err(|e| ConfigError::Planner(e.to_string()))?;
        if cfg.base_url.is_some() && !cfg!(feature = "llm") {
            return Err(ConfigError::NoLlmFeature);
        }
        // Not shown: an endpoint URL may carry a key in its user part.
        if cfg.base_url.as_deref().is_some_and(|url| !is_http_url(url)) {
            return Err(ConfigError::Invalid {
                setting: "NAVIN_LLM_BASE_URL",
                value: None,
                expected: "an http(s) URL such as https://api.openai.com/v1",
            });
        }
        if let Some(path) = &self.llm_api_key_file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::LlmKeyFile {
                path: path.clone(),
                source,
            })?;
            let key = text.trim();
            if key.is_empty() {
                return Err(ConfigError::Planner(format!("{} is empty", path.display())));
            }
            cfg.api_key = Some(navin_planner::external::ApiKey::new(key));
        }
        Ok(cfg)
    }

    /// The dashboard's settings, when `--dashboard-url` is set; what is missing for it
    /// is named.
    #[cfg(feature = "dashboard")]
    pub fn dashboard(&self) -> Result<Option<crate::dashboard::DashboardConfig>, ConfigError> {
        let Some(url) = &self.dashboard_url else {
            return Ok(None);
        };
        if !is_http_url(url) {
            return Err(ConfigError::Invalid {
                setting: "NAVIN_DASHBOARD_URL (--dashboard-url)",
                value: Some(url.clone()),
                expected: "the http(s) address people open, such as https://navin.example.com",
            });
        }
        if !is_http_url(&self.github_web_url) {
            return Err(ConfigError::Invalid {
                setting: "NAVIN_GITHUB_WEB_URL (--github-web-url)",
                value: Some(self.github_web_url.clone()),
                expected: "an http(s) URL such as https://github.com",
            });
        }
        let client_id = self.client_id.clone().ok_or(ConfigError::DashboardNeeds(
            "NAVIN_CLIENT_ID (the App's client id)",
        ))?;
        let path = self
            .client_secret_file
            .as_ref()
            .ok_or(ConfigError::DashboardNeeds(
                "NAVIN_CLIENT_SECRET_FILE (a file holding the App's client secret)",
            ))?;
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::ClientSecretFile {
                path: path.clone(),
                source,
            })?;
        let secret = text.trim();
        if secret.is_empty() {
            return Err(ConfigError::DashboardNeeds(
                "a client secret: NAVIN_CLIENT_SECRET_FILE is empty",
            ));
        }
        if self.dashboard_concurrency == 0 {
            return Err(ConfigError::Invalid {
                setting: "NAVIN_DASHBOARD_CONCURRENCY (--dashboard-concurrency)",
                value: Some("0".to_owned()),
                expected: "a whole number of at least 1",
            });
        }
        Ok(Some(crate::dashboard::DashboardConfig {
            public_url: url.trim_end_matches('/').to_owned(),
            web_url: self.github_web_url.trim_end_matches('/').to_owned(),
            client_id,
            client_secret: SecretString::from(secret.to_owned()),
            max_concurrency: self.dashboard_concurrency,
            ledger_max_age: Duration::from_secs(20),
        }))
    }

    /// The JWT `iss`: the client id when configured (GitHub's recommendation), else the app id.
    pub fn jwt_issuer(&self) -> String {
        self.client_id
            .clone()
            .unwrap_or_else(|| self.app_id.to_string())
    }

    pub fn write_spacing(&self) -> Duration {
        Duration::from_millis(self.write_spacing_ms)
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }

    /// `None` when periodic reconciliation is switched off.
    pub fn reconcile_interval(&self) -> Option<Duration> {
        (self.reconcile_interval_secs > 0)
            .then(|| Duration::from_secs(self.reconcile_interval_secs))
    }

    /// `None` when the clock ticks are switched off.
    pub fn sweep_interval(&self) -> Option<Duration> {
        (self.sweep_interval_secs > 0).then(|| Duration::from_secs(self.sweep_interval_secs))
    }

    pub fn queue_path(&self) -> PathBuf {
        self.data_dir.join("deliveries.sqlite3")
    }

    /// The PostgreSQL connection string, from the flag, the environment or the file.
    pub fn database_url(&self) -> Result<Option<SecretString>, ConfigError> {
        if let Some(path) = &self.database_url_file {
            let text =
                std::fs::read_to_string(path).map_err(|source| ConfigError::DatabaseUrlFile {
                    path: path.clone(),
                    source,
                })?;
            return Ok(Some(SecretString::from(
                text.trim_end_matches(['\n', '\r']).to_owned(),
            )));
        }
        Ok(self.database_url.clone())
    }

    /// How this replica uses the shared queue ([`Self::validate`] refused leases under
    /// 3 s, whose renewals every third would be a busy loop).
    pub fn queue_options(&self) -> crate::queue::PgOptions {
        crate::queue::PgOptions {
            lease: Duration::from_secs(self.queue_lease_secs),
            pool_size: self.workers.saturating_add(4),
            ca_file: self.database_ca_file.clone(),
        }
    }

    /// Every URL and number the server runs on, checked before anything starts, so a
    /// bad setting stops `navin serve` with one line instead of failing a worker later.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |setting, value: &dyn ToString, expected| ConfigError::Invalid {
            setting,
            value: Some(value.to_string()),
            expected,
        };
        if !is_http_url(&self.api_url) {
            return Err(invalid(
                "NAVIN_API_URL (--api-url)",
                &self.api_url,
                "an http(s) URL such as https://api.github.com or https://HOST/api/v3",
            ));
        }
        if !is_git_url_template(&self.git_url_template) {
            return Err(invalid(
                "NAVIN_GIT_URL_TEMPLATE (--git-url-template)",
                &self.git_url_template,
                "an https://, http://, ssh://, git:// or file:// URL with {owner} and {repo} (or {full_name}), such as https://github.com/{owner}/{repo}.git",
            ));
        }
        let at_least_one = [
            ("NAVIN_WORKERS (--workers)", self.workers as u64),
            (
                "NAVIN_MAX_ATTEMPTS (--max-attempts)",
                u64::from(self.max_attempts),
            ),
            (
                "NAVIN_MAX_BODY_BYTES (--max-body-bytes)",
                self.max_body_bytes as u64,
            ),
        ];
        for (setting, value) in at_least_one {
            if value == 0 {
                return Err(invalid(setting, &value, "a whole number of at least 1"));
            }
        }
        if self.queue_lease_secs < 3 {
            return Err(invalid(
                "NAVIN_QUEUE_LEASE_SECS (--queue-lease-secs)",
                &self.queue_lease_secs,
                "a whole number of seconds of at least 3 (leases are renewed every third)",
            ));
        }
        self.planner().map(|_| ())
    }
}

/// `http(s)://HOST…`: what octocrab can send requests to.
fn is_http_url(value: &str) -> bool {
    value.parse::<http::Uri>().is_ok_and(|uri| {
        matches!(uri.scheme_str(), Some("http" | "https"))
            && uri.authority().is_some_and(|a| !a.host().is_empty())
    })
}

/// A git remote for every repository: a URL git can fetch, naming the repository.
fn is_git_url_template(template: &str) -> bool {
    let names_repo = template.contains("{full_name}")
        || (template.contains("{owner}") && template.contains("{repo}"));
    let url = template
        .replace("{full_name}", "o/r")
        .replace("{owner}", "o")
        .replace("{repo}", "r");
    let Some((scheme, rest)) = url.split_once("://") else {
        return false;
    };
    let scheme_ok = match scheme {
        "http" | "https" => is_http_url(&url),
        "ssh" | "git" | "file" => !rest.is_empty(),
        _ => false,
    };
    names_repo && scheme_ok && !url.chars().any(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn parse(args: &[&str]) -> ServeArgs {
        let mut all = vec!["navin"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).expect("flags parse").serve
    }

    #[test]
    fn debug_output_of_args_hides_every_secret() {
        let args = parse(&[
            "--app-id",
            "7",
            "--private-key",
            "-----BEGIN PRIVATE KEY----- sekrit-key",
            "--webhook-secret",
            "hunter2-current",
            "--webhook-secret-previous",
            "hunter2-previous",
        ]);
        let printed = format!("{args:?}");
        assert!(!printed.contains("sekrit-key"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }

    #[test]
    fn previous_secret_is_accepted_after_the_current_one() {
        let args = parse(&[
            "--app-id",
            "7",
            "--webhook-secret",
            "new",
            "--webhook-secret-previous",
            "old",
        ]);
        let secrets = args.webhook_secrets().expect("secrets");
        let exposed: Vec<&str> = secrets.iter().map(ExposeSecret::expose_secret).collect();
        assert_eq!(exposed, ["new", "old"]);
    }

    #[test]
    fn one_line_pem_with_escaped_newlines_is_restored() {
        let args = parse(&[
            "--app-id",
            "7",
            "--private-key=-----BEGIN RSA PRIVATE KEY-----\\nAAAA\\n-----END RSA PRIVATE KEY-----",
        ]);
        let pem = args.private_key_pem().expect("key");
        assert_eq!(
            pem.expose_secret(),
            "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----"
        );
    }

    #[test]
    fn client_id_is_preferred_as_jwt_issuer() {
        assert_eq!(parse(&["--app-id", "7"]).jwt_issuer(), "7");
        assert_eq!(
            parse(&["--app-id", "7", "--client-id", "Iv23abc"]).jwt_issuer(),
            "Iv23abc"
        );
    }

    #[test]
    fn missing_key_and_secret_are_named() {
        let args = parse(&["--app-id", "7"]);
        assert!(matches!(
            args.private_key_pem(),
            Err(ConfigError::MissingPrivateKey)
        ));
        assert!(matches!(
            args.webhook_secrets(),
            Err(ConfigError::MissingWebhookSecret)
        ));
    }

    #[test]
    fn help_documents_every_flag_and_its_environment_variable() {
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        for env in [
            "NAVIN_APP_ID",
            "NAVIN_CLIENT_ID",
            "NAVIN_PRIVATE_KEY_PATH",
            "NAVIN_PRIVATE_KEY",
            "NAVIN_WEBHOOK_SECRET",
            "NAVIN_WEBHOOK_SECRET_PREVIOUS",
            "NAVIN_API_URL",
            "NAVIN_GIT_URL_TEMPLATE",
            "NAVIN_DATA_DIR",
            "NAVIN_LISTEN",
        ] {
            assert!(help.contains(env), "{env} missing from --help");
        }
        for arg in Cli::command().get_arguments() {
            assert!(
                arg.get_help().is_some() || arg.get_long_help().is_some(),
                "--{} has no help",
                arg.get_id()
            );
        }
    }
}
