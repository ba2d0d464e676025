//! User sign-in on the fake: the web flow with PKCE, user access tokens, and what they reach.

use navin_e2e::fake::http::encode;
use navin_e2e::fake::pkce_challenge;
use navin_e2e::FakeGitHub;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::redirect::Policy;
use serde_json::Value;

use crate::common::{setup, OWNER, REPO};

const CALLBACK: &str = "http://127.0.0.1:9/auth/callback";
const VERIFIER: &str = "a-verifier-of-at-least-43-characters-0123456789abcdef";

/// `k=v&...`, percent-encoded (a form body or a query string).
fn form<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k.as_ref()), encode(v.as_ref())))
        .collect::<Vec<_>>()
        .join("&")
}

fn client() -> reqwest::Client {
    navin_e2e::http_client_builder()
        .redirect(Policy::none())
        .build()
        .expect("http client")
}

/// A fake with `octo-org/hello` installed, the test callback registered and alice able to read.
fn signed_in_setup() -> (FakeGitHub, u64) {
    let (fake, inst) = setup();
    fake.add_callback_url(CALLBACK);
    fake.set_role(OWNER, REPO, "alice", "read");
    fake.set_oauth_user("alice");
    (fake, inst)
}

/// Query parameters of a URL, decoded.
fn params_of(url: &str) -> Vec<(String, String)> {
    reqwest::Url::parse(url)
        .expect("url")
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn param(url: &str, name: &str) -> Option<String> {
    params_of(url)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

/// `GET /login/oauth/authorize` with these extra parameters: (status, Location).
async fn authorize(fake: &FakeGitHub, extra: &[(&str, &str)]) -> (u16, String) {
    let client_id = fake.client_id();
    let mut query = vec![("client_id", client_id.as_str())];
    query.extend_from_slice(extra);
    let resp = client()
        .get(format!(
            "{}/login/oauth/authorize?{}",
            fake.base_url(),
            form(&query)
        ))
        .send()
        .await
        .expect("authorize");
    let location = resp
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (resp.status().as_u16(), location)
}

/// A PKCE authorization for `VERIFIER` with state `s1`: the code.
async fn code(fake: &FakeGitHub, extra: &[(&str, &str)]) -> String {
    let challenge = pkce_challenge(VERIFIER);
    let mut query = vec![
        ("redirect_uri", CALLBACK),
        ("state", "s1"),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ];
    query.extend_from_slice(extra);
    let (status, location) = authorize(fake, &query).await;
    assert_eq!(status, 302, "authorize redirects: {location}");
    assert!(location.starts_with(CALLBACK), "{location}");
    assert_eq!(param(&location, "state").as_deref(), Some("s1"));
    param(&location, "code").expect("a code")
}

/// `POST /login/oauth/access_token` as a form, asking for JSON.
async fn exchange(fake: &FakeGitHub, fields: &[(&str, &str)]) -> Value {
    let secret = fake.client_secret();
    let client_id = fake.client_id();
    let mut body = vec![
        ("client_id", client_id.as_str()),
        ("client_secret", secret.as_str()),
    ];
    body.extend_from_slice(fields);
    let resp = client()
        .post(format!("{}/login/oauth/access_token", fake.base_url()))
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form(&body))
        .send()
        .await
        .expect("exchange");
    assert_eq!(
        resp.status().as_u16(),
        200,
        "GitHub answers 200, errors too"
    );
    serde_json::from_slice(&resp.bytes().await.expect("body")).expect("JSON")
}

async fn api(fake: &FakeGitHub, token: &str, path: &str) -> (u16, Value, Option<String>) {
    let resp = client()
        .get(format!("{}{path}", fake.base_url()))
        .bearer_auth(token)
        .send()
        .await
        .expect("api call");
    let status = resp.status().as_u16();
    let link = resp
        .headers()
        .get("link")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = serde_json::from_slice(&resp.bytes().await.expect("body")).unwrap_or(Value::Null);
    (status, body, link)
}

#[tokio::test]
async fn the_web_flow_with_pkce_signs_alice_in_and_her_token_reads_her_installation() {
    let (fake, inst) = signed_in_setup();
    let code = code(&fake, &[]).await;
    let tokens = exchange(
        &fake,
        &[
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("code_verifier", VERIFIER),
        ],
    )
    .await;
    let access = tokens["access_token"].as_str().expect("access_token");
    assert!(access.starts_with("ghu_") && access.len() == 40, "{access}");
    let refresh = tokens["refresh_token"].as_str().expect("refresh_token");
    assert!(
        refresh.starts_with("ghr_") && refresh.len() == 80,
        "{refresh}"
    );
    assert_eq!(tokens["token_type"], "bearer");
    assert_eq!(tokens["scope"], "");
    assert_eq!(tokens["expires_in"], 28800);
    assert_eq!(tokens["refresh_token_expires_in"], 15897600);

    let (status, me, _) = api(&fake, access, "/user").await;
    assert_eq!((status, me["login"].as_str()), (200, Some("alice")));
    assert_eq!(me["id"], fake.user_id("alice"));
    let (_, installs, _) = api(&fake, access, "/user/installations").await;
    assert_eq!(installs["total_count"], 1);
    assert_eq!(installs["installations"][0]["id"], inst);
    let (_, repos, _) = api(
        &fake,
        access,
        &format!("/user/installations/{inst}/repositories"),
    )
    .await;
    assert_eq!(repos["total_count"], 1);
    let repo = &repos["repositories"][0];
    assert_eq!(repo["full_name"], format!("{OWNER}/{REPO}"));
    assert_eq!(repo["permissions"]["pull"], true);
    assert_eq!(repo["permissions"]["push"], false);
    let (status, _, _) = api(&fake, access, &format!("/repos/{OWNER}/{REPO}")).await;
    assert_eq!(
        status, 200,
        "a user access token reads an installed repository"
    );

    let again = exchange(&fake, &[("code", &code), ("code_verifier", VERIFIER)]).await;
    assert_eq!(again["error"], "bad_verification_code", "a code works once");

    let renewed = exchange(
        &fake,
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
    )
    .await;
    assert!(renewed["access_token"]
        .as_str()
        .is_some_and(|t| t.starts_with("ghu_")));
    let reused = exchange(
        &fake,
        &[("grant_type", "refresh_token"), ("refresh_token", refresh)],
    )
    .await;
    assert_eq!(
        reused["error"], "bad_refresh_token",
        "a refresh token works once"
    );
    assert!(fake.count("GET", "/login/oauth/authorize") == 1);
    fake.assert_conformant();
}

#[tokio::test]
async fn a_wrong_or_missing_verifier_is_refused_and_spends_the_code() {
    let (fake, _) = signed_in_setup();
    let code = code(&fake, &[]).await;
    let wrong = exchange(
        &fake,
        &[
            ("code", &code),
            (
                "code_verifier",
                "not-the-verifier-0000000000000000000000000",
            ),
        ],
    )
    .await;
    assert_eq!(wrong["error"], "invalid_grant", "{wrong}");
    assert!(wrong.get("access_token").is_none());
    let right = exchange(&fake, &[("code", &code), ("code_verifier", VERIFIER)]).await;
    assert_eq!(right["error"], "bad_verification_code", "the code is spent");

    let code = code_for(&fake).await;
    let missing = exchange(&fake, &[("code", &code)]).await;
    assert_eq!(
        missing["error"], "invalid_grant",
        "a challenge needs its verifier"
    );
}

async fn code_for(fake: &FakeGitHub) -> String {
    code(fake, &[]).await
}

#[tokio::test]
async fn wrong_client_redirect_or_secret_and_stale_codes_are_refused_as_github_does() {
    let (fake, _) = signed_in_setup();
    let (status, location) = authorize(
        &fake,
        &[
            ("redirect_uri", "http://127.0.0.1:9/elsewhere"),
            ("state", "s2"),
        ],
    )
    .await;
    assert_eq!(status, 302);
    assert!(
        location.starts_with(CALLBACK),
        "back to the registered URL: {location}"
    );
    assert_eq!(
        param(&location, "error").as_deref(),
        Some("redirect_uri_mismatch")
    );
    assert_eq!(param(&location, "state").as_deref(), Some("s2"));
    assert!(param(&location, "code").is_none());

    let resp = client()
        .get(format!(
            "{}/login/oauth/authorize?client_id=Iv23liSomeoneElse",
            fake.base_url()
        ))
        .send()
        .await
        .expect("authorize");
    assert_eq!(resp.status().as_u16(), 404, "an unknown client id");

    let (status, location) = authorize(
        &fake,
        &[
            ("code_challenge", "abc"),
            ("code_challenge_method", "plain"),
        ],
    )
    .await;
    assert_eq!(status, 302);
    assert_eq!(
        param(&location, "error").as_deref(),
        Some("invalid_request")
    );

    let code = code(&fake, &[]).await;
    let mismatch = exchange(
        &fake,
        &[
            ("code", &code),
            ("code_verifier", VERIFIER),
            ("redirect_uri", "http://127.0.0.1:9/elsewhere"),
        ],
    )
    .await;
    assert_eq!(mismatch["error"], "redirect_uri_mismatch");

    let code = code_for(&fake).await;
    let resp = client()
        .post(format!("{}/login/oauth/access_token", fake.base_url()))
        .header(ACCEPT, "application/json")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form(&[
            ("client_id", fake.client_id().as_str()),
            ("client_secret", "wrong"),
            ("code", &code),
            ("code_verifier", VERIFIER),
        ]))
        .send()
        .await
        .expect("exchange");
    let body: Value = serde_json::from_slice(&resp.bytes().await.expect("body")).expect("json");
    assert_eq!(body["error"], "incorrect_client_credentials");

    fake.expire_oauth_codes();
    let stale = exchange(&fake, &[("code", &code), ("code_verifier", VERIFIER)]).await;
    assert_eq!(
        stale["error"], "bad_verification_code",
        "codes last ten minutes"
    );
}

#[tokio::test]
async fn a_user_without_access_sees_no_installation_and_no_repository() {
    let (fake, inst) = signed_in_setup();
    let bob = fake.mint_user_access_token("bob");
    let (status, installs, _) = api(&fake, &bob, "/user/installations").await;
    assert_eq!(status, 200);
    assert_eq!(
        installs["total_count"], 0,
        "reading a public repository is not explicit access"
    );
    let path = format!("/user/installations/{inst}/repositories");
    assert_eq!(api(&fake, &bob, &path).await.0, 404);

    let alice = fake.mint_user_access_token("alice");
    assert_eq!(api(&fake, &alice, &path).await.1["total_count"], 1);
    fake.deny_access(OWNER, REPO, "alice");
    assert_eq!(api(&fake, &alice, &path).await.0, 404);
    assert_eq!(
        api(&fake, &alice, "/user/installations").await.1["total_count"],
        0
    );
    let app_token = fake.mint_installation_token(inst);
    let (_, perm, _) = api(
        &fake,
        &app_token,
        &format!("/repos/{OWNER}/{REPO}/collaborators/alice/permission"),
    )
    .await;
    assert_eq!(perm["permission"], "none", "one seed sets both");
    fake.assert_conformant();
}

#[tokio::test]
async fn user_and_installation_tokens_stay_on_their_own_endpoints() {
    let (fake, inst) = signed_in_setup();
    let installation = fake.mint_installation_token(inst);
    assert_eq!(api(&fake, &installation, "/user").await.0, 403);
    assert_eq!(
        api(&fake, &installation, "/user/installations").await.0,
        403
    );
    let personal = fake.user_token("alice");
    assert_eq!(api(&fake, &personal, "/user").await.0, 200);
    let (status, body, _) = api(&fake, &personal, "/user/installations").await;
    assert_eq!(status, 403, "{body}");
    let ghu = fake.mint_user_access_token("alice");
    assert_eq!(
        api(&fake, &ghu, "/app").await.0,
        401,
        "App endpoints want the JWT"
    );

    fake.create_repo(OWNER, "not-installed");
    fake.set_role(OWNER, "not-installed", "alice", "admin");
    let status = api(&fake, &ghu, &format!("/repos/{OWNER}/not-installed"))
        .await
        .0;
    assert_eq!(status, 404, "only where the App is installed");

    fake.expire_token(&ghu);
    assert_eq!(api(&fake, &ghu, "/user").await.0, 401);
    let revoked = fake.mint_user_access_token("alice");
    let resp = client()
        .delete(format!(
            "{}/applications/{}/token",
            fake.base_url(),
            fake.client_id()
        ))
        .basic_auth(fake.client_id(), Some(fake.client_secret()))
        .header(CONTENT_TYPE, "application/json")
        .body(serde_json::json!({ "access_token": revoked }).to_string())
        .send()
        .await
        .expect("delete token");
    assert_eq!(resp.status().as_u16(), 204);
    assert_eq!(api(&fake, &revoked, "/user").await.0, 401);
    fake.assert_conformant();
}

#[tokio::test]
async fn the_login_hint_and_the_browser_session_choose_who_signs_in() {
    let (fake, _) = signed_in_setup();
    let code = code(&fake, &[("login", "carol")]).await;
    let tokens = exchange(&fake, &[("code", &code), ("code_verifier", VERIFIER)]).await;
    let token = tokens["access_token"].as_str().expect("token");
    assert_eq!(api(&fake, token, "/user").await.1["login"], "carol");

    // A browser that opened sign_in_url carries the fake's session cookie.
    let jar = client()
        .get(fake.sign_in_url("dave"))
        .send()
        .await
        .expect("sign in");
    let cookie = jar
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("cookie")
        .to_string();
    assert!(
        cookie.starts_with(navin_e2e::fake::SESSION_COOKIE),
        "{cookie}"
    );
    let resp = client()
        .get(format!(
            "{}/login/oauth/authorize?client_id={}",
            fake.base_url(),
            fake.client_id()
        ))
        .header("cookie", cookie)
        .send()
        .await
        .expect("authorize");
    let location = resp.headers()[LOCATION]
        .to_str()
        .expect("location")
        .to_string();
    let code = param(&location, "code").expect("code");
    let form = client()
        .post(format!("{}/login/oauth/access_token", fake.base_url()))
        .body(form(&[
            ("client_id", fake.client_id()),
            ("client_secret", fake.client_secret()),
            ("code", code),
        ]))
        .send()
        .await
        .expect("exchange")
        .text()
        .await
        .expect("body");
    let pairs: Vec<(String, String)> = reqwest::Url::parse(&format!("http://x/?{form}"))
        .expect("form")
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let token = pairs
        .iter()
        .find(|(k, _)| k == "access_token")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("form-encoded by default: {form}"));
    assert_eq!(api(&fake, &token, "/user").await.1["login"], "dave");

    let nobody = FakeGitHub::builder().callback_url(CALLBACK).start();
    let (status, _) = authorize(&nobody, &[]).await;
    assert_eq!(status, 401, "nobody signed in is a page, not a redirect");
}

#[tokio::test]
async fn user_repositories_are_paginated_with_a_link_header() {
    let (fake, _) = setup();
    let names = ["r1", "r2", "r3"];
    for name in names {
        fake.create_repo(OWNER, name);
        fake.set_role(OWNER, name, "alice", "write");
    }
    let full: Vec<String> = names.iter().map(|n| format!("{OWNER}/{n}")).collect();
    let inst =
        fake.create_installation(OWNER, &full.iter().map(String::as_str).collect::<Vec<_>>());
    let token = fake.mint_user_access_token("alice");
    let (_, first, link) = api(
        &fake,
        &token,
        &format!("/user/installations/{inst}/repositories?per_page=2"),
    )
    .await;
    assert_eq!(first["total_count"], 3);
    assert_eq!(first["repositories"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["repositories"][0]["permissions"]["push"], true);
    let link = link.expect("Link header");
    assert!(
        link.contains("page=2") && link.contains("rel=\"next\""),
        "{link}"
    );
    let (_, second, _) = api(
        &fake,
        &token,
        &format!("/user/installations/{inst}/repositories?per_page=2&page=2"),
    )
    .await;
    assert_eq!(second["repositories"].as_array().map(Vec::len), Some(1));
    fake.assert_conformant();
}
