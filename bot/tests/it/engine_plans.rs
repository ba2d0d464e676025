//! Plans on pull requests end to end, in the World DSL: `/plan` on a PR, the `navin/plan`
//! check on its head, review approvals (who counts, what revokes, what goes stale),
//! `/plan edit`, auto-accept and the `require_plan_for` gate, read back from the check
//! runs, the plan comment and the typed plan records.

use navin_e2e::fake::model::CheckRun;
use navin_e2e::fake::PullSpec;
use navin_ledger::plan::record::{text_path, RecordStatus};

use crate::world::World;

pub(crate) const PLAN: &str = "<!-- navin:plan";

/// The change carol's pull requests make.
pub(crate) const GREETING: (&str, &str) = (
    "src/greet.rs",
    "pub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
);

/// carol, a writer, opens a pull request changing `files`; returns its number and head.
pub(crate) async fn carols_pr(w: &mut World, files: &[(&str, &str)], body: &str) -> (u64, String) {
    w.grant("carol", "write");
    let mut spec = PullSpec::new("feature/greeting")
        .author("carol")
        .title("Configurable greeting")
        .body(body);
    for (path, content) in files {
        spec = spec.file(path, content);
    }
    w.open_pull(spec).await
}

/// What a `navin/plan` run concluded (`action_required`, `success`, `failure`).
pub(crate) fn conclusion(run: &CheckRun) -> &str {
    run.conclusion.as_deref().unwrap_or("none")
}

/// The text under a `navin/plan` run's title.
pub(crate) fn summary(run: &CheckRun) -> &str {
    run.output["summary"].as_str().unwrap_or_default()
}

/// alice asks for a plan on PR `pr` (whose head is `head`): the plan comment, her
/// command acknowledged, the planner reading the PR's head, `navin/plan` waiting.
pub(crate) async fn plan_on_pr(w: &mut World, pr: u64, head: &str) {
    w.clear_requests();
    let asked = w
        .comment(pr, "alice", "/plan make the greeting configurable")
        .await;
    let plan = w.reply().await;
    let marker = format!("<!-- navin:plan id=pr-{pr} ");
    assert!(plan.starts_with(&marker), "{plan}");
    assert!(w.reactions(asked).contains(&"+1".to_owned()));
    // The planner read the PR's head by git, not the default branch, and no file by REST.
    let run = w
        .plan_record(&format!("pr-{pr}"))
        .and_then(|r| r.run)
        .expect("planner run");
    assert_eq!(run.commit, head);
    assert!(w.requested("GET", "/git/trees/*").is_empty());
    assert!(w.requested("GET", "/git/blobs/*").is_empty());
    assert_eq!(conclusion(&w.plan_check(head)), "action_required");
    w.requests("/plan on a PR (+ check run)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_on_a_pull_request_posts_the_plan_and_an_action_required_check_on_the_head() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "Greets differently.").await;
    plan_on_pr(&mut w, pr, &head).await;

    let run = w.plan_check(&head);
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
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(record.pull_request);
    assert_eq!(record.issue, pr);

    // A push: the new head gets its own run; the old head keeps exactly one.
    let new_head = w.push(pr, &[("README.md", "hello\n")]).await;
    assert_eq!(conclusion(&w.plan_check(&new_head)), "action_required");
    assert_eq!(
        w.plan_checks(&head).len(),
        1,
        "the old head keeps its own run"
    );
    w.requests("pull_request.synchronize (own plan)");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writers_approving_review_turns_the_check_green_and_records_the_approval() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "").await;
    plan_on_pr(&mut w, pr, &head).await;

    let review = w.review(pr, "alice", "approved").await;
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "success");
    assert!(summary(&run).contains("@alice"), "{}", summary(&run));
    w.requests("pull_request_review approved (writer)");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    let approval = &record.approvals[0];
    assert_eq!(approval.approver, "alice");
    assert_eq!(approval.review_id, Some(review));
    assert_eq!(approval.plan_hash, record.hash);
    let message = w.ledger_message();
    assert!(
        message.contains(&format!("Navin-Plan: pr-{pr}")),
        "{message}"
    );
    let edited = w.edited(PLAN);
    assert!(edited.contains("approved"), "{edited}");
    assert!(edited.contains("Draft mission"), "{edited}");
    assert!(edited.contains(&format!("review {review}")), "{edited}");

    // Implementation commits do not touch the plan text: the new head is green at once.
    w.clear_requests();
    let new_head = w.push(pr, &[("src/greet.rs", "// done\n")]).await;
    assert_eq!(conclusion(&w.plan_check(&new_head)), "success");
    w.requests("pull_request.synchronize (approved plan)");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pr_authors_own_approval_does_not_count() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "").await;
    plan_on_pr(&mut w, pr, &head).await;

    w.review(pr, "carol", "approved").await;
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    let text = summary(&run);
    assert!(
        text.contains("@carol is the pull request's author"),
        "{text}"
    );
    assert!(text.contains("0 of 1"), "{text}");
    w.requests("pull_request_review approved (author)");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(record.approvals.is_empty(), "{record:#?}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_readers_approval_does_not_count() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "").await;
    plan_on_pr(&mut w, pr, &head).await;

    w.review(pr, "bob", "approved").await;
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    assert!(
        summary(&run).contains("@bob has role `read`"),
        "{}",
        summary(&run)
    );
    w.requests("pull_request_review approved (reader)");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_changes_request_by_the_same_reviewer_revokes_the_approval() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "").await;
    plan_on_pr(&mut w, pr, &head).await;

    let review = w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    w.clear_requests();
    w.review(pr, "alice", "changes_requested").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");
    w.requests("pull_request_review changes_requested");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert_eq!(record.approvals[0].review_id, Some(review));
    assert!(record.approvals[0].revoked_at.is_some(), "{record:#?}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dismissed_review_revokes_the_approval() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "").await;
    plan_on_pr(&mut w, pr, &head).await;

    let review = w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");
    w.clear_requests();
    w.dismiss(pr, review).await;
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");
    w.requests("pull_request_review dismissed");
    let record = w.plan_record(&format!("pr-{pr}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert!(record.approvals[0].revoked_at.is_some(), "{record:#?}");
    let edited = w.edited(PLAN);
    assert!(edited.contains("pending approval"), "{edited}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_goes_stale_when_the_plan_is_edited_after_it() {
    let mut w = World::new().await;
    let (pr, head) = carols_pr(&mut w, &[GREETING], "").await;
    plan_on_pr(&mut w, pr, &head).await;
    w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");

    // A writer edits the plan: the title changes, everything else stays.
    let id = format!("pr-{pr}");
    let text = w.ledger_text(&text_path(&id)).unwrap();
    let (title, rest) = text.split_once('\n').unwrap();
    let edited = format!("{title} (keep the default greeting)\n{rest}");
    w.clear_requests();
    let edit = format!("/plan edit\n\n````markdown\n{edited}````\n");
    let c = w.comment(pr, "alice", &edit).await;
    assert!(w.reactions(c).contains(&"+1".to_owned()));
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    assert!(summary(&run).contains("Stale"), "{}", summary(&run));
    w.requests("/plan edit on a PR");
    let record = w.plan_record(&id).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    assert_ne!(record.approvals[0].plan_hash, record.hash);
    assert_eq!(record.superseded[0].status, RecordStatus::Superseded);
    let title = record.diff.as_ref().and_then(|d| d.title.as_ref());
    let title = title.unwrap_or_else(|| panic!("no title in the diff: {record:#?}"));
    assert!(
        title.after.contains("keep the default greeting"),
        "{title:?}"
    );
    let comment = w.edited(PLAN);
    assert!(comment.contains("stale"), "{comment}");
    assert!(comment.contains("Edits to the original plan"), "{comment}");

    // alice's approving review still stands on GitHub, yet a recount keeps it stale.
    w.review(pr, "bob", "commented").await;
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    assert!(
        summary(&run).contains("Not counted: @alice approved an earlier text"),
        "{}",
        summary(&run)
    );
    assert_eq!(w.plan_record(&id).unwrap().status, RecordStatus::Pending);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_edit_with_an_invalid_block_is_refused_naming_the_problem_and_changes_nothing() {
    let mut w = World::new().await;
    let issue = w.issue("Greeting", "Configurable greeting.");
    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let plan = w.reply().await;
    assert!(plan.contains("navin:plan id=issue-"), "{plan}");
    let md = text_path(&format!("issue-{issue}"));
    let before_text = w.ledger_text(&md).expect("the plan's text");
    let before_commits = w.ledger_commits();

    w.clear_requests();
    let body = "/plan edit\n\n```markdown\n# Plan: shorter\n\n## System Persona\nRead-only.\n\n## Goal\nDo it.\n```\n";
    w.comment(issue, "alice", body).await;
    let refusal = w.reply().await;
    assert!(refusal.contains("not valid"), "{refusal}");
    assert!(
        refusal.contains("Repository Architecture"),
        "the refusal names the first missing section: {refusal}"
    );
    w.requests("/plan edit (invalid block)");
    assert_eq!(w.ledger_commits(), before_commits);
    assert_eq!(w.ledger_text(&md).unwrap(), before_text);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_plan_for_keeps_the_gate_action_required_until_a_plan_is_approved() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "require_plan_for: [multi-file-change, dependency-add]\n",
    )]);
    w.clear_requests();
    let two_files = [
        (
            "src/greet.rs",
            "pub fn greet(n: &str) -> String { n.into() }\n",
        ),
        ("src/lib.rs", "pub mod greet;\n"),
    ];
    let (pr, head) = carols_pr(&mut w, &two_files, "Two files.").await;
    let run = w.plan_check(&head);
    assert_eq!(conclusion(&run), "action_required");
    assert_eq!(run.output["title"], "An approved plan is required");
    let text = summary(&run);
    assert!(text.contains("multi-file-change"), "{text}");
    assert!(text.contains("Navin-Plan: #"), "{text}");
    w.requests("pull_request.opened (gate, no plan)");

    // A plan on the PR: still action_required until approved, then green.
    plan_on_pr(&mut w, pr, &head).await;
    let run = w.plan_check(&head);
    let title = run.output["title"].as_str().unwrap();
    assert!(title.contains("needs approval"), "{title}");
    w.review(pr, "alice", "approved").await;
    assert_eq!(conclusion(&w.plan_check(&head)), "success");

    // A second PR names an issue's plan in its body: waiting while that plan is
    // pending, green once it is approved on the issue (no push needed).
    let issue = w.issue("Plan", "A plan for the next PR.");
    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    w.reply().await;
    let second = PullSpec::new("feature/second")
        .author("carol")
        .body(&format!("Follows the plan.\n\nNavin-Plan: #{issue}\n"))
        .file("src/greet.rs", "// v2\n")
        .file("Cargo.lock", "# lock\n");
    w.clear_requests();
    let (_, head2) = w.open_pull(second).await;
    let run = w.plan_check(&head2);
    assert_eq!(conclusion(&run), "action_required");
    let text = summary(&run);
    assert!(
        text.contains("dependency-add") && text.contains("pending"),
        "{text}"
    );
    w.requests("pull_request.opened (gate, named pending plan)");
    let approve = w.comment(issue, "maya", "/approve").await;
    assert!(w.reactions(approve).contains(&"+1".to_owned()));
    let run = w.plan_check(&head2);
    assert_eq!(conclusion(&run), "success");
    let title = run.output["title"].as_str().unwrap();
    assert!(title.contains(&format!("issue-{issue}")), "{run:#?}");
    w.requests("/approve on the issue (+ gate of the PR naming it)");
    w.finish().await;
}

/// `.navin/plans/auto-accept.json`: the repository's running count of accepted safe
/// operations (the engine's own type is private to it).
#[derive(serde::Deserialize)]
struct AutoAcceptCount {
    safe_operations_accepted: u32,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_accept_counts_approved_safe_operations_and_then_accepts_a_safe_plan() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "auto_accept:\n  after_n_safe_operations: 1\n",
    )]);
    let first = w.issue("One", "First plan.");
    w.comment(first, "alice", "/plan make the greeting configurable")
        .await;
    w.reply().await;
    let record = w.plan_record(&format!("issue-{first}")).unwrap();
    assert_eq!(record.status, RecordStatus::Pending);
    let decision = record.auto_accept.as_deref().unwrap_or_default();
    assert!(decision.contains("only 0 of the 1"), "{record:#?}");
    let safe = record.safe_operations;
    assert!(safe >= 1, "the built-in plan only edits files: {record:#?}");

    // A person approves it: its safe operations count towards the threshold.
    let approve = w.comment(first, "maya", "/approve").await;
    assert!(w.reactions(approve).contains(&"+1".to_owned()));
    let count = w
        .ledger_text(".navin/plans/auto-accept.json")
        .expect("the auto-accept count");
    let count: AutoAcceptCount = serde_json::from_str(&count).unwrap();
    assert_eq!(count.safe_operations_accepted, safe);

    // The next safe plan is accepted by config, logged like a person's approval.
    let second = w.issue("Two", "Second plan.");
    w.clear_requests();
    w.comment(second, "alice", "/plan make the greeting configurable")
        .await;
    let comment = w.reply().await;
    assert!(comment.contains("approved"), "{comment}");
    assert!(comment.contains("auto-accept"), "{comment}");
    w.requests("/plan (auto-accepted)");
    let second_id = format!("issue-{second}");
    let record = w.plan_record(&second_id).unwrap();
    assert_eq!(record.status, RecordStatus::Approved);
    let approval = &record.approvals[0];
    assert_eq!(approval.approver, "auto-accept");
    assert_eq!(approval.plan_hash, record.hash);
    let note = approval.note.as_deref().unwrap_or_default();
    assert!(note.contains("auto-accepted"), "{approval:?}");

    // An edit that deletes a file is never auto-accepted, whatever the count.
    let text = w.ledger_text(&text_path(&second_id)).unwrap();
    let edited = text.replacen(
        "### File: src/lib.rs\n\n- **Operation:** edit",
        "### File: src/lib.rs\n\n- **Operation:** delete",
        1,
    );
    assert_ne!(edited, text);
    let edit = format!("/plan edit\n\n````markdown\n{edited}````\n");
    let c = w.comment(second, "alice", &edit).await;
    assert!(w.reactions(c).contains(&"+1".to_owned()));
    let record = w.plan_record(&second_id).unwrap();
    assert_eq!(record.status, RecordStatus::Pending, "{record:#?}");
    let decision = record.auto_accept.as_deref().unwrap_or_default();
    assert!(decision.contains("always need"), "{record:#?}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_changing_files_outside_the_plan_is_reported_and_strict_scope_fails_the_check() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", "plan:\n  scope: strict\n")]);
    let (pr, head) = carols_pr(&mut w, &[GREETING], "Greets differently.").await;
    plan_on_pr(&mut w, pr, &head).await;
    let text = w
        .ledger_text(&text_path(&format!("pr-{pr}")))
        .expect("plan text");
    let planned: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### File: "))
        .collect();
    assert!(!planned.contains(&"ops/deploy.sh"), "{planned:?}");

    let new_head = w
        .push(pr, &[("ops/deploy.sh", "#!/bin/sh\necho deploy\n")])
        .await;
    let run = w.plan_check(&new_head);
    assert_eq!(conclusion(&run), "failure", "{run:#?}");
    assert!(run.output["title"]
        .as_str()
        .unwrap_or_default()
        .contains("outside plan"));
    let text = summary(&run);
    assert!(
        text.contains("**Outside the plan**") && text.contains("`ops/deploy.sh`"),
        "{text}"
    );
    let marks = run.output["annotations"].as_array().expect("annotations");
    assert!(
        marks
            .iter()
            .any(|m| m["path"] == "ops/deploy.sh" && m["annotation_level"] == "failure"),
        "{marks:#?}"
    );
    w.finish().await;
}

/// `login` opens a pull request titled `title` changing the greeting.
async fn open_titled(w: &mut World, login: &str, branch: &str, title: &str) -> (u64, String) {
    let spec = PullSpec::new(branch)
        .author(login)
        .title(title)
        .body("")
        .file(GREETING.0, GREETING.1);
    w.open_pull(spec).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_trivial_pull_request_by_a_writer_gets_a_plan_without_asking() {
    let mut w = World::new().await;
    w.commit(&[(".github/navin.yml", "plan_mode:\n  auto_threshold: 3\n")]);
    w.grant("carol", "write");
    w.grant("dave", "read");

    // Migration + rename: 5 points, over the threshold.
    let title = "Rename the greetings table column and migrate the data";
    let (pr, head) = open_titled(&mut w, "carol", "feature/rename", title).await;
    let plan = w.reply().await;
    assert!(
        plan.starts_with(&format!("<!-- navin:plan id=pr-{pr} ")),
        "{plan}"
    );
    let record = w.plan_record(&format!("pr-{pr}")).expect("a plan record");
    assert_eq!(record.request, title);
    assert_eq!(record.requested_by, "carol");
    assert_eq!(conclusion(&w.plan_check(&head)), "action_required");

    // The same text from a reader spends no planner; a trivial one from a writer neither.
    let (by_reader, _) = open_titled(&mut w, "dave", "feature/reader", title).await;
    let (trivial, _) = open_titled(&mut w, "carol", "feature/typo", "Fix a typo").await;
    w.no_reply().await;
    assert!(w.plan_record(&format!("pr-{by_reader}")).is_none());
    assert!(w.plan_record(&format!("pr-{trivial}")).is_none());
    w.finish().await;
}

/// The automatic plan's record landed but its comment did not (GitHub kept failing the
/// comment): the delivery's retry posts the comment instead of skipping a PR that now
/// "has a plan".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_automatic_plan_whose_comment_was_lost_is_posted_when_the_delivery_is_retried() {
    use navin_e2e::fake::Fault;
    let mut w = World::new().await;
    w.patient(std::time::Duration::from_secs(60));
    w.commit(&[(".github/navin.yml", "plan_mode:\n  auto_threshold: 3\n")]);
    w.grant("carol", "write");
    // One attempt and the client's three retries of a 5xx: the first delivery attempt
    // fails after the plan record is committed.
    let lost = w
        .fake()
        .inject(Fault::on("POST", "/repos/{owner}/{repo}/issues/{number}/comments").times(4));
    let title = "Rename the greetings table column and migrate the data";
    let (pr, _) = open_titled(&mut w, "carol", "feature/rename", title).await;
    let plan = w.reply().await;
    assert_eq!(w.fake().fault_hits(lost), 4);
    assert!(
        plan.starts_with(&format!("<!-- navin:plan id=pr-{pr} ")),
        "{plan}"
    );
    let record = w.plan_record(&format!("pr-{pr}")).expect("a plan record");
    assert_eq!(record.op_ids.len(), 1, "planned once: {:?}", record.op_ids);
    w.finish().await;
}
