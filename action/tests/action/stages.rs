//! Stages and missing info through `mode: event` and `ready-matrix`: a held stage is not in the matrix until a writer's `/continue`; a ready step that names an open question pauses the mission until `/answer`.

use chrono::Utc;
use navin_ledger::model::{Actor, MissionStatus, StagePolicy, Validation};
use navin_ledger::ops::{Ctx, InitArgs, NewTask, Operation};
use navin_ledger::Origin;
use serde_json::Value;

use crate::harness::{Job, OWNER, REPO};

fn new_issue(job: &Job) -> u64 {
    job.fake
        .create_issue(OWNER, REPO, "Widget API", "", "alice")
}

fn seed(job: &Job, issue: u64, steps: Vec<NewTask>, missing_info: Vec<String>) {
    let (store, _dir) = job.store();
    let ctx = Ctx::new(Utc::now(), Actor::Human("alice".into()));
    store
        .transact(
            &Operation::Init(InitArgs {
                goal: "Ship the widget API in stages".into(),
                steps,
                missing_info,
                stages: StagePolicy::Pause,
                origin: Some(Origin {
                    repository: Some(format!("{OWNER}/{REPO}")),
                    issue: Some(issue),
                    plan_id: None,
                }),
                ..InitArgs::default()
            }),
            &ctx,
        )
        .expect("init");
}

fn stage(id: &str, deps: &[&str], n: u32, description: &str) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("Stage {n}"),
        description: Some(description.into()),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation: Validation::Manual,
        stage: Some(n),
        ..NewTask::default()
    }
}

fn matrix(job: &Job) -> Vec<String> {
    let r = job.run("ready-matrix", "workflow_dispatch", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let steps: Value = serde_json::from_str(&r.outputs["ready-steps"]).expect("JSON");
    steps
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_held_stage_stays_out_of_the_ready_matrix_until_a_writer_continues() {
    let job = Job::for_events();
    let issue = new_issue(&job);
    seed(
        &job,
        issue,
        vec![
            stage("S1", &[], 1, "Files: src/api.rs."),
            stage("S2", &["S1"], 2, "Files: src/docs.rs."),
        ],
        vec![],
    );
    assert_eq!(matrix(&job), ["S1"]);
    let (_, event) = job.comment_event(issue, "alice", "/done S1 checked the API by hand");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(matrix(&job).is_empty(), "stage 2 waits for /continue");
    let panel = job
        .navin_comments(issue)
        .into_iter()
        .find(|c| c.starts_with("<!-- navin:panel"))
        .expect("a panel");
    assert!(panel.contains("`/continue` releases stage 2"), "{panel}");

    let (_, event) = job.comment_event(issue, "alice", "/continue");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(matrix(&job), ["S2"]);
    let last = job
        .ledger()
        .expect("ledger")
        .mission
        .history
        .last()
        .cloned();
    assert_eq!(last.map(|h| h.actor), Some(Actor::Human("alice".into())));
}

#[test]
fn a_step_named_by_missing_info_pauses_the_mission_and_the_answer_resumes_it() {
    let job = Job::for_events();
    let issue = new_issue(&job);
    seed(
        &job,
        issue,
        vec![stage("S1", &[], 1, "Files: src/api.rs.")],
        vec!["Which version does src/api.rs serve?".into()],
    );
    let (_, event) = job.comment_event(issue, "alice", "/update fact the API is public");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let m = job.ledger().expect("ledger").mission;
    assert_eq!(m.status, MissionStatus::Paused);
    let asks: Vec<String> = job
        .navin_comments(issue)
        .into_iter()
        .filter(|c| c.contains("Navin needs an answer"))
        .collect();
    assert_eq!(asks.len(), 1, "{asks:?}");
    assert!(
        matrix(&job).is_empty(),
        "a paused mission hands out nothing"
    );

    let (_, event) = job.comment_event(issue, "alice", "/answer 1 v2");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let m = job.ledger().expect("ledger").mission;
    assert_eq!(m.status, MissionStatus::Running);
    assert_eq!(matrix(&job), ["S1"]);
    assert!(m
        .facts
        .contains(&"Which version does src/api.rs serve? → v2".to_owned()));
}

/// A `pull_request` event for a pull request on `branch` with `body`.
fn pull_request_event(job: &Job, branch: &str, body: &str) -> std::path::PathBuf {
    let event = serde_json::json!({
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "body": body,
            "head": {"ref": branch, "sha": "8f14e45fceea167a5a36dedd4bea2543a1b2c3d4"},
        },
    });
    job.write_event("pull_request", &event)
}

fn verified(steps: Vec<(&str, Vec<&str>)>) -> Vec<NewTask> {
    steps
        .into_iter()
        .enumerate()
        .map(|(i, (id, commands))| NewTask {
            commands: commands.into_iter().map(str::to_owned).collect(),
            validation: Validation::Test,
            ..stage(
                id,
                &[],
                u32::try_from(i + 1).unwrap_or(1),
                "Files: src/api.rs.",
            )
        })
        .collect()
}

#[test]
fn verify_runs_the_stage_commands_of_the_pull_requests_step_and_fails_the_job_when_one_fails() {
    let job = Job::for_events();
    let issue = new_issue(&job);
    seed(
        &job,
        issue,
        verified(vec![
            ("S1", vec!["true", "sh -c 'echo checked > verified.txt'"]),
            ("S2", vec!["true", "sh -c 'echo broken widget >&2; exit 3'"]),
        ]),
        vec![],
    );
    let event = pull_request_event(&job, "navin/S1-api", "Builds the API.");
    let r = job.run("verify", "pull_request", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.summary.contains("## Navin verify: S1"), "{}", r.summary);
    assert!(r.summary.contains("✅ passed"), "{}", r.summary);
    assert_eq!(r.outputs["step"], "S1");
    let ran = std::fs::read_to_string(job.dir.path().join("workspace/verified.txt"))
        .expect("the command ran in the checkout");
    assert_eq!(ran.trim(), "checked");

    let event = pull_request_event(&job, "feature/x", "Navin-Step: S2\n");
    let r = job.run("verify", "pull_request", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("S2's verification failed") && e.contains("exit 3")),
        "{}",
        r.stdout
    );
    assert!(r.summary.contains("❌ exited 3"), "{}", r.summary);
    assert!(
        r.summary.contains("broken widget"),
        "the failing output: {}",
        r.summary
    );
    // Running it changes nothing on the ledger: the job's own check is the evidence.
    assert!(job
        .ledger()
        .expect("ledger")
        .board
        .tasks
        .iter()
        .all(|t| t.evidence.is_empty()));
}

#[test]
fn verify_passes_a_pull_request_that_names_no_step() {
    let job = Job::for_events();
    let issue = new_issue(&job);
    seed(&job, issue, verified(vec![("S1", vec!["false"])]), vec![]);
    let event = pull_request_event(&job, "fix/typo", "Fixes a typo.");
    let r = job.run("verify", "pull_request", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.lines_starting("::notice")
            .iter()
            .any(|n| n.contains("names no step")),
        "{}",
        r.stdout
    );
}

#[test]
fn a_destructive_step_taken_up_in_event_mode_is_checkpointed_before_it_starts() {
    use navin_e2e::fake::PullSpec;
    let job = Job::for_events();
    let issue = new_issue(&job);
    seed(
        &job,
        issue,
        vec![NewTask {
            destructive: Some("deletes src/old.rs".into()),
            ..stage("S1", &[], 1, "Files: src/old.rs.")
        }],
        vec![],
    );
    let spec = PullSpec::new("navin/S1-drop")
        .author("alice")
        .title("Drop the old API")
        .body("Navin-Step: S1\n")
        .file("src/new.rs", "pub fn f() {}\n");
    let number = job.fake.create_pull(OWNER, REPO, spec);
    let head = job.fake.pull(OWNER, REPO, number).head_sha;
    let opened = job.fixture_event("pull_request.opened", |p| {
        p.number(number)
            .head_sha(&head)
            .head_ref("navin/S1-drop")
            .set("/pull_request/body", serde_json::json!("Navin-Step: S1\n"))
    });
    let r = job.run("event", "pull_request", Some(&opened), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(
        ledger.board.task("S1").map(|t| t.status.as_str()),
        Some("in_progress")
    );
    let mark = ledger
        .mission
        .checkpoints
        .last()
        .cloned()
        .expect("a checkpoint");
    assert_eq!(mark.reason, "before S1, which deletes src/old.rs");
    assert_eq!(mark.version, ledger.mission.version - 1);
    // The ref is pushed with the ledger, so `/rollback` finds it from any clone.
    let name = format!("refs/navin/checkpoints/v{}", mark.version);
    let remote = git2::Repository::open_bare(job.fake.git_dir_path(OWNER, REPO)).expect("repo");
    assert!(remote.refname_to_id(&name).is_ok(), "{name} is on GitHub");
    let (store, _dir) = job.store();
    store.read().expect("sync");
    let before = store.read_version(mark.version).expect("v is readable");
    assert_eq!(
        before.board.task("S1").map(|t| t.status.as_str()),
        Some("planned")
    );
}

/// `git ARGS` in `dir`, its output as text.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    String::from_utf8_lossy(&crate::harness::git(dir, args))
        .trim()
        .to_owned()
}

const PY_TESTS: &str = "from calc import parse\n\n\ndef test_adds():\n    assert 1 + 1 == 2\n\n\ndef test_known_broken():\n    assert False\n\n\ndef test_parses():\n    assert parse('2') == 2\n";

/// The workspace checked out as actions/checkout would with `fetch-depth: 0`: a base
/// commit where `test_known_broken` and `test_parses` fail, then the pull request's
/// head with `calc.py` fixed and `tests` as given. The pull request event names the base.
fn python_pull_request(job: &Job, tests: &str) -> std::path::PathBuf {
    let ws = job.dir.path().join("workspace");
    std::fs::create_dir_all(&ws).expect("workspace");
    git(&ws, &["init", "-q"]);
    std::fs::write(ws.join(".gitignore"), "__pycache__/\n.pytest_cache/\n").expect("write");
    std::fs::write(
        ws.join("calc.py"),
        "def parse(s):\n    raise NotImplementedError\n",
    )
    .expect("write");
    std::fs::write(ws.join("test_calc.py"), PY_TESTS).expect("write");
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "-qm", "base"]);
    let base = git(&ws, &["rev-parse", "HEAD"]);
    std::fs::write(ws.join("calc.py"), "def parse(s):\n    return int(s)\n").expect("write");
    std::fs::write(ws.join("test_calc.py"), tests).expect("write");
    git(&ws, &["commit", "-qam", "parse numbers"]);
    let event = serde_json::json!({
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "body": "Navin-Step: S1\n",
            "head": {"ref": "navin/S1-api", "sha": git(&ws, &["rev-parse", "HEAD"])},
            "base": {"ref": "main", "sha": base},
        },
    });
    job.write_event("pull_request", &event)
}

#[test]
fn verify_passes_a_pull_request_whose_only_failure_fails_on_its_base_too_and_fails_a_regression() {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("pytest").is_file()));
    assert!(
        found,
        "pytest is not on PATH: apt-get install python3-pytest, as .ci/run does"
    );
    // The pull request's verify job, on a fresh runner with a mission whose S1 runs pytest.
    let verify = |tests: &str| {
        let job = Job::for_events();
        let issue = new_issue(&job);
        seed(
            &job,
            issue,
            verified(vec![("S1", vec!["pytest -q"])]),
            vec![],
        );
        let event = python_pull_request(&job, tests);
        job.run("verify", "pull_request", Some(&event), Some(&job.token))
    };
    let r = verify(PY_TESTS);
    assert_eq!(r.code, Some(0), "{r:?}");
    for said in [
        "1 failing on the base already: test_calc.py::test_known_broken",
        "1 fail-to-pass: test_calc.py::test_parses",
    ] {
        assert!(r.summary.contains(said), "{said}: {}", r.summary);
    }
    let r = verify(&PY_TESTS.replace("1 + 1 == 2", "1 + 1 == 3"));
    assert_eq!(r.code, Some(1), "{r:?}");
    let said = "1 new failure(s): test_calc.py::test_adds";
    assert!(r.summary.contains(said), "{}", r.summary);
}
