//! Dispatch end to end: ready steps get an issue with the sub-agent brief and an agent
//! workflow run, once each, as steps become ready in dependency order.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::engine_support;

use engine_support::*;
use navin_bot::queue::Delivery;
use navin_engine::{Engine, EngineConfig};

const CONFIG: &str = "dispatch:\n  issues: true\n  labels: [navin-step, agent]\n  workflow: agent.yml\nevidence:\n  required_checks:\n    test: [ci/test]\n";

fn step_issues(fake: &navin_e2e::FakeGitHub) -> Vec<(u64, String, String)> {
    let mut out: Vec<(u64, String, String)> = (1..200)
        .filter_map(|n| {
            fake.with_state(|m| {
                m.repo(OWNER, REPO)
                    .and_then(|r| r.issues.get(&n).cloned())
                    .filter(|i| i.labels.iter().any(|l| l == "navin-step"))
                    .map(|i| {
                        (
                            i.number,
                            i.title.clone(),
                            i.body.clone().unwrap_or_default(),
                        )
                    })
            })
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_steps_get_one_brief_issue_and_one_agent_run_each_in_dependency_order() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        data_dir,
    } = world().await;
    let fake = sc.fake().clone();
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[(".github/navin.yml", CONFIG)],
        "dispatch steps",
    );
    fake.add_workflow(OWNER, REPO, "agent.yml", "agent");
    let issue = fake.create_issue(
        OWNER,
        REPO,
        "Ship it",
        "- [ ] Write the parser in src/parse.rs\n- [ ] Write the docs\n",
        "alice",
    );
    let body = "/mission ship the parser";
    let (c1, first) = sc.comment(OWNER, REPO, issue, "alice", body).await;
    let panel = sc.next_comment().await;
    assert!(panel.body.starts_with("<!-- navin:panel"), "{}", panel.body);
    reacted(&fake, c1, "+1").await;

    // Both task-list steps are ready: one issue each, carrying the brief.
    let ok = navin_e2e::fake::wait_until(WAIT, || step_issues(&fake).len() == 2).await;
    assert!(ok, "{:?}", step_issues(&fake));
    let issues = step_issues(&fake);
    let (t1_issue, t1_title, t1_body) = &issues[0];
    assert_eq!(t1_title, "[navin T1] Write the parser in src/parse.rs");
    for field in [
        "### Role",
        "### Goal",
        "### Context paths",
        "### Constraints",
        "### Done when",
        "### Do not",
    ] {
        assert!(t1_body.contains(field), "{field} missing:\n{t1_body}");
    }
    assert!(t1_body.contains("`src/parse.rs`"), "{t1_body}");
    assert!(t1_body.contains("Navin-Step: T1"), "{t1_body}");
    let labels = fake.issue(OWNER, REPO, *t1_issue).labels;
    assert_eq!(labels, ["navin-step", "agent"]);

    // One agent workflow run per dispatched step, on the default branch, with its inputs.
    let ok = navin_e2e::fake::wait_until(WAIT, || fake.dispatches().len() == 2).await;
    assert!(ok, "{:?}", fake.dispatches());
    let runs = fake.dispatches();
    assert!(runs
        .iter()
        .all(|d| d.workflow == "agent.yml" && d.git_ref == "main"));
    let inputs: Vec<(String, String)> = runs
        .iter()
        .map(|d| {
            (
                d.inputs["step"].as_str().unwrap().to_owned(),
                d.inputs["issue"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        inputs.contains(&("T1".to_owned(), t1_issue.to_string())),
        "{inputs:?}"
    );

    // The ledger remembers each step's issue; the panel links the briefs.
    let ok = navin_e2e::fake::wait_until(WAIT, || {
        ledger_git(&fake, &["show", "navin/ledger:.navin/board/board.json"]).is_some_and(|b| {
            b.matches("\"issue\": ").count() >= 2 && !b.contains("\"issue\": null")
        })
    })
    .await;
    assert!(ok, "board.json lacks the step issues");
    // Steps are handed out before the panel is drawn, so the first panel links the briefs.
    assert!(
        panel.body.contains(&format!("brief [#{t1_issue}]")),
        "{}",
        panel.body
    );

    // The same delivery run again (as after a crash) opens no second issue and starts no
    // second agent.
    let payload = sc.comment_payload(OWNER, REPO, issue, "alice", body, c1);
    let delivery = Delivery {
        seq: 1,
        delivery_id: first.guid.clone(),
        event: "issue_comment".into(),
        action: Some("created".into()),
        repository: Some(format!("{OWNER}/{REPO}")),
        installation_id: sc.installation_for(OWNER, REPO),
        headers: Vec::new(),
        body: bytes::Bytes::from(serde_json::to_vec(payload.json()).unwrap()),
        received_at_ms: 0,
        attempt: 2,
    };
    let handler = navin_bot::queue::EngineHandler::new(Engine::new(
        server.github().clone(),
        EngineConfig::new(data_dir),
    ));
    navin_bot::queue::DeliveryHandler::handle(&handler, &delivery)
        .await
        .unwrap();
    assert_eq!(step_issues(&fake).len(), 2);
    assert_eq!(fake.dispatches().len(), 2);

    // A step added after T1 is not ready, so it waits; finishing T1 hands it out.
    let (c2, _) = sc
        .comment(
            OWNER,
            REPO,
            issue,
            "alice",
            "/step add T3 Announce the parser --after T1",
        )
        .await;
    reacted(&fake, c2, "+1").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(step_issues(&fake).len(), 2, "T3 waits for T1");
    let (c3, _) = sc
        .comment(OWNER, REPO, issue, "alice", "/done T1 parser merged")
        .await;
    reacted(&fake, c3, "+1").await;
    let ok = navin_e2e::fake::wait_until(WAIT, || step_issues(&fake).len() == 3).await;
    assert!(ok, "{:?}", step_issues(&fake));
    assert!(step_issues(&fake)[2].1.starts_with("[navin T3]"));
    let ok = navin_e2e::fake::wait_until(WAIT, || fake.dispatches().len() == 3).await;
    assert!(ok);
    drop(dir);
    sc.finish().await;
}
