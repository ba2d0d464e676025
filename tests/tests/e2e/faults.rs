//! Fault injection (errors, rate limits, latency, 404-then-200) and the request log.

use std::time::{Duration, Instant};

use navin_e2e::Fault;

use crate::common::{setup, status_of, token_client, OWNER, REPO};

async fn get(fake: &navin_e2e::FakeGitHub, token: &str, path: &str) -> reqwest::Response {
    navin_e2e::http_client()
        .get(format!("{}{path}", fake.base_url()))
        .bearer_auth(token)
        .send()
        .await
        .expect("send")
}

#[tokio::test]
async fn count_limited_server_errors_then_normal_service() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let token = fake.mint_installation_token(inst);
    let id = fake.inject(
        Fault::on(
            "GET",
            "/repos/{owner}/{repo}/issues/{issue_number}/comments",
        )
        .server_error()
        .times(2),
    );
    let path = format!("/repos/{OWNER}/{REPO}/issues/{issue}/comments");
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(get(&fake, &token, &path).await.status().as_u16());
    }
    assert_eq!(statuses, vec![500, 500, 200]);
    assert_eq!(fake.fault_hits(id), 2);
    let other = get(&fake, &token, &format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(other.status().as_u16(), 200, "other paths are untouched");
    assert_eq!(fake.requests().iter().filter(|r| r.faulted).count(), 2);
    fake.assert_conformant();
}

#[tokio::test]
async fn rate_limit_faults_carry_githubs_headers() {
    let (fake, inst) = setup();
    let token = fake.mint_installation_token(inst);
    let reset = chrono::Utc::now().timestamp() + 42;
    fake.inject(Fault::on("GET", "/repos/*/*").rate_limited(reset).once());
    fake.inject(
        Fault::on("POST", "/repos/*/*/issues/*/comments")
            .secondary_rate_limited(429, 7)
            .once(),
    );
    let limited = get(&fake, &token, &format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(limited.status().as_u16(), 403);
    assert_eq!(limited.headers()["x-ratelimit-remaining"], "0");
    assert_eq!(
        limited.headers()["x-ratelimit-reset"],
        reset.to_string().as_str()
    );

    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let gh = token_client(&fake, &token);
    let err = gh
        .issues(OWNER, REPO)
        .create_comment(issue, "x")
        .await
        .expect_err("secondary limit");
    assert_eq!(status_of(&err), Some(429));
    let resp = navin_e2e::http_client()
        .post(format!(
            "{}/repos/{OWNER}/{REPO}/issues/{issue}/comments",
            fake.base_url()
        ))
        .bearer_auth(&token)
        .body(r#"{"body":"ok now"}"#)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status().as_u16(), 201, "the fault was used up");
    let retry = fake.inject(
        Fault::on("*", "/repos/**")
            .secondary_rate_limited(403, 3)
            .once(),
    );
    let resp = get(&fake, &token, &format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(
        (
            resp.status().as_u16(),
            resp.headers()["retry-after"].to_str().ok()
        ),
        (403, Some("3"))
    );
    assert_eq!(fake.fault_hits(retry), 1);
    fake.assert_conformant();
}

#[tokio::test]
async fn not_found_once_models_eventual_consistency_after_a_webhook() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    fake.inject(Fault::on("GET", "/repos/*/*/issues/*").not_found().once());
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let err = gh
        .issues(OWNER, REPO)
        .get(issue)
        .await
        .expect_err("first read");
    assert_eq!(status_of(&err), Some(404));
    let ok = gh
        .issues(OWNER, REPO)
        .get(issue)
        .await
        .expect("second read");
    assert_eq!(ok.number, issue);
    fake.assert_conformant();
}

#[tokio::test]
async fn latency_delays_only_matching_requests() {
    let (fake, inst) = setup();
    let token = fake.mint_installation_token(inst);
    let delay = fake.inject(
        Fault::on("GET", "/repos/*/*/collaborators/*/permission").delay(Duration::from_millis(400)),
    );
    fake.set_role(OWNER, REPO, "alice", "write");
    let started = Instant::now();
    let slow = get(
        &fake,
        &token,
        &format!("/repos/{OWNER}/{REPO}/collaborators/alice/permission"),
    )
    .await;
    let slow_took = started.elapsed();
    assert_eq!(
        slow.status().as_u16(),
        200,
        "a delay still answers normally"
    );
    assert!(
        slow_took >= Duration::from_millis(400),
        "took {slow_took:?}"
    );
    get(&fake, &token, &format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(
        fake.fault_hits(delay),
        1,
        "the repository read was not delayed"
    );
    fake.assert_conformant();
}

#[tokio::test]
async fn primary_rate_limit_counts_down_per_token_then_refuses() {
    let (fake, inst) = setup();
    fake.set_rate_limits(3, 1000);
    let token = fake.mint_installation_token(inst);
    let mut remaining = Vec::new();
    for _ in 0..4 {
        let resp = get(&fake, &token, &format!("/repos/{OWNER}/{REPO}")).await;
        remaining.push((
            resp.status().as_u16(),
            resp.headers()["x-ratelimit-remaining"]
                .to_str()
                .expect("header")
                .to_string(),
        ));
        assert!(resp.headers().contains_key("x-ratelimit-reset"));
        assert!(resp.headers().contains_key("x-ratelimit-used"));
        assert_eq!(resp.headers()["x-ratelimit-limit"], "3");
    }
    let expected: Vec<(u16, String)> = vec![
        (200, "2".into()),
        (200, "1".into()),
        (200, "0".into()),
        (403, "0".into()),
    ];
    assert_eq!(remaining, expected);
    let other = fake.mint_installation_token(inst);
    assert_eq!(
        get(&fake, &other, &format!("/repos/{OWNER}/{REPO}"))
            .await
            .status()
            .as_u16(),
        200,
        "limits are per token"
    );
    fake.assert_conformant();
}

#[tokio::test]
async fn request_log_counts_calls_and_flags_unexpected_ones() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    gh.issues(OWNER, REPO)
        .create_comment(issue, "hi")
        .await
        .expect("comment");
    gh.repos(OWNER, REPO).get().await.expect("repo");
    assert_eq!(fake.count("POST", "/repos/*/*/issues/*/comments"), 1);
    assert_eq!(fake.count("*", "/repos/**"), 2);
    let posted = &fake.requests_to("POST", "/repos/*/*/issues/*/comments")[0];
    assert_eq!(
        posted.body.as_ref().and_then(|b| b["body"].as_str()),
        Some("hi")
    );
    assert_eq!(posted.status, 201);
    fake.assert_only_called(&[
        ("POST", "/repos/*/*/issues/*/comments"),
        ("GET", "/repos/*/*"),
    ]);
    let caught = std::panic::catch_unwind(|| fake.assert_only_called(&[("GET", "/repos/*/*")]));
    let message = caught.expect_err("the comment was not allowed");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("POST /repos/octo-org/hello/issues/1/comments"),
        "{text}"
    );
    fake.clear_requests();
    assert!(fake.requests().is_empty());
}
