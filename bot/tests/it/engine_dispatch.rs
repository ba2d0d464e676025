//! Dispatch end to end, in the World DSL: ready steps get an issue with the sub-agent
//! brief and an agent workflow run, once each, as steps become ready in dependency order.

use crate::world::World;

const CONFIG: &str = "dispatch:\n  issues: true\n  labels: [navin-step, agent]\n  workflow: agent.yml\nevidence:\n  required_checks:\n    test: [ci/test]\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_steps_get_one_brief_issue_and_one_agent_run_each_in_dependency_order() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", CONFIG)]);
    w.workflow("agent.yml", "agent");
    let tasks = "- [ ] Write the parser in src/parse.rs\n- [ ] Write the docs\n";
    let issue = w.issue("Ship it", tasks);
    let mission = w.comment(issue, "alice", "/mission ship the parser").await;
    let first = w.last_delivery();
    let panel = w.reply().await;
    assert!(panel.starts_with("<!-- navin:panel"), "{panel}");
    assert!(w.reactions(mission).contains(&"+1".to_owned()));

    // Both task-list steps are ready: one issue each, carrying the brief.
    let briefs = w.issues("navin-step");
    assert_eq!(briefs.len(), 2, "{briefs:?}");
    let t1 = &briefs[0];
    assert_eq!(t1.title, "[navin T1] Write the parser in src/parse.rs");
    let brief = t1.body.as_deref().unwrap_or_default();
    for field in [
        "### Role",
        "### Goal",
        "### Context paths",
        "### Constraints",
        "### Done when",
        "### Do not",
    ] {
        assert!(brief.contains(field), "{field} missing:\n{brief}");
    }
    assert!(brief.contains("`src/parse.rs`"), "{brief}");
    assert!(brief.contains("Navin-Step: T1"), "{brief}");
    assert_eq!(t1.labels, ["navin-step", "agent"]);

    // One agent workflow run per dispatched step, on the default branch, with its inputs.
    let runs = w.fake().dispatches();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs
        .iter()
        .all(|d| d.workflow == "agent.yml" && d.git_ref == "main"));
    let inputs: Vec<(&str, &str)> = runs
        .iter()
        .map(|d| {
            let input = |name: &str| d.inputs[name].as_str().unwrap();
            (input("step"), input("issue"))
        })
        .collect();
    let t1_issue = t1.number.to_string();
    assert!(inputs.contains(&("T1", t1_issue.as_str())), "{inputs:?}");

    // The ledger remembers each step's issue; the panel links the briefs.
    assert_eq!(w.step("T1").links.issue, Some(t1.number));
    assert_eq!(w.step("T2").links.issue, Some(briefs[1].number));
    // Steps are handed out before the panel is drawn, so the first panel links the briefs.
    let link = format!("brief [#{}]", t1.number);
    assert!(panel.contains(&link), "{panel}");

    // The same delivery run again (as after a crash) opens no second issue and starts no
    // second agent.
    w.rerun(&first).await;
    assert_eq!(w.issues("navin-step").len(), 2);
    assert_eq!(w.fake().dispatches().len(), 2);

    // A step added after T1 is not ready, so it waits; finishing T1 hands it out.
    let add = "/step add T3 Announce the parser --after T1";
    let added = w.comment(issue, "alice", add).await;
    assert!(w.reactions(added).contains(&"+1".to_owned()));
    assert_eq!(w.issues("navin-step").len(), 2, "T3 waits for T1");
    let done = w.comment(issue, "alice", "/done T1 parser merged").await;
    assert!(w.reactions(done).contains(&"+1".to_owned()));
    let briefs = w.issues("navin-step");
    assert_eq!(briefs.len(), 3, "{briefs:?}");
    assert!(briefs[2].title.starts_with("[navin T3]"));
    assert_eq!(w.fake().dispatches().len(), 3);
    w.finish().await;
}
