//! Plans on pull requests end to end: `/plan` on a PR, the `navin/plan` check on its head,
//! review approvals (who counts, what revokes, what goes stale), `/plan edit`, and the
//! `require_plan_for` gate. Driven by signed webhooks against the real server and the
//! fake GitHub; the ledger is read with plain git.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::engine_support;

use engine_support::plans::*;
use engine_support::*;
use navin_e2e::fake::{wait_until, PullSpec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_on_a_pull_request_posts_the_plan_and_an_action_required_check_on_the_head() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "Greets differently.").await;
    let head = plan_on_pr(&mut sc, pr).await;

    // The planner read the PR's head, not the default branch.
    let trees: Vec<String> = fake
        .requests_to("GET", "/repos/*/*/git/trees/*")
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(
        trees.iter().all(|p| p.contains(&head)),
        "trees read: {trees:?}, head {head}"
    );
    let run = wait_check(&fake, &head, waiting).await;
    assert_eq!(run.status, "completed");
    assert!(
        summary(&run).contains("0 of 1 required"),
        "{}",
        summary(&run)
    );
    assert_eq!(
        run.external_id.as_deref(),
        Some(format!("pr-{pr}").as_str())
    );
    let rec = record(&fake, &format!("pr-{pr}"));
    assert_eq!(rec["status"], "pending");
    assert_eq!(rec["pull_request"], true);
    assert_eq!(rec["issue"], pr);

    // A push: the new head gets its own run; the old head keeps exactly one.
    let (new_head, _) = sc
        .push_to_pull(OWNER, REPO, pr, &[("README.md", "hello\n")], "docs")
        .await;
    wait_check(&fake, &new_head, waiting).await;
    assert_eq!(
        plan_runs(&fake, &head).len(),
        1,
        "the old head keeps its own run"
    );
    count_requests(&fake, "pull_request.synchronize (own plan)");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writers_approving_review_turns_the_check_green_and_records_the_approval() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "").await;
    let head = plan_on_pr(&mut sc, pr).await;

    let (review, _) = sc.review(OWNER, REPO, pr, "alice", "approved").await;
    let run = wait_check(&fake, &head, approved).await;
    assert!(summary(&run).contains("@alice"), "{}", summary(&run));
    count_requests(&fake, "pull_request_review approved (writer)");
    let rec = record(&fake, &format!("pr-{pr}"));
    assert_eq!(rec["status"], "approved");
    let approval = &rec["approvals"][0];
    assert_eq!(approval["approver"], "alice");
    assert_eq!(approval["review_id"], review);
    assert_eq!(approval["plan_hash"], rec["hash"]);
    assert!(approval["at"].is_string());
    let log = ledger_git(&fake, &["log", "-1", "--format=%B", "navin/ledger"]).unwrap();
    assert!(log.contains(&format!("Navin-Plan: pr-{pr}")), "{log}");
    let edited = latest_edit(&fake, "<!-- navin:plan").expect("plan comment edited");
    assert!(edited.body.contains("approved"), "{}", edited.body);
    assert!(edited.body.contains("Draft mission"), "{}", edited.body);
    assert!(
        edited.body.contains(&format!("review {review}")),
        "{}",
        edited.body
    );

    // Implementation commits do not touch the plan text: the new head is green at once.
    fake.clear_requests();
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
    count_requests(&fake, "pull_request.synchronize (approved plan)");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pr_authors_own_approval_does_not_count() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "").await;
    let head = plan_on_pr(&mut sc, pr).await;

    sc.review(OWNER, REPO, pr, "carol", "approved").await;
    let run = wait_check(&fake, &head, |r| {
        waiting(r) && summary(r).contains("@carol is the pull request's author")
    })
    .await;
    assert!(summary(&run).contains("0 of 1"), "{}", summary(&run));
    count_requests(&fake, "pull_request_review approved (author)");
    let rec = record(&fake, &format!("pr-{pr}"));
    assert_eq!(rec["status"], "pending");
    assert_eq!(rec["approvals"].as_array().unwrap().len(), 0);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_readers_approval_does_not_count() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "").await;
    let head = plan_on_pr(&mut sc, pr).await;

    sc.review(OWNER, REPO, pr, "bob", "approved").await;
    wait_check(&fake, &head, |r| {
        waiting(r) && summary(r).contains("@bob has role `read`")
    })
    .await;
    count_requests(&fake, "pull_request_review approved (reader)");
    assert_eq!(record(&fake, &format!("pr-{pr}"))["status"], "pending");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_changes_request_by_the_same_reviewer_revokes_the_approval() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "").await;
    let head = plan_on_pr(&mut sc, pr).await;

    let (review, _) = sc.review(OWNER, REPO, pr, "alice", "approved").await;
    wait_check(&fake, &head, approved).await;
    fake.clear_requests();
    sc.review(OWNER, REPO, pr, "alice", "changes_requested")
        .await;
    wait_check(&fake, &head, waiting).await;
    count_requests(&fake, "pull_request_review changes_requested");
    let rec = record(&fake, &format!("pr-{pr}"));
    assert_eq!(rec["status"], "pending");
    assert_eq!(rec["approvals"][0]["review_id"], review);
    assert!(rec["approvals"][0]["revoked_at"].is_string(), "{rec:#}");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dismissed_review_revokes_the_approval() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "").await;
    let head = plan_on_pr(&mut sc, pr).await;

    let (review, _) = sc.review(OWNER, REPO, pr, "alice", "approved").await;
    wait_check(&fake, &head, approved).await;
    fake.clear_requests();
    sc.dismiss_review(OWNER, REPO, pr, review).await;
    wait_check(&fake, &head, waiting).await;
    count_requests(&fake, "pull_request_review dismissed");
    let rec = record(&fake, &format!("pr-{pr}"));
    assert_eq!(rec["status"], "pending");
    assert!(rec["approvals"][0]["revoked_at"].is_string(), "{rec:#}");
    let edited = latest_edit(&fake, "<!-- navin:plan").unwrap();
    assert!(edited.body.contains("pending approval"), "{}", edited.body);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_goes_stale_when_the_plan_is_edited_after_it() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let pr = open_pr(&sc, &one_file(), "").await;
    let head = plan_on_pr(&mut sc, pr).await;
    sc.review(OWNER, REPO, pr, "alice", "approved").await;
    wait_check(&fake, &head, approved).await;

    // A writer edits the plan: the title changes, everything else stays.
    let id = format!("pr-{pr}");
    let text = ledger_git(
        &fake,
        &["show", &format!("navin/ledger:.navin/plans/{id}.md")],
    )
    .unwrap();
    let (title, rest) = text.split_once('\n').unwrap();
    let edited = format!("{title} (keep the default greeting)\n{rest}");
    fake.clear_requests();
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
    let run = wait_check(&fake, &head, waiting).await;
    assert!(summary(&run).contains("Stale"), "{}", summary(&run));
    count_requests(&fake, "/plan edit on a PR");
    let rec = record(&fake, &id);
    assert_eq!(rec["status"], "pending");
    assert_ne!(rec["approvals"][0]["plan_hash"], rec["hash"]);
    assert_eq!(rec["superseded"][0]["status"], "superseded");
    assert!(rec["diff"]["title"]["after"]
        .as_str()
        .unwrap()
        .contains("keep the default greeting"));
    let comment = latest_edit(&fake, "<!-- navin:plan").unwrap();
    assert!(comment.body.contains("stale"), "{}", comment.body);
    assert!(
        comment.body.contains("Edits to the original plan"),
        "{}",
        comment.body
    );

    // alice's approving review still stands on GitHub, yet a recount keeps it stale.
    sc.review(OWNER, REPO, pr, "bob", "commented").await;
    wait_check(&fake, &head, |r| {
        waiting(r) && summary(r).contains("Not counted: @alice approved an earlier text")
    })
    .await;
    assert_eq!(record(&fake, &id)["status"], "pending");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_edit_with_an_invalid_block_is_refused_naming_the_problem_and_changes_nothing() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    let issue = fake.create_issue(OWNER, REPO, "Greeting", "Configurable greeting.", "alice");
    sc.comment(
        OWNER,
        REPO,
        issue,
        "alice",
        "/plan make the greeting configurable",
    )
    .await;
    let plan = sc.next_comment().await;
    assert!(plan.body.contains("navin:plan id=issue-"), "{}", plan.body);
    let md = format!("navin/ledger:.navin/plans/issue-{issue}.md");
    wait_until(WAIT, || ledger_git(&fake, &["show", &md]).is_some()).await;
    let before_text = ledger_git(&fake, &["show", &md]).unwrap();
    let before_commits = ledger_commits(&fake);

    fake.clear_requests();
    let body = "/plan edit\n\n```markdown\n# Plan: shorter\n\n## System Persona\nRead-only.\n\n## Goal\nDo it.\n```\n";
    sc.comment(OWNER, REPO, issue, "alice", body).await;
    let refusal = sc.next_comment().await;
    assert!(refusal.body.contains("not valid"), "{}", refusal.body);
    assert!(
        refusal.body.contains("Repository Architecture"),
        "the refusal names the first missing section: {}",
        refusal.body
    );
    count_requests(&fake, "/plan edit (invalid block)");
    assert_eq!(ledger_commits(&fake), before_commits);
    assert_eq!(ledger_git(&fake, &["show", &md]).unwrap(), before_text);
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_plan_for_keeps_the_gate_action_required_until_a_plan_is_approved() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[(
            ".github/navin.yml",
            "require_plan_for: [multi-file-change, dependency-add]\n",
        )],
        "require plans",
    );
    fake.clear_requests();
    let two_files = [
        (
            "src/greet.rs",
            "pub fn greet(n: &str) -> String { n.into() }\n",
        ),
        ("src/lib.rs", "pub mod greet;\n"),
    ];
    let pr = open_pr(&sc, &two_files, "Two files.").await;
    let head = fake.pull(OWNER, REPO, pr).head_sha;
    let run = wait_check(&fake, &head, waiting).await;
    assert_eq!(run.output["title"], "An approved plan is required");
    assert!(
        summary(&run).contains("multi-file-change"),
        "{}",
        summary(&run)
    );
    assert!(summary(&run).contains("Navin-Plan: #"), "{}", summary(&run));
    count_requests(&fake, "pull_request.opened (gate, no plan)");

    // A plan on the PR: still action_required until approved, then green.
    plan_on_pr(&mut sc, pr).await;
    let run = wait_check(&fake, &head, waiting).await;
    assert!(run.output["title"]
        .as_str()
        .unwrap()
        .contains("needs approval"));
    sc.review(OWNER, REPO, pr, "alice", "approved").await;
    wait_check(&fake, &head, approved).await;

    // A second PR names an issue's plan in its body: waiting while that plan is
    // pending, green once it is approved on the issue (no push needed).
    let issue = fake.create_issue(OWNER, REPO, "Plan", "A plan for the next PR.", "alice");
    sc.comment(
        OWNER,
        REPO,
        issue,
        "alice",
        "/plan make the greeting configurable",
    )
    .await;
    sc.next_comment().await;
    let spec = PullSpec::new("feature/second")
        .author("carol")
        .body(&format!("Follows the plan.\n\nNavin-Plan: #{issue}\n"))
        .file("src/greet.rs", "// v2\n")
        .file("Cargo.lock", "# lock\n");
    fake.clear_requests();
    let (second, _) = sc.open_pull(OWNER, REPO, spec).await;
    let head2 = fake.pull(OWNER, REPO, second).head_sha;
    let run = wait_check(&fake, &head2, waiting).await;
    assert!(
        summary(&run).contains("dependency-add") && summary(&run).contains("pending"),
        "{}",
        summary(&run)
    );
    count_requests(&fake, "pull_request.opened (gate, named pending plan)");
    let (c, _) = sc.comment(OWNER, REPO, issue, "alice", "/approve").await;
    reacted(&fake, c, "+1").await;
    let run = wait_check(&fake, &head2, approved).await;
    assert!(
        run.output["title"]
            .as_str()
            .unwrap()
            .contains(&format!("issue-{issue}")),
        "{run:#?}"
    );
    count_requests(&fake, "/approve on the issue (+ gate of the PR naming it)");
    sc.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_accept_counts_approved_safe_operations_and_then_accepts_a_safe_plan() {
    let Harness {
        mut sc,
        _server: server,
        _dir: dir,
        ..
    } = world().await;
    let _keep = (server, dir);
    let fake = sc.fake().clone();
    fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[(
            ".github/navin.yml",
            "auto_accept:\n  after_n_safe_operations: 1\n",
        )],
        "auto-accept",
    );
    let first = fake.create_issue(OWNER, REPO, "One", "First plan.", "alice");
    sc.comment(
        OWNER,
        REPO,
        first,
        "alice",
        "/plan make the greeting configurable",
    )
    .await;
    sc.next_comment().await;
    let first_id = format!("issue-{first}");
    let rec = record(&fake, &first_id);
    assert_eq!(rec["status"], "pending");
    assert!(
        rec["auto_accept"]
            .as_str()
            .unwrap()
            .contains("only 0 of the 1"),
        "{rec:#}"
    );
    let safe = rec["safe_operations"].as_u64().unwrap();
    assert!(safe >= 1, "the built-in plan only edits files: {rec:#}");

    // A person approves it: its safe operations count towards the threshold.
    let (c, _) = sc.comment(OWNER, REPO, first, "alice", "/approve").await;
    reacted(&fake, c, "+1").await;
    let count = ledger_git(
        &fake,
        &["show", "navin/ledger:.navin/plans/auto-accept.json"],
    )
    .expect("the auto-accept count");
    let count: serde_json::Value = serde_json::from_str(&count).unwrap();
    assert_eq!(count["safe_operations_accepted"], safe);

    // The next safe plan is accepted by config, logged like a person's approval.
    let second = fake.create_issue(OWNER, REPO, "Two", "Second plan.", "alice");
    fake.clear_requests();
    sc.comment(
        OWNER,
        REPO,
        second,
        "alice",
        "/plan make the greeting configurable",
    )
    .await;
    let comment = sc.next_comment().await;
    assert!(comment.body.contains("approved"), "{}", comment.body);
    assert!(comment.body.contains("auto-accept"), "{}", comment.body);
    count_requests(&fake, "/plan (auto-accepted)");
    let second_id = format!("issue-{second}");
    let rec = record(&fake, &second_id);
    assert_eq!(rec["status"], "approved");
    assert_eq!(rec["approvals"][0]["approver"], "auto-accept");
    assert_eq!(rec["approvals"][0]["plan_hash"], rec["hash"]);
    assert!(rec["approvals"][0]["note"]
        .as_str()
        .unwrap()
        .contains("auto-accepted"));

    // An edit that deletes a file is never auto-accepted, whatever the count.
    let md = format!("navin/ledger:.navin/plans/{second_id}.md");
    let text = ledger_git(&fake, &["show", &md]).unwrap();
    let edited = text.replacen(
        "### File: src/lib.rs\n\n- **Operation:** edit",
        "### File: src/lib.rs\n\n- **Operation:** delete",
        1,
    );
    assert_ne!(edited, text);
    let (c, _) = sc
        .comment(
            OWNER,
            REPO,
            second,
            "alice",
            &format!("/plan edit\n\n````markdown\n{edited}````\n"),
        )
        .await;
    reacted(&fake, c, "+1").await;
    let rec = record(&fake, &second_id);
    assert_eq!(rec["status"], "pending", "{rec:#}");
    assert!(
        rec["auto_accept"].as_str().unwrap().contains("always need"),
        "{rec:#}"
    );
    sc.finish().await;
}
