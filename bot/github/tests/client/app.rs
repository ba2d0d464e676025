//! The GitHub client on the wire (wiremock on loopback): App JWT, installation tokens,
//! rate limits, spacing, ETags, 404 and 5xx handling (docs/server.md, "GitHub access").
//! Waits run on tokio's paused clock, so nothing really sleeps.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::{app_key, github, github_with, rsa_keys, LogCapture, StatusLog};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use navin_github::{
    ApiRequest, AppClaims, Credentials, GitHubApp, GitHubConfig, GitHubError, MarkerInComments,
    RetryPolicy, TokenScope, WriteOutcome,
};
use secrecy::ExposeSecret;
use tokio::time::Instant;
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const INSTALLATION: u64 = 42;

fn unix_now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

fn expires_in(secs: i64) -> String {
    chrono::DateTime::from_timestamp(unix_now() + secs, 0)
        .unwrap()
        .to_rfc3339()
}

/// Serves a new token per mint: `tok-1`, `tok-2`, … (or `prefix` + n), valid `ttl` seconds.
struct Minter {
    count: Arc<AtomicUsize>,
    ttl: i64,
    token: Option<String>,
}

impl Respond for Minter {
    fn respond(&self, _req: &Request) -> ResponseTemplate {
        let n = self.count.fetch_add(1, Ordering::SeqCst) + 1;
        let token = self.token.clone().unwrap_or_else(|| format!("ghs_tok-{n}"));
        ResponseTemplate::new(201).set_body_json(serde_json::json!({
            "token": token,
            "expires_at": expires_in(self.ttl),
            "permissions": {"issues": "write"},
        }))
    }
}

async fn mount_minter(server: &MockServer, ttl: i64) -> Arc<AtomicUsize> {
    let count = Arc::new(AtomicUsize::new(0));
    Mock::given(method("POST"))
        .and(path(format!(
            "/app/installations/{INSTALLATION}/access_tokens"
        )))
        .respond_with(Minter {
            count: count.clone(),
            ttl,
            token: None,
        })
        .mount(server)
        .await;
    count
}

fn ok_json() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(serde_json::json!({"ok": true}))
}

async fn requests_to(server: &MockServer, p: &str) -> Vec<Request> {
    server
        .received_requests()
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.url.path() == p)
        .collect()
}

#[test]
fn app_jwt_decodes_with_the_public_key_and_has_githubs_claims() {
    let now = unix_now();
    let jwt = app_key().sign("Iv23clientid", now).unwrap();
    let decoding = DecodingKey::from_rsa_pem(rsa_keys().public_pem.as_bytes()).unwrap();
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_required_spec_claims(&["exp", "iat", "iss"]);
    validation.set_issuer(&["Iv23clientid"]);
    let data =
        jsonwebtoken::decode::<AppClaims>(jwt.expose_secret(), &decoding, &validation).unwrap();
    assert_eq!(data.header.alg, Algorithm::RS256);
    assert_eq!(data.claims.iat, now - 60);
    assert!(data.claims.exp <= now + 600);
    assert_eq!(data.claims.iss, "Iv23clientid");
}

#[test]
fn pkcs1_keys_as_github_issues_them_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pkcs1.pem");
    let status = std::process::Command::new("openssl")
        .args(["genrsa", "-traditional", "-out"])
        .arg(&out)
        .arg("2048")
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let pem = std::fs::read_to_string(out).unwrap();
    assert!(pem.starts_with("-----BEGIN RSA PRIVATE KEY-----"));
    assert!(navin_github::AppKey::from_pem(pem.as_bytes()).is_ok());
}

#[tokio::test(start_paused = true)]
async fn installation_token_is_minted_with_the_app_jwt_and_cached() {
    let server = MockServer::start().await;
    let mints = mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .and(header("authorization", "Bearer ghs_tok-1"))
        .respond_with(ok_json())
        .expect(2)
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "Iv23clientid");
    let client = app.installation(INSTALLATION);
    client.get("/repos/o/r").await.unwrap();
    client.get("/repos/o/r").await.unwrap();
    assert_eq!(mints.load(Ordering::SeqCst), 1);
    let mint = &requests_to(
        &server,
        &format!("/app/installations/{INSTALLATION}/access_tokens"),
    )
    .await[0];
    let bearer = mint.headers["authorization"]
        .to_str()
        .unwrap()
        .trim_start_matches("Bearer ");
    let claims = jsonwebtoken::dangerous::insecure_decode::<AppClaims>(bearer)
        .unwrap()
        .claims;
    assert_eq!(claims.iss, "Iv23clientid");
}

#[tokio::test(start_paused = true)]
async fn token_within_five_minutes_of_expiry_is_reminted() {
    let server = MockServer::start().await;
    let mints = mount_minter(&server, 4 * 60).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ok_json())
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    client.get("/repos/o/r").await.unwrap();
    client.get("/repos/o/r").await.unwrap();
    assert_eq!(mints.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_401_remints_the_token_once_and_then_reports_unauthorized() {
    let server = MockServer::start().await;
    let mints = mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .and(header("authorization", "Bearer ghs_tok-2"))
        .respond_with(ok_json())
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(serde_json::json!({"message": "Bad credentials"})),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/gone"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    client.get("/repos/o/r").await.unwrap();
    assert_eq!(
        mints.load(Ordering::SeqCst),
        2,
        "revoked token replaced once"
    );
    let err = client.get("/repos/o/gone").await.unwrap_err();
    assert!(matches!(err, GitHubError::Unauthorized { .. }), "{err}");
    assert_eq!(mints.load(Ordering::SeqCst), 3, "one more mint, not a loop");
    assert_eq!(requests_to(&server, "/repos/o/gone").await.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn tokens_and_jwts_never_reach_logs_debug_output_or_errors() {
    let logs = LogCapture::global();
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(401))
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    let err = client.get("/repos/o/r").await.unwrap_err();
    let token = client.token().await.unwrap();
    let jwt = app.app_jwt().unwrap();
    let printed = format!(
        "{}\n{err:?}\n{err}\n{client:?}\n{app:?}\n{token:?}\n{}",
        logs.text(),
        app_key().sign("1", 0).map(|s| format!("{s:?}")).unwrap()
    );
    assert!(
        !printed.contains("ghs_tok"),
        "installation token leaked:\n{printed}"
    );
    assert!(
        !printed.contains("ghs_1234_"),
        "long token from another test leaked"
    );
    assert!(!printed.contains(&jwt.expose_secret()[..40]), "JWT leaked");
    assert!(!printed.contains("PRIVATE KEY"), "key leaked");
    assert!(
        logs.text().contains("minted installation token"),
        "logs were captured"
    );
}

#[tokio::test(start_paused = true)]
async fn a_520_character_stateless_token_is_used_verbatim() {
    let server = MockServer::start().await;
    let long_token = format!("ghs_1234_{}", "eyJhbGciOiJFUzI1NiJ9".repeat(26));
    assert!(long_token.len() >= 520);
    Mock::given(method("POST"))
        .and(path(format!(
            "/app/installations/{INSTALLATION}/access_tokens"
        )))
        .and(header("x-github-stateless-s2s-token", "enabled"))
        .respond_with(Minter {
            count: Arc::default(),
            ttl: 3600,
            token: Some(long_token.clone()),
        })
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .and(header(
            "authorization",
            format!("Bearer {long_token}").as_str(),
        ))
        .respond_with(ok_json())
        .expect(1)
        .mount(&server)
        .await;
    let (app, _) = github_with(&server.uri(), "1", Duration::from_secs(1), Some("enabled"));
    let client = app.installation(INSTALLATION);
    client.get("/repos/o/r").await.unwrap();
    assert_eq!(client.token().await.unwrap().expose_secret(), long_token);
}

#[tokio::test(start_paused = true)]
async fn token_request_names_the_repository_and_least_permissions() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(format!(
            "/app/installations/{INSTALLATION}/access_tokens"
        )))
        .and(body_json(serde_json::json!({
            "repository_ids": [1296269],
            "permissions": {"issues": "write", "metadata": "read"}
        })))
        .respond_with(Minter {
            count: Arc::default(),
            ttl: 3600,
            token: None,
        })
        .expect(1)
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let scope = TokenScope::repository(1_296_269)
        .permission("issues", "write")
        .permission("metadata", "read");
    app.installation_scoped(INSTALLATION, scope)
        .token()
        .await
        .unwrap();
}

async fn rate_limited_then_ok(server: &MockServer, limited: ResponseTemplate, times: u64) {
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(limited)
        .up_to_n_times(times)
        .with_priority(1)
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ok_json())
        .mount(server)
        .await;
}

async fn timed_get(
    server: &MockServer,
) -> (Result<navin_github::ApiResponse, GitHubError>, Duration) {
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    client.token().await.unwrap();
    let start = Instant::now();
    let result = client.get("/repos/o/r").await;
    (result, start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn retry_after_on_429_and_403_is_waited_out() {
    for status in [429, 403] {
        let server = MockServer::start().await;
        mount_minter(&server, 3600).await;
        rate_limited_then_ok(
            &server,
            ResponseTemplate::new(status).insert_header("retry-after", "30"),
            1,
        )
        .await;
        let (result, waited) = timed_get(&server).await;
        assert!(result.is_ok(), "{status}");
        assert!(
            waited >= Duration::from_secs(30),
            "{status}: waited {waited:?}"
        );
        assert!(
            waited < Duration::from_secs(60),
            "{status}: waited {waited:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn exhausted_rate_limit_waits_until_the_reset_time() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    let limited = ResponseTemplate::new(403)
        .insert_header("x-ratelimit-remaining", "0")
        .insert_header("x-ratelimit-reset", (unix_now() + 120).to_string().as_str())
        .set_body_json(serde_json::json!({"message": "API rate limit exceeded"}));
    rate_limited_then_ok(&server, limited, 1).await;
    let (result, waited) = timed_get(&server).await;
    assert!(result.is_ok());
    assert!(waited >= Duration::from_secs(119), "waited {waited:?}");
    assert!(waited <= Duration::from_secs(125), "waited {waited:?}");
}

#[tokio::test(start_paused = true)]
async fn secondary_limit_without_hints_backs_off_from_one_minute() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    let limited = ResponseTemplate::new(403)
        .set_body_json(serde_json::json!({"message": "You have exceeded a secondary rate limit."}));
    rate_limited_then_ok(&server, limited, 2).await;
    let (result, waited) = timed_get(&server).await;
    assert!(result.is_ok());
    assert!(
        waited >= Duration::from_secs(180),
        "60 s then 120 s; waited {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn persistent_rate_limit_ends_in_an_error_after_bounded_retries() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(429))
        .mount(&server)
        .await;
    let (result, waited) = timed_get(&server).await;
    let err = result.unwrap_err();
    assert!(matches!(err, GitHubError::RateLimited { .. }), "{err}");
    assert!(err.is_transient());
    assert_eq!(requests_to(&server, "/repos/o/r").await.len(), 5);
    assert!(
        waited >= Duration::from_secs(60 + 120 + 240 + 480),
        "waited {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn plain_403_and_422_are_not_retried() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(403).set_body_json(
            serde_json::json!({"message": "Resource not accessible by integration"}),
        ))
        .mount(&server)
        .await;
    Mock::given(method("PATCH"))
        .and(path("/repos/o/r/git/refs/heads/navin/ledger"))
        .respond_with(
            ResponseTemplate::new(422)
                .set_body_json(serde_json::json!({"message": "Update is not a fast forward"})),
        )
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    let err = client.get("/repos/o/r").await.unwrap_err();
    assert_eq!(err.status(), Some(403));
    let err = client
        .write_idempotent(ApiRequest::patch(
            "/repos/o/r/git/refs/heads/navin/ledger",
            serde_json::json!({"sha": "abc", "force": false}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(422));
    assert!(err.to_string().contains("not a fast forward"));
    assert_eq!(requests_to(&server, "/repos/o/r").await.len(), 1);
    assert_eq!(
        requests_to(&server, "/repos/o/r/git/refs/heads/navin/ledger")
            .await
            .len(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn writes_of_one_installation_are_spaced_and_other_installations_are_not_held_up() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("POST"))
        .and(path(format!(
            "/app/installations/{}/access_tokens",
            INSTALLATION + 1
        )))
        .respond_with(Minter {
            count: Arc::default(),
            ttl: 3600,
            token: None,
        })
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/1/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": 1})))
        .mount(&server)
        .await;
    let (app, _) = github_with(&server.uri(), "1", Duration::from_millis(1500), None);
    let a = app.installation(INSTALLATION);
    let b = app.installation(INSTALLATION + 1);
    a.token().await.unwrap();
    b.token().await.unwrap();
    let post = || {
        ApiRequest::post(
            "/repos/o/r/issues/1/comments",
            serde_json::json!({"body": "hi"}),
        )
    };
    let start = Instant::now();
    let (r1, r2, r3) = tokio::join!(
        a.write_idempotent(post()),
        a.write_idempotent(post()),
        a.write_idempotent(post())
    );
    r1.unwrap();
    r2.unwrap();
    r3.unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(3000),
        "3 writes need 2 gaps; took {:?}",
        start.elapsed()
    );
    let start = Instant::now();
    b.write_idempotent(post()).await.unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "another installation waits for nobody"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_of_one_installation_go_out_one_at_a_time() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ok_json().set_delay(Duration::from_millis(150)))
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    client.token().await.unwrap();
    let start = std::time::Instant::now();
    let (a, b, c) = tokio::join!(
        client.get("/repos/o/r"),
        client.get("/repos/o/r"),
        client.get("/repos/o/r")
    );
    a.unwrap();
    b.unwrap();
    c.unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(450),
        "overlapping requests: {:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn rereads_send_if_none_match_and_a_304_returns_the_cached_body() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/.github/navin.yml"))
        .and(header("if-none-match", "\"v1\""))
        .respond_with(ResponseTemplate::new(304).insert_header("etag", "\"v1\""))
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/contents/.github/navin.yml"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("etag", "\"v1\"")
                .set_body_json(serde_json::json!({"content": "bGVkZ2Vy"})),
        )
        .mount(&server)
        .await;
    let statuses = Arc::new(StatusLog::default());
    let app = GitHubApp::new(
        GitHubConfig {
            api_url: server.uri(),
            credentials: Credentials::App {
                issuer: "1".to_owned(),
                key: app_key(),
            },
            write_spacing: Duration::from_secs(1),
            policy: RetryPolicy::default(),
            git_url_template: String::new(),
            stateless_s2s_token: None,
            read_timeout: None,
        },
        statuses.clone(),
    )
    .unwrap();
    let client = app.installation(INSTALLATION);
    let first = client
        .get("/repos/o/r/contents/.github/navin.yml")
        .await
        .unwrap();
    let second = client
        .get("/repos/o/r/contents/.github/navin.yml")
        .await
        .unwrap();
    assert!(!first.from_cache);
    assert!(second.from_cache);
    assert_eq!(second.status, 200);
    assert_eq!(first.body, second.body);
    let sent = requests_to(&server, "/repos/o/r/contents/.github/navin.yml").await;
    assert!(sent[0].headers.get("if-none-match").is_none());
    assert_eq!(sent[1].headers["if-none-match"], "\"v1\"");
    // The request observer (the server's metrics) saw the mint and the 304.
    let seen = statuses.seen();
    assert_eq!(
        seen.iter().filter(|s| **s == Some(304)).count(),
        1,
        "{seen:?}"
    );
    assert_eq!(
        seen.iter().filter(|s| **s == Some(201)).count(),
        1,
        "{seen:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_404_right_after_a_webhook_is_retried_twice() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/7"))
        .respond_with(ResponseTemplate::new(404))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/7"))
        .respond_with(ok_json())
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/pulls/8"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    assert!(client.get_after_webhook("/repos/o/r/pulls/7").await.is_ok());
    assert_eq!(requests_to(&server, "/repos/o/r/pulls/7").await.len(), 3);
    let err = client
        .get_after_webhook("/repos/o/r/pulls/8")
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert_eq!(
        requests_to(&server, "/repos/o/r/pulls/8").await.len(),
        3,
        "two retries, no more"
    );
    let err = client.get("/repos/o/r/pulls/8").await.unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert_eq!(
        requests_to(&server, "/repos/o/r/pulls/8").await.len(),
        4,
        "ordinary reads do not retry 404"
    );
}

async fn comment_server(landed: bool) -> MockServer {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/1/comments"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/1/comments"))
        .respond_with(ResponseTemplate::new(201).set_body_json(serde_json::json!({"id": 5})))
        .mount(&server)
        .await;
    let existing = if landed {
        serde_json::json!([{"id": 4, "body": "Plan posted\n<!-- navin:delivery=guid-9 -->"}])
    } else {
        serde_json::json!([{"id": 3, "body": "unrelated"}])
    };
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/1/comments"))
        .respond_with(ResponseTemplate::new(200).set_body_json(existing))
        .mount(&server)
        .await;
    server
}

fn marker_probe() -> MarkerInComments {
    MarkerInComments {
        comments_path: "/repos/o/r/issues/1/comments".to_owned(),
        marker: "<!-- navin:delivery=guid-9 -->".to_owned(),
    }
}

#[tokio::test(start_paused = true)]
async fn a_5xx_on_a_write_that_landed_is_not_repeated() {
    let server = comment_server(true).await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    let body = serde_json::json!({"body": "Plan posted\n<!-- navin:delivery=guid-9 -->"});
    let outcome = client
        .write(
            ApiRequest::post("/repos/o/r/issues/1/comments", body),
            &marker_probe(),
        )
        .await
        .unwrap();
    assert!(matches!(outcome, WriteOutcome::AlreadyApplied));
    let posts = requests_to(&server, "/repos/o/r/issues/1/comments").await;
    let methods: Vec<String> = posts.iter().map(|r| r.method.to_string()).collect();
    assert_eq!(methods, ["POST", "GET"], "re-read, no second POST");
}

#[tokio::test(start_paused = true)]
async fn a_5xx_on_a_write_that_did_not_land_is_retried_after_the_reread() {
    let server = comment_server(false).await;
    let (app, _) = github(&server.uri(), "1");
    let client = app.installation(INSTALLATION);
    let body = serde_json::json!({"body": "Plan posted\n<!-- navin:delivery=guid-9 -->"});
    let outcome = client
        .write(
            ApiRequest::post("/repos/o/r/issues/1/comments", body),
            &marker_probe(),
        )
        .await
        .unwrap();
    assert!(matches!(outcome, WriteOutcome::Applied(r) if r.status == 201));
    let posts = requests_to(&server, "/repos/o/r/issues/1/comments").await;
    let methods: Vec<String> = posts.iter().map(|r| r.method.to_string()).collect();
    assert_eq!(methods, ["POST", "GET", "POST"]);
}

#[tokio::test(start_paused = true)]
async fn reads_retry_server_errors_then_report_unavailable() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let (app, _) = github(&server.uri(), "1");
    let err = app
        .installation(INSTALLATION)
        .get("/repos/o/r")
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::Unavailable { .. }), "{err}");
    assert_eq!(requests_to(&server, "/repos/o/r").await.len(), 4);
}

#[tokio::test(start_paused = true)]
async fn link_targets_on_another_host_do_not_get_credentials() {
    let server = MockServer::start().await;
    let (app, _) = github(&server.uri(), "1");
    let err = app
        .app_request(ApiRequest::get(
            "https://evil.example/app/hook/deliveries?cursor=x",
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, GitHubError::InvalidRequest(_)), "{err}");
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn git_remote_url_follows_the_template() {
    let (app, _) = github("http://127.0.0.1:1", "1");
    assert_eq!(
        app.git_remote_url("octo/repo"),
        "https://github.com/octo/repo.git"
    );
}

#[tokio::test(start_paused = true)]
async fn the_observer_hears_how_each_token_mint_and_app_call_ended() {
    let server = MockServer::start().await;
    mount_minter(&server, 3600).await;
    let (gh, log) = github(&server.uri(), "1");
    gh.installation(INSTALLATION).token().await.unwrap();
    // No installation 99 and no /app route: GitHub answers 404 to both.
    assert!(gh.installation(99).token().await.is_err());
    assert!(gh.app_request(ApiRequest::get("/app")).await.is_err());
    assert_eq!(
        log.app_auths(),
        [
            (navin_github::AppAuth::TokenMint, true),
            (navin_github::AppAuth::TokenMint, false),
            (navin_github::AppAuth::AppCall, false),
        ]
    );
}

#[tokio::test]
async fn a_relative_api_url_is_refused_when_the_client_is_built() {
    let config = GitHubConfig {
        api_url: "notaurl".to_owned(),
        credentials: Credentials::App {
            issuer: "1".to_owned(),
            key: app_key(),
        },
        write_spacing: Duration::from_secs(1),
        policy: RetryPolicy::default(),
        git_url_template: "https://github.com/{owner}/{repo}.git".to_owned(),
        stateless_s2s_token: None,
        read_timeout: None,
    };
    let err = GitHubApp::new(config, Arc::new(StatusLog::default())).unwrap_err();
    assert!(
        err.to_string().contains("expected an absolute http(s) URL"),
        "{err}"
    );
}
