//! Real headless Chromium through `navin_e2e::browser`: a page's script, forms and screenshots,
//! CSP violations in the console, and the fake's sign-in flow end to end in a browser.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, SET_COOKIE};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use navin_e2e::browser::Browser;
use navin_e2e::fake::http::encode;
use navin_e2e::fake::pkce_challenge;
use navin_e2e::FakeGitHub;
use rand::distr::{Alphanumeric, SampleString};
use serde_json::Value;

use crate::common::{OWNER, REPO};

const WAIT: Duration = Duration::from_secs(10);
const CSP: &str = "default-src 'self'";

/// Serves `router` on 127.0.0.1 (with a favicon: Chromium asks for one, and a 404 would
/// be a console error); returns its base URL.
async fn serve(router: Router) -> String {
    let router = router.route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

const PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>smoke</title></head>
<body>
  <button id="go" type="button">Go</button>
  <p id="out">before</p>
  <textarea id="plan">old text</textarea>
  <p id="echo"></p>
  <script src="/app.js"></script>
</body></html>"#;

const SCRIPT: &str = r#"
document.getElementById('go').addEventListener('click', () => {
  document.getElementById('out').textContent = 'clicked';
});
document.getElementById('plan').addEventListener('input', (e) => {
  document.getElementById('echo').textContent = 'typed: ' + e.target.value;
});
"#;

fn smoke_app() -> Router {
    Router::new()
        .route(
            "/",
            get(|| async {
                (
                    [
                        (CONTENT_SECURITY_POLICY, CSP),
                        (SET_COOKIE, "demo=1; Path=/; HttpOnly; SameSite=Strict"),
                    ],
                    Html(PAGE),
                )
            }),
        )
        .route(
            "/app.js",
            get(|| async { ([(CONTENT_TYPE, "text/javascript")], SCRIPT) }),
        )
        .route(
            "/inline",
            get(|| async {
                (
                    [(CONTENT_SECURITY_POLICY, CSP)],
                    Html("<!doctype html><p id=\"x\">inline</p><script>document.title='ran'</script>"),
                )
            }),
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_runs_a_page_script_fills_a_textarea_and_takes_a_screenshot() {
    let base = serve(smoke_app()).await;
    let browser = Browser::start("browser_smoke").await.expect("browser");
    browser.goto(&base).await.expect("open");
    assert_eq!(browser.text("#out").await.expect("text"), "before");
    browser.click("#go").await.expect("click");
    browser
        .wait_for_text("#out", "clicked", WAIT)
        .await
        .expect("the script file ran");

    let plan = "## Steps\n- one: \"quoted\" & <angled>\n- two";
    browser.fill("#plan", plan).await.expect("fill");
    assert_eq!(browser.value("#plan").await.expect("value"), plan);
    browser
        .wait_for_text("#echo", "- two", WAIT)
        .await
        .expect("input events fired");
    browser.fill("#plan", "").await.expect("empty");
    assert_eq!(
        browser.text("#echo").await.expect("text"),
        "typed:",
        "emptying fires an input event too (WebDriver trims text)"
    );
    assert_eq!(browser.value("#plan").await.expect("value"), "");
    let long = "x".repeat(5000);
    browser.set_value("#plan", &long).await.expect("set_value");
    assert_eq!(browser.value("#plan").await.expect("value").len(), 5000);

    let shot = browser.screenshot("smoke").await.expect("screenshot");
    let png = std::fs::read(&shot).expect("read png");
    assert!(
        png.len() > 100 && png.starts_with(b"\x89PNG"),
        "{}",
        shot.display()
    );

    let cookies = browser.cookies().await.expect("cookies");
    let demo = cookies
        .iter()
        .find(|c| c.name == "demo")
        .expect("demo cookie");
    assert!(demo.http_only && demo.expires.is_none(), "{demo:?}");
    assert_eq!(demo.same_site.as_deref(), Some("Strict"));
    let errors = browser.console_errors().await.expect("console");
    assert!(errors.is_empty(), "{errors:?}");

    let missing = browser
        .wait_for("#nothing", Duration::from_millis(200))
        .await;
    let message = missing.expect_err("times out").to_string();
    assert!(
        message.contains("#nothing") && message.contains(&base),
        "{message}"
    );

    browser.goto(&format!("{base}/inline")).await.expect("open");
    browser.wait_for("#x", WAIT).await.expect("page");
    let errors = browser.console_errors().await.expect("console");
    assert!(
        errors.iter().any(|e| e.contains("Content Security Policy")),
        "the blocked inline script is reported: {errors:?}"
    );
    browser.close().await.expect("close");
}

/// A test-only client of the fake's sign-in: PKCE, the callback, the exchange, `/user`.
#[derive(Clone)]
struct SignIn {
    fake: String,
    app: Arc<Mutex<String>>,
    client_id: String,
    client_secret: String,
    /// PKCE verifier by state.
    pending: Arc<Mutex<HashMap<String, String>>>,
}

impl SignIn {
    fn callback(&self) -> String {
        format!("{}/callback", self.app.lock().expect("lock"))
    }
}

async fn start_sign_in(State(app): State<SignIn>) -> Response {
    let verifier = Alphanumeric.sample_string(&mut rand::rng(), 64);
    let state = Alphanumeric.sample_string(&mut rand::rng(), 16);
    let challenge = pkce_challenge(&verifier);
    app.pending
        .lock()
        .expect("lock")
        .insert(state.clone(), verifier);
    let location = format!(
        "{}/login/oauth/authorize?client_id={}&redirect_uri={}&state={state}&code_challenge={challenge}&code_challenge_method=S256",
        app.fake,
        encode(&app.client_id),
        encode(&app.callback()),
    );
    (StatusCode::FOUND, [(LOCATION, location)]).into_response()
}

async fn callback(State(app): State<SignIn>, Query(q): Query<HashMap<String, String>>) -> Response {
    let state = q.get("state").cloned().unwrap_or_default();
    let Some(verifier) = app.pending.lock().expect("lock").remove(&state) else {
        return (StatusCode::BAD_REQUEST, "unknown state").into_response();
    };
    let code = q.get("code").cloned().unwrap_or_default();
    let form = format!(
        "client_id={}&client_secret={}&code={}&redirect_uri={}&code_verifier={}",
        encode(&app.client_id),
        encode(&app.client_secret),
        encode(&code),
        encode(&app.callback()),
        encode(&verifier)
    );
    let http = navin_e2e::http_client();
    let tokens: Value = match http
        .post(format!("{}/login/oauth/access_token", app.fake))
        .header("accept", "application/json")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
    {
        Ok(resp) => {
            serde_json::from_slice(&resp.bytes().await.unwrap_or_default()).unwrap_or_default()
        }
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let Some(token) = tokens["access_token"].as_str() else {
        return (StatusCode::BAD_GATEWAY, tokens.to_string()).into_response();
    };
    let me: Value = match http
        .get(format!("{}/user", app.fake))
        .bearer_auth(token)
        .send()
        .await
    {
        Ok(resp) => {
            serde_json::from_slice(&resp.bytes().await.unwrap_or_default()).unwrap_or_default()
        }
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let login = me["login"].as_str().unwrap_or("?");
    Html(format!(
        "<!doctype html><title>signed in</title><p>Signed in as <span id=\"login\">{login}</span></p>"
    ))
    .into_response()
}

/// The fake with an installed repository and the sign-in client serving its callback.
async fn sign_in_setup() -> (FakeGitHub, String) {
    let fake = FakeGitHub::start();
    fake.create_repo(OWNER, REPO);
    fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    let state = SignIn {
        fake: fake.base_url().to_string(),
        app: Arc::new(Mutex::new(String::new())),
        client_id: fake.client_id(),
        client_secret: fake.client_secret(),
        pending: Arc::new(Mutex::new(HashMap::new())),
    };
    let router = Router::new()
        .route("/login", get(start_sign_in))
        .route("/callback", get(callback))
        .with_state(state.clone());
    let app = serve(router).await;
    *state.app.lock().expect("lock") = app.clone();
    fake.add_callback_url(&format!("{app}/callback"));
    (fake, app)
}

async fn sign_in_as(browser: &Browser, fake: &FakeGitHub, app: &str, who: Option<&str>) -> String {
    if let Some(who) = who {
        browser
            .goto(&fake.sign_in_url(who))
            .await
            .expect("fake sign-in");
    }
    browser
        .goto(&format!("{app}/login"))
        .await
        .expect("sign in");
    browser
        .wait_for("#login", WAIT)
        .await
        .expect("the callback page");
    assert!(
        browser
            .current_url()
            .await
            .expect("url")
            .starts_with(&format!("{app}/callback?code=")),
        "the browser followed the redirects"
    );
    browser.text("#login").await.expect("login")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_browsers_sign_in_through_the_fake_as_different_people_at_once() {
    let (fake, app) = sign_in_setup().await;
    fake.set_oauth_user("alice");
    let (first, second) = tokio::join!(
        Browser::start("browser_oauth_alice"),
        Browser::start("browser_oauth_bob")
    );
    let (first, second) = (
        first.expect("first browser"),
        second.expect("second browser"),
    );
    let (alice, bob) = tokio::join!(
        sign_in_as(&first, &fake, &app, None),
        sign_in_as(&second, &fake, &app, Some("bob"))
    );
    assert_eq!((alice.as_str(), bob.as_str()), ("alice", "bob"));
    first.screenshot("signed-in").await.expect("screenshot");
    for browser in [&first, &second] {
        let errors = browser.console_errors().await.expect("console");
        assert!(errors.is_empty(), "{errors:?}");
        let cookies = browser.cookies().await.expect("cookies");
        assert!(
            cookies
                .iter()
                .all(|c| c.name != navin_e2e::fake::SESSION_COOKIE),
            "the fake's session cookie stays on its own path: {cookies:?}"
        );
    }
    assert_eq!(fake.count("GET", "/user"), 2);
    fake.assert_conformant();
    first.close().await.expect("close");
    second.close().await.expect("close");
}

/// Processes whose command line names `needle` (Chromium's are given the profile path).
fn processes_naming(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
        .filter(|cmd| cmd.contains(needle))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_browser_without_close_leaves_no_chromium_behind() {
    let base = serve(smoke_app()).await;
    let browser = Browser::start("browser_drop").await.expect("browser");
    browser.goto(&base).await.expect("open");
    let profile = browser.profile_dir().display().to_string();
    assert!(
        !processes_naming(&profile).is_empty(),
        "Chromium runs with its profile"
    );
    drop(browser);
    let gone = navin_e2e::fake::wait_until(WAIT, || processes_naming(&profile).is_empty()).await;
    assert!(gone, "left running: {:?}", processes_naming(&profile));
}
