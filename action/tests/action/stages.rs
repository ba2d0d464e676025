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
