//! The Action's `planner` inputs: `llm` on GitHub Models' URL shape with the job's own token, the plan record naming model and tool calls, and a bad input refused by name.

use navin_e2e::llm::{content, tool_calls, FakeLlm};
use navin_ledger::plan::record::PlanRecord;
use serde_json::json;

use crate::harness::{Job, BRANCH, OWNER, REPO};

/// A valid plan for the job's repository, as the built-in planner writes it.
fn builtin_plan(job: &Job, issue: u64) -> String {
    let (_, event) = job.comment_event(issue, "alice", "/plan make the greeting configurable");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    job.fake
        .file_at(
            OWNER,
            REPO,
            BRANCH,
            &format!(".navin/plans/issue-{issue}.md"),
        )
        .expect("the built-in plan")
}

#[test]
fn the_llm_planner_defaults_to_github_models_with_the_jobs_own_token() {
    let job = Job::for_events();
    let warmup = job.fake.create_issue(OWNER, REPO, "Warm-up", "", "alice");
    let plan = builtin_plan(&job, warmup);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let llm = rt
        .block_on(FakeLlm::start(vec![
            tool_calls(&[("glob", json!({"pattern": "src/**"}))]),
            content(&plan),
        ]))
        .expect("llm");
    let issue = job.fake.create_issue(OWNER, REPO, "Greeting", "", "alice");
    let (_, event) = job.comment_event(issue, "alice", "/plan make the greeting configurable");

    let base = llm.models_base_url();
    let r = job.run_with(
        "event",
        "issue_comment",
        Some(&event),
        Some(&job.token),
        &[("INPUT_PLANNER", "llm"), ("INPUT_PLANNER_BASE_URL", &base)],
    );

    assert_eq!(r.code, Some(0), "{r:?}");
    let seen = llm.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].body["model"], "openai/gpt-4.1");
    let bearer = format!("Bearer {}", job.token);
    assert!(seen
        .iter()
        .all(|s| s.authorization.as_deref() == Some(bearer.as_str())));
    let record: PlanRecord = serde_json::from_str(
        &job.fake
            .file_at(
                OWNER,
                REPO,
                BRANCH,
                &format!(".navin/plans/issue-{issue}.json"),
            )
            .expect("record"),
    )
    .expect("parses");
    assert_eq!(record.source, "http:openai/gpt-4.1");
    let run = record.run.expect("run");
    assert_eq!(run.tool_calls.len(), 1);
    assert_eq!(run.tool_calls[0].tool, "glob");
    // Only the runner's mask command may carry it.
    for text in [&r.stdout, &r.stderr, &r.summary] {
        let leaked = text
            .lines()
            .any(|l| l.contains(&job.token) && !l.starts_with("::add-mask::"));
        assert!(!leaked, "the token leaked: {text}");
    }
}

#[test]
fn an_unknown_planner_input_fails_the_job_naming_the_input() {
    let job = Job::for_events();
    let issue = job.fake.create_issue(OWNER, REPO, "Greeting", "", "alice");
    let (_, event) = job.comment_event(issue, "alice", "/plan make the greeting configurable");

    let r = job.run_with(
        "event",
        "issue_comment",
        Some(&event),
        Some(&job.token),
        &[("INPUT_PLANNER", "magic")],
    );

    assert_ne!(r.code, Some(0));
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(
        said.contains("input `planner`") && said.contains("builtin, llm or command"),
        "{said}"
    );
    assert!(job
        .fake
        .file_at(
            OWNER,
            REPO,
            BRANCH,
            &format!(".navin/plans/issue-{issue}.md")
        )
        .is_none());
}
