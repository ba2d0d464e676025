//! `mode: event` on issue comments: the engine run by the real binary with the job's token against the fake GitHub and its git remote.

use crate::harness::{Job, BRANCH, OWNER, REPO};

fn new_issue(job: &Job, body: &str) -> u64 {
    job.fake
        .create_issue(OWNER, REPO, "Widget API", body, "alice")
}

#[test]
fn mission_then_status_writes_the_ledger_posts_one_panel_and_sets_outputs() {
    let job = Job::for_events();
    let issue = new_issue(&job, "- [ ] write the API\n- [ ] document it\n");
    let (comment, event) = job.comment_event(issue, "alice", "/mission ship the widget API");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);

    let ledger = job.ledger().expect("the ledger branch was written");
    assert_eq!(ledger.mission.goal, "ship the widget API");
    let steps: Vec<&str> = ledger
        .board
        .tasks
        .iter()
        .map(|t| t.title.as_str())
        .collect();
    assert_eq!(steps, ["write the API", "document it"]);
    assert!(ledger.mission.history.iter().any(|h| h
        .op_id
        .as_deref()
        .is_some_and(|o| o.starts_with("actions-run-"))));
    assert_eq!(r.outputs["mission-status"], "running");
    assert_eq!(
        r.outputs["mission-version"],
        ledger.mission.version.to_string()
    );
    assert_eq!(r.outputs["plan-url"], "");

    let comments = job.navin_comments(issue);
    assert_eq!(comments.len(), 1, "{comments:#?}");
    assert!(
        comments[0].starts_with("<!-- navin:panel"),
        "{}",
        comments[0]
    );
    assert!(comments[0].contains("ship the widget API"));
    assert!(job.fake.reactions(comment).contains(&"+1".to_string()));
    assert!(
        r.summary.contains("Handled `issue_comment.created`"),
        "{}",
        r.summary
    );
    assert!(r.summary.contains("ship the widget API"), "{}", r.summary);
    // The Action knows its own slug: no App endpoint is ever called with GITHUB_TOKEN.
    assert_eq!(job.fake.count("GET", "/app"), 0);
    assert_eq!(
        job.fake.count("POST", "/app/installations/*/access_tokens"),
        0
    );

    // `/status` by a reader: nothing written, the same panel refreshed, an `eyes`.
    let tip = job.ledger_tip();
    let (status, event) = job.comment_event(issue, "bob", "/status");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(job.ledger_tip(), tip);
    assert_eq!(job.navin_comments(issue).len(), 1);
    assert!(job.fake.reactions(status).contains(&"eyes".to_string()));
    assert_eq!(r.outputs["mission-status"], "running");
    assert_eq!(
        r.outputs["mission-version"],
        ledger.mission.version.to_string()
    );
}

#[test]
fn a_rerun_of_the_same_workflow_run_applies_nothing_twice() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let (_, event) = job.comment_event(issue, "alice", "/mission rerun safety\n/step add T9 Extra");
    let first = job.run_with(
        "event",
        "issue_comment",
        Some(&event),
        Some(&job.token),
        &[("GITHUB_RUN_ID", "777"), ("GITHUB_RUN_ATTEMPT", "1")],
    );
    assert_eq!(first.code, Some(0), "{first:?}");
    let tip = job.ledger_tip().expect("written");
    let comments = job.navin_comments(issue).len();
    let again = job.run_with(
        "event",
        "issue_comment",
        Some(&event),
        Some(&job.token),
        &[("GITHUB_RUN_ID", "777"), ("GITHUB_RUN_ATTEMPT", "2")],
    );
    assert_eq!(again.code, Some(0), "{again:?}");
    assert_eq!(job.ledger_tip().as_deref(), Some(tip.as_str()));
    assert_eq!(job.navin_comments(issue).len(), comments);
    assert_eq!(
        again.outputs["mission-version"],
        first.outputs["mission-version"]
    );
}

#[test]
fn plan_sets_plan_url_to_the_plan_comment_and_a_later_status_does_not() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let (_, event) = job.comment_event(issue, "alice", "/plan make the greeting configurable");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let plan = job
        .fake
        .bot_comments()
        .into_iter()
        .find(|c| c.issue_number == issue && c.body.starts_with("<!-- navin:plan"))
        .expect("a plan comment");
    assert_eq!(
        r.outputs["plan-url"],
        format!(
            "{}/{OWNER}/{REPO}/issues/{issue}#issuecomment-{}",
            job.fake.base_url(),
            plan.id
        )
    );
    assert!(r.summary.contains(&r.outputs["plan-url"]), "{}", r.summary);
    assert!(job
        .fake
        .file_at(
            OWNER,
            REPO,
            BRANCH,
            &format!(".navin/plans/issue-{issue}.md")
        )
        .is_some_and(|t| t.starts_with("# Plan:")));
    // No mission yet: a plan is not a mission.
    assert_eq!(r.outputs["mission-status"], "");

    let (_, event) = job.comment_event(issue, "alice", "/status");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["plan-url"], "");
}

#[test]
fn a_comment_by_github_actions_bot_changes_nothing() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let (comment, event) = job.comment_event(
        issue,
        "github-actions[bot]",
        "/mission written by the action",
    );
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);
    assert_eq!(job.ledger_tip(), None);
    assert!(job.navin_comments(issue).is_empty());
    assert!(job.fake.reactions(comment).is_empty());
    assert_eq!(r.outputs["mission-status"], "");
}

#[test]
fn missing_token_in_event_mode_fails_naming_the_input() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let (_, event) = job.comment_event(issue, "alice", "/mission no token");
    let r = job.run("event", "issue_comment", Some(&event), None);
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert_eq!(errors.len(), 1, "{}", r.stdout);
    assert!(errors[0].contains("github-token"), "{}", errors[0]);
    assert_eq!(job.ledger_tip(), None);
}

#[test]
fn a_token_without_issues_write_fails_naming_that_permission() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let token = job
        .fake
        .actions_token(OWNER, REPO, &[("contents", "write"), ("issues", "read")]);
    let (_, event) = job.comment_event(issue, "alice", "/mission no comments allowed");
    let r = job.run("event", "issue_comment", Some(&event), Some(&token));
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert_eq!(errors.len(), 1, "{}", r.stdout);
    assert!(errors[0].contains("`issues: write`"), "{}", errors[0]);
    assert!(errors[0].contains("permissions:"), "{}", errors[0]);
    // Only the mask command may carry the token.
    assert!(
        r.stdout
            .lines()
            .filter(|l| !l.starts_with("::add-mask::"))
            .all(|l| !l.contains(&token)),
        "the token leaked: {}",
        r.stdout
    );
}

#[test]
fn a_token_without_contents_write_fails_naming_that_permission() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let token = job
        .fake
        .actions_token(OWNER, REPO, &[("contents", "read"), ("issues", "write")]);
    let (_, event) = job.comment_event(issue, "alice", "/mission read-only ledger");
    let r = job.run("event", "issue_comment", Some(&event), Some(&token));
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert_eq!(errors.len(), 1, "{}", r.stdout);
    assert!(errors[0].contains("`contents: write`"), "{}", errors[0]);
    assert_eq!(job.ledger_tip(), None);
}

#[test]
fn a_deleted_comment_is_one_notice_and_nothing_else() {
    let job = Job::for_events();
    let issue = new_issue(&job, "");
    let path = job.fixture_event("issue_comment.created", |p| {
        p.number(issue)
            .comment_body("/mission gone")
            .action("deleted")
    });
    let r = job.run("event", "issue_comment", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1, "{}", r.stdout);
    assert!(notices[0].contains("deleted"), "{}", notices[0]);
    assert_eq!(job.ledger_tip(), None);
    assert!(job.fake.bot_comments().is_empty());
}

#[test]
fn update_and_rollback_comments_edit_the_ledger_in_event_mode() {
    let job = Job::for_events();
    let issue = new_issue(&job, "- [ ] write the API\n");
    let (_, event) = job.comment_event(issue, "alice", "/mission ship the widget API");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let started = job.ledger().expect("ledger").mission.version;
    let (_, event) = job.comment_event(
        issue,
        "alice",
        "/update fact the API is frozen until Friday\n/update goal ship the widget API v2",
    );
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.goal, "ship the widget API v2");
    assert_eq!(ledger.mission.facts, ["the API is frozen until Friday"]);
    assert_eq!(ledger.mission.version, started + 2);

    let (_, event) = job.comment_event(issue, "alice", &format!("/rollback v{started}"));
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.goal, "ship the widget API");
    assert_eq!(ledger.mission.version, started + 3);
}

#[test]
fn a_job_without_the_ledger_key_writes_nothing_on_a_sealed_ledger_and_says_which_input_to_set() {
    let job = Job::for_events();
    let issue = new_issue(&job, "- [ ] write the API\n");
    let key = ("INPUT_LEDGER_KEY", "a shared ledger key of 32 bytes!");
    // A job with the key makes the mission: the ledger is sealed.
    let (_, event) = job.comment_event(issue, "alice", "/mission ship the widget API");
    let r = job.run_with(
        "event",
        "issue_comment",
        Some(&event),
        Some(&job.token),
        &[key],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let tip = job.ledger_tip();

    // A job that was not given the key writes nothing, and says what to set.
    let (_, event) = job.comment_event(issue, "alice", "/pause lunch");
    let r = job.run("event", "issue_comment", Some(&event), Some(&job.token));
    assert_eq!(job.ledger_tip(), tip, "nothing was written: {r:?}");
    let said = format!("{}{}", r.stdout, r.stderr);
    assert_ne!(r.code, Some(0), "the job fails: {said}");
    assert!(
        r.lines_starting("::error")
            .iter()
            .any(|l| l.contains("`ledger-key` input") && l.contains("NAVIN_LEDGER_KEY")),
        "{said}"
    );
    let reply = job.navin_comments(issue).pop().unwrap_or_default();
    assert!(reply.contains("`ledger-key` input"), "{reply}");

    // The same command from a job with the key applies, and the ledger stays readable.
    let r = job.run_with(
        "event",
        "issue_comment",
        Some(&event),
        Some(&job.token),
        &[key],
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.status.to_string(), "paused");
}
