//! Real headless Chromium for tests, driven over WebDriver (fantoccini and Debian's chromedriver).
//!
//! Each `Browser` is one chromedriver process (its own process group, on a free loopback
//! port) with one session and a fresh profile, so tests can run several at once and
//! never share cookies. Nothing is skipped when Chromium is missing: `start` fails and
//! names the Debian packages, since a browser test that silently passes proves nothing.
//!
//! WebDriver rather than the DevTools protocol: chromedriver comes from the same Debian
//! source as the browser, so their versions always match, and fantoccini is a small,
//! long-kept client over the W3C standard; the one non-standard call used is
//! chromedriver's browser log (`console_errors`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

/// Flags that keep Chromium quiet and working on a machine without network or GPU.
const CHROMIUM_FLAGS: [&str; 11] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--password-store=basic",
    "--window-size=1280,900",
];
const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";
const DEFAULT_CHROMEDRIVER: &str = "/usr/bin/chromedriver";
/// How long chromedriver may take to listen, and Chromium to open a session.
const DRIVER_READY: Duration = Duration::from_secs(20);
const SESSION_READY: Duration = Duration::from_secs(60);
/// Retries when another process took the port between choosing and binding it.
const PORT_ATTEMPTS: usize = 3;
const POLL: Duration = Duration::from_millis(50);

/// A cookie as the browser holds it for the current page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cookie {
    pub name: String,
    pub value: String,
    pub domain: Option<String>,
    pub path: Option<String>,
    pub http_only: bool,
    pub secure: bool,
    /// `Strict`, `Lax` or `None`, as the browser reports it.
    pub same_site: Option<String>,
    /// Unix time of expiry; `None` for a session cookie.
    pub expires: Option<i64>,
}

/// A message from the page's console (`SEVERE` for script errors, CSP violations and
/// failed loads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleEntry {
    pub level: String,
    pub source: String,
    pub message: String,
}

/// One chromedriver and one Chromium session; dropping it kills both.
pub struct Browser {
    client: Client,
    artifacts: PathBuf,
    /// Console entries read so far (chromedriver hands each out once).
    console: Mutex<Vec<ConsoleEntry>>,
    driver: Driver,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("driver_port", &self.driver.port)
            .field("artifacts", &self.artifacts)
            .finish()
    }
}

/// The chromedriver process, leader of its own process group so that Chromium and its
/// helpers go with it even when the test panics before `close`.
struct Driver {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Driver {
    fn kill(&mut self) {
        let group = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        self.kill();
    }
}

/// chromedriver's browser log (`POST /session/{id}/se/log`), outside the W3C standard.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (
            http::Method::POST,
            Some(json!({ "type": "browser" }).to_string()),
        )
    }
}

fn binary(env: &str, default: &str, what: &str) -> Result<PathBuf> {
    let path = std::env::var_os(env)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(default));
    if !path.is_file() {
        bail!(
            "{what} not found at {} (set {env}, or install Debian's packages: apt-get install chromium chromium-driver)",
            path.display()
        );
    }
    Ok(path)
}

/// `<target dir>/test-artifacts`: test binaries run from `<target>/<profile>/deps/`.
fn artifacts_root() -> PathBuf {
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .find(|dir| dir.file_name().is_some_and(|name| name == "deps"))
            .and_then(Path::parent)
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    });
    match (from_exe, std::env::var_os("CARGO_TARGET_DIR")) {
        (Some(target), _) => target.join("test-artifacts"),
        (None, Some(target)) => PathBuf::from(target).join("test-artifacts"),
        (None, None) => std::env::temp_dir().join("navin-test-artifacts"),
    }
}

/// A name safe as one path component.
fn component(name: &str) -> String {
    let out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match out.trim_matches('.') {
        "" => "unnamed".into(),
        trimmed => trimmed.into(),
    }
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("choosing a port")?;
    Ok(listener.local_addr()?.port())
}

/// Starts chromedriver on a free port and waits until `/status` says it is ready.
async fn spawn_driver(path: &Path, log: &Path) -> Result<Driver> {
    let mut last = anyhow!("chromedriver did not start");
    for _ in 0..PORT_ATTEMPTS {
        let port = free_port()?;
        let out = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let err = out.try_clone()?;
        let mut command = Command::new(path);
        command
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command
            .spawn()
            .with_context(|| format!("starting {}", path.display()))?;
        let mut driver = Driver {
            child,
            port,
            log: log.to_path_buf(),
        };
        match wait_ready(&mut driver).await {
            Ok(()) => return Ok(driver),
            Err(e) => last = e,
        }
    }
    Err(last)
}

async fn wait_ready(driver: &mut Driver) -> Result<()> {
    let http = crate::http_client();
    let url = format!("http://127.0.0.1:{}/status", driver.port);
    let deadline = Instant::now() + DRIVER_READY;
    while Instant::now() < deadline {
        if let Some(status) = driver.child.try_wait()? {
            bail!(
                "chromedriver exited ({status}) on port {}:\n{}",
                driver.port,
                driver.log_tail()
            );
        }
        if let Ok(resp) = http.get(&url).send().await {
            let body: Value = serde_json::from_slice(&resp.bytes().await?).unwrap_or_default();
            if body["value"]["ready"] == true {
                return Ok(());
            }
        }
        tokio::time::sleep(POLL).await;
    }
    driver.kill();
    bail!(
        "chromedriver was not ready within {DRIVER_READY:?}:\n{}",
        driver.log_tail()
    )
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a new empty profile. Screenshots
    /// and the driver's log go to `<target dir>/test-artifacts/<test_name>/`.
    ///
    /// Binaries come from `NAVIN_CHROMIUM` and `NAVIN_CHROMEDRIVER` (default
    /// `/usr/bin/chromium`, `/usr/bin/chromedriver`).
    pub async fn start(test_name: &str) -> Result<Browser> {
        let chromium = binary("NAVIN_CHROMIUM", DEFAULT_CHROMIUM, "Chromium")?;
        let chromedriver = binary("NAVIN_CHROMEDRIVER", DEFAULT_CHROMEDRIVER, "chromedriver")?;
        let artifacts = artifacts_root().join(component(test_name));
        std::fs::create_dir_all(&artifacts)
            .with_context(|| format!("creating {}", artifacts.display()))?;
        let profile = tempfile::Builder::new()
            .prefix("navin-chromium-")
            .tempdir()
            .context("creating a Chromium profile directory")?;
        let mut driver = spawn_driver(&chromedriver, &artifacts.join("chromedriver.log")).await?;

        let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| f.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let capabilities: Capabilities = match json!({
            "browserName": "chrome",
            "goog:chromeOptions": { "binary": chromium, "args": args },
            "goog:loggingPrefs": { "browser": "ALL" },
            "timeouts": { "implicit": 0, "pageLoad": 30_000, "script": 30_000 },
        }) {
            Value::Object(map) => map,
            _ => unreachable!("a JSON object literal"),
        };
        let mut builder =
            ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
        builder.capabilities(capabilities);
        let webdriver = format!("http://127.0.0.1:{}/", driver.port);
        let connect = builder.connect(&webdriver);
        let client = match tokio::time::timeout(SESSION_READY, connect).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => {
                driver.kill();
                bail!("Chromium did not start: {e}\n{}", driver.log_tail());
            }
            Err(_) => {
                driver.kill();
                bail!(
                    "Chromium did not start within {SESSION_READY:?}\n{}",
                    driver.log_tail()
                );
            }
        };
        Ok(Browser {
            client,
            artifacts,
            console: Mutex::new(Vec::new()),
            driver,
            _profile: profile,
        })
    }

    /// The underlying fantoccini client, for what this API does not cover.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Chromium's profile (`--user-data-dir`), removed when the browser goes.
    pub fn profile_dir(&self) -> &Path {
        self._profile.path()
    }

    /// Where this test's screenshots and chromedriver's log go.
    pub fn artifacts_dir(&self) -> &Path {
        &self.artifacts
    }

    /// Opens `url` and waits for the page to load.
    pub async fn goto(&self, url: &str) -> Result<()> {
        self.client
            .goto(url)
            .await
            .with_context(|| format!("opening {url}"))
    }

    pub async fn current_url(&self) -> Result<String> {
        Ok(self.client.current_url().await?.to_string())
    }

    async fn find(&self, css: &str) -> Result<fantoccini::elements::Element> {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => Ok(element),
            Err(e) => {
                let url = self.current_url().await.unwrap_or_default();
                Err(anyhow!("no element matches `{css}` on {url}: {e}"))
            }
        }
    }

    /// The rendered text of the first element matching `css`.
    pub async fn text(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        element
            .text()
            .await
            .with_context(|| format!("reading the text of `{css}`"))
    }

    /// The current `value` of an input, textarea or select (what a form would send).
    pub async fn value(&self, css: &str) -> Result<String> {
        let element = self.find(css).await?;
        Ok(element.prop("value").await?.unwrap_or_default())
    }

    /// Clicks the first element matching `css` as a person would (it must be visible).
    pub async fn click(&self, css: &str) -> Result<()> {
        let element = self.find(css).await?;
        element
            .click()
            .await
            .with_context(|| format!("clicking `{css}`"))
    }

    /// Replaces an input's or textarea's value by typing: the old value is cleared and
    /// the new text sent as key presses, so the page sees the `input` events it would
    /// from a keyboard (a tab moves focus, as it would). Clearing alone fires no
    /// `input`, so an empty `text` dispatches one.
    pub async fn fill(&self, css: &str, text: &str) -> Result<()> {
        let element = self.find(css).await?;
        element
            .clear()
            .await
            .with_context(|| format!("clearing `{css}`"))?;
        if text.is_empty() {
            let arg = serde_json::to_value(&element)?;
            self.client
                .execute(
                    "arguments[0].dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'deleteContent'}));",
                    vec![arg],
                )
                .await?;
            return Ok(());
        }
        element
            .send_keys(text)
            .await
            .with_context(|| format!("typing into `{css}`"))
    }

    /// Sets an input's or textarea's value at once and fires `input` and `change`, for
    /// text too long to type key by key.
    pub async fn set_value(&self, css: &str, text: &str) -> Result<()> {
        let element = self.find(css).await?;
        let arg = serde_json::to_value(&element)?;
        self.client
            .execute(
                "const el = arguments[0];
                 const proto = Object.getPrototypeOf(el);
                 Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, arguments[1]);
                 el.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertReplacementText'}));
                 el.dispatchEvent(new Event('change', {bubbles: true}));",
                vec![arg, json!(text)],
            )
            .await
            .with_context(|| format!("setting the value of `{css}`"))?;
        Ok(())
    }

    /// Waits until an element matches `css`.
    pub async fn wait_for(&self, css: &str, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.client.find(Locator::Css(css)).await.is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!(
                    "no element matched `{css}` within {timeout:?}; {}",
                    self.describe_page().await
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Waits until the text of the element matching `css` contains `needle`.
    pub async fn wait_for_text(&self, css: &str, needle: &str, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut seen = None;
        loop {
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                if let Ok(text) = element.text().await {
                    if text.contains(needle) {
                        return Ok(());
                    }
                    seen = Some(text);
                }
            }
            if Instant::now() >= deadline {
                let seen = match seen {
                    Some(text) => format!("its text was {text:?}"),
                    None => "it never appeared".into(),
                };
                bail!(
                    "`{css}` did not contain {needle:?} within {timeout:?} ({seen}); {}",
                    self.describe_page().await
                );
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The URL and the start of the page's text, for timeout messages.
    async fn describe_page(&self) -> String {
        let url = self.current_url().await.unwrap_or_default();
        let body = match self.client.find(Locator::Css("body")).await {
            Ok(body) => body.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        let excerpt: String = body.chars().take(500).collect();
        format!("page {url} reads {excerpt:?}")
    }

    /// Saves a PNG of the viewport as `<artifacts>/<name>.png`, prints and returns its path.
    pub async fn screenshot(&self, name: &str) -> Result<PathBuf> {
        let png = self
            .client
            .screenshot()
            .await
            .context("taking a screenshot")?;
        let path = self.artifacts.join(format!("{}.png", component(name)));
        std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        println!("screenshot: {}", path.display());
        Ok(path)
    }

    /// The cookies the browser would send to the current page.
    pub async fn cookies(&self) -> Result<Vec<Cookie>> {
        let cookies = self.client.get_all_cookies().await?;
        Ok(cookies
            .into_iter()
            .map(|c| Cookie {
                name: c.name().to_string(),
                value: c.value().to_string(),
                domain: c.domain().map(str::to_string),
                path: c.path().map(str::to_string),
                http_only: c.http_only().unwrap_or(false),
                secure: c.secure().unwrap_or(false),
                same_site: c.same_site().map(|s| s.to_string()),
                expires: c
                    .expires()
                    .and_then(|e| e.datetime())
                    .map(|t| t.unix_timestamp()),
            })
            .collect())
    }

    /// Every console entry since the browser started (chromedriver's browser log).
    pub async fn console(&self) -> Result<Vec<ConsoleEntry>> {
        let fresh = self
            .client
            .issue_cmd(BrowserLog)
            .await
            .context("reading the browser log")?;
        let mut console = self.console.lock().unwrap_or_else(|p| p.into_inner());
        for entry in fresh.as_array().into_iter().flatten() {
            let field = |k: &str| entry[k].as_str().unwrap_or_default().to_string();
            console.push(ConsoleEntry {
                level: field("level"),
                source: field("source"),
                message: field("message"),
            });
        }
        Ok(console.clone())
    }

    /// Script errors, Content-Security-Policy violations and failed loads so far, so a
    /// test can assert there were none.
    pub async fn console_errors(&self) -> Result<Vec<String>> {
        Ok(self
            .console()
            .await?
            .into_iter()
            .filter(|e| e.level == "SEVERE")
            .map(|e| e.message)
            .collect())
    }

    /// Ends the session (Chromium exits) and stops chromedriver.
    pub async fn close(self) -> Result<()> {
        let Browser {
            client, mut driver, ..
        } = self;
        let closed = client.close().await;
        driver.kill();
        closed.context("closing the WebDriver session")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_binary_names_the_debian_packages() {
        let err = binary(
            "NAVIN_TEST_UNSET_BROWSER_VARIABLE",
            "/nonexistent/chromium",
            "Chromium",
        )
        .expect_err("missing");
        let message = err.to_string();
        assert!(
            message.contains("/nonexistent/chromium")
                && message.contains("chromium chromium-driver"),
            "{message}"
        );
    }

    #[test]
    fn artifact_names_are_one_path_component() {
        assert_eq!(component("a/b c"), "a_b_c");
        assert_eq!(component(".."), "unnamed");
        assert_eq!(component("plan-editor.v2"), "plan-editor.v2");
    }
}
