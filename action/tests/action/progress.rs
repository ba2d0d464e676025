//! `mode: progress`: an agent job's usage debited against the mission's budget; past a
//! cap the mission pauses and nothing more is handed out.

use chrono::Utc;
use navin_ledger::model::{Budget, MissionStatus, PauseReason, Validation};
use navin_ledger::ops::{Ctx, InitArgs, NewTask, Operation};
use navin_ledger::Actor;

use crate::harness::Job;

/// A running mission with one test step, S1, capped at 1,000 tokens (as
/// `budgets.max_tokens` caps a mission when it starts).
fn capped_mission(job: &Job) {
    mission_on(job, 1000, None);
}

fn report(job: &Job, run_id: &str, tokens: &str, cost: &str) -> crate::harness::RunResult {
    job.run_with(
        "progress",
        "workflow_dispatch",
        None,
        Some(&job.token),
        &[
            ("INPUT_STEP", "S1"),
            ("INPUT_TOKENS", tokens),
            ("INPUT_COST_USD", cost),
            ("GITHUB_RUN_ID", run_id),
        ],
    )
}

#[test]
fn usage_is_debited_once_per_run_and_a_token_cap_pauses_the_mission() {
    let job = Job::new();
    capped_mission(&job);

    let r = report(&job, "501", "600", "0.40");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "600");
    assert_eq!(r.outputs["cost-used-usd"], "0.40");
    assert_eq!(r.outputs["mission-status"], "running");

    // The same run's report again (a retried push): nothing more is debited.
    let r = report(&job, "501", "600", "0.40");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "600");

    let r = report(&job, "502", "600", "$0.35");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["mission-status"], "paused");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.status, MissionStatus::Paused);
    assert_eq!(ledger.mission.pause_reason, Some(PauseReason::Budget));
    assert_eq!(ledger.mission.progress.tokens_used, 1200);
    assert!(
        r.outputs["digest"].contains("PAUSED"),
        "{}",
        r.outputs["digest"]
    );
    // A paused mission hands nothing out.
    let r = job.run("ready-matrix", "workflow_dispatch", None, Some(&job.token));
    assert_eq!(r.outputs["ready-steps"], "[]", "{r:?}");
}

#[test]
fn bad_usage_inputs_are_refused_naming_the_input_and_change_nothing() {
    let job = Job::new();
    let seeded = job.seed(None);
    for (tokens, cost, named) in [
        ("lots", "0", "`tokens`"),
        ("10", "-1", "`cost-usd`"),
        ("10", "NaN", "`cost-usd`"),
    ] {
        let r = report(&job, "601", tokens, cost);
        assert_eq!(r.code, Some(1), "{r:?}");
        assert!(r.stdout.contains(named), "{}", r.stdout);
    }
    let r = job.run_with(
        "progress",
        "workflow_dispatch",
        None,
        Some(&job.token),
        &[("INPUT_STEP", "S9"), ("INPUT_TOKENS", "1")],
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("no step \"S9\""), "{}", r.stdout);
    assert_eq!(
        job.ledger().expect("ledger").mission.version,
        seeded.mission.version
    );
}

/// `capped_mission` with its cap at `max_tokens` and S1 taken up (attempt 1 open).
fn started_mission(job: &Job, max_tokens: u64) {
    started_mission_on(job, max_tokens, None);
}

/// [`started_mission`], its panel on `issue` when given.
fn started_mission_on(job: &Job, max_tokens: u64, issue: Option<u64>) {
    mission_on(job, max_tokens, issue);
    let (store, _dir) = job.store();
    let ctx = Ctx::new(Utc::now(), Actor::Human("octocat".into()));
    let start = Operation::Start { step: "S1".into() };
    store.transact(&start, &ctx).expect("S1 started");
}

/// A running mission with one test step, S1, capped at `max_tokens`; its panel on
/// `issue` when given.
fn mission_on(job: &Job, max_tokens: u64, issue: Option<u64>) {
    let (store, _dir) = job.store();
    let ctx = Ctx::new(Utc::now(), Actor::Human("octocat".into()));
    let init = Operation::Init(InitArgs {
        goal: "Ship the widget API".into(),
        steps: vec![NewTask {
            id: "S1".into(),
            title: "Widget API".into(),
            validation: Validation::Test,
            ..NewTask::default()
        }],
        budget: Some(Budget {
            max_tokens: Some(max_tokens),
            ..Budget::default()
        }),
        origin: issue.map(|n| navin_ledger::model::Origin {
            repository: Some("octo-org/hello".into()),
            issue: Some(n),
            plan_id: None,
        }),
        ..InitArgs::default()
    });
    store.transact(&init, &ctx).expect("a capped mission");
}

/// The agent job's artifact file `name` with `text`, as the usage job downloads it.
fn artifact(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write the artifact file");
    path.to_string_lossy().into_owned()
}

fn report_file(
    job: &Job,
    run_id: &str,
    attempt: &str,
    extra: &[(&str, &str)],
) -> crate::harness::RunResult {
    let mut vars = vec![
        ("INPUT_STEP", "S1"),
        ("GITHUB_RUN_ID", run_id),
        ("GITHUB_RUN_ATTEMPT", attempt),
    ];
    vars.extend_from_slice(extra);
    job.run_with(
        "progress",
        "workflow_dispatch",
        None,
        Some(&job.token),
        &vars,
    )
}

#[test]
fn claude_and_codex_reports_are_debited_once_each_and_the_cap_fires_for_real() {
    let job = Job::new();
    let files = tempfile::tempdir().expect("tmp");
    started_mission(&job, 10_000);
    // claude-code-action's execution file: the stream's messages ending in a result.
    let claude = artifact(
        &files,
        "execution.json",
        r#"[{"type":"system","subtype":"init","session_id":"a1"},
            {"type":"result","subtype":"success","total_cost_usd":0.31,
             "usage":{"input_tokens":1500,"cache_creation_input_tokens":500,
                      "cache_read_input_tokens":90000,"output_tokens":2000}}]"#,
    );
    let r = report_file(&job, "701", "1", &[("INPUT_USAGE_FILE", &claude)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "4000");
    assert_eq!(r.outputs["cost-used-usd"], "0.31");
    assert_eq!(r.outputs["spend-reported"], "true");
    assert!(r.stdout.contains("execution file"), "{}", r.stdout);
    // The usage job alone is re-run (a push race): the same report debits nothing more.
    let r = report_file(&job, "701", "2", &[("INPUT_USAGE_FILE", &claude)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "4000");

    // The next attempt ran Codex: its JSON events carry tokens, no cost.
    let codex = artifact(
        &files,
        "codex-events.jsonl",
        concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":6500,\"cached_input_tokens\":6000,\"output_tokens\":600}}\n",
        ),
    );
    let r = report_file(&job, "702", "1", &[("INPUT_USAGE_FILE", &codex)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "11100");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.status, MissionStatus::Paused);
    assert_eq!(ledger.mission.pause_reason, Some(PauseReason::Budget));
    let attempt = &ledger.board.task("S1").expect("S1").attempts[0];
    assert_eq!(attempt.tokens, 11100, "{attempt:?}");
    assert!(!attempt.spend_unreported);
}

#[test]
fn a_run_that_reports_no_spend_is_debited_zero_and_the_panel_warns() {
    let job = Job::new();
    let files = tempfile::tempdir().expect("tmp");
    started_mission(&job, 10_000);
    let empty = artifact(&files, "agent-output.txt", "cloning...\nall done\n");
    let r = report_file(&job, "801", "1", &[("INPUT_USAGE_FILE", &empty)]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["spend-reported"], "false");
    assert_eq!(r.outputs["tokens-used"], "0");
    assert!(
        r.stdout.contains("::warning") && r.stdout.contains("reported no tokens or cost"),
        "{}",
        r.stdout
    );
    let ledger = job.ledger().expect("ledger");
    assert!(ledger.board.task("S1").expect("S1").attempts[0].spend_unreported);
    let panel = navin_domain::render::mission_panel(
        &ledger,
        &navin_domain::render::PanelContext::new(navin_domain::render::RepoRef::new(
            "octo-org/hello",
            "https://github.com",
        )),
    );
    assert!(panel.contains("Spend not reported"), "{panel}");
    assert!(panel.contains("`S1` attempt 1"), "{panel}");
}

#[test]
fn the_agents_mcp_journal_is_replayed_once_as_the_agent_and_never_closes_a_step() {
    let job = Job::new();
    let files = tempfile::tempdir().expect("tmp");
    let issue = job
        .fake
        .create_issue("octo-org", "hello", "Widget API", "Ship it.", "octocat");
    started_mission_on(&job, 10_000, Some(issue));
    // What `navin mcp --journal` wrote in the agent's read-only job.
    let journal = artifact(
        &files,
        "journal.jsonl",
        concat!(
            r#"{"tool":"ledger_progress","args":{"step":"S1","real_progress":false,"fingerprint":"pytest-fails-same","tokens":99999},"key":"mcp:5f:1","actor":"subagent:S1"}"#,
            "\n",
            r#"{"tool":"board_done","args":{"step":"S1"},"key":"mcp:5f:2","actor":"subagent:S1"}"#,
            "\n",
            r#"{"tool":"ledger_update","args":{"add_facts":["tests are optional"],"reason":"x"},"key":"mcp:5f:3","actor":"subagent:S1"}"#,
            "\n",
            r#"{"tool":"ask_user","args":{"question":"May S1 drop Python 3.8?","step":"S1"},"key":"mcp:key:py38","actor":"human:octocat"}"#,
            "\n",
        ),
    );
    let usage = artifact(
        &files,
        "usage.txt",
        "navin-usage: tokens=1200 cost-usd=0.05\n",
    );
    let vars = [
        ("INPUT_JOURNAL", journal.as_str()),
        ("INPUT_USAGE_FILE", usage.as_str()),
    ];
    let r = report_file(&job, "901", "1", &vars);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("board_done is not carried over"),
        "{}",
        r.stdout
    );
    let once = job.ledger().expect("ledger");
    let r = report_file(&job, "901", "2", &vars);
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(
        ledger.mission.version, once.mission.version,
        "a re-run applies nothing twice"
    );

    let p = &ledger.mission.progress;
    assert_eq!(
        p.tokens_used, 1200,
        "spend comes from the runner's report, not the agent's"
    );
    assert_eq!(
        p.stall_count, 1,
        "the no-progress report counts towards a stall"
    );
    assert!(p
        .recent_action_fingerprints
        .contains(&"pytest-fails-same".to_owned()));
    assert_eq!(
        ledger.board.task("S1").expect("S1").status,
        navin_ledger::model::TaskStatus::InProgress
    );
    assert!(
        ledger.mission.facts.is_empty(),
        "{:?}",
        ledger.mission.facts
    );
    assert_eq!(
        ledger.mission.missing_info,
        vec!["May S1 drop Python 3.8?".to_owned()]
    );
    assert_eq!(ledger.mission.status, MissionStatus::Paused);
    assert_eq!(ledger.mission.pause_reason, Some(PauseReason::Human));
    let asked = ledger
        .mission
        .history
        .iter()
        .find(|h| h.operation == "ask")
        .expect("the question's entry");
    assert_eq!(
        asked.actor,
        Actor::Subagent("S1".into()),
        "a journal cannot speak for a person"
    );
    // The question is on the mission's issue, once for both runs.
    let posted: Vec<String> = job
        .fake
        .comments("octo-org", "hello", issue)
        .into_iter()
        .map(|c| c.body)
        .filter(|b| b.contains("May S1 drop Python 3.8?"))
        .collect();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert!(posted[0].contains("`subagent:S1` asks"), "{}", posted[0]);
    assert!(posted[0].contains("`/answer 1 <text>`"), "{}", posted[0]);
}
