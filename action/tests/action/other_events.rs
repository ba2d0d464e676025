//! `mode: event` on pull-request, review and CI events, from the committed real payloads: events that touch no step leave the ledger alone, linked pull requests and their checks and review approvals act through the same engine as the App, a pull request changing `.github/navin.yml` gets `navin/config`, and a fork run is refused.

use serde_json::json;

use crate::harness::{Job, RunResult};

/// Runs one fixture as `event_name` against a seeded running mission and checks the
/// run ended cleanly, reported the mission and left the ledger as it was.
fn runs_cleanly_and_keeps_the_ledger(job: &Job, fixture: &str, event_name: &str) -> RunResult {
    let seeded = job.ledger().expect("seeded");
    let tip = job.ledger_tip();
    let path = job.fixture_event(fixture, |p| p);
    let r = job.run("event", event_name, Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{fixture}: {r:?}");
    assert!(
        r.lines_starting("::error").is_empty(),
        "{fixture}: {}",
        r.stdout
    );
    assert_eq!(job.ledger_tip(), tip, "{fixture} changed the ledger");
    assert_eq!(r.outputs["mission-status"], "running", "{fixture}");
    assert_eq!(
        r.outputs["mission-version"],
        seeded.mission.version.to_string(),
        "{fixture}"
    );
    assert_eq!(r.outputs["plan-url"], "", "{fixture}");
    let action = fixture.split('.').nth(1).unwrap_or_default();
    assert!(
        r.summary
            .contains(&format!("Handled `{event_name}.{action}`")),
        "{fixture}: {}",
        r.summary
    );
    r
}

#[test]
fn pull_request_events_are_handled_without_error_and_leave_the_ledger_unchanged() {
    let job = Job::for_events();
    job.seed(None);
    for fixture in [
        "pull_request.opened",
        "pull_request.synchronize",
        "pull_request.closed",
    ] {
        runs_cleanly_and_keeps_the_ledger(&job, fixture, "pull_request");
    }
    assert!(job.fake.bot_comments().is_empty());
}

#[test]
fn pull_request_target_is_handled_as_a_pull_request_even_from_a_fork() {
    let job = Job::for_events();
    job.seed(None);
    let seeded_tip = job.ledger_tip();
    let path = job.fixture_event("pull_request.opened", |p| {
        p.set("/pull_request/head/repo/full_name", json!("mallory/hello"))
    });
    let r = job.run(
        "event",
        "pull_request_target",
        Some(&path),
        Some(&job.token),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    // Runs in the base repository with a write token: no read-only-fork notice.
    assert!(r.lines_starting("::notice").is_empty(), "{}", r.stdout);
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);
    assert!(
        r.summary.contains("Handled `pull_request_target.opened`"),
        "{}",
        r.summary
    );
    assert_eq!(job.ledger_tip(), seeded_tip);
}

#[test]
fn review_events_are_handled_without_error_and_leave_the_ledger_unchanged() {
    let job = Job::for_events();
    job.seed(None);
    for fixture in [
        "pull_request_review.submitted.approved",
        "pull_request_review.submitted.changes_requested",
        "pull_request_review.dismissed",
    ] {
        runs_cleanly_and_keeps_the_ledger(&job, fixture, "pull_request_review");
    }
}

#[test]
fn ci_completion_events_are_handled_without_error_and_leave_the_ledger_unchanged() {
    let job = Job::for_events();
    job.seed(None);
    for (fixture, event) in [
        ("check_run.completed", "check_run"),
        ("check_suite.completed", "check_suite"),
        ("workflow_run.completed", "workflow_run"),
    ] {
        runs_cleanly_and_keeps_the_ledger(&job, fixture, event);
    }
}

#[test]
fn events_without_a_mission_report_empty_outputs() {
    let job = Job::for_events();
    let path = job.fixture_event("check_run.completed", |p| p);
    let r = job.run("event", "check_run", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["mission-status"], "");
    assert_eq!(r.outputs["mission-version"], "");
    assert!(r.summary.contains("No mission yet"), "{}", r.summary);
    assert_eq!(job.ledger_tip(), None);
}

#[test]
fn a_review_on_a_fork_pull_request_explains_the_read_only_token_and_changes_nothing() {
    let job = Job::for_events();
    job.seed(None);
    let tip = job.ledger_tip();
    let path = job.fixture_event("pull_request_review.submitted.approved", |p| {
        p.set("/pull_request/head/repo/full_name", json!("mallory/hello"))
    });
    let read_only = job
        .fake
        .actions_token("octo-org", "hello", &[("contents", "read")]);
    let r = job.run(
        "event",
        "pull_request_review",
        Some(&path),
        Some(&read_only),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1, "{}", r.stdout);
    assert!(
        notices[0].contains("mallory/hello") && notices[0].contains("read-only"),
        "{}",
        notices[0]
    );
    assert_eq!(job.ledger_tip(), tip);
    assert!(job.fake.bot_comments().is_empty());
    assert!(job.fake.api_requests().is_empty());
}

#[test]
fn a_check_run_that_is_not_completed_is_one_notice() {
    let job = Job::for_events();
    let path = job.fixture_event("check_run.completed", |p| p.action("created"));
    let r = job.run("event", "check_run", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1, "{}", r.stdout);
    assert!(notices[0].contains("created"), "{}", notices[0]);
}

/// The engine's step links and CI evidence through the Action: a pull request naming
/// `S1` links it to the PR's head, and a green check run on that head closes it, each a
/// separate job with only `GITHUB_TOKEN`.
#[test]
fn a_linked_pull_request_its_green_check_run_and_its_merge_close_the_step_in_event_mode() {
    use navin_e2e::fake::{CheckRunSpec, PullSpec};
    let job = Job::for_events();
    let issue = job.fake.create_issue(
        crate::harness::OWNER,
        crate::harness::REPO,
        "Widget API",
        "",
        "alice",
    );
    let seeded = job.seed_from(None, Some(issue));
    let (owner, repo) = (crate::harness::OWNER, crate::harness::REPO);
    let spec = PullSpec::new("feature/widget")
        .author("alice")
        .title("Widget API")
        .body("Adds the API.\n\nNavin-Step: S1\n")
        .file("src/widget.rs", "pub fn widget() {}\n");
    let number = job.fake.create_pull(owner, repo, spec);
    let head = job.fake.pull(owner, repo, number).head_sha;
    let opened = job.fixture_event("pull_request.opened", |p| {
        p.number(number)
            .head_sha(&head)
            .head_ref("feature/widget")
            .set(
                "/pull_request/body",
                json!("Adds the API.\n\nNavin-Step: S1\n"),
            )
    });
    let r = job.run("event", "pull_request", Some(&opened), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);
    let linked = job.ledger().expect("ledger");
    let s1 = linked.board.task("S1").expect("S1");
    assert_eq!(s1.links.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(s1.links.prs, [number]);
    assert_eq!(s1.status.as_str(), "in_progress");
    assert_eq!(
        r.outputs["mission-version"],
        (seeded.mission.version + 2).to_string(),
        "linked, then taken up"
    );

    let run_id = job
        .fake
        .add_check_run(owner, repo, CheckRunSpec::new("test", &head));
    let completed = job.fixture_event("check_run.completed", |p| {
        p.check_run_id(run_id)
            .check_name("test")
            .head_sha(&head)
            .app_id(15368)
            .conclusion("success")
    });
    let r = job.run("event", "check_run", Some(&completed), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.summary.contains("Handled `check_run.completed`"),
        "{}",
        r.summary
    );
    let green = job.ledger().expect("ledger");
    let s1 = green.board.task("S1").expect("S1");
    assert_eq!(
        s1.status.as_str(),
        "in_progress",
        "green waits for the merge: {r:?}"
    );
    assert_eq!(s1.evidence[0].check_run_id, Some(run_id));

    // Merged: the job for `pull_request.closed` reads the final head's runs and closes it.
    job.fake.close(owner, repo, number, true);
    let merged = job.fixture_event("pull_request.closed", |p| {
        p.number(number)
            .head_sha(&head)
            .head_ref("feature/widget")
            .set("/pull_request/merged", json!(true))
            .set("/pull_request/state", json!("closed"))
    });
    let r = job.run("event", "pull_request", Some(&merged), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let done = job.ledger().expect("ledger");
    let s1 = done.board.task("S1").expect("S1");
    assert_eq!(s1.status.as_str(), "done", "{r:?}");
    assert_eq!(s1.links.merged_pr, Some(number));
    assert_eq!(
        r.outputs["mission-version"],
        done.mission.version.to_string()
    );
    // The panel on the mission's issue shows the step done.
    let panel = job.navin_comments(issue);
    assert_eq!(panel.len(), 1, "{panel:?}");
    assert!(panel[0].contains("1/3"), "{}", panel[0]);
}

/// `/plan` on a pull request and a writer's approving review, each its own job: the plan
/// is approved on the ledger and its `navin/plan` check turns green.
#[test]
fn a_review_approval_approves_the_plan_of_a_pull_request_in_event_mode() {
    use navin_e2e::fake::{PullSpec, UserKind};
    let job = Job::for_events();
    let (owner, repo) = (crate::harness::OWNER, crate::harness::REPO);
    job.fake.set_role(owner, repo, "carol", "write");
    let spec = PullSpec::new("feature/greeting")
        .author("carol")
        .title("Greeting")
        .file("src/lib.rs", "pub fn hello() -> String { \"hi\".into() }\n");
    let number = job.fake.create_pull(owner, repo, spec);
    let head = job.fake.pull(owner, repo, number).head_sha;
    let body = "/plan make the greeting configurable";
    let comment = job.fake.add_comment(owner, repo, number, "alice", body);
    let asked = job.fixture_event("issue_comment.created.on_pull_request", |p| {
        p.number(number)
            .issue_author("carol", job.fake.user_id("carol"), UserKind::User)
            .comment_id(comment)
            .comment_body(body)
            .comment_author("alice", job.fake.user_id("alice"), UserKind::User)
            .set("/repository/default_branch", json!("main"))
    });
    let r = job.run("event", "issue_comment", Some(&asked), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    // plan-url points at the plan comment on the pull request.
    assert!(
        r.outputs["plan-url"].contains(&format!("/{number}#issuecomment-")),
        "{:?}",
        r.outputs
    );
    let checks = |conclusion: &str| {
        job.fake.check_runs(owner, repo).iter().any(|c| {
            c.name == "navin/plan"
                && c.head_sha == head
                && c.conclusion.as_deref() == Some(conclusion)
        })
    };
    assert!(checks("action_required"), "{r:?}");

    let review = job
        .fake
        .add_review(owner, repo, number, "alice", "APPROVED", &head);
    let approved = job.fixture_event("pull_request_review.submitted.approved", |p| {
        p.number(number)
            .head_sha(&head)
            .review_id(review)
            .review_state("approved")
            .reviewer("alice", job.fake.user_id("alice"), UserKind::User)
            .set("/pull_request/user/login", json!("carol"))
    });
    let r = job.run(
        "event",
        "pull_request_review",
        Some(&approved),
        Some(&job.token),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);
    assert!(checks("success"), "navin/plan is not green: {r:?}");
    let (store, _dir) = job.store();
    let record = store
        .read_file(&format!(".navin/plans/pr-{number}.json"))
        .expect("read")
        .expect("plan record");
    let record: serde_json::Value = serde_json::from_slice(&record).expect("json");
    assert_eq!(record["status"], "approved", "{record}");
}

#[test]
fn a_pull_request_changing_the_config_gets_a_navin_config_check_in_event_mode() {
    let job = Job::for_events();
    let (owner, repo) = (crate::harness::OWNER, crate::harness::REPO);
    let broken = "approval:\n  required_approvals: 1\n  allow_author: true\n";
    let spec = navin_e2e::fake::PullSpec::new("fix/config")
        .author("alice")
        .title("Let authors approve")
        .body("")
        .file(".github/navin.yml", broken);
    let pr = job.fake.create_pull(owner, repo, spec);
    let pull = job.fake.pull(owner, repo, pr);
    let path = job.fixture_event("pull_request.opened", |p| {
        p.number(pr)
            .head_sha(&pull.head_sha)
            .head_ref(&pull.head_ref)
    });
    let r = job.run("event", "pull_request", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let runs = job.fake.check_runs(owner, repo).into_iter();
    let runs: Vec<_> = runs.filter(|run| run.name == "navin/config").collect();
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0].head_sha, pull.head_sha);
    assert_eq!(runs[0].conclusion.as_deref(), Some("failure"));
    let mark = &runs[0].output["annotations"][0];
    assert_eq!(mark["path"], ".github/navin.yml");
    assert_eq!(mark["start_line"], 3);
}

/// `issues: opened` in event mode: a writer's issue that reads as non-trivial gets a plan
/// without `/plan` (`plan_mode.auto_threshold`), as on the App; a reader's gets nothing.
#[test]
fn an_issue_a_writer_opens_above_the_threshold_gets_a_plan_in_event_mode() {
    use navin_e2e::fake::UserKind;
    let job = Job::for_events();
    let (owner, repo) = (crate::harness::OWNER, crate::harness::REPO);
    job.write_config("plan_mode:\n  auto_threshold: 3\n");
    let title = "Rename the greetings table column and migrate the data";
    let opened = |author: &str| {
        let number = job.fake.create_issue(owner, repo, title, "", author);
        let path = job.fixture_event("issues.opened", |p| {
            p.number(number)
                .issue_title(title)
                .issue_body("")
                .issue_author(author, job.fake.user_id(author), UserKind::User)
                .sender(author, job.fake.user_id(author), UserKind::User)
        });
        (number, path)
    };
    let plan_record = |number: u64| {
        let (store, _dir) = job.store();
        store
            .read_file(&format!(".navin/plans/issue-{number}.json"))
            .expect("read")
    };

    let (number, path) = opened("alice");
    let r = job.run("event", "issues", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);
    let record = plan_record(number).expect("a plan record for the writer's issue");
    let record: serde_json::Value = serde_json::from_slice(&record).expect("json");
    assert_eq!(record["status"], "pending", "{record}");
    let comments = job.navin_comments(number);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert!(comments[0].contains("/approve"), "{}", comments[0]);

    let (number, path) = opened("bob");
    let r = job.run("event", "issues", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        plan_record(number).is_none(),
        "a reader's issue spent the planner"
    );
    assert!(job.navin_comments(number).is_empty());
}
