//! Plan files in pull requests end to end: a PR that adds a `*.plan.md` (or a markdown file
//! under `plans/`) carries its plan; pushes that edit it are plan edits that make approvals
//! stale, pushes that leave it alone are not, and a broken file fails the `navin/plan` check.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::engine_support;

use engine_support::plans::*;
use engine_support::*;
use navin_e2e::Scenario;

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
async fn open_plan_pr(sc: &mut Scenario) -> (u64, String) {
    let fake = sc.fake().clone();
    fake.clear_requests();
    let text = plan_text("Configurable greeting");
    let pr = open_pr(
        sc,
        &[(PLAN_FILE, &text), one_file()[0]],
        "The plan is in the PR.",
    )
    .await;
    let comment = sc.next_comment().await;
    assert!(
        comment
            .body
            .starts_with(&format!("<!-- navin:plan id=pr-{pr} ")),
        "{}",
        comment.body
    );
    assert!(
        comment.body.contains("Configurable greeting"),
        "{}",
        comment.body
    );
    let head = fake.pull(OWNER, REPO, pr).head_sha;
    wait_check(&fake, &head, waiting).await;
    count_requests(&fake, "pull_request.opened (adds a plan file)");
    (pr, head)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_adding_a_plan_file_gets_its_plan_and_a_writers_review_approves_it() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let (pr, head) = open_plan_pr(&mut sc).await;
    let id = format!("pr-{pr}");
    let rec = record(&fake, &id);
    assert_eq!(rec["status"], "pending");
    assert_eq!(rec["source"], format!("pull request file {PLAN_FILE}"));
    assert_eq!(rec["pull_request"], true);
    let stored = ledger_git(
        &fake,
        &["show", &format!("navin/ledger:.navin/plans/{id}.md")],
    )
    .unwrap();
    assert_eq!(stored, plan_text("Configurable greeting"));
    let run = wait_check(&fake, &head, waiting).await;
    assert!(
        summary(&run).contains("0 of 1 required"),
        "{}",
        summary(&run)
    );

    sc.review(OWNER, REPO, pr, "alice", "approved").await;
    wait_check(&fake, &head, approved).await;
    count_requests(&fake, "pull_request_review approved (plan file)");
    assert_eq!(record(&fake, &id)["status"], "approved");

    // A push that changes only code: the plan file is as it was, the approval holds.
    let commits = ledger_commits(&fake);
    let (new_head, _) = sc
        .push_to_pull(
            OWNER,
            REPO,
            pr,
            &[("src/greet.rs", "// done\n")],
            "implement",
        )
        .await;
    wait_check(&fake, &new_head, approved).await;
    count_requests(
        &fake,
        "pull_request.synchronize (code only, plan file unchanged)",
    );
    assert_eq!(
        ledger_commits(&fake),
        commits,
        "nothing written to the ledger"
    );
    assert_eq!(record(&fake, &id)["status"], "approved");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_that_edits_the_plan_file_makes_the_approval_stale_and_keeps_the_diff() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let (pr, head) = open_plan_pr(&mut sc).await;
    let id = format!("pr-{pr}");
    sc.review(OWNER, REPO, pr, "alice", "approved").await;
    wait_check(&fake, &head, approved).await;
    let approved_hash = record(&fake, &id)["hash"].clone();

    fake.clear_requests();
    let edited = plan_text("Configurable greeting (keep the default)");
    let (new_head, _) = sc
        .push_to_pull(
            OWNER,
            REPO,
            pr,
            &[(PLAN_FILE, &edited)],
            "plan: keep the default",
        )
        .await;
    let run = wait_check(&fake, &new_head, waiting).await;
    let text = summary(&run);
    assert!(text.contains("Stale"), "{text}");
    assert!(text.contains("The plan changed"), "{text}");
    assert!(text.contains(PLAN_FILE), "{text}");
    count_requests(&fake, "pull_request.synchronize (plan file edited)");
    let rec = record(&fake, &id);
    assert_eq!(rec["status"], "pending");
    assert_ne!(rec["hash"], approved_hash);
    assert_eq!(rec["approvals"][0]["plan_hash"], approved_hash);
    assert_eq!(rec["edits"][0]["by"], "carol");
    assert_eq!(rec["original"], plan_text("Configurable greeting"));
    assert!(
        rec["diff"]["title"]["after"]
            .as_str()
            .unwrap()
            .contains("keep the default"),
        "{rec:#}"
    );
    let comment = latest_edit(&fake, "<!-- navin:plan").unwrap();
    assert!(
        comment.body.contains("Edits to the original plan"),
        "{}",
        comment.body
    );
    assert!(comment.body.contains("stale"), "{}", comment.body);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_with_an_invalid_plan_file_fails_the_check_naming_the_problem_and_keeps_the_record()
{
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let (pr, _) = open_plan_pr(&mut sc).await;
    let id = format!("pr-{pr}");
    let before = record(&fake, &id);
    let commits = ledger_commits(&fake);

    // The Goal section is dropped: the parser names what it found instead.
    let broken = plan_text("Configurable greeting")
        .replace("## Goal\n\nLet callers choose the greeting word.\n\n", "");
    assert_ne!(broken, plan_text("Configurable greeting"));
    let (new_head, _) = sc
        .push_to_pull(OWNER, REPO, pr, &[(PLAN_FILE, &broken)], "plan: oops")
        .await;
    let run = wait_check(&fake, &new_head, |r| {
        r.conclusion.as_deref() == Some("failure")
    })
    .await;
    let text = summary(&run);
    assert!(
        run.output["title"].as_str().unwrap().contains(PLAN_FILE),
        "{run:#?}"
    );
    assert!(text.contains("line "), "{text}");
    assert!(text.contains("Goal"), "{text}");
    assert!(
        text.contains(&format!("Plan `{id}` keeps its last valid text")),
        "{text}"
    );
    count_requests(&fake, "pull_request.synchronize (invalid plan file)");
    assert_eq!(record(&fake, &id), before, "the record is unchanged");
    assert_eq!(ledger_commits(&fake), commits);
    sc.assert_no_comment(std::time::Duration::from_millis(300))
        .await;

    // A writer approves the last valid text; the broken head stays failed all the same.
    let (_, delivery) = sc.review(OWNER, REPO, pr, "alice", "approved").await;
    processed(&_keep.0, &delivery.guid).await;
    assert_eq!(record(&fake, &id)["status"], "approved");
    let runs = plan_runs(&fake, &new_head);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"), "{runs:#?}");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_edit_on_a_plan_file_pr_is_not_undone_by_a_push_that_leaves_the_file_alone() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let (pr, _) = open_plan_pr(&mut sc).await;
    let id = format!("pr-{pr}");
    let edited = plan_text("Configurable greeting (edited in a comment)");
    let (c, _) = sc
        .comment(
            OWNER,
            REPO,
            pr,
            "alice",
            &format!("/plan edit\n\n````markdown\n{edited}````\n"),
        )
        .await;
    reacted(&fake, c, "+1").await;
    let edited_hash = record(&fake, &id)["hash"].clone();

    let commits = ledger_commits(&fake);
    let (new_head, _) = sc
        .push_to_pull(OWNER, REPO, pr, &[("src/greet.rs", "// v2\n")], "implement")
        .await;
    let run = wait_check(&fake, &new_head, waiting).await;
    assert!(summary(&run).contains("/plan edit"), "{}", summary(&run));
    let rec = record(&fake, &id);
    assert_eq!(rec["hash"], edited_hash, "the file did not change: {rec:#}");
    assert_eq!(rec["edits"].as_array().unwrap().len(), 1);
    assert_eq!(ledger_commits(&fake), commits);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_that_adds_a_plan_file_to_an_open_pr_gives_it_that_plan_and_notes_are_not_plans() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "Code first, plan later.").await;
    let (_, sent) = sc
        .push_to_pull(
            OWNER,
            REPO,
            pr,
            &[("docs/plans/notes.md", "Meeting notes, not a plan.\n")],
            "notes",
        )
        .await;
    processed(&server, &sent.guid).await;
    let head = fake.pull(OWNER, REPO, pr).head_sha;
    assert!(
        plan_runs(&fake, &head).is_empty(),
        "a markdown note under plans/ is not a plan"
    );
    assert!(ledger_git(
        &fake,
        &["show", &format!("navin/ledger:.navin/plans/pr-{pr}.json")]
    )
    .is_none());

    let text = plan_text("Configurable greeting");
    let (_, sent) = sc
        .push_to_pull(OWNER, REPO, pr, &[(PLAN_FILE, text.as_str())], "plan")
        .await;
    processed(&server, &sent.guid).await;
    let comment = sc.next_comment().await;
    assert!(
        comment
            .body
            .starts_with(&format!("<!-- navin:plan id=pr-{pr} ")),
        "{}",
        comment.body
    );
    let head = fake.pull(OWNER, REPO, pr).head_sha;
    wait_check(&fake, &head, waiting).await;
    let record = record(&fake, &format!("pr-{pr}"));
    assert_eq!(record["status"], "pending");
    assert_eq!(record["source"], format!("pull request file {PLAN_FILE}"));
    drop((server, dir));
    sc.finish().await;
}
