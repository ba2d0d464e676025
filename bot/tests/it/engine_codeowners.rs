//! Code owners on plans, end to end: a plan pull request asks the CODEOWNERS owners of its proposed files to review (once per text), and `approval.require_codeowners` counts only their approvals, team members' included, read back from the fake GitHub's pull request, the `navin/plan` check and the plan record.

use navin_ledger::plan::record::RecordStatus;

use crate::engine_plans::{carols_pr, conclusion, summary, GREETING, PLAN};
use crate::engine_support::{OWNER, REPO};
use crate::world::World;

/// The seeded `.github/navin.yml` with `approval.require_codeowners: true`.
const REQUIRE_OWNERS: &str =
    "evidence:\n  required_checks:\n    test: [ci/test]\napproval:\n  require_codeowners: true\n";

/// Every file is owned by dave and by the organization's `reviewers` team (erin).
fn owned_by_dave_and_reviewers(w: &World) {
    w.grant("dave", "write");
    w.grant("erin", "write");
    w.fake().add_team(OWNER, "reviewers", &["erin"]);
    w.commit(&[(
        ".github/CODEOWNERS",
        &format!("* @dave @{OWNER}/reviewers\n"),
    )]);
}

/// alice asks for a plan on carol's pull request; returns its number and head.
async fn planned_pr(w: &mut World) -> (u64, String) {
    let (pr, head) = carols_pr(w, &[GREETING], "Greets differently.").await;
    w.comment(pr, "alice", "/plan make the greeting configurable")
        .await;
    let plan = w.reply().await;
    assert!(plan.starts_with(PLAN), "{plan}");
    (pr, head)
}

fn requests_sent(w: &World, pr: u64) -> usize {
    w.requested("POST", &format!("/pulls/{pr}/requested_reviewers"))
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_pull_request_asks_its_code_owners_once_and_names_who_could_not_be_asked() {
    let mut w = World::new().await;
    owned_by_dave_and_reviewers(&w);
    // carol (the author) and zed (no collaborator) own the files too.
    w.commit(&[(
        ".github/CODEOWNERS",
        &format!("* @dave @{OWNER}/reviewers @carol @zed docs@example.com\n"),
    )]);
    w.clear_requests();
    let (pr, head) = planned_pr(&mut w).await;
    let guid = w.last_delivery();

    let pull = w.fake().pull(OWNER, REPO, pr);
    assert_eq!(
        pull.requested_reviewers,
        ["dave"],
        "never the author, nor zed"
    );
    assert_eq!(pull.requested_teams, ["reviewers"]);
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    let asked = record.review_requests.expect("review requests recorded");
    assert_eq!(asked.hash, record.hash);
    assert_eq!(asked.requested, ["@dave", &format!("@{OWNER}/reviewers")]);
    assert!(
        asked.not_requested.iter().any(|n| n.contains("`@zed`")),
        "{:?}",
        asked.not_requested
    );
    let comment = w.latest(PLAN);
    assert!(
        comment.contains("Review could not be requested from `@zed`"),
        "{comment}"
    );
    assert!(comment.contains("e-mail address"), "{comment}");
    let check = w.plan_check(&head);
    assert!(
        summary(&check).contains("Review could not be requested from `@zed`"),
        "{}",
        summary(&check)
    );
    assert_eq!(conclusion(&check), "action_required", "the plan stands");
    w.requests("/plan on a PR with code owners (+ review requests)");

    // The same delivery run again, and a push that leaves the plan text alone: nobody is
    // asked again.
    w.rerun(&guid).await;
    w.push(pr, &[("README.md", "hello\n")]).await;
    assert_eq!(requests_sent(&w, pr), 0);
    assert_eq!(w.fake().pull(OWNER, REPO, pr).requested_reviewers, ["dave"]);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_require_codeowners_a_writer_who_owns_nothing_leaves_the_plan_pending_and_an_owner_approves_it(
) {
    let mut w = World::new().await;
    owned_by_dave_and_reviewers(&w);
    w.commit(&[(".github/navin.yml", REQUIRE_OWNERS)]);
    let (pr, head) = planned_pr(&mut w).await;

    w.review(pr, "alice", "approved").await;
    let check = w.plan_check(&head);
    assert_eq!(conclusion(&check), "action_required");
    let text = summary(&check);
    assert!(
        text.contains("@alice owns none of the plan's proposed files"),
        "{text}"
    );
    assert!(
        text.contains("Waiting for a code owner's approval") && text.contains("`src/greet.rs`"),
        "{text}"
    );
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(
        record.current_approvals().next().is_none(),
        "{:?}",
        record.approvals
    );
    assert!(w
        .latest(PLAN)
        .contains("Waiting for a code owner's approval"));

    // erin owns the files through the `reviewers` team.
    w.review(pr, "erin", "approved").await;
    let check = w.plan_check(&head);
    assert_eq!(conclusion(&check), "success", "{}", summary(&check));
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    let approvers: Vec<&str> = record
        .current_approvals()
        .map(|a| a.approver.as_str())
        .collect();
    assert_eq!(approvers, ["erin"]);
    assert!(record.waiting_for_owners.is_empty());
    assert!(!w
        .fake()
        .requests_to("GET", "/orgs/octo-org/teams/reviewers/memberships/erin")
        .is_empty());
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_team_membership_the_app_may_not_read_does_not_count_and_the_check_says_what_to_grant() {
    let mut w = World::new().await;
    w.fake().revoke_installation_permission(OWNER, "members");
    owned_by_dave_and_reviewers(&w);
    w.commit(&[(".github/navin.yml", REQUIRE_OWNERS)]);
    let (pr, head) = planned_pr(&mut w).await;

    w.review(pr, "erin", "approved").await;
    let check = w.plan_check(&head);
    assert_eq!(conclusion(&check), "action_required");
    let text = summary(&check);
    assert!(text.contains(&format!("@{OWNER}/reviewers")), "{text}");
    assert!(text.contains("`members: read`"), "{text}");
    assert_eq!(
        w.plan_record(&format!("pr-{pr}")).unwrap().status,
        RecordStatus::Pending
    );
    // dave owns the files by login: no membership needed.
    w.review(pr, "dave", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_require_codeowners_any_writers_approval_counts_as_before() {
    let mut w = World::new().await;
    owned_by_dave_and_reviewers(&w);
    let (pr, head) = planned_pr(&mut w).await;
    w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    assert!(w
        .fake()
        .requests_to("GET", "/orgs/octo-org/teams/reviewers/memberships/alice")
        .is_empty());
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_an_issue_approve_by_a_writer_who_owns_nothing_is_refused_and_an_owners_counts() {
    let mut w = World::new().await;
    owned_by_dave_and_reviewers(&w);
    w.commit(&[(".github/navin.yml", REQUIRE_OWNERS)]);
    let issue = w.issue("Configurable greeting", "");
    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let plan = w.reply().await;
    assert!(plan.starts_with(PLAN), "{plan}");

    w.comment(issue, "maya", "/approve").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("owns none of the plan's proposed files"),
        "{refusal}"
    );
    let record = w.plan_record(&format!("issue-{issue}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(
        record.approvals.is_empty(),
        "a refused command changes nothing"
    );

    w.comment(issue, "dave", "/approve").await;
    let record = w.plan_record(&format!("issue-{issue}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_require_codeowners_the_approve_button_counts_only_an_owners_click() {
    let mut w = World::new().await;
    owned_by_dave_and_reviewers(&w);
    w.commit(&[(".github/navin.yml", REQUIRE_OWNERS)]);
    let (pr, head) = planned_pr(&mut w).await;
    let run = w.plan_check(&head).id;
    let button = w.plan_buttons(&head)[0].clone();

    // alice may write but owns nothing: refused, told why, nothing recorded.
    let commits = w.ledger_commits();
    w.click(run, &button, "alice").await;
    let reply = w.reply().await;
    assert!(
        reply.contains("alice owns none of the plan's proposed files"),
        "{reply}"
    );
    assert_eq!(
        w.ledger_commits(),
        commits,
        "a refused click wrote to the ledger"
    );
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");

    // dave owns every file by login: his click approves.
    w.click(run, &button, "dave").await;
    let check = w.plan_check(&head);
    assert_eq!(conclusion(&check), "success", "{}", summary(&check));
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    assert!(record.waiting_for_owners.is_empty());
    w.finish().await;
}
