//! Several people editing one plan at once, end to end: saves from the dashboard's editor
//! (`Engine::edit_plan`) and `/plan edit` comments written before another edit landed are
//! merged section by section with what was saved since, overlapping edits come back as a
//! conflict that writes nothing, and a resubmitted save applies once.

use navin_engine::{PlanEditOutcome, PlanEditRequest};
use navin_ledger::plan::record::{text_path, RecordStatus};
use navin_ledger::plan::{Plan, PlanDocument, PlanErrorKind, Section};

use crate::engine_plans::PLAN;
use crate::world::World;

/// A plan on a new issue, asked for by alice: its id, text and hash.
async fn planned(w: &mut World) -> (u64, String, String, String) {
    let issue = w.issue("Greeting", "Make the greeting configurable.");
    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let comment = w.reply().await;
    assert!(comment.starts_with(PLAN), "{comment}");
    let id = format!("issue-{issue}");
    let text = w.ledger_text(&text_path(&id)).expect("the plan's text");
    let hash = w.plan_record(&id).expect("the plan's record").hash;
    (issue, id, text, hash)
}

/// `text` with `change` made to its typed plan, as canonical markdown.
fn edit(text: &str, change: impl FnOnce(&mut Plan)) -> String {
    let mut plan = PlanDocument::parse(text).unwrap().into_plan();
    change(&mut plan);
    PlanDocument::from_plan(&plan).unwrap().text().to_owned()
}

fn plan_of(text: &str) -> Plan {
    PlanDocument::parse(text).unwrap().into_plan()
}

/// A save by `editor` of `text`, started from `base_hash`.
fn save(
    w: &World,
    id: &str,
    base_hash: &str,
    text: &str,
    editor: &str,
    edit_id: &str,
) -> PlanEditRequest {
    let (repository, installation) = w.repository();
    PlanEditRequest {
        installation,
        repository,
        plan_id: id.to_owned(),
        base_hash: base_hash.to_owned(),
        text: text.to_owned(),
        editor: editor.to_owned(),
        editor_id: w.fake().user_id(editor),
        edit_id: edit_id.to_owned(),
    }
}

fn saved_hash(outcome: &PlanEditOutcome) -> String {
    match outcome {
        PlanEditOutcome::Saved { hash, .. } => hash.clone(),
        other => panic!("expected a save, got {other:#?}"),
    }
}

/// `/plan edit` with the whole `text`, as a comment body.
fn plan_edit(text: &str) -> String {
    format!("/plan edit\n\n````markdown\n{text}````\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_saves_from_one_base_to_different_sections_both_land_as_each_editors_edit() {
    let mut w = World::new().await;
    w.grant("carol", "write");
    let (issue, id, base, base_hash) = planned(&mut w).await;
    w.comment(issue, "maya", "/approve").await;
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Approved);

    let goal = "Let each user pick the greeting, defaulting to hello.";
    let risk = "A user-chosen greeting may be empty.";
    let alice = edit(&base, |p| p.goal = goal.to_owned());
    let carol = edit(&base, |p| p.risks[0] = risk.to_owned());
    let engine = w.engine();
    let (a, c) = tokio::join!(
        engine.edit_plan(save(&w, &id, &base_hash, &alice, "alice", "form-a1")),
        engine.edit_plan(save(&w, &id, &base_hash, &carol, "carol", "form-c1")),
    );
    let (a, c) = (a.unwrap(), c.unwrap());
    let (a, c) = (saved_hash(&a), saved_hash(&c));

    let record = w.plan_record(&id).unwrap();
    let text = w.ledger_text(&text_path(&id)).unwrap();
    let plan = plan_of(&text);
    assert_eq!(plan.goal, goal);
    assert_eq!(plan.risks[0], risk);
    assert!(
        record.hash == a || record.hash == c,
        "the later save's hash is current"
    );
    let editors: Vec<(&str, Option<u64>)> = record
        .edits
        .iter()
        .map(|e| (e.by.as_str(), e.by_id))
        .collect();
    assert_eq!(editors.len(), 2, "{editors:?}");
    for who in ["alice", "carol"] {
        assert!(
            editors.contains(&(who, Some(w.fake().user_id(who)))),
            "{who} is named with their user id: {editors:?}"
        );
    }
    assert!(
        record
            .edits
            .iter()
            .any(|e| e.via.as_deref().is_some_and(|v| v.contains("merged"))),
        "the later save says it was merged: {:?}",
        record.edits
    );
    // The approval was of the text before both: stale, and the plan waits again.
    assert_eq!(record.status, RecordStatus::Pending);
    assert_ne!(record.approvals[0].plan_hash, record.hash);
    let comment = w.latest(PLAN);
    assert!(comment.contains(risk), "{comment}");
    assert!(comment.contains("stale"), "{comment}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_saves_to_different_lines_of_one_section_merge_line_by_line() {
    let mut w = World::new().await;
    w.grant("carol", "write");
    let (_, id, first, first_hash) = planned(&mut w).await;
    let engine = w.engine();
    let lines = "Request in.\nRouter picks a handler.\nHandler builds the greeting.\nTemplate renders it.\nResponse out.";
    let base = edit(&first, |p| p.data_flow = lines.to_owned());
    let outcome = engine
        .edit_plan(save(&w, &id, &first_hash, &base, "alice", "form-a0"))
        .await
        .unwrap();
    let base_hash = saved_hash(&outcome);
    assert_eq!(
        outcome,
        PlanEditOutcome::Saved {
            hash: base_hash.clone(),
            merged_sections: vec![]
        },
        "a save from the current text merges nothing"
    );

    let alice = edit(&base, |p| {
        p.data_flow = p.data_flow.replace("Request in.", "A signed request in.")
    });
    let carol = edit(&base, |p| {
        p.data_flow = p
            .data_flow
            .replace("Response out.", "Response out, cached.")
    });
    let a = engine
        .edit_plan(save(&w, &id, &base_hash, &alice, "alice", "form-a1"))
        .await
        .unwrap();
    saved_hash(&a);
    let c = engine
        .edit_plan(save(&w, &id, &base_hash, &carol, "carol", "form-c1"))
        .await
        .unwrap();
    let PlanEditOutcome::Saved {
        merged_sections, ..
    } = c
    else {
        panic!("expected a merge, got {c:#?}");
    };
    assert_eq!(merged_sections, [Section::DataFlow]);
    let plan = plan_of(&w.ledger_text(&text_path(&id)).unwrap());
    assert_eq!(
        plan.data_flow,
        "A signed request in.\nRouter picks a handler.\nHandler builds the greeting.\nTemplate renders it.\nResponse out, cached."
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflicting_save_returns_both_versions_and_changes_nothing_on_the_ledger_branch() {
    let mut w = World::new().await;
    w.grant("carol", "write");
    let (_, id, base, base_hash) = planned(&mut w).await;
    let engine = w.engine();
    let alice = edit(&base, |p| {
        p.goal = "Greet in the user's language.".to_owned()
    });
    let carol = edit(&base, |p| p.goal = "Greet with the user's name.".to_owned());
    let a = engine
        .edit_plan(save(&w, &id, &base_hash, &alice, "alice", "form-a1"))
        .await
        .unwrap();
    let alice_hash = saved_hash(&a);
    let commits = w.ledger_commits();

    let c = engine
        .edit_plan(save(&w, &id, &base_hash, &carol, "carol", "form-c1"))
        .await
        .unwrap();
    let PlanEditOutcome::Conflict {
        current_hash,
        current_text,
        conflicts,
        invalid,
        draft,
    } = c
    else {
        panic!("expected a conflict, got {c:#?}");
    };
    assert_eq!(current_hash, alice_hash);
    assert_eq!(current_text, alice);
    assert_eq!(
        draft, alice,
        "carol changed only the conflicting goal: the draft is the current text"
    );
    assert_eq!(invalid, None);
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    let goal = &conflicts[0];
    assert_eq!(goal.section, Section::Goal);
    assert_eq!(goal.base.trim(), plan_of(&base).goal);
    assert_eq!(goal.ours.trim(), "Greet with the user's name.");
    assert_eq!(goal.theirs.trim(), "Greet in the user's language.");
    assert_eq!(w.ledger_commits(), commits, "nothing written");
    assert_eq!(w.ledger_text(&text_path(&id)).unwrap(), alice);
    assert_eq!(w.plan_record(&id).unwrap().edits.len(), 1);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resubmitted_save_applies_once_and_answers_with_what_it_stored() {
    let mut w = World::new().await;
    w.grant("carol", "write");
    let (_, id, base, base_hash) = planned(&mut w).await;
    let engine = w.engine();
    let alice = edit(&base, |p| {
        p.goal = "Greet in the user's language.".to_owned()
    });
    let request = save(&w, &id, &base_hash, &alice, "alice", "form-a1");
    let first = saved_hash(&engine.edit_plan(request.clone()).await.unwrap());
    // Someone else saves on top before alice's form is submitted again.
    let carol = edit(&alice, |p| p.risks[0] = "Translations may lag.".to_owned());
    saved_hash(
        &engine
            .edit_plan(save(&w, &id, &first, &carol, "carol", "form-c1"))
            .await
            .unwrap(),
    );
    let commits = w.ledger_commits();

    let again = engine.edit_plan(request).await.unwrap();
    assert_eq!(
        again,
        PlanEditOutcome::Saved {
            hash: first,
            merged_sections: vec![]
        }
    );
    assert_eq!(w.ledger_commits(), commits, "applied once");
    assert_eq!(w.ledger_text(&text_path(&id)).unwrap(), carol);
    let editors: Vec<String> = w
        .plan_record(&id)
        .unwrap()
        .edits
        .iter()
        .map(|e| e.by.clone())
        .collect();
    assert_eq!(editors, ["alice", "carol"]);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_save_is_refused_to_readers_and_an_invalid_text_names_its_line() {
    let mut w = World::new().await;
    let (_, id, base, base_hash) = planned(&mut w).await;
    let engine = w.engine();
    let commits = w.ledger_commits();
    let bobs = edit(&base, |p| p.goal = "Greet loudly.".to_owned());
    let refused = engine
        .edit_plan(save(&w, &id, &base_hash, &bobs, "bob", "form-b1"))
        .await
        .unwrap();
    let PlanEditOutcome::NotAllowed { reason } = refused else {
        panic!("expected a refusal, got {refused:#?}");
    };
    assert!(reason.contains("write access"), "{reason}");

    let broken = base.replacen("## Risks\n", "## Riskz\n", 1);
    let invalid = engine
        .edit_plan(save(&w, &id, &base_hash, &broken, "alice", "form-a1"))
        .await
        .unwrap();
    let PlanEditOutcome::Invalid(problem) = invalid else {
        panic!("expected the parser's problem, got {invalid:#?}");
    };
    let line = broken.lines().position(|l| l == "## Riskz").unwrap() + 1;
    assert_eq!(problem.line, Some(line));
    assert!(
        matches!(problem.kind, PlanErrorKind::UnknownSection { .. }),
        "{problem}"
    );

    let missing = engine
        .edit_plan(save(
            &w,
            &id.replace("issue-", "pr-"),
            &base_hash,
            &base,
            "alice",
            "form-a2",
        ))
        .await
        .unwrap();
    assert_eq!(missing, PlanEditOutcome::NotFound);
    assert_eq!(w.ledger_commits(), commits, "nothing written");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_edit_comment_written_before_another_edit_merges_with_it() {
    let mut w = World::new().await;
    w.grant("carol", "write");
    let (issue, id, base, _) = planned(&mut w).await;
    let risk = "A user-chosen greeting may be empty.";
    let goal = "Let each user pick the greeting.";
    // carol writes her edit; its webhook is still on its way when alice's lands.
    let stale = w.stored_comment(
        issue,
        "carol",
        &plan_edit(&edit(&base, |p| p.risks[0] = risk.to_owned())),
    );
    let alice = w
        .comment(
            issue,
            "alice",
            &plan_edit(&edit(&base, |p| p.goal = goal.to_owned())),
        )
        .await;
    assert!(w.reactions(alice).contains(&"+1".to_owned()));

    w.deliver_comment(stale).await;
    assert!(w.reactions(stale).contains(&"+1".to_owned()));
    let plan = plan_of(&w.ledger_text(&text_path(&id)).unwrap());
    assert_eq!(plan.goal, goal, "alice's edit is kept");
    assert_eq!(plan.risks[0], risk, "carol's edit lands on top");
    let record = w.plan_record(&id).unwrap();
    let editors: Vec<&str> = record.edits.iter().map(|e| e.by.as_str()).collect();
    assert_eq!(editors, ["alice", "carol"]);
    let via = record.edits[1].via.as_deref().unwrap_or_default();
    assert!(via.contains("merged"), "{via}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_edit_comment_conflicting_with_a_later_edit_is_refused_naming_the_section() {
    let mut w = World::new().await;
    w.grant("carol", "write");
    let (issue, id, base, _) = planned(&mut w).await;
    let stale = w.stored_comment(
        issue,
        "carol",
        &plan_edit(&edit(&base, |p| {
            p.goal = "Greet with the user's name.".to_owned()
        })),
    );
    let alices = edit(&base, |p| {
        p.goal = "Greet in the user's language.".to_owned()
    });
    w.comment(issue, "alice", &plan_edit(&alices)).await;
    let commits = w.ledger_commits();

    w.deliver_comment(stale).await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("changed after this comment was written"),
        "{refusal}"
    );
    assert!(refusal.contains("\"Goal\""), "{refusal}");
    assert!(refusal.contains("nothing changed"), "{refusal}");
    assert!(!w.reactions(stale).contains(&"+1".to_owned()));
    assert_eq!(w.ledger_commits(), commits, "no ledger commit");
    assert_eq!(w.ledger_text(&text_path(&id)).unwrap(), alices);
    w.finish().await;
}
