//! The Action-only journey, run as GitHub would run the shipped workflows: a plan asked
//! for on a pull request, approved by a review, started as a mission, and every step
//! worked by the agent workflow (brief → Claude Code → publish → usage), proven by CI,
//! retried after red CI on a fresh branch with the failure in the brief, merged by Navin
//! once green (`evidence.merge`, with the default `done_on: merged`), until the mission
//! is done, with no person acting after `/mission`.

use std::sync::{Arc, Mutex};

use navin_e2e::fake::{PullSpec, UserKind};
use navin_e2e::workflow::{Agent, AgentSpend, AgentTask, Outcome};
use serde_json::json;

use crate::actions::{example, Actions};
use crate::harness::{Job, OWNER, REPO};

/// The repository's own CI: one `test` job on each pull request; a line with `BROKEN`
/// in `src/` is a failing test.
const CI: &str = r#"name: ci
on:
  pull_request:
    types: [opened, synchronize, reopened]
permissions:
  contents: read
jobs:
  test:
    name: test
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          persist-credentials: false
      - name: cargo test
        run: |
          echo "running 2 tests"
          if grep -rn BROKEN src; then
            echo "test farewell::says_goodbye ... FAILED"
            echo "test result: FAILED. 1 passed; 1 failed"
            exit 1
          fi
          echo "test farewell::says_goodbye ... ok"
"#;

const CONFIG: &str = "dispatch:\n  agent: workflow\n  workflow: navin-agent.yml\nagents:\n  idle_after: 0\nevidence:\n  merge: squash\n  required_checks:\n    test: [test]\n";

/// The agent inside the Claude Code stand-in: it edits the files the brief's context
/// paths name; its very first attempt leaves a failing line, which the next attempt (on
/// the same branch, told the failure) removes.
#[derive(Default)]
struct ScriptedAgent {
    seen: Mutex<Vec<AgentTask>>,
}

fn context_paths(brief: &str) -> Vec<String> {
    let mut on = false;
    let mut out = Vec::new();
    for line in brief.lines() {
        if line.starts_with("### ") {
            on = line.starts_with("### Context paths");
            continue;
        }
        if let Some(p) = line.strip_prefix("- `").and_then(|l| l.strip_suffix('`')) {
            if on {
                out.push(p.to_owned());
            }
        }
    }
    out
}

impl Agent for ScriptedAgent {
    fn work(&self, task: &AgentTask) -> Result<AgentSpend, String> {
        let first = self.seen.lock().map_err(|e| e.to_string())?.is_empty();
        self.seen
            .lock()
            .map_err(|e| e.to_string())?
            .push(task.clone());
        let step = task.inputs["step"].as_str().unwrap_or("S?").to_owned();
        let mut paths = context_paths(&task.prompt);
        paths.retain(|p| p.starts_with("src/") || p.ends_with(".md"));
        if paths.is_empty() {
            paths.push("src/lib.rs".into());
        }
        for path in &paths {
            let file = task.workspace.join(path);
            let old = std::fs::read_to_string(&file).unwrap_or_default();
            let mut kept: String = old
                .lines()
                .filter(|l| !l.contains("BROKEN"))
                .map(|l| format!("{l}\n"))
                .collect();
            let line = if first {
                format!("// {step}: farewell, BROKEN on the first try\n")
            } else {
                format!("// {step}: farewell done\n")
            };
            kept.push_str(&line);
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            }
            std::fs::write(&file, kept).map_err(|e| e.to_string())?;
        }
        Ok(AgentSpend {
            tokens: 1_000,
            cost_usd: 0.02,
        })
    }
}

#[test]
fn action_only_a_plan_approved_by_review_becomes_a_mission_the_agent_workflow_finishes_through_red_and_green_ci(
) {
    let job = Job::for_events();
    job.write_config(CONFIG);
    let fake = job.fake.clone();
    for (who, role) in [("carol", "write"), ("maya", "write"), ("dora", "write")] {
        fake.set_role(OWNER, REPO, who, role);
    }
    let agent = Arc::new(ScriptedAgent::default());
    // The event workflow as shipped, with the offline planner its comment offers.
    let navin = example("navin.yml").replace("planner: llm", "planner: builtin");
    assert_ne!(navin, example("navin.yml"), "the example names its planner");
    let mut actions = Actions::new(
        job,
        vec![
            ("navin.yml", navin),
            ("navin-agent.yml", example("navin-agent.yml")),
            ("navin-evidence.yml", example("navin-evidence.yml")),
            ("ci.yml", CI.to_owned()),
        ],
        agent.clone(),
    );
    let key = "5f".repeat(32);
    actions.runner.secret("NAVIN_LEDGER_KEY", &key);
    actions
        .runner
        .environment_secret("navin-agent", "ANTHROPIC_API_KEY", "test-anthropic-key");
    let push_token = fake.user_token("dora");
    actions
        .runner
        .environment_secret("navin-publish", "NAVIN_AGENT_TOKEN", &push_token);

    // Carol opens a pull request describing the change; GitHub runs CI and Navin on it.
    let spec = PullSpec::new("carol/farewell")
        .author("carol")
        .title("Farewell")
        .body("We want a farewell next to hello.")
        .file("docs/farewell.md", "Say goodbye as well as hello.\n");
    let pr = fake.create_pull(OWNER, REPO, spec);
    actions.settle();

    // Alice asks for a plan on it.
    let asked = alice_on_carols_pr(
        &actions,
        pr,
        "/plan add a farewell function next to hello in src/lib.rs",
    );
    actions.deliver("issue_comment", asked, "alice", None);
    let plan_comment = fake
        .comments(OWNER, REPO, pr)
        .into_iter()
        .find(|c| c.author.ends_with("[bot]") && c.body.contains("src/lib.rs"));
    assert!(
        plan_comment.is_some(),
        "no plan comment: {}",
        last_log(&actions)
    );

    // Maya approves the pull request: that approves its plan.
    let head = fake.pull(OWNER, REPO, pr).head_sha;
    let review = fake.add_review(OWNER, REPO, pr, "maya", "APPROVED", &head);
    let (mut approved, _) = actions.pull_payload(pr, "submitted");
    approved["review"] = json!({"id": review, "state": "approved", "user": {"login": "maya", "id": fake.user_id("maya"), "type": "User"}, "commit_id": head});
    approved["sender"] = json!({"login": "maya", "id": fake.user_id("maya"), "type": "User"});
    actions.deliver("pull_request_review", approved, "maya", None);
    let navin_plan = fake.check_runs(OWNER, REPO).into_iter().any(|c| {
        c.name == "navin/plan" && c.head_sha == head && c.conclusion.as_deref() == Some("success")
    });
    assert!(
        navin_plan,
        "the review did not approve the plan: {}",
        last_log(&actions)
    );

    // Alice starts the mission; from here on nobody acts.
    let start = alice_on_carols_pr(&actions, pr, "/mission");
    actions.seen_pulls();
    actions.deliver("issue_comment", start, "alice", None);
    actions.settle();

    let ledger = actions.job.ledger().expect("a ledger");
    let steps: Vec<_> = ledger
        .board
        .tasks
        .iter()
        .map(|t| (t.id.clone(), t.status.as_str().to_owned()))
        .collect();
    assert_eq!(
        ledger.mission.status.as_str(),
        "done",
        "steps {steps:?}\n{}",
        all_logs(&actions)
    );
    assert!(
        !steps.is_empty() && steps.iter().all(|(_, s)| s == "done"),
        "{steps:?}"
    );

    // The first step took two attempts: red CI, then a fresh start on a branch of its
    // own, which went green.
    let first = &ledger.board.tasks[0];
    assert_eq!(first.attempts.len(), 2, "{first:#?}");
    let tasks = agent.seen.lock().expect("agent");
    let second_brief = &tasks[1].prompt;
    assert!(
        second_brief.contains("says_goodbye ... FAILED"),
        "the failure is not in the brief:\n{second_brief}"
    );
    // And what the red attempt changed, file by file, as the pull request showed it.
    let changed = second_brief
        .lines()
        .find(|l| l.starts_with("What it changed: "))
        .unwrap_or_else(|| panic!("no diff summary in the brief:\n{second_brief}"));
    assert!(
        changed.contains("`src/") && changed.contains("(+"),
        "{changed}"
    );
    assert_eq!(
        tasks.len(),
        ledger.board.tasks.len() + 1,
        "one agent run per attempt"
    );

    // Every step's work came in a pull request the agent's push token opened, never a
    // job token; the agent job itself could only read.
    let pulls: Vec<_> = fake.with_state(|m| {
        m.repo(OWNER, REPO)
            .map(|r| {
                r.issues
                    .values()
                    .filter(|i| i.pull.is_some() && i.number != pr)
                    .map(|i| (i.author.clone(), i.pull.clone()))
                    .collect()
            })
            .unwrap_or_default()
    });
    assert_eq!(pulls.len(), ledger.board.tasks.len() + 1, "{pulls:?}");
    assert!(
        pulls.iter().all(|(author, p)| author == "dora"
            && p.as_ref().is_some_and(|p| p.head_ref.starts_with("navin/"))),
        "{pulls:?}"
    );
    // The red attempt's pull request was closed with a word on why; the next attempt
    // worked on `navin/<step>-a2-…` from the default branch, none of the red commits in it.
    let [red_pr, fresh_pr] = first.links.prs[..] else {
        panic!("two pull requests for the first step: {:?}", first.links)
    };
    let red = fake.issue(OWNER, REPO, red_pr);
    assert_eq!(red.state, "closed", "the superseded pull request is closed");
    let why = fake
        .comments(OWNER, REPO, red_pr)
        .into_iter()
        .find(|c| c.author.ends_with("[bot]") && c.body.contains("starts over on a new branch"));
    assert!(why.is_some(), "no word on the closed pull request");
    let fresh = fake.pull(OWNER, REPO, fresh_pr);
    assert!(
        fresh
            .head_ref
            .starts_with(&format!("navin/{}-a2-", first.id)),
        "{}",
        fresh.head_ref
    );
    assert!(
        fresh
            .files
            .iter()
            .all(|f| !f.patch.as_deref().unwrap_or_default().contains("BROKEN")),
        "{:?}",
        fresh.files
    );
    assert!(
        second_brief.contains("**Start over**") && second_brief.contains(&format!("(#{red_pr})")),
        "{second_brief}"
    );
    // Each step's green pull request was merged by Navin at its judged head; the red one
    // never was, and the default branch holds the steps' work and none of the red line.
    assert!(red.pull.as_ref().is_some_and(|p| p.merged_at.is_none()));
    for task in &ledger.board.tasks {
        let merged = task.links.merged_pr.expect("merged");
        let pull = fake.pull(OWNER, REPO, merged);
        assert!(
            pull.merged_at.is_some(),
            "{}: #{merged} not merged",
            task.id
        );
    }
    let main_lib = fake
        .file_at(OWNER, REPO, "main", "src/lib.rs")
        .unwrap_or_default();
    assert!(
        main_lib.contains("farewell done") && !main_lib.contains("BROKEN"),
        "{main_lib}"
    );
    for run in actions.runs_of("navin-agent.yml") {
        let agent_job = run.job("agent");
        assert_eq!(agent_job.result, Outcome::Success, "{}", run.log());
        assert!(
            agent_job
                .permissions
                .iter()
                .all(|(_, level)| level == "read"),
            "{:?}",
            agent_job.permissions
        );
        assert_eq!(run.job("publish").result, Outcome::Success, "{}", run.log());
        assert_eq!(run.job("usage").result, Outcome::Success, "{}", run.log());
    }
    // What the agent spent reached the budget: one debit per attempt.
    let used = ledger.mission.progress.tokens_used;
    assert_eq!(
        used,
        1_000 * tasks.len() as u64,
        "{:?}",
        ledger.mission.progress
    );
}

/// Alice comments `body` on Carol's pull request `pr`: the comment on the fake and the
/// `issue_comment` payload GitHub sends for it.
fn alice_on_carols_pr(actions: &Actions, pr: u64, body: &str) -> serde_json::Value {
    let fake = &actions.job.fake;
    let comment = fake.add_comment(OWNER, REPO, pr, "alice", body);
    actions
        .job
        .fixture("issue_comment.created.on_pull_request")
        .number(pr)
        .issue_author("carol", fake.user_id("carol"), UserKind::User)
        .comment_id(comment)
        .comment_body(body)
        .comment_author("alice", fake.user_id("alice"), UserKind::User)
        .sender("alice", fake.user_id("alice"), UserKind::User)
        .into_json()
}

fn last_log(actions: &Actions) -> String {
    actions.runs.last().map(|r| r.log()).unwrap_or_default()
}

/// Every run's log, then the ledger branch's history (who wrote what).
fn all_logs(actions: &Actions) -> String {
    let mut out: String = actions
        .runs
        .iter()
        .map(|r| format!("##### {} on {}\n{}", r.file, r.event, r.log()))
        .collect();
    let dir = actions.job.fake.git_dir_path(OWNER, REPO);
    let history = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&dir)
        .args(["log", "--format=%h %an: %s%n%b", "navin/ledger"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.push_str(&format!("##### navin/ledger\n{history}"));
    out
}

/// A store as the App keeps the ledger: its key, its committer, its seal scope.
fn app_store(job: &Job, key: &str) -> (navin_ledger::store::Store, tempfile::TempDir) {
    use navin_ledger::store::{SealKey, Store, StoreConfig};
    let dir = tempfile::tempdir().expect("tmp");
    let repo = git2::Repository::init_bare(dir.path()).expect("init");
    repo.remote("origin", &job.fake.git_remote_url(OWNER, REPO))
        .expect("remote");
    let token = job
        .fake
        .actions_token(OWNER, REPO, &[("contents", "write")]);
    let store = Store::open(
        dir.path(),
        StoreConfig {
            branch: "navin/ledger".into(),
            remote: Some("origin".into()),
            token: Some(token),
            committer_name: "navin[bot]".into(),
            seal_key: Some(SealKey::from_text(key).expect("key")),
            repository: navin_ledger::store::github_repository(
                Some(job.fake.repo_id(OWNER, REPO)),
                &format!("{OWNER}/{REPO}"),
            ),
            ..StoreConfig::default()
        },
    )
    .expect("store");
    (store, dir)
}

#[test]
fn the_app_and_the_action_share_one_sealed_ledger_through_one_key_and_a_job_without_it_writes_nothing(
) {
    use navin_ledger::model::{Actor, Origin, Validation};
    use navin_ledger::{Ctx, InitArgs, NewTask, Operation};
    let job = Job::for_events();
    let fake = job.fake.clone();
    let key = "9e".repeat(32);
    let issue = fake.create_issue(OWNER, REPO, "Widget API", "", "alice");
    // The App started the mission: a sealed ledger.
    let (app, _app_dir) = app_store(&job, &key);
    let ctx = Ctx::new(chrono::Utc::now(), Actor::Human("alice".into()));
    app.transact(
        &Operation::Init(InitArgs {
            goal: "Ship the widget API".into(),
            steps: vec![NewTask {
                id: "S1".into(),
                title: "Build it".into(),
                validation: Validation::Test,
                ..NewTask::default()
            }],
            origin: Some(Origin {
                repository: Some(format!("{OWNER}/{REPO}")),
                issue: Some(issue),
                plan_id: None,
            }),
            ..InitArgs::default()
        }),
        &ctx,
    )
    .expect("the App writes");

    let navin = example("navin.yml").replace("planner: llm", "planner: builtin");
    let mut actions = Actions::new(
        job,
        vec![("navin.yml", navin)],
        Arc::new(ScriptedAgent::default()),
    );
    actions.runner.secret("NAVIN_LEDGER_KEY", &key);
    let comment = |actions: &Actions, body: &str| {
        let id = fake.add_comment(OWNER, REPO, issue, "alice", body);
        actions
            .job
            .fixture("issue_comment.created")
            .number(issue)
            .comment_id(id)
            .comment_body(body)
            .comment_author("alice", fake.user_id("alice"), UserKind::User)
            .sender("alice", fake.user_id("alice"), UserKind::User)
            .into_json()
    };

    // The Action, given the same key as its `ledger-key`, writes on the App's ledger,
    // and the App reads what it wrote as its own.
    let event = comment(&actions, "/update fact the API is frozen");
    actions.deliver("issue_comment", event, "alice", None);
    let run = actions.runs.last().expect("a run");
    assert_eq!(run.job("event").result, Outcome::Success, "{}", run.log());
    let read = app
        .read()
        .expect("the App reads the Action's commit")
        .expect("ledger");
    assert!(
        read.ledger
            .mission
            .facts
            .iter()
            .any(|f| f.contains("frozen")),
        "{:?}",
        read.ledger.mission.facts
    );
    let tip = fake.branch_sha(OWNER, REPO, "navin/ledger");

    // A workflow whose `ledger-key` secret is missing writes nothing and says which
    // setting to add; the App's ledger is untouched and still its own.
    actions.runner.secret("NAVIN_LEDGER_KEY", "");
    let event = comment(&actions, "/pause lunch");
    actions.deliver("issue_comment", event, "alice", None);
    let run = actions.runs.last().expect("a run");
    assert_eq!(run.job("event").result, Outcome::Failure, "{}", run.log());
    assert!(
        run.log().contains("`ledger-key` input") && run.log().contains("NAVIN_LEDGER_KEY"),
        "{}",
        run.log()
    );
    assert_eq!(
        fake.branch_sha(OWNER, REPO, "navin/ledger"),
        tip,
        "nothing written"
    );
    let read = app.read().expect("still the App's").expect("ledger");
    assert_ne!(read.ledger.mission.status.as_str(), "paused");
}
