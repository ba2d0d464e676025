//! `navin mcp` inside a GitHub Actions job, against the fake GitHub: the job's token, the
//! ledger branch fetched from and pushed to the repository, and `board_done` judging a
//! step by the check runs on its linked head, read from the REST API as the engine does.

use navin_e2e::fake::{CheckRunSpec, GITHUB_ACTIONS_APP_ID};
use navin_ledger::model::{Actor, EvidenceKind, TaskStatus};
use serde_json::{json, Value};

use crate::agents::git;
use crate::engine_support::{OWNER, REPO};
use crate::mcp_support::McpClient;
use crate::world::World;

fn error_code(result: &Value) -> Option<String> {
    (result["isError"] == true).then(|| {
        result
            .pointer("/structuredContent/error/code")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn board_done_in_an_actions_job_closes_a_step_only_when_its_pull_request_is_merged_with_green_checks(
) {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make greetings configurable.");
    let mission = "/mission configurable greetings\n\
                   /step add S1 \"Configurable greeting\" --validation test\n\
                   /step add S2 \"Farewell\" --after S1 --validation test";
    w.comment(issue, "alice", mission).await;
    w.reply().await;
    let (pr, head) = w.open_pr("S1", "navin/S1-greeting").await;
    // CI failed on the head; GitHub has the run, whatever became of its webhook.
    w.stored_run(CheckRunSpec::new("ci/test", &head).conclusion("failure"));

    // The agent job: the repository checked out with the job's token, `navin mcp`
    // configured as navin-agent.yml writes it.
    let token = w.fake().actions_token(
        OWNER,
        REPO,
        &[
            ("contents", "write"),
            ("checks", "read"),
            ("pull_requests", "read"),
        ],
    );
    let work = tempfile::tempdir().expect("tmp");
    let checkout = work.path().join("repo");
    let url = w.fake().git_remote_url_with_token(OWNER, REPO, &token);
    git(work.path(), &["clone", "--quiet", &url, "repo"]);
    git(
        &checkout,
        &[
            "remote",
            "set-url",
            "origin",
            &w.fake().git_remote_url(OWNER, REPO),
        ],
    );
    // The agent edits its checkout's config to close steps on green: not the policy.
    std::fs::create_dir_all(checkout.join(".github")).expect("mkdir");
    std::fs::write(
        checkout.join(".github/navin.yml"),
        "evidence:\n  done_on: green\n",
    )
    .expect("write");
    let api = w.fake().base_url().to_owned();
    let repository = format!("{OWNER}/{REPO}");

    let dir = checkout.clone();
    let (red, unmerged, green, unlinked) = {
        let token = token.clone();
        let fake = w.fake().clone();
        let head = head.clone();
        tokio::task::spawn_blocking(move || {
            let env = [
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_REPOSITORY", repository.as_str()),
                ("GITHUB_API_URL", api.as_str()),
                ("GITHUB_TOKEN", token.as_str()),
                ("NAVIN_GIT_TOKEN", token.as_str()),
            ];
            let mut mcp = McpClient::start(
                &dir,
                &["--mode", "agent", "--remote", "origin"],
                &env,
                "claude-code",
            );
            let red = mcp.call_tool("board_done", json!({ "step": "S1" }));
            // CI is re-run and passes: again only on GitHub, no webhook needed.
            fake.add_check_run(
                OWNER,
                REPO,
                CheckRunSpec::new("ci/test", &head).conclusion("success"),
            );
            let unmerged = mcp.call_tool("board_done", json!({ "step": "S1" }));
            // Merged on GitHub; the ledger has not heard of it: board_done asks the PR.
            fake.close(OWNER, REPO, pr, true);
            let green = mcp.call_tool("board_done", json!({ "step": "S1" }));
            let unlinked = mcp.call_tool("board_done", json!({ "step": "S2" }));
            mcp.kill();
            (red, unmerged, green, unlinked)
        })
        .await
        .expect("the agent job ran")
    };

    assert_eq!(error_code(&red).as_deref(), Some("checks_failed"), "{red}");
    let text = red["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("ci/test"),
        "the refusal names the failing check: {text}"
    );

    assert_eq!(
        error_code(&unmerged).as_deref(),
        Some("not_done_yet"),
        "{unmerged}"
    );
    let text = unmerged["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("merged"),
        "the refusal says it waits for the merge: {text}"
    );

    assert_eq!(error_code(&green), None, "{green}");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    let proof = s1
        .evidence
        .iter()
        .find(|e| e.ok && e.kind == EvidenceKind::CheckRun)
        .unwrap_or_else(|| panic!("no green check-run evidence on S1: {s1:?}"));
    assert_eq!(proof.name.as_deref(), Some("ci/test"));
    assert_eq!(proof.app_id, Some(GITHUB_ACTIONS_APP_ID));
    assert!(w.called("GET", &format!("/commits/{head}/check-runs")));
    let ledger = w.ledger().expect("ledger");
    let closing = ledger
        .mission
        .history
        .iter()
        .rev()
        .find(|h| h.reason.contains("S1"))
        .expect("a history entry for S1");
    assert_eq!(
        closing.actor,
        Actor::App("navin".to_owned()),
        "Navin records what CI proved, not the agent: {closing:?}"
    );
    assert_eq!(w.step("S2").status, TaskStatus::Planned);
    assert!(ledger.ready().iter().any(|t| t.id == "S2"));

    assert_eq!(
        error_code(&unlinked).as_deref(),
        Some("no_linked_pr"),
        "{unlinked}"
    );
    w.finish().await;
}
