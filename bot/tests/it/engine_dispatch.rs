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

const COPILOT: &str =
    "dispatch:\n  agent: copilot\nmodels:\n  dev: gpt-5.3-codex\n  deep: claude-opus-4.6\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_dispatch_assigns_each_step_issue_to_copilot_with_the_user_token_once() {
    let mut w = World::with_agent_token("dora").await;
    w.commit(&[(".github/navin.yml", COPILOT)]);
    let issue = w.issue("Ship it", "- [ ] Write the parser\n- [ ] Write the docs\n");
    w.comment(issue, "alice", "/mission ship the parser").await;
    let first = w.last_delivery();
    let panel = w.reply().await;
    assert!(!panel.contains("no user token"), "{panel}");

    let briefs = w.issues("navin-step");
    assert_eq!(briefs.len(), 2, "agent: copilot opens the step issues");
    for brief in &briefs {
        // The fake, like GitHub, ignores Copilot unless a user token asks: an
        // installation token would have left the issue unassigned.
        assert_eq!(brief.assignees, ["Copilot"], "{}", brief.title);
        let assignment = brief
            .agent_assignment
            .as_ref()
            .expect("agent_assignment sent");
        assert_eq!(assignment["target_repo"], "octo-org/hello");
        assert_eq!(assignment["base_branch"], "main");
        // A staged /mission asks for the deep model, in the request and the brief.
        assert_eq!(assignment["model"], "claude-opus-4.6");
        let step = if brief.title.contains("T1") {
            "T1"
        } else {
            "T2"
        };
        let instructions = assignment["custom_instructions"].as_str().unwrap();
        assert!(
            instructions.contains(&format!("Navin-Step: {step}")),
            "{instructions}"
        );
        let body = brief.body.as_deref().unwrap_or_default();
        assert!(body.contains("Model: `claude-opus-4.6`"), "{body}");
    }
    assert_eq!(w.fake().count("POST", "/repos/*/*/issues/*/assignees"), 2);
    assert!(
        w.fake().dispatches().is_empty(),
        "no workflow is configured"
    );

    // The same delivery again finds the issues assigned: nothing is sent twice.
    w.rerun(&first).await;
    assert_eq!(w.fake().count("POST", "/repos/*/*/issues/*/assignees"), 2);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_dispatch_without_a_user_token_opens_the_issues_and_says_so_once_on_the_panel() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", COPILOT)]);
    let issue = w.issue("Ship it", "- [ ] Write the parser\n- [ ] Write the docs\n");
    w.comment(issue, "alice", "/mission ship the parser").await;
    let panel = w.reply().await;
    let notice = "this Navin has no user token";
    assert_eq!(panel.matches(notice).count(), 1, "{panel}");
    assert!(panel.contains("--agent-token-file"), "{panel}");
    assert!(panel.contains("`agent-token`"), "{panel}");
    let briefs = w.issues("navin-step");
    assert_eq!(briefs.len(), 2);
    assert!(briefs.iter().all(|b| b.assignees.is_empty()), "{briefs:?}");
    assert_eq!(w.fake().count("POST", "/repos/*/*/issues/*/assignees"), 0);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cruise_hands_out_every_stage_of_an_approved_plan_at_once_with_the_dev_model() {
    let mut w = World::new().await;
    let config = "dispatch:\n  agent: workflow\n  workflow: agent.yml\nmodels:\n  dev: gpt-5.3-codex\n  deep: claude-opus-4.6\n";
    w.commit(&[(".github/navin.yml", config)]);
    w.workflow("agent.yml", "agent");
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    w.comment(
        issue,
        "alice",
        "/plan make the greeting configurable in src/greet.rs and src/lib.rs",
    )
    .await;
    w.reply().await;
    // A writer splits the plan into two ordered stages: a /mission would run them
    // one after the other.
    let id = format!("issue-{issue}");
    let text = w
        .ledger_text(&navin_ledger::plan::record::text_path(&id))
        .unwrap();
    let edited = format!(
        "{}\n## Stages\n\n### Stage 1: The greeting\n\n- File: src/greet.rs\n- Verification: cargo test\n\n### Stage 2: The library root\n\n- File: src/lib.rs\n- Verification: cargo test\n",
        text.trim_end()
    );
    let edit = format!("/plan edit\n\n````markdown\n{edited}\n````\n");
    let c = w.comment(issue, "alice", &edit).await;
    assert!(
        w.reactions(c).contains(&"+1".to_owned()),
        "{:?}",
        w.reactions(c)
    );
    w.comment(issue, "maya", "/approve").await;
    let text = w
        .ledger_text(&navin_ledger::plan::record::text_path(&id))
        .unwrap();
    let doc = navin_ledger::plan::PlanDocument::parse(&text).unwrap();
    let staged = navin_ledger::plan::convert::plan_steps(doc.plan());
    assert_eq!(staged.len(), 2);
    assert_eq!(staged[1].depends_on, ["S1"], "staged: S2 waits for S1");

    w.comment(issue, "alice", "/cruise").await;
    w.reply().await;
    let ledger = w.ledger().unwrap();
    assert_eq!(
        ledger.mission.mode,
        navin_ledger::model::MissionMode::Cruise
    );
    assert_eq!(ledger.board.tasks.len(), staged.len());
    assert!(ledger.board.tasks.iter().all(|t| t.depends_on.is_empty()));
    // Every step is ready, so every step gets its issue and its agent run at once.
    let briefs = w.issues("navin-step");
    assert_eq!(briefs.len(), staged.len(), "{briefs:?}");
    let runs = w.fake().dispatches();
    assert_eq!(runs.len(), staged.len(), "{runs:?}");
    assert!(
        runs.iter().all(|d| d.inputs["model"] == "gpt-5.3-codex"),
        "{runs:?}"
    );
    let body = briefs[0].body.as_deref().unwrap_or_default();
    assert!(
        body.contains("Model: `gpt-5.3-codex` (this cruise mission"),
        "{body}"
    );
    // The edit that made the stages is in every brief, marked binding.
    for brief in &briefs {
        let body = brief.body.as_deref().unwrap_or_default();
        let edits = body
            .split_once("### Plan edits (binding)")
            .map(|(_, rest)| rest)
            .unwrap_or_else(|| panic!("no binding plan edits in {body}"));
        assert!(
            edits.contains("Stage 2") && edits.contains("The library root"),
            "{edits}"
        );
    }
    w.finish().await;
}
