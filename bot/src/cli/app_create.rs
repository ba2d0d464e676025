//! `navin app create`: registers Navin's GitHub App through GitHub's manifest flow and saves its credentials for `navin serve`.
//!
//! The flow: a one-shot server on 127.0.0.1 serves a page whose form posts the manifest
//! (`bot/deploy/app.yml`, with the local `/callback` as `redirect_url`) to GitHub. Once
//! the App is created GitHub redirects the browser to `/callback?code=…&state=…`; the
//! code is exchanged (`POST /app-manifests/{code}/conversions`, no credentials) for the
//! App id, client id, webhook secret and private key, which are written with mode 0600.
//! Secrets go only into those files: never to stdout, stderr or the browser.

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use clap::Args;
use rand::Rng;
use serde::Deserialize;
use serde_json::Value;

use super::CliError;

/// The manifest, one source for the command and for registering by hand.
const MANIFEST: &str = include_str!("../../deploy/app.yml");

/// GitHub's default API URL; anything else is printed in the `navin serve` command.
const GITHUB_API: &str = "https://api.github.com";

/// The files written under `--out`, in the order they are written.
const FILES: [&str; 5] = [
    "app-id",
    "client-id",
    "client-secret",
    "webhook-secret",
    "private-key.pem",
];

/// Flags of `navin app create`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = "Examples:
  navin app create --webhook-url https://navin.example.com/webhook
  navin app create --org my-org --name 'Navin (my-org)' --out /etc/navin
  navin app create --github-url https://ghe.example.com \\
      --api-url https://ghe.example.com/api/v3

Open the printed http://127.0.0.1:PORT/ address in a browser signed in to GitHub, create
the App, and GitHub sends you back here; the credentials land in --out and the command to
start `navin serve` is printed. Then install the App on your repositories.")]
pub struct AppCreateArgs {
    /// Register the App under this organization instead of your personal account.
    #[arg(long, value_name = "ORG")]
    pub org: Option<String>,
    /// The App's name on GitHub (unique on GitHub; you can change it on the form).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Public HTTPS URL of `navin serve`'s /webhook; without it webhooks start switched off.
    #[arg(long, value_name = "URL")]
    pub webhook_url: Option<String>,
    /// Public URL of the dashboard (`NAVIN_DASHBOARD_URL` on the server): its
    /// `/auth/callback` becomes the App's sign-in callback. Default: the webhook URL's
    /// site, when it ends in `/webhook`.
    #[arg(long, value_name = "URL")]
    pub dashboard_url: Option<String>,
    /// GitHub's web URL; `https://HOST` for GitHub Enterprise Server.
    #[arg(
        long,
        value_name = "URL",
        env = "NAVIN_GITHUB_URL",
        default_value = "https://github.com"
    )]
    pub github_url: String,
    /// GitHub's REST API URL; `https://HOST/api/v3` for GitHub Enterprise Server.
    #[arg(long, value_name = "URL", env = "NAVIN_API_URL", default_value = GITHUB_API)]
    pub api_url: String,
    /// Directory for the credentials (created with mode 0700; files are 0600).
    #[arg(long, value_name = "DIR", default_value = "navin-app")]
    pub out: PathBuf,
}

/// `navin app create`: exit 0 once the credentials are saved, 2 on any failure.
pub fn run(args: &AppCreateArgs) -> Result<(), CliError> {
    let plan = Plan::new(args)?;
    prepare_out(&args.out)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(serve(plan, args.out.clone()))
}

/// What the page posts and where, fixed before the server starts.
#[derive(Debug)]
struct Plan {
    manifest: Value,
    new_app_url: String,
    api_url: String,
    hook_active: bool,
}

impl Plan {
    fn new(args: &AppCreateArgs) -> Result<Self, CliError> {
        let github = base_url(&args.github_url, "--github-url")?;
        let api_url = base_url(&args.api_url, "--api-url")?;
        let mut manifest: Value = serde_yaml_ng::from_str(MANIFEST)
            .map_err(|e| CliError::usage(format!("the built-in App manifest is invalid: {e}")))?;
        if let Some(name) = &args.name {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > 34 {
                return Err(CliError::usage(
                    "--name must be 1 to 34 characters (GitHub's limit for App names)",
                ));
            }
            manifest["name"] = Value::from(name);
        }
        let hook_active = match &args.webhook_url {
            Some(url) => {
                let url = base_url(url, "--webhook-url")?;
                if !url.starts_with("https://") {
                    eprintln!(
                        "navin: warning: --webhook-url is not HTTPS; GitHub sends webhooks to \
                         it in the clear (docs/deploy.md shows a TLS reverse proxy)"
                    );
                }
                manifest["hook_attributes"]["url"] = Value::from(url);
                true
            }
            None => {
                manifest["hook_attributes"]["active"] = Value::from(false);
                false
            }
        };
        // The dashboard's sign-in returns to `<dashboard>/auth/callback`, which GitHub
        // accepts only when the App lists it.
        let dashboard = match (&args.dashboard_url, &args.webhook_url) {
            (Some(url), _) => Some(base_url(url, "--dashboard-url")?),
            (None, Some(hook)) => base_url(hook, "--webhook-url")?
                .strip_suffix("/webhook")
                .map(str::to_owned),
            (None, None) => None,
        };
        if let Some(dashboard) = dashboard {
            manifest["callback_urls"] = Value::from(vec![format!("{dashboard}/auth/callback")]);
        }
        let new_app_url = match &args.org {
            Some(org) => {
                if org.is_empty()
                    || org.len() > 39
                    || !org.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                {
                    return Err(CliError::usage(format!(
                        "--org {org:?} is not an organization login (letters, digits and -)"
                    )));
                }
                format!("{github}/organizations/{org}/settings/apps/new")
            }
            None => format!("{github}/settings/apps/new"),
        };
        Ok(Self {
            manifest,
            new_app_url,
            api_url,
            hook_active,
        })
    }
}

/// An http(s) URL without its trailing `/`, or an error naming the flag.
fn base_url(url: &str, flag: &str) -> Result<String, CliError> {
    let url = url.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !url.contains(['"', '<', '>', ' ', '\'']) => {
            Ok(url.to_owned())
        }
        _ => Err(CliError::usage(format!(
            "{flag} {url:?} is not an http(s) URL (e.g. https://github.com)"
        ))),
    }
}

/// Creates `--out` (0700) or checks that an existing one is private and holds none of
/// the files, so that nothing is overwritten and no secret is readable by others.
fn prepare_out(out: &Path) -> Result<(), CliError> {
    let shown = out.display();
    match std::fs::metadata(out) {
        Ok(meta) if !meta.is_dir() => {
            return Err(CliError::usage(format!(
                "--out {shown} is not a directory: choose a directory for the credentials"
            )))
        }
        Ok(meta) => {
            if meta.permissions().mode() & 0o077 != 0 {
                return Err(CliError::usage(format!(
                    "--out {shown} is readable by other users: run `chmod 700 {shown}` or choose \
                     a new directory"
                )));
            }
        }
        Err(_) => DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(out)
            .map_err(|e| CliError::usage(format!("cannot create --out {shown}: {e}")))?,
    }
    if let Some(file) = FILES.iter().find(|f| out.join(f).exists()) {
        return Err(CliError::usage(format!(
            "{} already exists: move the old credentials away or choose another --out",
            out.join(file).display()
        )));
    }
    Ok(())
}

/// Shared by the page and the callback.
struct Flow {
    plan: Plan,
    state: String,
    redirect_url: String,
    out: PathBuf,
    done: Mutex<Option<tokio::sync::oneshot::Sender<Result<String, String>>>>,
}

async fn serve(plan: Plan, out: PathBuf) -> Result<(), CliError> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| CliError::usage(format!("cannot listen on 127.0.0.1: {e}")))?;
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::usage(format!("cannot read the local address: {e}")))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let flow = Arc::new(Flow {
        plan,
        state: random_hex(16),
        redirect_url: format!("http://{addr}/callback"),
        out,
        done: Mutex::new(Some(tx)),
    });
    let app = Router::new()
        .route("/", get(page))
        .route("/callback", get(callback))
        .with_state(flow.clone());
    println!("Open http://{addr}/ in a browser signed in to GitHub to create the App.");
    println!("Waiting for GitHub to send you back (ctrl-c to give up)…");
    let server = axum::serve(listener, app);
    let outcome = tokio::select! {
        served = server => {
            served.map_err(|e| CliError::usage(format!("the local server stopped: {e}")))?;
            return Err(CliError::usage("the local server stopped before GitHub called back"));
        }
        outcome = rx => outcome,
    };
    match outcome {
        Ok(Ok(summary)) => {
            println!("{summary}");
            Ok(())
        }
        Ok(Err(message)) => Err(CliError::usage(message)),
        Err(_) => Err(CliError::usage("the callback ended without an outcome")),
    }
}

fn random_hex(bytes: usize) -> String {
    let mut rng = rand::rng();
    (0..bytes)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

/// Escapes text for HTML element content and double-quoted attributes.
fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// No scripts at all: the browser may post only to GitHub, and nothing is cached.
fn secure(status: StatusCode, body: String, form_action: &str) -> Response {
    let csp = format!("default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}");
    (
        status,
        [
            (header::CONTENT_SECURITY_POLICY, csp),
            (header::CACHE_CONTROL, "no-store".to_owned()),
            (header::REFERRER_POLICY, "no-referrer".to_owned()),
        ],
        Html(body),
    )
        .into_response()
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;\
padding:0 1rem}pre{background:#f6f8fa;padding:1rem;overflow:auto}button{font-size:1.1rem;\
padding:.5rem 1rem}";

/// The form that hands GitHub the manifest, which the person reviews before posting.
async fn page(State(flow): State<Arc<Flow>>) -> Response {
    let mut manifest = flow.plan.manifest.clone();
    manifest["redirect_url"] = Value::from(flow.redirect_url.as_str());
    let json = serde_json::to_string(&manifest).unwrap_or_default();
    let pretty = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    let action = format!("{}?state={}", flow.plan.new_app_url, flow.state);
    let hook_note = if flow.plan.hook_active {
        ""
    } else {
        "<p><strong>Webhooks start switched off</strong> (no <code>--webhook-url</code>): \
         set the webhook URL and tick <em>Active</em> in the App's settings once \
         <code>navin serve</code> is reachable over HTTPS.</p>"
    };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Create the Navin GitHub App</title><style>{STYLE}</style></head><body>\
         <h1>Create the Navin GitHub App</h1>\
         <p>This posts the manifest below to GitHub, which asks you to name and create the \
         App. GitHub then sends you back here and <code>navin app create</code> saves the \
         credentials.</p>{hook_note}\
         <form method=\"post\" action=\"{action}\">\
         <input type=\"hidden\" name=\"manifest\" value=\"{manifest}\">\
         <button type=\"submit\">Create the App on GitHub</button></form>\
         <h2>Manifest</h2><pre>{pretty}</pre></body></html>",
        action = html_escape(&action),
        manifest = html_escape(&json),
        pretty = html_escape(&pretty),
    );
    let origin = origin(&flow.plan.new_app_url);
    secure(StatusCode::OK, body, &origin)
}

/// `https://host[:port]` of a URL, for the page's `form-action`.
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let host = rest.split('/').next().unwrap_or(rest);
    format!("{scheme}://{host}")
}

#[derive(Debug, Deserialize)]
struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
}

fn message_page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
         <style>{STYLE}</style></head><body><h1>{t}</h1><p>{x}</p></body></html>",
        t = html_escape(title),
        x = html_escape(text),
    );
    secure(status, body, "'none'")
}

/// Compares without stopping at the first difference, so timing tells nothing of `state`.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// GitHub's redirect after the App is created. A request without the page's `state`
/// did not come from this flow: it is refused and the flow keeps waiting.
async fn callback(State(flow): State<Arc<Flow>>, Query(query): Query<CallbackQuery>) -> Response {
    let state_ok = query
        .state
        .as_deref()
        .is_some_and(|state| same(state, &flow.state));
    if !state_ok {
        eprintln!("navin: refused a callback with a wrong or missing state (not from this flow)");
        return message_page(
            StatusCode::BAD_REQUEST,
            "Wrong state",
            "This request did not come from the page navin app create served. Nothing was saved.",
        );
    }
    let code = match query.code {
        Some(code)
            if !code.is_empty()
                && code.len() <= 100
                && code
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
        {
            code
        }
        _ => {
            return message_page(
                StatusCode::BAD_REQUEST,
                "No code",
                "GitHub's redirect carries no valid code. Nothing was saved.",
            )
        }
    };
    let Some(done) = flow.done.lock().ok().and_then(|mut d| d.take()) else {
        return message_page(
            StatusCode::CONFLICT,
            "Already done",
            "This flow already finished; look at the terminal.",
        );
    };
    let outcome = exchange(&flow, &code).await;
    let page = match &outcome {
        Ok(_) => message_page(
            StatusCode::OK,
            "Navin is registered",
            "The credentials are saved. Go back to the terminal for the command that starts \
             navin serve, then install the App on your repositories.",
        ),
        Err(message) => message_page(StatusCode::BAD_GATEWAY, "Registration failed", message),
    };
    let _ = done.send(outcome);
    page
}

/// The conversion's answer: only what is saved or printed.
#[derive(Deserialize)]
struct Converted {
    id: u64,
    #[serde(default)]
    slug: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    client_id: String,
    client_secret: String,
    webhook_secret: Option<String>,
    pem: String,
}

/// Exchanges the code and saves the credentials; the `Ok` text is what the terminal
/// shows (never a secret), the `Err` text says what to do.
async fn exchange(flow: &Flow, code: &str) -> Result<String, String> {
    let answer = navin_github::manifest::convert_manifest(&flow.plan.api_url, code)
        .await
        .map_err(|e| format!("{e}; check --api-url and run navin app create again"))?;
    let status = answer.status;
    if !status.is_success() {
        let hint = if status == http::StatusCode::NOT_FOUND {
            "GitHub does not know this code: codes work once and expire after an hour. \
             The App may exist already: delete it in GitHub's App settings, or generate a \
             private key and webhook secret there, or run navin app create again"
        } else {
            "run navin app create again; if it keeps failing, register the App by hand \
             (docs/deploy.md)"
        };
        return Err(format!(
            "GitHub refused to convert the manifest code ({status}): {hint}"
        ));
    }
    let bytes = answer.body;
    let app: Converted = serde_json::from_slice(&bytes).map_err(|e| {
        format!("GitHub's answer is not an App with credentials ({e}); run navin app create again")
    })?;
    save(&flow.out, &app).map_err(|e| {
        format!(
            "the App {} was created but its credentials could not be saved in {}: {e}; \
             generate a private key in the App's settings on GitHub",
            app.id,
            flow.out.display()
        )
    })?;
    Ok(summary(flow, &app))
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

fn save(out: &Path, app: &Converted) -> std::io::Result<()> {
    let mut pem = app.pem.clone();
    if !pem.ends_with('\n') {
        pem.push('\n');
    }
    let webhook_secret = app.webhook_secret.as_deref().unwrap_or_default();
    let contents = [
        app.id.to_string(),
        app.client_id.clone(),
        app.client_secret.clone(),
        webhook_secret.to_owned(),
        pem,
    ];
    for (name, text) in FILES.iter().zip(contents) {
        if *name == "webhook-secret" && text.is_empty() {
            continue;
        }
        write_private(&out.join(name), &text)?;
    }
    Ok(())
}

/// What the terminal shows once the App exists: where to install it and the command
/// that runs it, with paths to the secrets, never the secrets.
fn summary(flow: &Flow, app: &Converted) -> String {
    let dir = std::fs::canonicalize(&flow.out).unwrap_or_else(|_| flow.out.clone());
    let name = app.slug.as_deref().unwrap_or("the App");
    let mut lines = vec![format!(
        "Created the GitHub App {name} (id {}); its credentials are in {} (mode 0600).",
        app.id,
        dir.display()
    )];
    if let Some(url) = &app.html_url {
        lines.push(format!(
            "Install it on your repositories: {url}/installations/new"
        ));
    }
    if app.webhook_secret.is_none() {
        lines.push(format!(
            "GitHub set no webhook secret: set one in the App's settings and write it to {}.",
            dir.join("webhook-secret").display()
        ));
    }
    if !flow.plan.hook_active {
        lines.push(
            "Webhooks are off: set the webhook URL (https://…/webhook) and tick Active in the \
             App's settings once navin serve is reachable."
                .to_owned(),
        );
    }
    lines.push("Start the server with:".to_owned());
    let mut command = vec![
        format!("NAVIN_APP_ID={}", app.id),
        format!("NAVIN_CLIENT_ID={}", app.client_id),
        format!(
            "NAVIN_PRIVATE_KEY_PATH={}",
            quote(&dir.join("private-key.pem"))
        ),
        format!(
            "NAVIN_WEBHOOK_SECRET_FILE={}",
            quote(&dir.join("webhook-secret"))
        ),
    ];
    if flow.plan.api_url != GITHUB_API {
        command.push(format!("NAVIN_API_URL={}", flow.plan.api_url));
    }
    command.push("navin serve".to_owned());
    lines.push(format!("  {}", command.join(" \\\n  ")));
    lines.join("\n")
}

/// A path as one shell word.
fn quote(path: &Path) -> String {
    let text = path.display().to_string();
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_http_and_lose_their_trailing_slash() {
        assert_eq!(
            base_url("https://ghe.example.com/", "--github-url").ok(),
            Some("https://ghe.example.com".to_owned())
        );
        assert!(base_url("ghe.example.com", "--github-url").is_err());
        assert!(base_url("https://x\"><script>", "--github-url").is_err());
    }

    #[test]
    fn the_page_escapes_what_it_embeds() {
        assert_eq!(
            html_escape(r#"{"a":"<b>&'"}"#),
            "{&quot;a&quot;:&quot;&lt;b&gt;&amp;&#39;&quot;}"
        );
    }

    #[test]
    fn paths_with_spaces_are_quoted_for_the_shell() {
        assert_eq!(quote(Path::new("/a/b.pem")), "/a/b.pem");
        assert_eq!(quote(Path::new("/my dir/it's")), r"'/my dir/it'\''s'");
    }
}
