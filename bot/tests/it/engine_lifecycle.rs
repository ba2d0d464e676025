//! The whole lifecycle on GitHub, end to end against the fake: `/plan` on a pull request,
//! a review approval, `/mission` from the approved plan, one linked pull request per
//! step with green CI, steps done in dependency order, the mission closed as done, and
//! the ledger branch read with plain git at every stage.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::engine_support;

use engine_support::*;
use navin_e2e::fake::{wait_until, CheckRunSpec, PullSpec};
use navin_e2e::FakeGitHub;
use serde_json::Value;

fn board(fake: &FakeGitHub) -> Value {
    let text = ledger_git(fake, &["show", "navin/ledger:.navin/board/board.json"])
        .expect("board.json on the ledger branch");
    serde_json::from_str(&text).unwrap()
}

fn plan_record(fake: &FakeGitHub, id: &str) -> Value {
    let text = ledger_git(
        fake,
        &["show", &format!("navin/ledger:.navin/plans/{id}.json")],
    )
    .unwrap_or_else(|| panic!("no plan record {id}"));
    serde_json::from_str(&text).unwrap()
}

fn status_of(fake: &FakeGitHub, step: &str) -> String {
    board(fake)["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == step)
        .map(|t| t["status"].as_str().unwrap().to_owned())
        .unwrap_or_default()
}

fn plan_check(fake: &FakeGitHub, sha: &str) -> Option<String> {
    fake.check_runs(OWNER, REPO)
        .into_iter()
        .rev()
        .find(|r| r.name == "navin/plan" && r.head_sha == sha)
        .and_then(|r| r.conclusion)
}

/// Steps in the order the ledger branch's commits marked them done (plain `git log`).
fn done_order(fake: &FakeGitHub) -> Vec<String> {
    let log = ledger_git(
        fake,
        &[
            "log",
            "--reverse",
            "--format=%s%x09%(trailers:key=Navin-Step,valueonly,separator=)",
            "navin/ledger",
        ],
    )
    .unwrap();
    log.lines()
        .filter(|l| l.starts_with("navin: done "))
        .filter_map(|l| l.split('\t').nth(1).map(|s| s.trim().to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_review_mission_and_green_ci_close_every_step_in_dependency_order() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    fake.set_role(OWNER, REPO, "carol", "write");

    // carol opens the PR that will carry the plan; alice asks Navin for a plan on it.
    let spec = PullSpec::new("feature/greeting")
        .author("carol")
        .title("Configurable greeting")
        .body("Let callers choose the greeting.")
        .file(
            "src/greet.rs",
            "pub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
        );
    let (pr, sent) = sc.open_pull(OWNER, REPO, spec).await;
    processed(&server, &sent.guid).await;
    let plan_head = fake.pull(OWNER, REPO, pr).head_sha;
    let (c1, _) = sc
        .comment(
            OWNER,
            REPO,
            pr,
            "alice",
            "/plan make the greeting configurable",
        )
        .await;
    let plan = sc.next_comment().await;
    assert!(
        plan.body
            .starts_with(&format!("<!-- navin:plan id=pr-{pr} ")),
        "{}",
        plan.body
    );
    reacted(&fake, c1, "+1").await;
    let plan_id = format!("pr-{pr}");
    assert_eq!(plan_record(&fake, &plan_id)["status"], "pending");
    assert!(
        wait_until(WAIT, || plan_check(&fake, &plan_head).as_deref()
            == Some("action_required"))
        .await,
        "navin/plan is not action_required before the approval"
    );

    // alice (a writer, not the PR's author) approves by review: the plan is approved.
    let (review, sent) = sc.review(OWNER, REPO, pr, "alice", "approved").await;
    processed(&server, &sent.guid).await;
    assert!(
        wait_until(WAIT, || plan_check(&fake, &plan_head).as_deref()
            == Some("success"))
        .await,
        "navin/plan did not turn green after the approval"
    );
    let record = plan_record(&fake, &plan_id);
    assert_eq!(record["status"], "approved", "{record}");
    let approval = record["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["approver"] == "alice")
        .cloned()
        .unwrap_or_else(|| panic!("no approval by alice: {record}"));
    assert_eq!(approval["plan_hash"], record["hash"]);
    assert_eq!(approval["review_id"], review);

    // /mission from the approved plan; a documentation step after the first change.
    let (c2, _) = sc.comment(OWNER, REPO, pr, "alice", "/mission").await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);
    reacted(&fake, c2, "+1").await;
    let mission = mission_json(&fake);
    assert_eq!(mission["status"], "running");
    assert_eq!(mission["origin"]["plan_id"], plan_id);
    let (c3, _) = sc
        .comment(
            OWNER,
            REPO,
            pr,
            "alice",
            "/step add D1 \"Document the option\" --after C1 --validation test",
        )
        .await;
    reacted(&fake, c3, "+1").await;
    let steps: Vec<(String, String)> = board(&fake)["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_owned(),
                t["validation"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(steps.len() >= 2, "{steps:?}");
    assert!(
        steps.iter().all(|(_, v)| v == "test"),
        "every step is proven by CI: {steps:?}"
    );

    // One PR per step, linked by `Navin-Step:`; green CI arrives for the dependent step
    // first, then for the others in reverse order.
    let mut heads = Vec::new();
    for (i, (id, _)) in steps.iter().enumerate() {
        let spec = PullSpec::new(&format!("work/{}", id.to_ascii_lowercase()))
            .author("carol")
            .title(&format!("Step {id}"))
            .body(&format!("Implements the step.\n\nNavin-Step: {id}\n"))
            .file(&format!("notes/{i}.md"), &format!("step {id}\n"));
        let (number, sent) = sc.open_pull(OWNER, REPO, spec).await;
        processed(&server, &sent.guid).await;
        let head = fake.pull(OWNER, REPO, number).head_sha;
        heads.push((id.clone(), head));
    }
    let linked = board(&fake);
    for (id, head) in &heads {
        let task = linked["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| &t["id"] == id)
            .unwrap();
        assert_eq!(
            &task["links"]["head_sha"], head,
            "{id} is linked to its PR's head"
        );
    }
    for (id, head) in heads.iter().rev() {
        let (_, sent) = sc
            .complete_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", head))
            .await;
        processed(&server, &sent.guid).await;
        if id == "D1" {
            assert_eq!(
                status_of(&fake, "D1"),
                "planned",
                "D1 is green but waits for C1"
            );
        }
    }
    assert!(
        wait_until(WAIT, || steps
            .iter()
            .all(|(id, _)| status_of(&fake, id) == "done"))
        .await,
        "not every step is done: {}",
        board(&fake)
    );
    let order = done_order(&fake);
    let pos = |id: &str| order.iter().position(|s| s == id).unwrap();
    assert!(pos("C1") < pos("D1"), "done order {order:?}");
    assert_eq!(order.len(), steps.len(), "each step done once: {order:?}");
    let evidence = &board(&fake)["tasks"][0]["evidence"][0];
    assert_eq!(evidence["name"], "ci/test");
    assert_eq!(evidence["conclusion"], "success");
    assert_eq!(evidence["app_id"], 15368);

    // The mission closes as done; plain git shows it.
    let (c4, _) = sc.comment(OWNER, REPO, pr, "alice", "/mission close").await;
    reacted(&fake, c4, "+1").await;
    assert!(
        wait_until(WAIT, || mission_json(&fake)["status"] == "done").await,
        "{}",
        mission_json(&fake)
    );
    let panel = latest_edit(&fake, "<!-- navin:panel").expect("panel edited");
    assert!(panel.body.contains("done"), "{}", panel.body);
    drop((server, dir));
    sc.finish().await;
}
