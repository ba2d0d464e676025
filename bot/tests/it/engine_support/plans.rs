//! Helpers shared by the plan tests: a writer's PR, the `navin/plan` check runs on a head,
//! the plan record on the ledger branch, and `/plan` on a PR.

use navin_e2e::fake::model::CheckRun;
use navin_e2e::fake::{wait_until, PullSpec};
use navin_e2e::{FakeGitHub, Scenario};

use super::*;

/// carol (writer) opens a PR changing one file.
pub async fn open_pr(sc: &Scenario, files: &[(&str, &str)], body: &str) -> u64 {
    let fake = sc.fake();
    fake.set_role(OWNER, REPO, "carol", "write");
    let mut spec = PullSpec::new("feature/greeting")
        .author("carol")
        .title("Configurable greeting")
        .body(body);
    for (path, content) in files {
        spec = spec.file(path, content);
    }
    let (number, _) = sc.open_pull(OWNER, REPO, spec).await;
    number
}

pub fn one_file() -> Vec<(&'static str, &'static str)> {
    vec![(
        "src/greet.rs",
        "pub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
    )]
}

pub fn plan_runs(fake: &FakeGitHub, sha: &str) -> Vec<CheckRun> {
    fake.check_runs(OWNER, REPO)
        .into_iter()
        .filter(|r| r.name == "navin/plan" && r.head_sha == sha)
        .collect()
}

/// Waits until the head's single `navin/plan` run satisfies `ok`, and returns it.
pub async fn wait_check(fake: &FakeGitHub, sha: &str, ok: impl Fn(&CheckRun) -> bool) -> CheckRun {
    let found = wait_until(WAIT, || {
        let runs = plan_runs(fake, sha);
        runs.len() == 1 && ok(&runs[0])
    })
    .await;
    let runs = plan_runs(fake, sha);
    assert!(found, "navin/plan on {sha} never got there: {runs:#?}");
    runs[0].clone()
}

pub fn summary(run: &CheckRun) -> String {
    run.output["summary"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub fn record(fake: &FakeGitHub, id: &str) -> serde_json::Value {
    let text = ledger_git(
        fake,
        &["show", &format!("navin/ledger:.navin/plans/{id}.json")],
    )
    .unwrap_or_else(|| panic!("no record {id}"));
    serde_json::from_str(&text).unwrap()
}

/// alice asks for a plan on the PR; returns the head SHA once the plan comment and the
/// `action_required` check are there.
pub async fn plan_on_pr(sc: &mut Scenario, number: u64) -> String {
    let fake = sc.fake().clone();
    fake.clear_requests();
    let (c, _) = sc
        .comment(
            OWNER,
            REPO,
            number,
            "alice",
            "/plan make the greeting configurable",
        )
        .await;
    let plan = sc.next_comment().await;
    assert!(
        plan.body
            .starts_with(&format!("<!-- navin:plan id=pr-{number} ")),
        "{}",
        plan.body
    );
    reacted(&fake, c, "+1").await;
    let head = fake.pull(OWNER, REPO, number).head_sha;
    wait_check(&fake, &head, |r| {
        r.conclusion.as_deref() == Some("action_required")
    })
    .await;
    count_requests(&fake, "/plan on a PR (+ check run)");
    head
}

pub fn approved(r: &CheckRun) -> bool {
    r.conclusion.as_deref() == Some("success")
}

pub fn waiting(r: &CheckRun) -> bool {
    r.conclusion.as_deref() == Some("action_required")
}
