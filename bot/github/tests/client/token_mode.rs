//! The GitHub client built from a plain token (the Action's `GITHUB_TOKEN`): the token is
//! used as it is, nothing is minted, App-only calls are refused, retries still apply.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::sync::Arc;
use std::time::Duration;

use navin_github::{ApiRequest, GitHubApp, GitHubConfig, GitHubError, NoMetrics};
use secrecy::{ExposeSecret, SecretString};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const TOKEN: &str = "ghs_workflowtoken";

fn token_client(api_url: &str) -> GitHubApp {
    let mut config = GitHubConfig::with_token(
        api_url,
        SecretString::from(TOKEN.to_owned()),
        "https://github.example/{owner}/{repo}.git",
        Duration::ZERO,
    );
    config.policy.server_error_base = Duration::from_millis(10);
    GitHubApp::new(config, Arc::new(NoMetrics)).unwrap()
}

#[tokio::test]
async fn token_mode_sends_the_given_token_and_never_mints() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"id": 1})))
        .expect(1)
        .mount(&server)
        .await;
    let app = token_client(&server.uri());
    assert!(app.is_token_mode());
    // Any installation id is one lane of the same token.
    let client = app.installation(1);
    assert_eq!(client.token().await.unwrap().expose_secret(), TOKEN);
    let repo: serde_json::Value = client.get_json("/repos/o/r").await.unwrap();
    assert_eq!(repo["id"], 1);
    let minted = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().starts_with("/app"))
        .count();
    assert_eq!(minted, 0);
    assert_eq!(app.git_remote_url("o/r"), "https://github.example/o/r.git");
}

#[tokio::test]
async fn app_only_calls_are_refused_in_token_mode_without_a_request() {
    let server = MockServer::start().await;
    let app = token_client(&server.uri());
    let err = app.app_request(ApiRequest::get("/app")).await.unwrap_err();
    assert!(matches!(err, GitHubError::NotAnApp { .. }), "{err:?}");
    assert!(err.to_string().contains("GET /app"), "{err}");
    assert!(err.to_string().contains("only a token"), "{err}");
    let jwt = app.app_jwt().unwrap_err();
    assert!(jwt.to_string().contains("App credentials"), "{jwt}");
    assert!(server.received_requests().await.unwrap().is_empty());
    // The token never shows in debug output.
    assert!(!format!("{app:?}").contains(TOKEN));
}

#[tokio::test]
async fn a_401_in_token_mode_fails_at_once_since_nothing_can_be_reminted() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(serde_json::json!({"message": "Bad credentials"})),
        )
        .mount(&server)
        .await;
    let app = token_client(&server.uri());
    let err = app.installation(1).get("/repos/o/r").await.unwrap_err();
    assert!(matches!(err, GitHubError::Unauthorized { .. }), "{err:?}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn token_mode_keeps_retrying_server_errors_and_reports_403_with_its_path() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/1"))
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/repos/o/r/issues/1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({"number": 1})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/repos/o/r/issues/1/comments"))
        .respond_with(ResponseTemplate::new(403).set_body_json(
            serde_json::json!({"message": "Resource not accessible by integration"}),
        ))
        .mount(&server)
        .await;
    let client = token_client(&server.uri()).installation(1);
    let issue: serde_json::Value = client.get_json("/repos/o/r/issues/1").await.unwrap();
    assert_eq!(issue["number"], 1);
    let err = client
        .write_idempotent(ApiRequest::post(
            "/repos/o/r/issues/1/comments",
            serde_json::json!({"body": "x"}),
        ))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(403));
    assert!(
        err.to_string()
            .contains("403 to POST /repos/o/r/issues/1/comments"),
        "{err}"
    );
}
