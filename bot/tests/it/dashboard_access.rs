//! Who sees and does what on the dashboard: a person without access to a repository sees none of it (pages, API), a reader can read but not edit or redeliver, forged CSRF tokens are refused, and a signed-out visitor is sent to sign in.

use crate::dashboard_browser::world_with_mission_and_plan;
use crate::dashboard_support::{EditorForm, WebUser};
use crate::engine_support::{OWNER, REPO};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_without_access_to_a_repository_sees_none_of_it() {
    let (w, issue) = world_with_mission_and_plan().await;
    // carol can read another repository of the installation, not this one.
    w.fake().create_repo(OWNER, "other");
    w.fake().set_role(OWNER, "other", "carol", "read");
    let mut carol = WebUser::new(&w.dashboard_url(), "carol");
    carol.sign_in().await;
    let missions = carol.get("/missions").await;
    assert_eq!(missions.status, 200, "{}", missions.body);
    assert!(
        !missions.body.contains(&format!("{OWNER}/{REPO}")),
        "{}",
        missions.body
    );
    assert!(!missions.body.contains("configurable greetings"));
    for path in [
        format!("/r/{OWNER}/{REPO}"),
        format!("/r/{OWNER}/{REPO}/plans/issue-{issue}"),
        format!("/r/{OWNER}/{REPO}/plans/issue-{issue}/edit"),
        format!("/api/r/{OWNER}/{REPO}"),
        format!("/api/r/{OWNER}/{REPO}/plans/issue-{issue}"),
    ] {
        let page = carol.get(&path).await;
        assert_eq!(page.status, 404, "{path}: {}", page.body);
        assert!(
            !page.body.contains("greeting"),
            "{path} leaks: {}",
            page.body
        );
    }
    // The same answer as for a repository that does not exist: nothing tells them apart.
    let missing = carol.get(&format!("/r/{OWNER}/no-such-repo")).await;
    let hidden = carol.get(&format!("/r/{OWNER}/{REPO}")).await;
    assert_eq!((missing.status, missing.body), (hidden.status, hidden.body));
    // The assets are the same for everyone and carry no repository data.
    let page = carol.get("/missions").await.body;
    for asset in ["dashboard-", ".css", ".js"] {
        assert!(page.contains(asset), "{asset}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_reads_but_cannot_edit_a_plan_or_see_deliveries() {
    let (w, issue) = world_with_mission_and_plan().await;
    let plan_path = format!("/r/{OWNER}/{REPO}/plans/issue-{issue}");
    let mut bob = WebUser::new(&w.dashboard_url(), "bob");
    bob.sign_in().await;
    let plan = bob.get(&plan_path).await;
    assert_eq!(plan.status, 200);
    assert!(
        !plan.body.contains("id=\"edit\""),
        "no edit button for a reader"
    );
    let edit = bob.get(&format!("{plan_path}/edit")).await;
    assert_eq!(edit.status, 403, "{}", edit.body);
    assert!(edit.body.contains("write access"), "{}", edit.body);

    // A reader's save (with a genuine CSRF token and a real base) changes nothing.
    let mut alice = WebUser::new(&w.dashboard_url(), "alice");
    alice.sign_in().await;
    let form = EditorForm::parse(&alice.get(&format!("{plan_path}/edit")).await.body);
    let csrf = WebUser::csrf_of(&plan.body);
    let text = form
        .text
        .replacen("## Goal\n", "## Goal\n\nBob was here.\n\n", 1);
    let before = w.ledger_commits();
    let save = bob
        .post_form(
            &plan_path,
            &[
                ("csrf", csrf.as_str()),
                ("base_hash", form.base_hash.as_str()),
                ("edit_id", "bob-edit-1"),
                ("text", text.as_str()),
            ],
        )
        .await;
    assert_eq!(save.status, 403, "{}", save.body);
    assert_eq!(w.ledger_commits(), before, "a refused save writes nothing");

    let deliveries = bob.get("/deliveries").await;
    assert_eq!(deliveries.status, 403, "{}", deliveries.body);
    let redeliver = bob
        .post_form(
            "/deliveries/some-guid/redeliver",
            &[("csrf", csrf.as_str())],
        )
        .await;
    assert!(matches!(redeliver.status, 403 | 404), "{}", redeliver.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_csrf_token_is_refused_and_changes_nothing() {
    let (w, issue) = world_with_mission_and_plan().await;
    let plan_path = format!("/r/{OWNER}/{REPO}/plans/issue-{issue}");
    let mut alice = WebUser::new(&w.dashboard_url(), "alice");
    alice.sign_in().await;
    let form = EditorForm::parse(&alice.get(&format!("{plan_path}/edit")).await.body);
    let text = form.text.replacen("## Goal\n", "## Goal\n\nForged.\n\n", 1);
    let before = w.ledger_commits();
    for forged in ["", "forged", &form.csrf[1..]] {
        let save = alice
            .post_form(
                &plan_path,
                &[
                    ("csrf", forged),
                    ("base_hash", form.base_hash.as_str()),
                    ("edit_id", form.edit_id.as_str()),
                    ("text", text.as_str()),
                ],
            )
            .await;
        assert_eq!(save.status, 400, "{forged:?}: {}", save.body);
        assert!(save.body.contains("security token"), "{}", save.body);
    }
    let validate = alice
        .post_json(
            &format!("{plan_path}/validate"),
            "forged",
            serde_json::json!({"text": text}),
        )
        .await;
    assert_eq!(validate.status, 400);
    let logout = alice.post_form("/logout", &[("csrf", "forged")]).await;
    assert_eq!(logout.status, 400, "a forged sign-out is refused too");
    assert_eq!(w.ledger_commits(), before);
    // Another person's token is no better than a made-up one.
    let mut bob = WebUser::new(&w.dashboard_url(), "bob");
    bob.sign_in().await;
    let bobs = WebUser::csrf_of(&bob.get("/missions").await.body);
    let save = alice
        .post_form(
            &plan_path,
            &[
                ("csrf", bobs.as_str()),
                ("base_hash", &form.base_hash),
                ("edit_id", &form.edit_id),
                ("text", &text),
            ],
        )
        .await;
    assert_eq!(save.status, 400);
    assert_eq!(w.ledger_commits(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_out_visitor_is_sent_to_sign_in_and_cannot_post() {
    let (w, issue) = world_with_mission_and_plan().await;
    let mut visitor = WebUser::new(&w.dashboard_url(), "alice");
    let page = visitor.get("/missions").await;
    assert_eq!(page.status, 303);
    assert_eq!(page.location(), Some("/login?return_to=%2Fmissions"));
    let api = visitor.get(&format!("/api/r/{OWNER}/{REPO}")).await;
    assert_eq!(api.status, 401);
    let save = visitor
        .post_form(
            &format!("/r/{OWNER}/{REPO}/plans/issue-{issue}"),
            &[
                ("csrf", "x"),
                ("base_hash", "x"),
                ("edit_id", "x"),
                ("text", "x"),
            ],
        )
        .await;
    assert_eq!(save.status, 401);
    // A made-up or tampered session cookie is no session.
    visitor.set_cookie("navin_session", "made-up.c2lnbmF0dXJl");
    assert_eq!(visitor.get("/missions").await.status, 303);
    // Sign-in sends people back only inside the dashboard, never to another site.
    let mut returning = WebUser::new(&w.dashboard_url(), "alice");
    let back = returning
        .sign_in_via("/login?return_to=https://evil.example/")
        .await;
    assert_eq!(back, "/missions");
    let mut returning = WebUser::new(&w.dashboard_url(), "alice");
    let back = returning
        .sign_in_via("/login?return_to=//evil.example/x")
        .await;
    assert_eq!(back, "/missions");
    // Browsers drop tabs and newlines from a URL and read `\` as `/`: after decoding,
    // `/%09/host` is `//host`, another site.
    for sneaky in [
        "/%09/evil.example/x",
        "/%5Cevil.example",
        "/%0D%0A/evil.example",
        "/%20/evil.example",
    ] {
        let mut returning = WebUser::new(&w.dashboard_url(), "alice");
        let back = returning
            .sign_in_via(&format!("/login?return_to={sneaky}"))
            .await;
        assert_eq!(back, "/missions", "{sneaky}");
    }
    let mut returning = WebUser::new(&w.dashboard_url(), "alice");
    let back = returning
        .sign_in_via(&format!("/login?return_to=/r/{OWNER}/{REPO}"))
        .await;
    assert_eq!(back, format!("/r/{OWNER}/{REPO}"));
    let headers = returning.get("/missions").await.headers;
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(headers["x-frame-options"], "DENY");
}
