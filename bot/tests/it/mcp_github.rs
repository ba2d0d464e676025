//! `navin mcp` inside a GitHub Actions job, against the fake GitHub: the job's token, the
//! ledger branch fetched from and pushed to the repository, and `board_done` judging a
//! step by the check runs on its linked head, read from the REST API as the engine does.

use navin_e2e::fake::{CheckRunSpec, GITHUB_ACTIONS_APP_ID};
use navin_ledger::model::{Actor, EvidenceKind, MissionStatus, PauseReason, TaskStatus};
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
async fn board_done_in_an_actions_job_proves_a_step_only_once_merged_with_green_checks_and_navin_records_it(
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
    let (work, env) = agent_job(
        &w,
        &[
            ("contents", "write"),
            ("checks", "read"),
            ("pull_requests", "read"),
        ],
    );
    let checkout = work.path().join("repo");
    // The agent edits its checkout's config to close steps on green: not the policy.
    std::fs::create_dir_all(checkout.join(".github")).expect("mkdir");
    std::fs::write(
        checkout.join(".github/navin.yml"),
        "evidence:\n  done_on: green\n",
    )
    .expect("write");
    let dir = checkout.clone();
    let (red, unmerged, green, unlinked) = {
        let fake = w.fake().clone();
        let head = head.clone();
        tokio::task::spawn_blocking(move || {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
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
    // The job holds no key to the App's seal, so it records nothing itself: a step
    // closed by an agent's job would be refused as forged. Navin records it from
    // GitHub's merge event.
    let said = green["content"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("CI proves S1 done"), "{green}");
    assert_eq!(green["structuredContent"]["recorded"], false, "{green}");
    assert_eq!(
        w.step("S1").status,
        TaskStatus::InProgress,
        "not recorded by the job"
    );
    w.merge(pr).await;
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

/// An agent job's checkout of the fake repository and the environment
/// navin-agent.yml gives `navin mcp` (a token with `permissions`).
fn agent_job(
    w: &World,
    permissions: &[(&str, &str)],
) -> (tempfile::TempDir, Vec<(String, String)>) {
    let token = w.fake().actions_token(OWNER, REPO, permissions);
    let work = tempfile::tempdir().expect("tmp");
    let url = w.fake().git_remote_url_with_token(OWNER, REPO, &token);
    git(work.path(), &["clone", "--quiet", &url, "repo"]);
    git(
        &work.path().join("repo"),
        &[
            "remote",
            "set-url",
            "origin",
            &w.fake().git_remote_url(OWNER, REPO),
        ],
    );
    let env = vec![
        ("GITHUB_ACTIONS".to_owned(), "true".to_owned()),
        ("GITHUB_REPOSITORY".to_owned(), format!("{OWNER}/{REPO}")),
        ("GITHUB_API_URL".to_owned(), w.fake().base_url().to_owned()),
        ("GITHUB_TOKEN".to_owned(), token.clone()),
        ("NAVIN_GIT_TOKEN".to_owned(), token),
    ];
    (work, env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_in_an_actions_job_asks_on_the_issue_once_and_a_writers_answer_resumes_the_mission(
) {
    let mut w = World::new().await;
    let issue = w.issue("Locales", "Ship locales.");
    let mission = "/mission ship locales\n/step add S1 \"Locale files\"";
    w.comment(issue, "alice", mission).await;
    w.reply().await;
    let (work, env) = agent_job(
        &w,
        &[
            ("contents", "write"),
            ("issues", "write"),
            ("checks", "read"),
        ],
    );
    let question = "Which locale ships first, en-GB or de-DE?";
    let dir = work.path().join("repo");
    let (asked, again, fact, resumed) = tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut mcp = McpClient::start(
            &dir,
            &["--mode", "agent", "--remote", "origin"],
            &env,
            "claude-code",
        );
        let ask = json!({ "question": question, "step": "S1", "op_id": "locale-q" });
        let asked = mcp.call_tool("ask_user", ask.clone());
        // The client retries the call (its connection dropped): nothing twice.
        let again = mcp.call_tool("ask_user", ask);
        let fact = mcp.call_tool(
            "ledger_update",
            json!({ "add_facts": ["en-GB ships first"], "reason": "seems likely" }),
        );
        let resumed = mcp.call_tool("ledger_resume", json!({ "note": "guessed it" }));
        mcp.kill();
        (asked, again, fact, resumed)
    })
    .await
    .expect("the agent job ran");

    assert_eq!(error_code(&asked), None, "{asked}");
    assert_eq!(
        asked["structuredContent"]["posted_on_issue"], true,
        "{asked}"
    );
    assert_eq!(
        again["structuredContent"]["already_applied"], true,
        "{again}"
    );
    let posted: Vec<String> = w
        .fake()
        .comments(OWNER, REPO, issue)
        .into_iter()
        .map(|c| c.body)
        .filter(|b| b.contains("asks a question"))
        .collect();
    assert_eq!(posted.len(), 1, "the question is posted once: {posted:?}");
    let posted = w.reply().await;
    assert!(posted.contains(question), "{posted}");
    assert!(posted.contains("`/answer 1 <text>`"), "{posted}");

    // Only people write facts and resume a question's pause.
    assert_eq!(error_code(&fact).as_deref(), Some("agent_update"), "{fact}");
    assert_eq!(
        error_code(&resumed).as_deref(),
        Some("resume_needs_human"),
        "{resumed}"
    );
    let ledger = w.ledger().expect("ledger");
    assert_eq!(ledger.mission.status, MissionStatus::Paused);
    assert_eq!(ledger.mission.pause_reason, Some(PauseReason::Human));
    assert_eq!(ledger.mission.missing_info, vec![question.to_owned()]);
    assert!(
        ledger.mission.facts.is_empty(),
        "{:?}",
        ledger.mission.facts
    );

    // A writer answers on GitHub: the answer is a fact and the mission goes on.
    w.comment(issue, "alice", "/answer 1 en-GB first").await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(
        ledger.mission.status,
        MissionStatus::Running,
        "{:?}",
        ledger.mission.history.last()
    );
    assert!(ledger.mission.missing_info.is_empty());
    assert!(
        ledger
            .mission
            .facts
            .iter()
            .any(|f| f.contains("en-GB first")),
        "{:?}",
        ledger.mission.facts
    );
    w.finish().await;
}
