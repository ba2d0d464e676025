//! The closed agent loop end to end, in the World DSL: a scripted agent answers each
//! workflow dispatch by pushing commits, and Navin starts every next attempt itself
//! (red CI, a closed pull request) until the mission's steps are done.

use navin_e2e::fake::{CheckRunSpec, PullSpec, GITHUB_ACTIONS_APP_ID};
use navin_ledger::model::{AttemptOutcome, TaskStatus};

use crate::world::World;

const CONFIG: &str = "dispatch:\n  agent: workflow\n  workflow: agent.yml\nagents:\n  idle_after: 0\nevidence:\n  done_on: green\n  required_checks:\n    test: [ci/test]\n";

/// The dispatches of `step` so far, as (attempt, issue) in order; the first attempt's
/// dispatch carries no `attempt` input (older agent workflows do not declare it).
fn dispatched(w: &World, step: &str) -> Vec<(u32, u64)> {
    w.fake()
        .dispatches()
        .iter()
        .filter(|d| d.inputs["step"] == step)
        .map(|d| {
            let n = d.inputs["attempt"]
                .as_str()
                .map_or(1, |a| a.parse().expect("attempt is a number"));
            let issue = d.inputs["issue"]
                .as_str()
                .expect("issue")
                .parse()
                .expect("n");
            (n, issue)
        })
        .collect()
}

fn agent_pr(step: &str, attempt: u32) -> PullSpec {
    PullSpec::new(&format!("navin/{}-try{attempt}", step.to_ascii_lowercase()))
        .author("alice")
        .title(&format!("{step}, attempt {attempt}"))
        .body(&format!("Agent work.\n\nNavin-Step: {step}\n"))
        .file(
            &format!("src/{}.rs", step.to_ascii_lowercase()),
            "pub fn f() {}\n",
        )
}

fn red(head: &str, failing: &str) -> CheckRunSpec {
    CheckRunSpec::new("ci/test", head)
        .conclusion("failure")
        .output("1 test failed", &format!("running 4 tests\ntest {failing} ... FAILED\n\nfailures:\n    {failing}: assertion failed: left == right"))
}

/// The comments on issue `number` that start an attempt, oldest first.
fn attempt_comments(w: &World, number: u64) -> Vec<String> {
    w.fake()
        .comments("octo-org", "hello", number)
        .into_iter()
        .map(|c| c.body)
        .filter(|b| b.starts_with("**Attempt "))
        .collect()
}

/// Navin's next comment, which must start attempt `number` of `step`.
/// A word on a red pull request Navin closed as the attempt started over comes first.
async fn next_brief(w: &mut World, step: &str, number: u32) -> String {
    let mut brief = w.reply().await;
    if brief.contains("starts over on a new branch") {
        let closed = format!("Attempt {number} of step `{step}` starts over");
        assert!(brief.starts_with(&closed), "{brief}");
        brief = w.reply().await;
    }
    let head = format!("**Attempt {number} of step `{step}`** starts");
    assert!(brief.starts_with(&head), "{brief}");
    brief
}

/// A running mission with one test step `S1` handed to the agent workflow, under
/// `config`, with Navin's first reply read; returns the mission's issue.
async fn one_step_mission(w: &mut World, config: &str) -> u64 {
    w.commit(&[(".github/navin.yml", config)]);
    w.workflow("agent.yml", "agent");
    let issue = w.issue("Parser", "Ship the parser.");
    w.comment(
        issue,
        "alice",
        "/mission ship\n/step add S1 \"Lexer\" --validation test",
    )
    .await;
    w.reply().await;
    issue
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_step_mission_reaches_done_through_red_ci_and_a_closed_pull_request_with_no_person_acting(
) {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", CONFIG)]);
    w.workflow("agent.yml", "agent");
    let issue = w.issue("Parser", "Ship the parser.");
    let setup = "/mission ship the parser\n\
                 /step add S1 \"Lexer\" --validation test\n\
                 /step add S2 \"Parser\" --after S1 --validation test\n\
                 /step add S3 \"Errors\" --after S1 --validation test\n\
                 /step add S4 \"Docs\" --after S2,S3 --validation test";
    w.comment(issue, "alice", setup).await;
    w.reply().await;
    assert_eq!(dispatched(&w, "S1").len(), 1, "S1 is handed out once");

    // S1: the agent's first pull request is green.
    let (_, head) = w.open_pull(agent_pr("S1", 1)).await;
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    let s2_issue = dispatched(&w, "S2")[0].1;

    // S2 fails CI: Navin starts attempt 2 itself, with the failure in its brief, on a
    // new branch; the red pull request is closed with a word on why.
    let (s2_pr, head) = w.open_pull(agent_pr("S2", 1)).await;
    w.ci_run(red(&head, "parse::empty")).await;
    assert_eq!(
        dispatched(&w, "S2").iter().map(|d| d.0).collect::<Vec<_>>(),
        [1, 2]
    );
    let brief = next_brief(&mut w, "S2", 2).await;
    assert!(brief.contains("parse::empty: assertion failed"), "{brief}");
    assert!(brief.contains(&format!("(#{s2_pr})")), "{brief}");
    assert!(brief.contains("**Start over**"), "{brief}");
    assert_eq!(
        attempt_comments(&w, s2_issue),
        [brief],
        "on the step's issue"
    );
    assert_eq!(w.fake().issue("octo-org", "hello", s2_pr).state, "closed");
    // GitHub tells the App about its own close: that ends nothing more.
    w.close_unmerged(s2_pr).await;
    let s2 = w.step("S2");
    assert!(s2.attempts[1].is_open(), "{:?}", s2.attempts);
    assert_eq!(dispatched(&w, "S2").len(), 2);
    // A green re-run on the closed pull request's head proves nothing now.
    w.ci(&head, "ci/test", "success").await;
    assert_ne!(w.step("S2").status, TaskStatus::Done);

    // Attempt 2's pull request fails differently: attempt 3, again fresh.
    let (_, head) = w.open_pull(agent_pr("S2", 2)).await;
    w.ci_run(red(&head, "parse::unicode")).await;
    assert_eq!(
        dispatched(&w, "S2").iter().map(|d| d.0).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    let brief = next_brief(&mut w, "S2", 3).await;
    assert!(brief.contains("parse::unicode"), "{brief}");
    assert!(
        brief.contains("parse::empty") || brief.matches("fp:").count() == 2,
        "{brief}"
    );
    let (_, head) = w.open_pull(agent_pr("S2", 3)).await;
    w.ci(&head, "ci/test", "success").await;
    let s2 = w.step("S2");
    assert_eq!(s2.status, TaskStatus::Done, "{s2:?}");
    let outcomes: Vec<_> = s2.attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(
        outcomes,
        [
            Some(AttemptOutcome::CiRed),
            Some(AttemptOutcome::CiRed),
            Some(AttemptOutcome::Done)
        ]
    );
    let fingerprints: Vec<_> = s2
        .attempts
        .iter()
        .filter_map(|a| a.failure.as_ref().and_then(|f| f.fingerprint.clone()))
        .collect();
    assert_eq!(fingerprints.len(), 2);
    assert_ne!(fingerprints[0], fingerprints[1], "two different failures");

    // S3's pull request is closed unmerged: attempt 2 starts over in a new one.
    let s3_issue = dispatched(&w, "S3")[0].1;
    let (s3_pr, _) = w.open_pull(agent_pr("S3", 1)).await;
    w.close_unmerged(s3_pr).await;
    assert_eq!(
        dispatched(&w, "S3").iter().map(|d| d.0).collect::<Vec<_>>(),
        [1, 2]
    );
    let brief = next_brief(&mut w, "S3", 2).await;
    assert!(brief.contains("Start over"), "{brief}");
    assert_eq!(attempt_comments(&w, s3_issue).len(), 1);
    let (_, head) = w.open_pull(agent_pr("S3", 2)).await;
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S3").status, TaskStatus::Done);

    // S4 became ready and went to the agent once; green closes it.
    assert_eq!(dispatched(&w, "S4").len(), 1);
    let (_, head) = w.open_pull(agent_pr("S4", 1)).await;
    w.ci(&head, "ci/test", "success").await;
    let ledger = w.ledger().expect("ledger");
    assert!(ledger
        .board
        .tasks
        .iter()
        .all(|t| t.status == TaskStatus::Done));

    // The panel shows the attempts.
    let panel = w.latest("<!-- navin:panel");
    assert!(panel.contains("attempt 3 (workflow)"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_red_ci_event_starts_the_next_attempt_once() {
    let mut w = World::new().await;
    one_step_mission(&mut w, CONFIG).await;
    let (_, head) = w.open_pull(agent_pr("S1", 1)).await;
    let run = w.stored_run(red(&head, "lex::empty"));
    let payload = w
        .payload("check_run.completed")
        .check_run_id(run)
        .check_name("ci/test")
        .head_sha(&head)
        .app_id(GITHUB_ACTIONS_APP_ID)
        .conclusion("failure")
        .set("/check_run/pull_requests", serde_json::json!([]));
    let red_delivery = w.send(&payload).await;
    assert_eq!(dispatched(&w, "S1").len(), 2);
    next_brief(&mut w, "S1", 2).await;
    w.rerun(&red_delivery).await;
    assert_eq!(
        dispatched(&w, "S1").len(),
        2,
        "the same delivery again starts nothing"
    );
    let issue_of_s1 = dispatched(&w, "S1")[0].1;
    assert_eq!(attempt_comments(&w, issue_of_s1).len(), 1);
    w.no_reply().await;
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_default_idle_wait_red_ci_starts_nothing_yet_and_a_push_continues_the_attempt() {
    let mut w = World::new().await;
    let config = CONFIG.replace("agents:\n  idle_after: 0\n", "");
    one_step_mission(&mut w, &config).await;
    let (pr, head) = w.open_pull(agent_pr("S1", 1)).await;
    w.ci_run(red(&head, "lex::empty")).await;
    assert_eq!(
        dispatched(&w, "S1").len(),
        1,
        "20 minutes to push a fix first"
    );
    let head = w.push(pr, &[("src/s1.rs", "pub fn g() {}\n")]).await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress);
    assert_eq!(
        s1.attempts.len(),
        2,
        "the push is the next attempt: {:?}",
        s1.attempts
    );
    assert_eq!(s1.attempts[1].pr, Some(pr));
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    assert_eq!(dispatched(&w, "S1").len(), 1);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_failure_again_and_again_is_a_loop_then_a_replan_then_a_pause_that_starts_nothing()
{
    let mut w = World::new().await;
    let issue = one_step_mission(&mut w, CONFIG).await;

    // Attempt 1 fails; attempts 2 and 3 start over in pull requests of their own and fail
    // the same way.
    let (_, head) = w.open_pull(agent_pr("S1", 1)).await;
    w.ci_run(red(&head, "lex::empty")).await;
    next_brief(&mut w, "S1", 2).await;
    let (_, head) = w.open_pull(agent_pr("S1", 2)).await;
    w.ci_run(red(&head, "lex::empty")).await;
    assert!(w.ledger().expect("ledger").mission.progress.loop_detected);
    next_brief(&mut w, "S1", 3).await;
    let (_, head) = w.open_pull(agent_pr("S1", 3)).await;
    w.ci_run(red(&head, "lex::empty")).await;

    // The third repeat forced a local replan: attempt 4 starts over.
    let ledger = w.ledger().expect("ledger");
    assert_eq!(ledger.mission.progress.replan_count, 1);
    let brief = next_brief(&mut w, "S1", 4).await;
    assert!(brief.contains("Start over"), "{brief}");

    // The same failure once more pauses the mission (loop), and nothing starts.
    let (_, head) = w.open_pull(agent_pr("S1", 4)).await;
    w.ci_run(red(&head, "lex::empty")).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(
        ledger.mission.status,
        navin_ledger::model::MissionStatus::Paused
    );
    assert_eq!(
        ledger.mission.pause_reason,
        Some(navin_ledger::model::PauseReason::Loop)
    );
    assert_eq!(
        dispatched(&w, "S1").len(),
        4,
        "a paused mission starts nothing"
    );
    let attempts = &w.step("S1").attempts;
    assert_eq!(attempts.len(), 4);
    assert_eq!(attempts[3].outcome, Some(AttemptOutcome::Paused));

    // /resume starts the attempt the pause cut off.
    w.comment(issue, "alice", "/resume").await;
    let brief = next_brief(&mut w, "S1", 5).await;
    assert!(brief.contains("cut off by a pause"), "{brief}");
    assert_eq!(dispatched(&w, "S1").len(), 5);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_opens_no_pull_request_in_time_gets_its_next_attempt_from_the_servers_clock()
{
    let mut w = World::with_sweeps(1).await;
    let config = CONFIG.replace("idle_after: 0\n", "idle_after: 0\n  timeout: 2s\n");
    one_step_mission(&mut w, &config).await;
    assert_eq!(dispatched(&w, "S1").len(), 1);

    // Nobody acts: no webhook arrives, and the tick after the timeout ends attempt 1 and
    // starts attempt 2 (in a fresh pull request).
    let brief = next_brief(&mut w, "S1", 2).await;
    assert!(brief.contains("no pull request in time"), "{brief}");
    assert!(brief.contains("Start over"), "{brief}");
    // The tick's delivery goes on after the comment: the dispatch follows it.
    let two = navin_e2e::fake::wait_until(std::time::Duration::from_secs(10), || {
        dispatched(&w, "S1").len() == 2
    })
    .await;
    assert!(two, "{:?}", dispatched(&w, "S1"));
    assert_eq!(
        dispatched(&w, "S1").iter().map(|d| d.0).collect::<Vec<_>>(),
        [1, 2]
    );
    let s1 = w.step("S1");
    assert_eq!(s1.attempts[0].outcome, Some(AttemptOutcome::TimedOut));
    assert_eq!(s1.retry_count, 1, "a timeout is a failed attempt");
    // Attempt 2 opens its pull request in time and CI proves it: the clock adds nothing.
    let (_, head) = w.open_pull(agent_pr("S1", 2)).await;
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(dispatched(&w, "S1").len(), 2);
    w.finish().await;
}

/// What the agent workflow's `usage` job does after an agent run: debits `cost_usd` on
/// the ledger branch with the job's token, keyed by `run` (Navin hears no webhook).
fn usage_job(w: &World, step: &str, run: &str, cost_usd: f64) {
    use navin_ledger::ops::{Ctx, Operation};
    use navin_ledger::store::{Store, StoreConfig};
    let token = w
        .fake()
        .actions_token("octo-org", "hello", &[("contents", "write")]);
    let dir = tempfile::tempdir().expect("tmp");
    let repo = git2::Repository::init_bare(dir.path()).expect("init");
    repo.remote("origin", &w.fake().git_remote_url("octo-org", "hello"))
        .expect("remote");
    let store = Store::open(
        dir.path(),
        StoreConfig {
            branch: "navin/ledger".into(),
            remote: Some("origin".into()),
            token: Some(token),
            // The Action job's `ledger-key`: the same key as the App's.
            seal_key: w.ledger_key(),
            repository: w.seal_repository(),
            ..StoreConfig::default()
        },
    )
    .expect("store");
    let op = Operation::Usage {
        step: step.into(),
        tokens: 20_000,
        cost_usd,
    };
    let ctx = Ctx::new(chrono::Utc::now(), navin_ledger::Actor::App("navin".into()))
        .with_op_id(format!("usage#{step}#{run}"));
    store.transact(&op, &ctx).expect("the usage job debits");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cost_cap_pauses_the_mission_after_the_second_attempt_and_nothing_more_starts() {
    let mut w = World::with_sweeps(1).await;
    let config = format!("{CONFIG}budgets:\n  max_cost_usd: 1.00\n");
    one_step_mission(&mut w, &config).await;

    // Attempt 1 costs $0.60 and fails: attempt 2 starts.
    let (_, head) = w.open_pull(agent_pr("S1", 1)).await;
    usage_job(&w, "S1", "run-1", 0.60);
    w.ci_run(red(&head, "lex::empty")).await;
    next_brief(&mut w, "S1", 2).await;
    assert_eq!(dispatched(&w, "S1").len(), 2);

    // Attempt 2 costs $0.55: over the cap, the mission pauses (budget).
    let (_, head) = w.open_pull(agent_pr("S1", 2)).await;
    usage_job(&w, "S1", "run-2", 0.55);
    let ledger = w.ledger().expect("ledger");
    assert_eq!(
        ledger.mission.status,
        navin_ledger::model::MissionStatus::Paused
    );
    assert_eq!(
        ledger.mission.pause_reason,
        Some(navin_ledger::model::PauseReason::Budget)
    );
    // Its CI fails too, and the clock ticks: a paused mission starts nothing.
    w.ci_run(red(&head, "lex::unicode")).await;
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(
        dispatched(&w, "S1").len(),
        2,
        "no third attempt while paused"
    );
    let s1 = w.step("S1");
    assert_eq!(s1.attempts.len(), 2, "{:?}", s1.attempts);
    assert!((s1.attempts[0].cost_usd - 0.60).abs() < 1e-9);
    assert!((s1.attempts[1].cost_usd - 0.55).abs() < 1e-9);
    assert_eq!(s1.attempts[1].outcome, Some(AttemptOutcome::Paused));
    // The panel shows the pause and the spend against the cap.
    let panel = w.latest("<!-- navin:panel");
    assert!(panel.contains("paused: budget"), "{panel}");
    assert!(panel.contains("$1.15/$1.00"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_continues_a_red_pull_request_from_a_mention_and_is_reassigned_after_a_closed_one()
{
    let mut w = World::with_agent_token("dora").await;
    let config = CONFIG.replace(
        "  agent: workflow\n  workflow: agent.yml\n",
        "  agent: copilot\n",
    );
    one_step_mission(&mut w, &config).await;
    let step_issue = w.issues("navin-step")[0].number;
    let sessions = |w: &World| {
        w.fake()
            .issue("octo-org", "hello", step_issue)
            .copilot_sessions
    };
    assert_eq!(sessions(&w), 1, "Copilot starts on the step's issue");

    // Red CI on Copilot's pull request: a mention on it carries the failure, posted with
    // the user token (dora, a writer), since Copilot ignores an App's mention.
    let (pr, head) = w.open_pull(agent_pr("S1", 1)).await;
    w.ci_run(red(&head, "lex::empty")).await;
    let on_pr: Vec<_> = w
        .fake()
        .comments("octo-org", "hello", pr)
        .into_iter()
        .filter(|c| c.body.starts_with("@copilot"))
        .collect();
    assert_eq!(on_pr.len(), 1, "on the pull request, once: {on_pr:?}");
    let mention = &on_pr[0].body;
    assert!(
        mention.starts_with("@copilot **Attempt 2 of step `S1`**"),
        "{mention}"
    );
    assert!(mention.contains("lex::empty"), "{mention}");
    assert_eq!(on_pr[0].author, "dora", "posted as the agent token's user");
    let pr_sessions = w.fake().issue("octo-org", "hello", pr).copilot_sessions;
    assert_eq!(
        pr_sessions, 1,
        "Copilot took the mention up on its pull request"
    );
    assert_eq!(sessions(&w), 1, "the same session goes on");

    // The pull request is closed unmerged: Copilot is unassigned and assigned again,
    // which starts a new session on the issue with the brief.
    w.close_unmerged(pr).await;
    let brief = next_brief(&mut w, "S1", 3).await;
    assert!(brief.contains("Start over"), "{brief}");
    assert_eq!(sessions(&w), 2, "a new Copilot session");
    assert_eq!(w.fake().count("DELETE", "/repos/*/*/issues/*/assignees"), 1);
    assert_eq!(
        w.fake().issue("octo-org", "hello", step_issue).assignees,
        ["Copilot"]
    );
    let s1 = w.step("S1");
    assert_eq!(s1.attempts.len(), 3, "{:?}", s1.attempts);
    assert!(
        s1.attempts[..2].iter().all(|a| a.spend_unreported),
        "Copilot reports no spend: {:?}",
        s1.attempts
    );
    w.finish().await;
}
