//! The whole lifecycle on GitHub, end to end in the World DSL: `/plan` on a pull request,
//! a review approval, `/mission` from the approved plan, one linked pull request per
//! step with green CI, steps done in dependency order, the mission closed as done, and
//! the typed ledger read at every stage.

use navin_e2e::fake::{PullSpec, GITHUB_ACTIONS_APP_ID};
use navin_ledger::model::{MissionStatus, TaskStatus, Validation};
use navin_ledger::plan::record::RecordStatus;

use crate::engine_plans::{carols_pr, conclusion, GREETING};
use crate::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_review_mission_and_green_ci_close_every_step_in_dependency_order() {
    let mut w = World::new().await;

    // carol opens the PR that will carry the plan; alice asks Navin for a plan on it.
    let (pr, plan_head) = carols_pr(&mut w, &[GREETING], "Let callers choose the greeting.").await;
    let asked = w
        .comment(pr, "alice", "/plan make the greeting configurable")
        .await;
    let plan = w.reply().await;
    let marker = format!("<!-- navin:plan id=pr-{pr} ");
    assert!(plan.starts_with(&marker), "{plan}");
    assert!(w.reactions(asked).contains(&"+1".to_owned()));
    let plan_id = format!("pr-{pr}");
    assert_eq!(
        w.plan_record(&plan_id).unwrap().status,
        RecordStatus::Pending
    );
    let check = w.plan_check(&plan_head);
    assert_eq!(
        conclusion(&check),
        "action_required",
        "navin/plan waits for the approval"
    );

    // alice (a writer, not the PR's author) approves by review: the plan is approved.
    let review = w.review(pr, "alice", "approved").await;
    let check = w.plan_check(&plan_head);
    assert_eq!(conclusion(&check), "success", "navin/plan is green");
    let record = w.plan_record(&plan_id).unwrap();
    assert_eq!(record.status, RecordStatus::Approved, "{record:#?}");
    let approval = record.approvals.iter().find(|a| a.approver == "alice");
    let approval = approval.unwrap_or_else(|| panic!("no approval by alice: {record:#?}"));
    assert_eq!(approval.plan_hash, record.hash);
    assert_eq!(approval.review_id, Some(review));

    // /mission from the approved plan; a documentation step after the first change.
    let mission = w.comment(pr, "alice", "/mission").await;
    let panel = w.reply().await;
    assert!(panel.starts_with("<!-- navin:panel"), "{panel}");
    assert!(w.reactions(mission).contains(&"+1".to_owned()));
    let started = w.ledger().unwrap().mission;
    assert_eq!(started.status, MissionStatus::Running);
    let origin = started.origin.and_then(|o| o.plan_id);
    assert_eq!(origin.as_deref(), Some(plan_id.as_str()));
    let add = "/step add D1 \"Document the option\" --after C1 --validation test";
    let added = w.comment(pr, "alice", add).await;
    assert!(w.reactions(added).contains(&"+1".to_owned()));
    let steps = w.ledger().unwrap().steps();
    assert!(steps.len() >= 2, "{steps:?}");
    assert!(
        steps.iter().all(|s| s.validation == Validation::Test),
        "every step is proven by CI: {steps:?}"
    );

    // One PR per step, linked by `Navin-Step:`; green CI arrives for the dependent step
    // first, then for the others in reverse order.
    let mut heads = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let id = &step.id;
        let spec = PullSpec::new(&format!("work/{}", id.to_ascii_lowercase()))
            .author("carol")
            .title(&format!("Step {id}"))
            .body(&format!("Implements the step.\n\nNavin-Step: {id}\n"))
            .file(&format!("notes/{i}.md"), &format!("step {id}\n"));
        let (pr, head) = w.open_pull(spec).await;
        heads.push((id.clone(), head, pr));
    }
    for (id, head, _) in &heads {
        let linked = w.step(id).links.head_sha;
        assert_eq!(
            linked.as_ref(),
            Some(head),
            "{id} is linked to its PR's head"
        );
    }
    for (id, head, _) in heads.iter().rev() {
        w.ci(head, "ci/test", "success").await;
        if id == "D1" {
            let d1 = w.step("D1");
            assert_eq!(
                d1.status,
                TaskStatus::Planned,
                "D1 is green but waits for C1"
            );
        }
    }
    // Done on merge (the default): merged last step first, each waits for its
    // dependencies, then they close in order as each one's dependency is done.
    for (id, _, pr) in heads.iter().rev() {
        w.merge(*pr).await;
        if id == "D1" {
            assert_ne!(w.step("D1").status, TaskStatus::Done, "D1 waits for C1");
        }
    }
    let ledger = w.ledger().unwrap();
    let open: Vec<&str> = ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.status != TaskStatus::Done)
        .map(|t| t.id.as_str())
        .collect();
    assert!(open.is_empty(), "not every step is done: {open:?}");
    // The steps in the order the ledger marked them done, each once.
    let history = &ledger.mission.history;
    let order: Vec<&str> = history
        .iter()
        .filter(|h| h.operation == "done")
        .filter_map(|h| h.reason.split_whitespace().next())
        .collect();
    let pos = |id: &str| order.iter().position(|s| *s == id).unwrap();
    assert!(pos("C1") < pos("D1"), "done order {order:?}");
    assert_eq!(order.len(), steps.len(), "each step done once: {order:?}");
    let evidence = &ledger.board.tasks[0].evidence[0];
    assert_eq!(evidence.name.as_deref(), Some("ci/test"));
    assert_eq!(evidence.conclusion.as_deref(), Some("success"));
    assert_eq!(evidence.app_id, Some(GITHUB_ACTIONS_APP_ID));

    // The last green run closed the mission as done, with nobody commenting
    // `/mission close`; the ledger and the panel show it.
    let closed = w.ledger().unwrap().mission;
    assert_eq!(closed.status, MissionStatus::Done, "{closed:#?}");
    let finish = closed.history.last().expect("history");
    assert_eq!(
        (finish.operation.as_str(), finish.reason.as_str()),
        ("close", "mission closed as done: every step is done")
    );
    let panel = w.edited("<!-- navin:panel");
    assert!(panel.contains("done"), "{panel}");
    w.finish().await;
}
