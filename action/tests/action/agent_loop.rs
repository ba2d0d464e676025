//! Dispatch to a real agent process, end to end through `navin-action`: the engine hands
//! a ready step to the agent workflow, the brief job renders the brief, a script agent
//! (tests/agent/script-agent.sh) edits, commits, pushes and opens the pull request over
//! the REST API, CI goes green, the pull request is merged, the step closes and the next
//! step is dispatched.

use std::process::Command;

use navin_e2e::fake::CheckRunSpec;
use serde_json::json;

use crate::harness::{Job, RunResult, EVENT_SCOPES, OWNER, REPO};

const CONFIG: &str = "dispatch:\n  agent: workflow\n  workflow: navin-agent.yml\nmodels:\n  deep: claude-opus-4.6\nevidence:\n  required_checks:\n    test: [ci/test]\n";

/// The script agent, run as the agent job would run a real one: the brief in a file,
/// the step's branch, and its own token (never the job's).
fn script_agent(job: &Job, step: &str, brief: &RunResult, token: &str) -> u64 {
    let brief_file = job.dir.path().join(format!("brief-{step}.md"));
    std::fs::write(&brief_file, &brief.outputs["brief"]).expect("write the brief");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/agent/script-agent.sh");
    let out = Command::new("bash")
        .arg(script)
        .env("NAVIN_STEP", step)
        .env("NAVIN_BRANCH", &brief.outputs["branch"])
        .env("NAVIN_BRIEF_FILE", &brief_file)
        .env(
            "GIT_REMOTE",
            job.fake.git_remote_url_with_token(OWNER, REPO, token),
        )
        .env("API_URL", job.fake.base_url())
        .env("REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("AGENT_TOKEN", token)
        .env("HOME", job.dir.path())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("run the script agent");
    assert!(
        out.status.success(),
        "script agent failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("the script prints the pull request number")
}

/// The `brief` job of the agent workflow: contents read is all it needs.
fn brief_job(job: &Job, step: &str) -> RunResult {
    let read = job.fake.actions_token(OWNER, REPO, &[("contents", "read")]);
    let r = job.run_with(
        "brief",
        "workflow_dispatch",
        None,
        Some(&read),
        &[("INPUT_STEP", step)],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    r
}

/// CI on the pull request's head: GitHub Actions' `ci/test` check run, completed.
fn green_ci(job: &Job, token: &str, head: &str) -> RunResult {
    let run_id = job
        .fake
        .add_check_run(OWNER, REPO, CheckRunSpec::new("ci/test", head));
    let completed = job.fixture_event("check_run.completed", |p| {
        p.check_run_id(run_id)
            .check_name("ci/test")
            .head_sha(head)
            .app_id(15368)
            .conclusion("success")
    });
    job.run("event", "check_run", Some(&completed), Some(token))
}

#[test]
fn a_script_agent_takes_a_dispatched_step_from_brief_to_a_green_merged_pr_and_the_next_step_is_dispatched(
) {
    let mut job = Job::for_events();
    let mut scopes = EVENT_SCOPES.to_vec();
    scopes.push(("actions", "write")); // starts the agent workflow
    job.token = job.fake.actions_token(OWNER, REPO, &scopes);
    let token = job.token.clone();
    job.write_config(CONFIG);
    job.fake
        .add_workflow(OWNER, REPO, "navin-agent.yml", "navin agent");
    job.fake.set_role(OWNER, REPO, "dora", "write");
    let agent_token = job.fake.user_token("dora");
    let issue = job
        .fake
        .create_issue(OWNER, REPO, "Farewell", "Say goodbye too.", "alice");

    // The mission: T1, then T2 after it; only T1 is ready, so only T1 is dispatched.
    let commands = "/mission add a farewell\n\
        /step add T1 Add a farewell in src/lib.rs --validation test\n\
        /step add T2 Document the farewell in README.md --after T1 --validation test";
    let (_, event) = job.comment_event(issue, "alice", commands);
    let r = job.run("event", "issue_comment", Some(&event), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let runs = job.fake.dispatches();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].workflow, "navin-agent.yml");
    assert_eq!(runs[0].inputs["step"], "T1");
    assert_eq!(runs[0].inputs["model"], "claude-opus-4.6");
    let t1_issue: u64 = runs[0].inputs["issue"]
        .as_str()
        .and_then(|n| n.parse().ok())
        .expect("the issue input is the step issue's number");
    let step_issue = job.fake.issue(OWNER, REPO, t1_issue);
    assert!(step_issue.title.starts_with("[navin T1]"), "{step_issue:?}");

    // The workflow's brief job: the same brief the issue carries, plus what the agent
    // job needs as outputs.
    let brief = brief_job(&job, "T1");
    // Only the version and the digest differ: the Action reads the ledger as it is now.
    let work = |text: &str| {
        let from = text.find("### Role").expect("a Role section");
        let to = text.find("### Mission digest").expect("a digest section");
        text[from..to].to_owned()
    };
    assert_eq!(
        work(&brief.outputs["brief"]),
        work(step_issue.body.as_deref().unwrap_or_default()),
        "the Action's brief is the step issue's brief"
    );
    assert_eq!(
        brief.outputs["branch"],
        "navin/T1-add-a-farewell-in-src-lib-rs"
    );
    assert_eq!(brief.outputs["model"], "claude-opus-4.6");
    assert!(
        brief.outputs["digest"].contains("add a farewell"),
        "{:?}",
        brief.outputs["digest"]
    );

    // The agent works the step and opens its pull request; GitHub would send
    // pull_request.opened to the event workflow.
    let pr = script_agent(&job, "T1", &brief, &agent_token);
    let pull = job.fake.pull(OWNER, REPO, pr);
    assert_eq!(pull.head_ref, "navin/T1-add-a-farewell-in-src-lib-rs");
    assert!(
        pull.files.iter().any(|f| f.filename == "src/lib.rs"),
        "{pull:?}"
    );
    let head = pull.head_sha.clone();
    let body = job.fake.issue(OWNER, REPO, pr).body.unwrap_or_default();
    let opened = job.fixture_event("pull_request.opened", |p| {
        p.number(pr)
            .head_sha(&head)
            .head_ref(&pull.head_ref)
            .set("/pull_request/body", json!(body))
    });
    let r = job.run("event", "pull_request", Some(&opened), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    let t1 = ledger.board.task("T1").expect("T1");
    assert_eq!(t1.links.prs, [pr]);
    assert_eq!(
        t1.status.as_str(),
        "in_progress",
        "its pull request took T1 up"
    );

    // Green CI on that head; a maintainer merges it (pull_request.closed): T1 is done,
    // T2 becomes ready and is dispatched in turn, starting from merged work.
    let r = green_ci(&job, &token, &head);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        job.fake.dispatches().len(),
        1,
        "nothing more before the merge"
    );
    job.fake.close(OWNER, REPO, pr, true);
    let merged = job.fixture_event("pull_request.closed", |p| {
        p.number(pr)
            .head_sha(&head)
            .head_ref(&pull.head_ref)
            .set("/pull_request/body", json!(body))
            .set("/pull_request/merged", json!(true))
            .set("/pull_request/state", json!("closed"))
    });
    let r = job.run("event", "pull_request", Some(&merged), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.board.task("T1").expect("T1").status.as_str(), "done");
    let runs = job.fake.dispatches();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[1].inputs["step"], "T2");

    // And the loop goes on: the second step's brief names its own file.
    let brief = brief_job(&job, "T2");
    assert!(
        brief.outputs["brief"].contains("`README.md`"),
        "{}",
        brief.outputs["brief"]
    );
    let pr = script_agent(&job, "T2", &brief, &agent_token);
    assert!(job
        .fake
        .pull(OWNER, REPO, pr)
        .files
        .iter()
        .any(|f| f.filename == "README.md"));
}

/// The closed agent loop in event mode: the repository restarts at once after red CI.
const LOOP_CONFIG: &str = "dispatch:\n  agent: workflow\n  workflow: navin-agent.yml\nagents:\n  idle_after: 0\n  timeout: 1s\nevidence:\n  done_on: green\n  required_checks:\n    test: [ci/test]\n";

#[test]
fn in_event_mode_red_ci_starts_the_next_attempt_with_the_failure_and_a_schedule_run_times_out_a_silent_agent(
) {
    let mut job = Job::for_events();
    let mut scopes = EVENT_SCOPES.to_vec();
    scopes.push(("actions", "write"));
    job.token = job.fake.actions_token(OWNER, REPO, &scopes);
    let token = job.token.clone();
    job.write_config(LOOP_CONFIG);
    job.fake
        .add_workflow(OWNER, REPO, "navin-agent.yml", "navin agent");
    let issue = job
        .fake
        .create_issue(OWNER, REPO, "Lexer", "Ship the lexer.", "alice");
    let commands = "/mission ship the lexer\n\
        /step add T1 Write the lexer in src/lib.rs --validation test\n\
        /step add T2 Document it in README.md --validation test";
    let (_, event) = job.comment_event(issue, "alice", commands);
    let r = job.run("event", "issue_comment", Some(&event), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(job.fake.dispatches().len(), 2);

    // T1's pull request fails CI: the same job starts attempt 2 of T1.
    let spec = navin_e2e::fake::PullSpec::new("navin/T1-lexer")
        .author("alice")
        .body("Navin-Step: T1\n")
        .file("src/lib.rs", "pub fn lex() {}\n");
    let pr = job.fake.create_pull(OWNER, REPO, spec);
    let pull = job.fake.pull(OWNER, REPO, pr);
    let opened = job.fixture_event("pull_request.opened", |p| {
        p.number(pr)
            .head_sha(&pull.head_sha)
            .head_ref(&pull.head_ref)
            .set("/pull_request/body", json!("Navin-Step: T1\n"))
    });
    let r = job.run("event", "pull_request", Some(&opened), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let run_id = job.fake.add_check_run(
        OWNER,
        REPO,
        CheckRunSpec::new("ci/test", &pull.head_sha)
            .conclusion("failure")
            .output("1 failed", "test lex::tabs ... FAILED"),
    );
    let red = job.fixture_event("check_run.completed", |p| {
        p.check_run_id(run_id)
            .check_name("ci/test")
            .head_sha(&pull.head_sha)
            .app_id(15368)
            .conclusion("failure")
    });
    let r = job.run("event", "check_run", Some(&red), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let runs = job.fake.dispatches();
    let attempt_of = |inputs: &serde_json::Value| -> u32 {
        inputs["attempt"]
            .as_str()
            .map_or(1, |a| a.parse().unwrap_or(0))
    };
    assert!(
        runs.iter()
            .any(|d| d.inputs["step"] == "T1" && attempt_of(&d.inputs) == 2),
        "{runs:?}"
    );
    // The agent workflow's brief job hands attempt 2 the failure.
    let brief = brief_job(&job, "T1");
    let text = &brief.outputs["brief"];
    assert!(text.contains("lex::tabs ... FAILED"), "{text}");
    // It starts over on a branch of its own; the red pull request is closed.
    assert!(
        text.contains("**Start over**") && text.contains(&format!("(#{pr})")),
        "{text}"
    );
    assert!(
        brief.outputs["branch"].starts_with("navin/T1-a2-"),
        "{:?}",
        brief.outputs
    );
    assert_eq!(job.fake.issue(OWNER, REPO, pr).state, "closed");

    // T2's agent never opens a pull request; a scheduled run after the timeout is the
    // clock that ends its attempt and starts the next (jobs here take about a second
    // each, so an earlier run may already have done it: what counts is that it happens
    // with no webhook about T2 at all).
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let r = job.run("event", "schedule", None, Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let runs = job.fake.dispatches();
    assert!(
        runs.iter()
            .any(|d| d.inputs["step"] == "T2" && attempt_of(&d.inputs) >= 2),
        "{runs:?}"
    );
    let ledger = job.ledger().expect("ledger");
    let t2 = ledger.board.task("T2").expect("T2");
    assert_eq!(
        t2.attempts[0].outcome,
        Some(navin_ledger::model::AttemptOutcome::TimedOut)
    );
    // One dispatch per attempt: no attempt was started twice.
    for step in ["T1", "T2"] {
        let task = ledger.board.task(step).expect("step");
        let sent = runs.iter().filter(|d| d.inputs["step"] == step).count();
        assert_eq!(sent, task.attempts.len(), "{step}: {runs:?}");
    }
}

/// A pull request event for `step`'s pull request `pr` as it stands in the fake
/// (`fixture` names the action).
fn pull_event(
    job: &Job,
    token: &str,
    fixture: &str,
    (pr, step): (u64, &str),
    before: Option<&str>,
) -> RunResult {
    let pull = job.fake.pull(OWNER, REPO, pr);
    let body = format!("Agent work.\n\nNavin-Step: {step}\n");
    let closed = fixture == "pull_request.closed";
    let event = job.fixture_event(
        if closed {
            "pull_request.opened"
        } else {
            fixture
        },
        |p| {
            let mut p = p
                .number(pr)
                .head_sha(&pull.head_sha)
                .head_ref(&pull.head_ref)
                .set("/pull_request/body", json!(body));
            if let Some(before) = before {
                p = p
                    .set("/action", json!("synchronize"))
                    .set("/before", json!(before));
            }
            if closed {
                p = p
                    .set("/action", json!("closed"))
                    .set("/pull_request/state", json!("closed"))
                    .set("/pull_request/merged", json!(false));
            }
            p
        },
    );
    let r = job.run("event", "pull_request", Some(&event), Some(token));
    assert_eq!(r.code, Some(0), "{r:?}");
    r
}

/// The agent's pull request for `step`'s attempt `attempt`, opened and delivered.
fn agent_opens(job: &Job, token: &str, step: &str, attempt: u32) -> (u64, String) {
    let spec = navin_e2e::fake::PullSpec::new(&format!("navin/{step}-try{attempt}"))
        .author("alice")
        .body(&format!("Agent work.\n\nNavin-Step: {step}\n"))
        .file(
            &format!("src/{}.rs", step.to_ascii_lowercase()),
            "pub fn f() {}\n",
        );
    let pr = job.fake.create_pull(OWNER, REPO, spec);
    pull_event(job, token, "pull_request.opened", (pr, step), None);
    (pr, job.fake.pull(OWNER, REPO, pr).head_sha)
}

/// The agent pushes `src/<step>.rs` with `text` to its pull request; returns the new head.
fn agent_pushes(job: &Job, token: &str, (pr, step): (u64, &str), text: &str) -> String {
    let before = job.fake.pull(OWNER, REPO, pr).head_sha;
    let file = format!("src/{}.rs", step.to_ascii_lowercase());
    let head = job
        .fake
        .push_to_pull(OWNER, REPO, pr, &[(file.as_str(), text)], "fix");
    pull_event(
        job,
        token,
        "pull_request.synchronize",
        (pr, step),
        Some(&before),
    );
    head
}

/// `ci/test` completes on `head`: green, or red with `failing` in its output.
fn ci_completes(job: &Job, token: &str, head: &str, failing: Option<&str>) {
    let mut spec = CheckRunSpec::new("ci/test", head);
    if let Some(test) = failing {
        spec = spec.conclusion("failure").output(
            "1 test failed",
            &format!("running 4 tests\ntest {test} ... FAILED\n\nfailures:\n    {test}: assertion failed"),
        );
    }
    let run_id = job.fake.add_check_run(OWNER, REPO, spec);
    let completed = job.fixture_event("check_run.completed", |p| {
        p.check_run_id(run_id)
            .check_name("ci/test")
            .head_sha(head)
            .app_id(15368)
            .conclusion(if failing.is_some() {
                "failure"
            } else {
                "success"
            })
    });
    let r = job.run("event", "check_run", Some(&completed), Some(token));
    assert_eq!(r.code, Some(0), "{r:?}");
}

/// The attempts Navin started for `step`, in dispatch order.
fn started(job: &Job, step: &str) -> Vec<u32> {
    job.fake
        .dispatches()
        .iter()
        .filter(|d| d.inputs["step"] == step)
        .map(|d| {
            d.inputs["attempt"]
                .as_str()
                .map_or(1, |a| a.parse().unwrap_or(0))
        })
        .collect()
}

#[test]
fn in_event_mode_a_four_step_mission_reaches_done_through_red_ci_and_a_closed_pull_request_with_no_person_acting(
) {
    let mut job = Job::for_events();
    let mut scopes = EVENT_SCOPES.to_vec();
    scopes.push(("actions", "write"));
    job.token = job.fake.actions_token(OWNER, REPO, &scopes);
    let token = job.token.clone();
    // The default hour for an agent to open its pull request: jobs here take a second.
    job.write_config(&LOOP_CONFIG.replace("  timeout: 1s\n", ""));
    job.fake
        .add_workflow(OWNER, REPO, "navin-agent.yml", "navin agent");
    let issue = job
        .fake
        .create_issue(OWNER, REPO, "Parser", "Ship the parser.", "alice");
    let setup = "/mission ship the parser\n\
        /step add S1 Lexer --validation test\n\
        /step add S2 Parser --after S1 --validation test\n\
        /step add S3 Errors --after S1 --validation test\n\
        /step add S4 Docs --after S2,S3 --validation test";
    let (_, event) = job.comment_event(issue, "alice", setup);
    let r = job.run("event", "issue_comment", Some(&event), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(started(&job, "S1"), [1]);

    let (_, head) = agent_opens(&job, &token, "S1", 1);
    ci_completes(&job, &token, &head, None);
    assert_eq!(started(&job, "S2"), [1]);
    assert_eq!(started(&job, "S3"), [1]);

    // S2 fails twice, differently; each failure starts the next attempt at once, on a
    // new branch, and closes the red pull request.
    let (s2_pr, head) = agent_opens(&job, &token, "S2", 1);
    ci_completes(&job, &token, &head, Some("parse::empty"));
    assert_eq!(started(&job, "S2"), [1, 2]);
    let brief = brief_job(&job, "S2").outputs["brief"].clone();
    assert!(brief.contains("parse::empty ... FAILED"), "{brief}");
    assert!(brief.contains(&format!("(#{s2_pr})")), "{brief}");
    assert_eq!(job.fake.issue(OWNER, REPO, s2_pr).state, "closed");
    let (s2_pr2, head) = agent_opens(&job, &token, "S2", 2);
    ci_completes(&job, &token, &head, Some("parse::unicode"));
    assert_eq!(started(&job, "S2"), [1, 2, 3]);
    let brief = brief_job(&job, "S2").outputs["brief"].clone();
    assert!(brief.contains("parse::unicode"), "{brief}");
    assert_eq!(job.fake.issue(OWNER, REPO, s2_pr2).state, "closed");
    let (_, head) = agent_opens(&job, &token, "S2", 3);
    ci_completes(&job, &token, &head, None);

    // S3's pull request is closed unmerged: attempt 2 starts over.
    let (s3_pr, _) = agent_opens(&job, &token, "S3", 1);
    job.fake.close(OWNER, REPO, s3_pr, false);
    pull_event(&job, &token, "pull_request.closed", (s3_pr, "S3"), None);
    assert_eq!(started(&job, "S3"), [1, 2]);
    let brief = brief_job(&job, "S3").outputs["brief"].clone();
    assert!(brief.contains("Start over"), "{brief}");
    let (_, head) = agent_opens(&job, &token, "S3", 2);
    ci_completes(&job, &token, &head, None);

    assert_eq!(started(&job, "S4"), [1]);
    let (_, head) = agent_opens(&job, &token, "S4", 1);
    ci_completes(&job, &token, &head, None);

    let ledger = job.ledger().expect("ledger");
    let statuses: Vec<_> = ledger
        .board
        .tasks
        .iter()
        .map(|t| (t.id.clone(), t.status))
        .collect();
    assert!(
        ledger
            .board
            .tasks
            .iter()
            .all(|t| t.status == navin_ledger::model::TaskStatus::Done),
        "{statuses:?}"
    );
    let s2 = ledger.board.task("S2").expect("S2");
    let fingerprints: Vec<_> = s2
        .attempts
        .iter()
        .filter_map(|a| a.failure.as_ref().and_then(|f| f.fingerprint.clone()))
        .collect();
    assert_eq!(fingerprints.len(), 2, "{:?}", s2.attempts);
    assert_ne!(fingerprints[0], fingerprints[1]);
    // Every comment but alice's first came from Navin's jobs.
    let people: Vec<_> = job
        .fake
        .comments(OWNER, REPO, issue)
        .into_iter()
        .filter(|c| !c.via_api)
        .collect();
    assert_eq!(people.len(), 1, "no person acted after the mission started");
}

#[test]
fn in_event_mode_after_red_continue_keeps_the_red_pull_request_and_the_pushed_fix_closes_the_step()
{
    let mut job = Job::for_events();
    let mut scopes = EVENT_SCOPES.to_vec();
    scopes.push(("actions", "write"));
    job.token = job.fake.actions_token(OWNER, REPO, &scopes);
    let token = job.token.clone();
    job.write_config(&LOOP_CONFIG.replace("  timeout: 1s\n", "  after_red: continue\n"));
    job.fake
        .add_workflow(OWNER, REPO, "navin-agent.yml", "navin agent");
    let issue = job
        .fake
        .create_issue(OWNER, REPO, "Lexer", "Ship the lexer.", "alice");
    let (_, event) = job.comment_event(
        issue,
        "alice",
        "/mission ship the lexer\n/step add S1 Lexer --validation test",
    );
    let r = job.run("event", "issue_comment", Some(&event), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");

    let (pr, head) = agent_opens(&job, &token, "S1", 1);
    ci_completes(&job, &token, &head, Some("lex::tabs"));
    assert_eq!(started(&job, "S1"), [1, 2]);
    let brief = brief_job(&job, "S1");
    let text = &brief.outputs["brief"];
    assert!(
        text.contains(&format!("Continue pull request #{pr}")),
        "{text}"
    );
    assert_eq!(job.fake.issue(OWNER, REPO, pr).state, "open");
    assert_eq!(brief.outputs["branch"], "navin/S1-try1");

    let head = agent_pushes(&job, &token, (pr, "S1"), "pub fn f() -> u8 { 1 }\n");
    ci_completes(&job, &token, &head, None);
    let ledger = job.ledger().expect("ledger");
    let s1 = ledger.board.task("S1").expect("S1");
    assert_eq!(s1.status, navin_ledger::model::TaskStatus::Done, "{s1:?}");
    assert_eq!(s1.links.prs, [pr], "one pull request carried the step");
}
