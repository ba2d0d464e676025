//! Plan files in pull requests end to end, in the World DSL: a PR that adds a `*.plan.md`
//! (or a markdown file under `plans/`) carries its plan; pushes that edit it are plan edits
//! that make approvals stale, pushes that leave it alone are not, and a broken file fails
//! the `navin/plan` check.

use navin_ledger::plan::record::{text_path, RecordStatus};

use crate::engine_plans::{carols_pr, conclusion, summary, GREETING, PLAN};
use crate::world::World;

/// A valid plan in markdown, as a person would commit it; `title` tells versions apart.
fn plan_text(title: &str) -> String {
    use navin_ledger::plan::{FileChange, Operation, Plan, PlanDocument, Question};
    let plan = Plan {
        title: title.to_owned(),
        persona: navin_ledger::plan::READ_ONLY_PERSONA.to_owned(),
        goal: "Let callers choose the greeting word.".to_owned(),
        architecture: "One crate: `src/lib.rs` re-exports `src/greet.rs`.".to_owned(),
        capabilities: "Builds greetings.".to_owned(),
        data_flow: "Caller -> greet -> String.".to_owned(),
        target_state: "`greet` takes the greeting word.".to_owned(),
        impact_isolation: "Only `src/greet.rs` changes.".to_owned(),
        changes: vec![FileChange {
            path: "src/greet.rs".to_owned(),
            operation: Operation::Edit,
            change: "Add a greeting parameter.".to_owned(),
            rationale: "Callers want other words.".to_owned(),
            optional: false,
        }],
        new_dependencies: vec![],
        risks: vec![
            "Callers break on the new parameter.".to_owned(),
            "Empty greetings look odd.".to_owned(),
            "Tests pin the old text.".to_owned(),
        ],
        next_steps: vec!["Change `greet` and its test.".to_owned()],
        questions: vec![Question {
            question: "Keep a default greeting?".to_owned(),
            default: "Yes, \"hello\".".to_owned(),
            answer: None,
        }],
        handoff: None,
        stages: vec![],
    };
    PlanDocument::from_plan(&plan).unwrap().text().to_owned()
}

const PLAN_FILE: &str = "docs/plans/greeting.plan.md";

/// carol opens a PR that adds the plan file and one code file; returns its number and head
/// once the plan comment and the `action_required` check are there.
async fn plan_file_pr(w: &mut World) -> (u64, String) {
    w.clear_requests();
    let text = plan_text("Configurable greeting");
    let files = [(PLAN_FILE, text.as_str()), GREETING];
    let (pr, head) = carols_pr(w, &files, "The plan is in the PR.").await;
    let comment = w.reply().await;
    let marker = format!("<!-- navin:plan id=pr-{pr} ");
    assert!(comment.starts_with(&marker), "{comment}");
    assert!(comment.contains("Configurable greeting"), "{comment}");
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");
    w.requests("pull_request.opened (adds a plan file)");
    (pr, head)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_adding_a_plan_file_gets_its_plan_and_a_writers_review_approves_it() {
    let mut w = World::new().await;
    let (pr, head) = plan_file_pr(&mut w).await;
    let id = format!("pr-{pr}");
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert_eq!(record.source, format!("pull request file {PLAN_FILE}"));
    assert!(record.pull_request);
    let stored = w.ledger_text(&text_path(&id)).unwrap();
    assert_eq!(stored, plan_text("Configurable greeting"));
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    assert!(
        summary(&run).contains("0 of 1 required"),
        "{}",
        summary(&run)
    );

    w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    w.requests("pull_request_review approved (plan file)");
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Approved);

    // A push that changes only code: the plan file is as it was, the approval holds.
    let commits = w.ledger_commits();
    let new_head = w.push(pr, &[("src/greet.rs", "// done\n")]).await;
    assert_eq!(conclusion(&w.plan_check(&new_head)), "success");
    w.requests("pull_request.synchronize (code only, plan file unchanged)");
    assert_eq!(w.ledger_commits(), commits, "nothing written to the ledger");
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Approved);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_that_edits_the_plan_file_makes_the_approval_stale_and_keeps_the_diff() {
    let mut w = World::new().await;
    let (pr, head) = plan_file_pr(&mut w).await;
    let id = format!("pr-{pr}");
    w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    let approved_hash = w.plan_record(&id).unwrap().hash;

    w.clear_requests();
    let edited = plan_text("Configurable greeting (keep the default)");
    let new_head = w.push(pr, &[(PLAN_FILE, &edited)]).await;
    let run = w.plan_check(&new_head);
    assert_eq!(conclusion(&run), "action_required");
    let text = summary(&run);
    assert!(text.contains("Stale"), "{text}");
    assert!(text.contains("The plan changed"), "{text}");
    assert!(text.contains(PLAN_FILE), "{text}");
    w.requests("pull_request.synchronize (plan file edited)");
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert_ne!(record.hash, approved_hash);
    assert_eq!(record.approvals[0].plan_hash, approved_hash);
    assert_eq!(record.edits[0].by, "carol");
    let original = plan_text("Configurable greeting");
    assert_eq!(record.original.as_deref(), Some(original.as_str()));
    let title = record.diff.as_ref().and_then(|d| d.title.as_ref());
    let title = title.unwrap_or_else(|| panic!("no title in the diff: {record:#?}"));
    assert!(title.after.contains("keep the default"), "{title:?}");
    let comment = w.edited(PLAN);
    assert!(comment.contains("Edits to the original plan"), "{comment}");
    assert!(comment.contains("stale"), "{comment}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_with_an_invalid_plan_file_fails_the_check_naming_the_problem_and_keeps_the_record()
{
    let mut w = World::new().await;
    let (pr, _) = plan_file_pr(&mut w).await;
    let id = format!("pr-{pr}");
    let before = w.plan_record(&id).unwrap();
    let commits = w.ledger_commits();

    // The Goal section is dropped: the parser names what it found instead.
    let broken = plan_text("Configurable greeting")
        .replace("## Goal\n\nLet callers choose the greeting word.\n\n", "");
    assert_ne!(broken, plan_text("Configurable greeting"));
    let new_head = w.push(pr, &[(PLAN_FILE, &broken)]).await;
    let run = w.plan_check(&new_head);
    assert_eq!(conclusion(&run), "failure");
    let title = run.output["title"].as_str().unwrap();
    assert!(title.contains(PLAN_FILE), "{run:#?}");
    let text = summary(&run);
    assert!(text.contains("line "), "{text}");
    assert!(text.contains("Goal"), "{text}");
    assert!(
        text.contains(&format!("Plan `{id}` keeps its last valid text")),
        "{text}"
    );
    // The problem is marked at its line in the pull request's diff.
    let marks = run.output["annotations"].as_array().expect("annotations");
    assert_eq!(marks.len(), 1, "{marks:#?}");
    assert_eq!(marks[0]["path"], PLAN_FILE);
    assert_eq!(marks[0]["annotation_level"], "failure");
    let line = marks[0]["start_line"].as_u64().expect("a line");
    assert!(
        text.contains(&format!("line {line}")),
        "{text} vs line {line}"
    );
    w.requests("pull_request.synchronize (invalid plan file)");
    assert_eq!(
        w.plan_record(&id).unwrap(),
        before,
        "the record is unchanged"
    );
    assert_eq!(w.ledger_commits(), commits);
    w.no_reply().await;

    // A writer approves the last valid text; the broken head stays failed all the same.
    w.review(pr, "alice", "approved").await;
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Approved);
    assert_eq!(conclusion(&w.plan_check(&new_head)), "failure");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_edit_on_a_plan_file_pr_is_not_undone_by_a_push_that_leaves_the_file_alone() {
    let mut w = World::new().await;
    let (pr, _) = plan_file_pr(&mut w).await;
    let id = format!("pr-{pr}");
    let edited = plan_text("Configurable greeting (edited in a comment)");
    let edit = format!("/plan edit\n\n````markdown\n{edited}````\n");
    let c = w.comment(pr, "alice", &edit).await;
    assert!(w.reactions(c).contains(&"+1".to_owned()));
    let edited_hash = w.plan_record(&id).unwrap().hash;

    let commits = w.ledger_commits();
    let new_head = w.push(pr, &[("src/greet.rs", "// v2\n")]).await;
    let run = w.plan_check(&new_head);
    assert_eq!(conclusion(&run), "action_required");
    assert!(summary(&run).contains("/plan edit"), "{}", summary(&run));
    let record = w.plan_record(&id).unwrap();
    assert_eq!(
        record.hash, edited_hash,
        "the file did not change: {record:#?}"
    );
    assert_eq!(record.edits.len(), 1);
    assert_eq!(w.ledger_commits(), commits);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_that_adds_a_plan_file_to_an_open_pr_gives_it_that_plan_and_notes_are_not_plans() {
    let mut w = World::new().await;
    let (pr, _) = carols_pr(&mut w, &[GREETING], "Code first, plan later.").await;
    let notes = ("docs/plans/notes.md", "Meeting notes, not a plan.\n");
    let head = w.push(pr, &[notes]).await;
    assert!(
        w.plan_checks(&head).is_empty(),
        "a markdown note under plans/ is not a plan"
    );
    assert!(w.plan_record(&format!("pr-{pr}")).is_none());

    let text = plan_text("Configurable greeting");
    let head = w.push(pr, &[(PLAN_FILE, text.as_str())]).await;
    let comment = w.reply().await;
    let marker = format!("<!-- navin:plan id=pr-{pr} ");
    assert!(comment.starts_with(&marker), "{comment}");
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert_eq!(record.source, format!("pull request file {PLAN_FILE}"));
    w.finish().await;
}

/// `plan_mode.auto_threshold` never plans over a pull request's own plan file: the
/// planner is not spent and the PR's plan is the file's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_carrying_its_own_plan_file_gets_no_automatic_plan() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", "plan_mode:\n  auto_threshold: 3\n")]);
    let text = plan_text("Configurable greeting");
    let risky = "Rename the greetings table column and migrate the data";
    let (pr, _) = carols_pr(&mut w, &[(PLAN_FILE, text.as_str()), GREETING], risky).await;
    let comment = w.reply().await;
    assert!(
        comment.starts_with(&format!("<!-- navin:plan id=pr-{pr} ")),
        "{comment}"
    );
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.source, format!("pull request file {PLAN_FILE}"));
    assert!(
        !record.op_ids.iter().any(|op| op.ends_with("#auto-plan")),
        "an automatic plan ran too: {:?}",
        record.op_ids
    );
    assert_eq!(
        w.ledger_text(&text_path(&format!("pr-{pr}"))).unwrap(),
        text,
        "the plan's text is the file's"
    );
    w.finish().await;
}
