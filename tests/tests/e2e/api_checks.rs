//! Check runs and suites: creation by the App, filters `check_name`/`app_id`/`filter`, pagination.

use chrono::{Duration, Utc};
use navin_e2e::fake::CheckRunSpec;
use navin_e2e::fake::GITHUB_ACTIONS_APP_ID;
use octocrab::params::checks::{CheckRunConclusion, CheckRunStatus};
use octocrab::params::repos::Commitish;
use serde_json::{json, Value};

use crate::common::{setup, status_of, token_client, OWNER, REPO};

async fn list(gh: &octocrab::Octocrab, sha: &str, query: &[(&str, &str)]) -> Value {
    let route = format!("/repos/{OWNER}/{REPO}/commits/{sha}/check-runs");
    gh.get(
        route,
        Some(
            &query
                .iter()
                .cloned()
                .collect::<std::collections::BTreeMap<_, _>>(),
        ),
    )
    .await
    .expect("list check runs")
}

fn ids(v: &Value) -> Vec<u64> {
    let mut ids: Vec<u64> = v["check_runs"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|r| r["id"].as_u64())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn latest_filter_hides_a_queued_rerun_that_filter_all_shows() {
    let (fake, inst) = setup();
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let t0 = Utc::now() - Duration::minutes(30);
    let green = fake.add_check_run(
        OWNER,
        REPO,
        CheckRunSpec::new("ci", &sha)
            .started_at(t0)
            .completed_at(t0 + Duration::minutes(3)),
    );
    let rerun = fake.add_check_run(OWNER, REPO, CheckRunSpec::new("ci", &sha).pending("queued"));
    let spoof = fake.add_check_run(OWNER, REPO, CheckRunSpec::new("ci", &sha).app(999));
    let lint = fake.add_check_run(
        OWNER,
        REPO,
        CheckRunSpec::new("lint", &sha).conclusion("failure"),
    );
    let gh = token_client(&fake, &fake.mint_installation_token(inst));

    let latest = list(&gh, &sha, &[("check_name", "ci"), ("app_id", "15368")]).await;
    assert_eq!(
        ids(&latest),
        vec![green],
        "latest goes by completed_at, so the queued rerun is hidden"
    );
    assert_eq!(latest["total_count"], 1);

    let all = list(
        &gh,
        &sha,
        &[("check_name", "ci"), ("app_id", "15368"), ("filter", "all")],
    )
    .await;
    assert_eq!(ids(&all), vec![green, rerun]);

    let any_app = list(&gh, &sha, &[("check_name", "ci"), ("filter", "all")]).await;
    assert_eq!(ids(&any_app), vec![green, rerun, spoof]);
    let spoofed = any_app["check_runs"]
        .as_array()
        .expect("runs")
        .iter()
        .find(|r| r["id"] == spoof)
        .cloned()
        .expect("spoof");
    assert_eq!(spoofed["app"]["id"], 999, "apps are told apart by app.id");

    let by_branch = list(&gh, "main", &[("filter", "all")]).await;
    assert_eq!(
        ids(&by_branch),
        vec![green, rerun, spoof, lint],
        "a branch name resolves to its head sha"
    );
    fake.assert_conformant();
}

#[tokio::test]
async fn check_runs_page_through_to_total_count() {
    let (fake, inst) = setup();
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    for i in 0..25 {
        fake.add_check_run(OWNER, REPO, CheckRunSpec::new(&format!("job-{i}"), &sha));
    }
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let page3 = list(&gh, &sha, &[("per_page", "10"), ("page", "3")]).await;
    assert_eq!(page3["total_count"], 25);
    assert_eq!(page3["check_runs"].as_array().map(Vec::len), Some(5));
    let req = fake
        .requests_to("GET", "/repos/*/*/commits/*/check-runs")
        .pop()
        .expect("logged");
    assert_eq!(req.query_param("page").as_deref(), Some("3"));

    let typed = gh
        .checks(OWNER, REPO)
        .list_check_runs_for_git_ref(Commitish(sha.clone()))
        .send()
        .await
        .expect("octocrab typed list");
    assert_eq!(typed.total_count, 25);
    assert_eq!(typed.check_runs.len(), 25, "default page size is 30");
    fake.assert_conformant();
}

#[tokio::test]
async fn app_creates_and_completes_its_check_run_and_the_suite_follows() {
    let (fake, inst) = setup();
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let run = gh
        .checks(OWNER, REPO)
        .create_check_run("navin/plan", &sha)
        .status(CheckRunStatus::InProgress)
        .send()
        .await
        .expect("create check run");
    let done = gh
        .checks(OWNER, REPO)
        .update_check_run(run.id)
        .conclusion(CheckRunConclusion::Success)
        .send()
        .await
        .expect("complete check run");
    assert_eq!(done.conclusion.as_deref(), Some("success"));
    assert!(done.completed_at.is_some());
    let stored = fake.check_run(run.id.0).expect("stored");
    assert_eq!(stored.app_id, fake.with_state(|m| m.app.id));
    let suite_id = stored.check_suite_id;
    let suite: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/check-suites/{suite_id}"),
            None::<&()>,
        )
        .await
        .expect("suite");
    assert_eq!(suite["status"], "completed");
    assert_eq!(suite["conclusion"], "success");
    let suites = gh
        .checks(OWNER, REPO)
        .list_check_suites_for_git_ref(Commitish(sha))
        .send()
        .await
        .expect("suites");
    assert_eq!(suites.total_count, 1);
    fake.assert_conformant();
}

#[tokio::test]
async fn only_the_creating_app_may_update_a_check_run() {
    let (fake, inst) = setup();
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let navin = token_client(&fake, &fake.mint_installation_token(inst));
    let run = navin
        .checks(OWNER, REPO)
        .create_check_run("navin/plan", &sha)
        .send()
        .await
        .expect("create");
    let actions = token_client(
        &fake,
        &fake.actions_token(OWNER, REPO, &[("checks", "write")]),
    );
    let err = actions
        .checks(OWNER, REPO)
        .update_check_run(run.id)
        .conclusion(CheckRunConclusion::Success)
        .send()
        .await
        .expect_err("another app");
    assert_eq!(status_of(&err), Some(403));
    let own = actions
        .checks(OWNER, REPO)
        .create_check_run("test", &sha)
        .send()
        .await
        .expect("actions run");
    assert_eq!(
        fake.check_run(own.id.0).map(|r| r.app_id),
        Some(GITHUB_ACTIONS_APP_ID)
    );
    fake.assert_conformant();
}

#[tokio::test]
async fn completing_without_a_conclusion_is_refused() {
    let (fake, inst) = setup();
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let err = gh
        .checks(OWNER, REPO)
        .create_check_run("x", &sha)
        .status(CheckRunStatus::Completed)
        .send()
        .await
        .expect_err("no conclusion");
    assert_eq!(status_of(&err), Some(422));
    fake.assert_conformant();
}

#[tokio::test]
async fn check_run_buttons_are_stored_replaced_and_cleared_within_githubs_limits() {
    let (fake, inst) = setup();
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let button =
        |id: &str| json!({"label": "Approve plan", "description": "Approve it", "identifier": id});
    let created: Value = gh
        .post(
            format!("/repos/{OWNER}/{REPO}/check-runs"),
            Some(&json!({"name": "navin/plan", "head_sha": sha, "actions": [button("approve-1")]})),
        )
        .await
        .expect("create with a button");
    let id = created["id"].as_u64().expect("id");
    assert!(
        created.get("actions").is_none(),
        "GitHub does not return actions"
    );
    let stored = |fake: &navin_e2e::FakeGitHub| fake.check_run(id).expect("run").actions;
    assert_eq!(stored(&fake), [button("approve-1")]);
    let route = format!("/repos/{OWNER}/{REPO}/check-runs/{id}");
    // An update without `actions` keeps them; one with a list replaces them.
    let _: Value = gh
        .patch(
            &route,
            Some(&json!({"output": {"title": "t", "summary": "s"}})),
        )
        .await
        .expect("update");
    assert_eq!(stored(&fake), [button("approve-1")]);
    let _: Value = gh
        .patch(&route, Some(&json!({"actions": []})))
        .await
        .expect("clear");
    assert!(stored(&fake).is_empty());
    assert_eq!(
        fake.check_run(id).expect("run").shown_identifiers,
        ["approve-1"]
    );
    assert!(fake.conformance_violations().is_empty());

    // Past GitHub's limits: 422, nothing stored, and GitHub's description agrees.
    let too_long =
        json!({"label": "A label of more than twenty", "description": "d", "identifier": "x"});
    let no_identifier = json!({"label": "l", "description": "d"});
    let four = json!([button("a"), button("b"), button("c"), button("d")]);
    for actions in [json!([too_long]), json!([no_identifier]), four] {
        let err = gh
            .patch::<Value, _, _>(&route, Some(&json!({"actions": actions})))
            .await
            .expect_err("over the limits");
        assert_eq!(status_of(&err), Some(422), "{actions}");
        assert!(stored(&fake).is_empty(), "{actions}");
    }
    let flagged = fake.conformance_violations();
    assert_eq!(flagged.len(), 3, "{flagged:#?}");
    assert!(flagged
        .iter()
        .all(|v| v.kind == navin_e2e::conformance::ViolationKind::InvalidBody));
}
