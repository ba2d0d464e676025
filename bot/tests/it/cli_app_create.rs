//! `navin app create` through the binary against the fake GitHub: the local page, the
//! callback's `state` check, the code exchange, the files and modes it writes, the
//! command it prints, and that no secret reaches the terminal.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use navin_e2e::FakeGitHub;
use serde_json::Value;

/// A running `navin app create`, killed when dropped.
struct Running {
    child: Child,
    lines: Receiver<String>,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
    /// `http://127.0.0.1:PORT`, from the printed address.
    base: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn collect(pipe: impl Read + Send + 'static, into: Arc<Mutex<String>>) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            into.lock().unwrap().push_str(&format!("{line}\n"));
            let _ = tx.send(line);
        }
    });
    rx
}

fn start(api_url: &str, out: &Path, extra: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(["app", "create", "--github-url", "https://github.example"])
        .args(["--api-url", api_url])
        .arg("--out")
        .arg(out)
        .args(extra)
        .env_remove("NAVIN_API_URL")
        .env_remove("NAVIN_GITHUB_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("navin runs");
    let stdout = Arc::new(Mutex::new(String::new()));
    let stderr = Arc::new(Mutex::new(String::new()));
    let lines = collect(child.stdout.take().unwrap(), stdout.clone());
    collect(child.stderr.take().unwrap(), stderr.clone());
    let mut running = Running {
        child,
        lines,
        stdout,
        stderr,
        base: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while running.base.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = running.lines.recv_timeout(left).unwrap_or_else(|_| {
            panic!(
                "no address printed; stderr: {}",
                running.stderr.lock().unwrap()
            )
        });
        if let Some(at) = line.find("http://127.0.0.1:") {
            let url = line[at..].split_whitespace().next().unwrap();
            running.base = url.trim_end_matches('/').to_owned();
        }
    }
    running
}

impl Running {
    /// The exit code, waiting at most `secs`.
    fn exit_code(&mut self, secs: u64) -> i32 {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader threads drain the pipes.
                std::thread::sleep(Duration::from_millis(100));
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "navin app create did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn output(&self) -> String {
        format!(
            "{}{}",
            self.stdout.lock().unwrap(),
            self.stderr.lock().unwrap()
        )
    }
}

struct Page {
    action: String,
    state: String,
    manifest: Value,
    csp: String,
    html: String,
}

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The attribute value after `marker` (up to the closing quote).
fn attribute(html: &str, marker: &str) -> String {
    let start = html
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} in {html}"))
        + marker.len();
    let end = html[start..].find('"').unwrap();
    unescape(&html[start..start + end])
}

async fn fetch_page(base: &str) -> Page {
    let answer = navin_e2e::http_client()
        .get(format!("{base}/"))
        .send()
        .await
        .expect("the page");
    assert_eq!(answer.status().as_u16(), 200);
    let csp = answer
        .headers()
        .get("content-security-policy")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let html = String::from_utf8(answer.bytes().await.unwrap().to_vec()).unwrap();
    let action = attribute(&html, "<form method=\"post\" action=\"");
    let state = action
        .split("?state=")
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let manifest = serde_json::from_str(&attribute(&html, "name=\"manifest\" value=\""))
        .expect("the hidden field holds the manifest as JSON");
    Page {
        action,
        state,
        manifest,
        csp,
        html,
    }
}

async fn call_back(base: &str, code: &str, state: &str) -> u16 {
    navin_e2e::http_client()
        .get(format!("{base}/callback?code={code}&state={state}"))
        .send()
        .await
        .expect("the callback")
        .status()
        .as_u16()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn files_in(dir: &Path) -> Vec<String> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[tokio::test]
async fn app_create_saves_the_credentials_with_mode_0600_and_prints_the_serve_command() {
    let fake = FakeGitHub::start();
    let app = fake.manifest_code("navin-test");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("creds");
    let mut run = start(
        fake.base_url(),
        &out,
        &["--webhook-url", "https://navin.example.org/webhook"],
    );
    let page = fetch_page(&run.base).await;
    assert_eq!(call_back(&run.base, &app.code, &page.state).await, 200);
    assert_eq!(run.exit_code(30), 0, "{}", run.output());

    assert_eq!(mode(&out), 0o700);
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    for name in [
        "app-id",
        "client-id",
        "client-secret",
        "webhook-secret",
        "private-key.pem",
    ] {
        assert_eq!(mode(&out.join(name)), 0o600, "{name}");
    }
    assert_eq!(read("app-id"), app.id.to_string());
    assert_eq!(read("client-id"), app.client_id);
    assert_eq!(read("client-secret"), app.client_secret);
    assert_eq!(read("webhook-secret"), app.webhook_secret);
    assert_eq!(read("private-key.pem"), app.pem);

    let stdout = run.stdout.lock().unwrap().clone();
    let dir = std::fs::canonicalize(&out).unwrap();
    for expected in [
        format!("NAVIN_APP_ID={}", app.id),
        format!("NAVIN_CLIENT_ID={}", app.client_id),
        format!(
            "NAVIN_PRIVATE_KEY_PATH={}",
            dir.join("private-key.pem").display()
        ),
        format!(
            "NAVIN_WEBHOOK_SECRET_FILE={}",
            dir.join("webhook-secret").display()
        ),
        format!("NAVIN_API_URL={}", fake.base_url()),
        "navin serve".to_owned(),
    ] {
        assert!(stdout.contains(&expected), "{expected} in:\n{stdout}");
    }
    // Every variable printed is one `navin serve` reads.
    let help = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(["serve", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let printed = stdout
        .split_whitespace()
        .filter(|w| w.starts_with("NAVIN_"))
        .filter_map(|w| w.split_once('='));
    for (var, _) in printed {
        assert!(help.contains(var), "navin serve reads no {var}");
    }

    let output = run.output();
    for secret in [&app.client_secret, &app.webhook_secret] {
        assert!(!output.contains(secret.as_str()), "a secret was printed");
    }
    let key_line = app.pem.lines().nth(1).unwrap();
    assert!(!output.contains(key_line), "the key was printed");
    assert!(!output.contains("PRIVATE KEY"), "the key was printed");
    assert_eq!(fake.count("POST", "/app-manifests/*/conversions"), 1);
    fake.assert_conformant();
}

#[tokio::test]
async fn the_page_posts_the_manifest_with_the_local_callback_and_a_random_state_to_the_org() {
    let tmp = tempfile::tempdir().unwrap();
    let run = start(
        "http://127.0.0.1:9",
        &tmp.path().join("creds"),
        &[
            "--org",
            "my-org",
            "--name",
            "Navin (my-org)",
            "--webhook-url",
            "https://navin.example.org/webhook",
        ],
    );
    let page = fetch_page(&run.base).await;
    assert!(
        page.action
            .starts_with("https://github.example/organizations/my-org/settings/apps/new?state="),
        "{}",
        page.action
    );
    assert_eq!(page.state.len(), 32);
    assert!(page.state.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(
        page.manifest["redirect_url"],
        format!("{}/callback", run.base).as_str()
    );
    assert_eq!(page.manifest["name"], "Navin (my-org)");
    assert_eq!(
        page.manifest["hook_attributes"]["url"],
        "https://navin.example.org/webhook"
    );
    assert_eq!(page.manifest["hook_attributes"]["active"], true);
    // The dashboard's sign-in comes back to the same site, which the App must list.
    assert_eq!(
        page.manifest["callback_urls"],
        serde_json::json!(["https://navin.example.org/auth/callback"])
    );
    let app_yml: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/app.yml"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        page.manifest["default_permissions"],
        app_yml["default_permissions"]
    );
    assert_eq!(page.manifest["default_events"], app_yml["default_events"]);
    assert!(!page.html.contains("<script"), "no scripts on the page");
    assert!(page.csp.contains("default-src 'none'"), "{}", page.csp);
    assert!(
        page.csp.contains("form-action https://github.example"),
        "{}",
        page.csp
    );

    let again = start("http://127.0.0.1:9", &tmp.path().join("other"), &[]);
    let second = fetch_page(&again.base).await;
    assert_ne!(page.state, second.state, "a fresh state for each run");
    assert!(second
        .action
        .starts_with("https://github.example/settings/apps/new?state="));
    assert_eq!(second.manifest["hook_attributes"]["active"], false);
    assert!(
        second.manifest.get("callback_urls").is_none(),
        "no site known"
    );

    let own = start(
        "http://127.0.0.1:9",
        &tmp.path().join("third"),
        &["--dashboard-url", "https://navin.example.org/dash/"],
    );
    let third = fetch_page(&own.base).await;
    assert_eq!(
        third.manifest["callback_urls"],
        serde_json::json!(["https://navin.example.org/dash/auth/callback"])
    );
}

#[tokio::test]
async fn a_callback_with_a_forged_state_is_refused_and_nothing_is_written() {
    let fake = FakeGitHub::start();
    let app = fake.manifest_code("navin-forged");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("creds");
    let mut run = start(fake.base_url(), &out, &[]);
    let page = fetch_page(&run.base).await;
    let forged = "0".repeat(32);
    assert_ne!(page.state, forged);
    assert_eq!(call_back(&run.base, &app.code, &forged).await, 400);
    assert_eq!(
        navin_e2e::http_client()
            .get(format!("{}/callback?code={}", run.base, app.code))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        400,
        "no state at all"
    );
    assert!(files_in(&out).is_empty(), "{:?}", files_in(&out));
    assert_eq!(fake.count("POST", "/app-manifests/*/conversions"), 0);
    assert!(
        run.child.try_wait().unwrap().is_none(),
        "still waiting for GitHub"
    );
    // The real callback still completes the flow.
    assert_eq!(call_back(&run.base, &app.code, &page.state).await, 200);
    assert_eq!(run.exit_code(30), 0, "{}", run.output());
}

#[tokio::test]
async fn a_code_github_does_not_know_is_reported_with_what_to_do_and_nothing_is_written() {
    let fake = FakeGitHub::start();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("creds");
    let mut run = start(fake.base_url(), &out, &[]);
    let page = fetch_page(&run.base).await;
    assert_eq!(call_back(&run.base, "unknown-code", &page.state).await, 502);
    assert_eq!(run.exit_code(30), 2);
    let stderr = run.stderr.lock().unwrap().clone();
    assert!(
        stderr.contains("GitHub refused to convert the manifest code (404 Not Found)"),
        "{stderr}"
    );
    assert!(stderr.contains("run navin app create again"), "{stderr}");
    assert!(files_in(&out).is_empty(), "{:?}", files_in(&out));
    fake.assert_conformant();
}

#[test]
fn app_create_refuses_to_overwrite_saved_credentials() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("creds");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(out.join("app-id"), "1").unwrap();
    let result = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(["app", "create", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("already exists: move the old credentials away"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(out.join("app-id")).unwrap(), "1");
}
