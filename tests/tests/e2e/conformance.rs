//! The fake's traffic checked against GitHub's REST description (`@octokit/openapi` subset).

use navin_e2e::conformance::{OpenApi, ViolationKind};
use navin_e2e::fake::{CheckRunSpec, PullSpec};
use octocrab::params::checks::CheckRunConclusion;
use serde_json::{json, Value};

use crate::common::{app_client, setup, OWNER, REPO};

#[tokio::test]
async fn octocrab_traffic_and_the_fakes_answers_conform_to_the_rest_description() {
    let (fake, inst) = setup();
    fake.set_role(OWNER, REPO, "alice", "maintain");
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let pr = fake.create_pull(
        OWNER,
        REPO,
        PullSpec::new("navin/S1")
            .file("a.rs", "fn a() {}\n")
            .author("bob"),
    );
    let head = fake.pull(OWNER, REPO, pr).head_sha;
    fake.add_check_run(OWNER, REPO, CheckRunSpec::new("ci", &head));
    fake.add_review(OWNER, REPO, pr, "alice", "approved", &head);
    fake.add_workflow(OWNER, REPO, "ci.yml", "CI");
    let run = fake.add_workflow_run(OWNER, REPO, "ci.yml", &head, "success");
    fake.record_delivery("g-1", "issue_comment", Some("created"), 200);
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[(".github/navin.yml", "x: 1\n")],
        "config",
    );

    let app = app_client(&fake);
    let _: Value = app.get("/app", None::<&()>).await.expect("app");
    let _: Value = app
        .get("/app/installations", None::<&()>)
        .await
        .expect("installations");
    let _: Value = app
        .get(format!("/app/installations/{inst}"), None::<&()>)
        .await
        .expect("installation");
    let _: Value = app
        .get(format!("/repos/{OWNER}/{REPO}/installation"), None::<&()>)
        .await
        .expect("repo installation");
    let _: Value = app
        .get("/app/hook/deliveries", Some(&[("per_page", "10")]))
        .await
        .expect("deliveries");
    let gh = app
        .installation(octocrab::models::InstallationId(inst))
        .expect("installation client");

    let c = gh
        .issues(OWNER, REPO)
        .create_comment(issue, "plan")
        .await
        .expect("comment");
    gh.issues(OWNER, REPO)
        .update_comment(c.id, "plan v2")
        .await
        .expect("update");
    gh.issues(OWNER, REPO)
        .list_comments(issue)
        .per_page(5)
        .page(1u32)
        .send()
        .await
        .expect("list");
    gh.issues(OWNER, REPO)
        .create_comment_reaction(c.id, octocrab::models::reactions::ReactionContent::Rocket)
        .await
        .expect("reaction");
    gh.issues(OWNER, REPO).get(issue).await.expect("issue");
    gh.issues(OWNER, REPO)
        .create("new")
        .body("b")
        .send()
        .await
        .expect("create issue");
    gh.issues(OWNER, REPO)
        .get_comment(c.id)
        .await
        .expect("get comment");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/issues/comments/{}/reactions", c.id),
            None::<&()>,
        )
        .await
        .expect("reactions");
    gh.repos(OWNER, REPO).get().await.expect("repo");
    gh.repos(OWNER, REPO)
        .get_content()
        .path(".github/navin.yml")
        .r#ref("main")
        .send()
        .await
        .expect("contents");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/collaborators/alice/permission"),
            None::<&()>,
        )
        .await
        .expect("permission");
    gh.pulls(OWNER, REPO).get(pr).await.expect("pull");
    gh.pulls(OWNER, REPO)
        .list()
        .state(octocrab::params::State::All)
        .send()
        .await
        .expect("pulls");
    gh.pulls(OWNER, REPO).list_files(pr).await.expect("files");
    gh.pulls(OWNER, REPO)
        .list_reviews(pr)
        .send()
        .await
        .expect("reviews");
    let check = gh
        .checks(OWNER, REPO)
        .create_check_run("navin/plan", &head)
        .send()
        .await
        .expect("check run");
    gh.checks(OWNER, REPO)
        .update_check_run(check.id)
        .conclusion(CheckRunConclusion::Success)
        .send()
        .await
        .expect("update run");
    gh.checks(OWNER, REPO)
        .get_check_run(check.id)
        .send()
        .await
        .expect("get run");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/commits/{head}/check-runs"),
            Some(&[("check_name", "ci"), ("filter", "all"), ("app_id", "15368")]),
        )
        .await
        .expect("runs for ref");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/commits/{head}/check-suites"),
            None::<&()>,
        )
        .await
        .expect("suites");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/ref/heads/main"),
            None::<&()>,
        )
        .await
        .expect("ref");
    let _: Value = gh
        .get(format!("/repos/{OWNER}/{REPO}/commits/main"), None::<&()>)
        .await
        .expect("commit");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/commits/{head}"),
            None::<&()>,
        )
        .await
        .expect("git commit");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/trees/{head}"),
            Some(&[("recursive", "1")]),
        )
        .await
        .expect("tree");
    let _: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/actions/runs/{run}"),
            None::<&()>,
        )
        .await
        .expect("run");
    let _: Value = gh
        .get("/rate_limit", None::<&()>)
        .await
        .expect("rate limit");
    let _: Value = gh
        .post(
            format!("/repos/{OWNER}/{REPO}/issues/{issue}/labels"),
            Some(&json!({"labels": ["navin"]})),
        )
        .await
        .expect("labels");

    assert!(fake.requests().len() >= 30);
    fake.assert_conformant();
}

#[tokio::test]
async fn undocumented_calls_bad_parameters_and_bodies_are_reported() {
    let (fake, inst) = setup();
    let issue = fake.create_issue(OWNER, REPO, "t", "b", "alice");
    let token = fake.mint_installation_token(inst);
    let http = navin_e2e::http_client();
    let base = fake.base_url();
    let send = |req: reqwest::RequestBuilder| async {
        req.bearer_auth(&token)
            .send()
            .await
            .expect("send")
            .status()
            .as_u16()
    };
    send(http.get(format!("{base}/repos/{OWNER}/{REPO}/not-an-endpoint"))).await;
    send(
        http.post(format!(
            "{base}/repos/{OWNER}/{REPO}/issues/{issue}/comments"
        ))
        .body(r#"{"text":"wrong field"}"#),
    )
    .await;
    send(http.get(format!(
        "{base}/repos/{OWNER}/{REPO}/commits/main/check-runs?filter=newest"
    )))
    .await;
    send(http.get(format!(
        "{base}/repos/{OWNER}/{REPO}/issues/{issue}/comments?colour=blue"
    )))
    .await;
    send(http.get(format!("{base}/repos/{OWNER}/{REPO}/issues/abc"))).await;

    let kinds: Vec<ViolationKind> = fake
        .conformance_violations()
        .into_iter()
        .map(|v| v.kind)
        .collect();
    for expected in [
        ViolationKind::UndocumentedOperation,
        ViolationKind::InvalidBody,
        ViolationKind::InvalidQueryParameter,
        ViolationKind::UndocumentedQueryParameter,
        ViolationKind::InvalidPathParameter,
    ] {
        assert!(
            kinds.contains(&expected),
            "{expected:?} not reported in {kinds:?}"
        );
    }
    let caught = std::panic::catch_unwind(|| fake.assert_conformant());
    assert!(caught.is_err(), "assert_conformant fails the test");
}

#[test]
fn the_extract_maps_raw_paths_to_templates() {
    let api = OpenApi::github();
    assert_eq!(api.package_version, "23.0.2");
    let (op, params) = api
        .find("GET", "/repos/o/r/contents/.github/navin.yml")
        .expect("contents");
    assert_eq!(op.operation_id, "repos/get-content");
    assert_eq!(params["path"], ".github/navin.yml");
    let (op, params) = api
        .find("GET", "/repos/o/r/git/ref/heads/navin/ledger")
        .expect("ref");
    assert_eq!(
        (op.operation_id.as_str(), params["ref"].as_str()),
        ("git/get-ref", "heads/navin/ledger")
    );
    let (op, _) = api
        .find("GET", "/repos/o/r/commits/abc/check-runs")
        .expect("runs");
    assert_eq!(op.operation_id, "checks/list-for-ref");
    let (op, _) = api
        .find("PATCH", "/repos/o/r/issues/comments/5")
        .expect("comment");
    assert_eq!(op.operation_id, "issues/update-comment");
    assert!(
        api.find("DELETE", "/repos/o/r").is_none(),
        "not served, so not in the subset"
    );
}
