//! The test workflow runner holds workflows to GitHub's rules: a job's `permissions:` are
//! its token's scopes, a stand-in refuses an input its pinned `action.yml` does not
//! declare, an agent action refuses a bot it was not told to allow, and `needs:`, `if:`,
//! outputs, `GITHUB_ENV`, `GITHUB_PATH` and artifacts pass between steps and jobs.

use std::sync::Arc;

use navin_e2e::workflow::{Agent, AgentSpend, AgentTask, Outcome, Trigger};
use serde_json::json;

use crate::actions::Actions;
use crate::harness::Job;

const CHECKOUT: &str = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1";

struct Idle;
impl Agent for Idle {
    fn work(&self, task: &AgentTask) -> Result<AgentSpend, String> {
        std::fs::write(task.workspace.join("agent.txt"), &task.prompt)
            .map_err(|e| e.to_string())?;
        Ok(AgentSpend {
            tokens: 7,
            cost_usd: 0.0,
        })
    }
}

fn actions() -> Actions {
    Actions::new(Job::for_events(), Vec::new(), Arc::new(Idle))
}

fn push_workflow(permission: &str) -> String {
    format!(
        r#"name: push
on: workflow_dispatch
permissions: {{}}
jobs:
  push:
    runs-on: ubuntu-latest
    permissions:
      contents: {permission}
    steps:
      - uses: {CHECKOUT}
      - run: |
          git -c user.name=t -c user.email=t@example.invalid commit --allow-empty -m pushed
          git push origin HEAD:refs/heads/pushed-{permission}
"#
    )
}

fn dispatch(actor: &str) -> Trigger {
    Trigger::new("workflow_dispatch", json!({"inputs": {}}), actor)
}

#[test]
fn a_contents_read_job_cannot_push_and_a_contents_write_job_can() {
    let a = actions();
    let read = a
        .runner
        .run("push.yml", &push_workflow("read"), &dispatch("alice"));
    let job = read.job("push");
    assert_eq!(job.result, Outcome::Failure, "{}", read.log());
    assert!(
        job.log().contains("denied to github-actions[bot]"),
        "{}",
        job.log()
    );
    assert_eq!(
        a.job.fake.branch_sha("octo-org", "hello", "pushed-read"),
        None
    );

    let write = a
        .runner
        .run("push.yml", &push_workflow("write"), &dispatch("alice"));
    assert_eq!(
        write.job("push").result,
        Outcome::Success,
        "{}",
        write.log()
    );
    assert!(a
        .job
        .fake
        .branch_sha("octo-org", "hello", "pushed-write")
        .is_some());
}

#[test]
fn an_undeclared_input_to_a_stand_in_or_to_navins_action_fails_its_step() {
    let a = actions();
    let workflow = format!(
        "name: w\non: workflow_dispatch\njobs:\n  j:\n    steps:\n      - uses: {CHECKOUT}\n        with:\n          depth: 1\n"
    );
    let run = a.runner.run("w.yml", &workflow, &dispatch("alice"));
    assert_eq!(run.job("j").result, Outcome::Failure);
    assert!(
        run.log().contains("Unexpected input(s) 'depth'"),
        "{}",
        run.log()
    );

    let workflow = "name: w\non: workflow_dispatch\njobs:\n  j:\n    steps:\n      - uses: OWNER/REPO/action@v0.1.0\n        with:\n          mode: brief\n          ledger_key: x\n";
    let run = a.runner.run("w.yml", workflow, &dispatch("alice"));
    assert_eq!(run.job("j").result, Outcome::Failure);
    assert!(
        run.log().contains("declares no such input"),
        "{}",
        run.log()
    );
}

fn claude_workflow(allowed: &str) -> String {
    format!(
        r#"name: agent
on: workflow_dispatch
permissions:
  contents: read
jobs:
  agent:
    steps:
      - uses: {CHECKOUT}
      - uses: anthropics/claude-code-action@24dcd50c0568f0fc9e9211213a4fd2d9eb15c4e0
        with:
          anthropic_api_key: test-key
          github_token: ${{{{ github.token }}}}
          allowed_bots: {allowed}
          prompt: do the step
"#
    )
}

#[test]
fn claude_code_refuses_a_bot_dispatch_unless_allowed_bots_lists_it() {
    let a = actions();
    let refused = a.runner.run(
        "agent.yml",
        &claude_workflow("navin"),
        &dispatch("github-actions[bot]"),
    );
    assert_eq!(refused.job("agent").result, Outcome::Failure);
    assert!(
        refused.log().contains("non-human actor: github-actions"),
        "{}",
        refused.log()
    );
    let allowed = a.runner.run(
        "agent.yml",
        &claude_workflow("navin,github-actions"),
        &dispatch("github-actions[bot]"),
    );
    assert_eq!(
        allowed.job("agent").result,
        Outcome::Success,
        "{}",
        allowed.log()
    );
}

#[test]
fn needs_if_outputs_env_path_and_artifacts_pass_between_steps_and_jobs() {
    let a = actions();
    let workflow = r#"name: flow
on:
  workflow_dispatch:
    inputs:
      word:
        type: string
        default: hello
jobs:
  first:
    outputs:
      said: ${{ steps.say.outputs.said }}
    steps:
      - id: say
        run: |
          echo "said=${{ inputs.word }}" >> "$GITHUB_OUTPUT"
          echo "GREETING=hi there" >> "$GITHUB_ENV"
          mkdir -p "$RUNNER_TEMP/tools" "$RUNNER_TEMP/out"
          printf '#!/bin/sh\necho tool ran\n' > "$RUNNER_TEMP/tools/mytool"
          chmod +x "$RUNNER_TEMP/tools/mytool"
          echo "$RUNNER_TEMP/tools" >> "$GITHUB_PATH"
          echo kept > "$RUNNER_TEMP/out/file.txt"
      - run: |
          test "$GREETING" = "hi there"
          mytool
      - uses: actions/upload-artifact@ea165f8d65b6e75b540449e92b4886f43607fa02
        with:
          name: out
          path: ${{ runner.temp }}/out/
      - if: failure()
        run: echo never
  second:
    needs: first
    if: needs.first.outputs.said == 'HELLO'
    steps:
      - uses: actions/download-artifact@d3f86a106a0bac45b974a628896c90dbdf5c8093
        with:
          name: out
          path: got
      - run: grep -q kept got/file.txt
  skipped:
    needs: first
    if: needs.first.outputs.said == 'bye'
    steps:
      - run: exit 1
  after:
    needs: [second, skipped]
    if: always() && needs.skipped.result == 'skipped'
    steps:
      - run: exit 1
"#;
    let run = a.runner.run("flow.yml", workflow, &dispatch("alice"));
    assert_eq!(run.job("first").result, Outcome::Success, "{}", run.log());
    assert_eq!(run.job("first").outputs["said"], "hello");
    assert!(run.job("first").log().contains("tool ran"), "{}", run.log());
    assert_eq!(run.job("first").steps[3].outcome, Outcome::Skipped);
    assert_eq!(run.job("second").result, Outcome::Success, "{}", run.log());
    assert_eq!(run.job("skipped").result, Outcome::Skipped);
    // `always()` runs it although a job it needs was skipped; its failure fails the run.
    assert_eq!(run.job("after").result, Outcome::Failure);
    assert_eq!(run.conclusion(), Outcome::Failure);
}
