//! App authentication: RS256 JWTs, installation tokens (classic and ~520-char), hook deliveries.

use chrono::Utc;
use navin_e2e::fake::TokenFormat;
use navin_e2e::{AppKey, FakeGitHub};
use serde_json::{json, Value};

use crate::common::{app_client, setup, status_of, token_client, OWNER, REPO};

#[tokio::test]
async fn octocrab_app_auth_mints_an_installation_token_and_uses_it() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let app = app_client(&fake);
    let me: Value = app
        .get("/app", None::<&()>)
        .await
        .expect("GET /app with the JWT");
    assert_eq!(me["slug"], "navin");
    let installations: Value = app
        .get("/app/installations", None::<&()>)
        .await
        .expect("installations");
    assert_eq!(installations[0]["id"], inst);

    let gh = app
        .installation(octocrab::models::InstallationId(inst))
        .expect("installation client");
    gh.issues(OWNER, REPO)
        .create_comment(issue, "hello from the app")
        .await
        .expect("comment");
    gh.issues(OWNER, REPO)
        .create_comment(issue, "again")
        .await
        .expect("second comment");

    assert_eq!(
        fake.count("POST", "/app/installations/*/access_tokens"),
        1,
        "the token is cached"
    );
    let tokens = fake.tokens();
    assert_eq!(tokens.len(), 1);
    let left = tokens[0].expires_at - Utc::now();
    assert!(left > chrono::Duration::minutes(59) && left <= chrono::Duration::hours(1));
    let comments = fake.requests_to("POST", "/repos/*/*/issues/*/comments");
    assert!(comments
        .iter()
        .all(|r| r.caller.as_deref() == Some("navin[bot]")));
    fake.assert_conformant();
}

#[tokio::test]
async fn jwt_from_another_key_or_lasting_over_ten_minutes_is_refused() {
    let (fake, inst) = setup();
    let app_id = fake.with_state(|m| m.app.id);
    let now = Utc::now().timestamp();
    let stranger = AppKey::generate().expect("second key");
    let forged = stranger.app_jwt(app_id, Utc::now()).expect("sign");
    let too_long = fake
        .app_key()
        .sign_jwt(&json!({"iat": now - 60, "exp": now + 3600, "iss": app_id}))
        .expect("sign");
    let expired = fake
        .app_key()
        .sign_jwt(&json!({"iat": now - 900, "exp": now - 300, "iss": app_id}))
        .expect("sign");
    let wrong_iss = fake
        .app_key()
        .sign_jwt(&json!({"iat": now - 60, "exp": now + 500, "iss": 1}))
        .expect("sign");
    for (jwt, why) in [
        (forged, "signature"),
        (too_long, "too far"),
        (expired, "exp"),
        (wrong_iss, "iss"),
    ] {
        let err = token_client(&fake, &jwt)
            .post::<_, Value>(
                format!("/app/installations/{inst}/access_tokens"),
                None::<&()>,
            )
            .await
            .expect_err("must be refused");
        assert_eq!(status_of(&err), Some(401), "{why}");
    }
    let by_client_id = fake
        .app_key()
        .sign_jwt(&json!({"iat": now - 60, "exp": now + 540, "iss": fake.with_state(|m| m.app.client_id.clone())}))
        .expect("sign");
    let ok: Value = token_client(&fake, &by_client_id)
        .get("/app", None::<&()>)
        .await
        .expect("client id as iss");
    assert_eq!(ok["id"], app_id);
    fake.assert_conformant();
}

#[tokio::test]
async fn stateless_520_char_tokens_work_like_classic_ones() {
    let fake = FakeGitHub::builder()
        .token_format(TokenFormat::Stateless)
        .start();
    fake.create_repo(OWNER, REPO);
    let inst = fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    let token = fake.mint_installation_token(inst);
    assert!(
        token.starts_with("ghs_4242_") && token.len() > 500,
        "got {} chars",
        token.len()
    );
    let gh = token_client(&fake, &token);
    let repo = gh
        .repos(OWNER, REPO)
        .get()
        .await
        .expect("repo with a long token");
    assert_eq!(repo.name, REPO);

    let jwt = fake.app_key().app_jwt(4242, Utc::now()).expect("jwt");
    let http = navin_e2e::http_client();
    for (header, long) in [("enabled", true), ("disabled", false)] {
        let resp: Value = http
            .post(format!(
                "{}/app/installations/{inst}/access_tokens",
                fake.base_url()
            ))
            .bearer_auth(&jwt)
            .header("X-GitHub-Stateless-S2S-Token", header)
            .send()
            .await
            .expect("send")
            .bytes()
            .await
            .map(|b| serde_json::from_slice(&b).expect("json"))
            .expect("body");
        let len = resp["token"].as_str().map(str::len).unwrap_or(0);
        assert_eq!(len > 500, long, "{header}: {len} chars");
    }
    fake.assert_conformant();
}

#[tokio::test]
async fn token_requests_may_narrow_but_never_widen_the_grant() {
    let (fake, inst) = setup();
    let jwt = fake
        .app_key()
        .app_jwt(fake.with_state(|m| m.app.id), Utc::now())
        .expect("jwt");
    let gh = token_client(&fake, &jwt);
    let repo_id = fake.repo_id(OWNER, REPO);
    let narrowed: Value = gh
        .post(
            format!("/app/installations/{inst}/access_tokens"),
            Some(&json!({"repository_ids": [repo_id], "permissions": {"issues": "write", "checks": "read"}})),
        )
        .await
        .expect("narrow");
    assert_eq!(narrowed["permissions"]["issues"], "write");
    assert_eq!(narrowed["repositories"][0]["id"], repo_id);
    let token = narrowed["token"].as_str().expect("token");
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let err = token_client(&fake, token)
        .checks(OWNER, REPO)
        .create_check_run("x", &sha)
        .send()
        .await
        .expect_err("checks: read");
    assert_eq!(status_of(&err), Some(403));

    let err = gh
        .post::<_, Value>(
            format!("/app/installations/{inst}/access_tokens"),
            Some(&json!({"permissions": {"administration": "write"}})),
        )
        .await
        .expect_err("widening");
    assert_eq!(status_of(&err), Some(422));
    fake.assert_conformant();
}

#[tokio::test]
async fn expired_and_revoked_tokens_are_bad_credentials() {
    let (fake, inst) = setup();
    let expired = fake.mint_installation_token(inst);
    fake.expire_token(&expired);
    let err = token_client(&fake, &expired)
        .repos(OWNER, REPO)
        .get()
        .await
        .expect_err("expired");
    assert_eq!(status_of(&err), Some(401));
    let revoked = fake.mint_installation_token(inst);
    let gh = token_client(&fake, &revoked);
    let _: () = gh
        ._delete("/installation/token", None::<&()>)
        .await
        .map(|_| ())
        .expect("revoke");
    let err = gh.repos(OWNER, REPO).get().await.expect_err("revoked");
    assert_eq!(status_of(&err), Some(401));
    fake.assert_conformant();
}

#[tokio::test]
async fn hook_deliveries_page_by_cursor_and_redelivery_is_recorded() {
    let (fake, _) = setup();
    let mut ids = Vec::new();
    for i in 0..5 {
        let status = if i % 2 == 0 { 200 } else { 502 };
        ids.push(fake.record_delivery(
            &format!("guid-{i}"),
            "issue_comment",
            Some("created"),
            status,
        ));
    }
    let app = app_client(&fake);
    let uri = "/app/hook/deliveries?per_page=2".parse().expect("uri");
    let mut page = app
        .get_page::<Value>(&Some(uri))
        .await
        .expect("first page")
        .expect("a page");
    let mut seen = Vec::new();
    loop {
        seen.extend(
            page.items
                .iter()
                .filter_map(|d| d["guid"].as_str().map(str::to_string)),
        );
        let Some(next) = page.next.clone() else { break };
        assert!(
            next.to_string().contains("cursor="),
            "cursor pagination: {next}"
        );
        page = app
            .get_page::<Value>(&Some(next))
            .await
            .expect("next page")
            .expect("a page");
    }
    assert_eq!(
        seen,
        vec!["guid-4", "guid-3", "guid-2", "guid-1", "guid-0"],
        "newest first, each once"
    );

    let failed = ids[1];
    let resp = app
        ._post(
            format!("/app/hook/deliveries/{failed}/attempts"),
            None::<&()>,
        )
        .await
        .expect("redeliver");
    assert_eq!(resp.status().as_u16(), 202);
    assert_eq!(fake.redelivery_requests(), vec![failed]);
    let again: Vec<Value> = app
        .get("/app/hook/deliveries", Some(&[("per_page", "1")]))
        .await
        .expect("list");
    assert_eq!(again[0]["guid"], "guid-1");
    assert_eq!(again[0]["redelivery"], true);
    fake.assert_conformant();
}

#[tokio::test]
async fn repository_installation_lookup_needs_the_app_jwt() {
    let (fake, inst) = setup();
    let app = app_client(&fake);
    let found: Value = app
        .get(format!("/repos/{OWNER}/{REPO}/installation"), None::<&()>)
        .await
        .expect("lookup");
    assert_eq!(found["id"], inst);
    let token = token_client(&fake, &fake.mint_installation_token(inst));
    let err = token
        .get::<Value, _, _>(format!("/repos/{OWNER}/{REPO}/installation"), None::<&()>)
        .await
        .expect_err("token");
    assert_eq!(status_of(&err), Some(401));
    fake.assert_conformant();
}

#[tokio::test]
async fn a_manifest_code_converts_once_without_credentials_into_the_app_and_its_key() {
    let fake = FakeGitHub::start();
    let created = fake.manifest_code("Navin Test");
    let http = navin_e2e::http_client();
    let url = format!(
        "{}/app-manifests/{}/conversions",
        fake.base_url(),
        created.code
    );
    let first = http.post(&url).send().await.expect("conversion");
    assert_eq!(first.status().as_u16(), 201);
    let app: Value = serde_json::from_slice(&first.bytes().await.expect("body")).expect("json");
    assert_eq!(app["id"], created.id);
    assert_eq!(app["client_id"], created.client_id.as_str());
    assert_eq!(app["webhook_secret"], created.webhook_secret.as_str());
    assert_eq!(app["pem"], created.pem.as_str());
    assert!(created.pem.contains("PRIVATE KEY"), "a PEM key");

    let again = http.post(&url).send().await.expect("second conversion");
    assert_eq!(again.status().as_u16(), 404, "codes are single-use");
    let unknown = format!("{}/app-manifests/nope/conversions", fake.base_url());
    let unknown = http.post(&unknown).send().await.expect("unknown code");
    assert_eq!(unknown.status().as_u16(), 404);
    fake.assert_conformant();
}
