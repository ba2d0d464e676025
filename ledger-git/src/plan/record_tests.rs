//! The plan record's status changes, approvals bound to hashes, and replaced texts.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use super::*;
use crate::plan::{FileChange, Operation, Plan, READ_ONLY_PERSONA};

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
}

fn record() -> PlanRecord {
    PlanRecord {
        id: "pr-4".into(),
        status: RecordStatus::Pending,
        hash: "sha256:a".into(),
        source: "built-in planner".into(),
        request: "r".into(),
        repository: "o/r".into(),
        issue: 4,
        pull_request: true,
        requested_by: "alice".into(),
        created_at: at(0),
        updated_at: at(0),
        text_at: Some(at(0)),
        approvals: vec![],
        rejections: vec![],
        edits: vec![],
        original: None,
        diff: None,
        superseded: vec![],
        safe_operations: 0,
        counted_hash: None,
        auto_accept: None,
        op_ids: vec![],
        file_hash: None,
        run: None,
        review_requests: None,
        waiting_for_owners: vec![],
    }
}

fn counted(id: u64, login: &str) -> CountedReview {
    CountedReview {
        user_id: None,
        review_id: id,
        login: login.into(),
        at: at(1),
    }
}

#[test]
fn approvals_count_people_by_numeric_id_not_by_login() {
    let mut r = record();
    let by = |review: u64, login: &str, user: u64| CountedReview {
        review_id: review,
        login: login.to_owned(),
        user_id: Some(user),
        at: at(2),
    };
    // One person under two logins (renamed between reviews) is one approver.
    r.reconcile_reviews(
        &[7, 8],
        &[by(7, "carol", 5), by(8, "carol-new", 5)],
        2,
        at(3),
    );
    assert_eq!(r.approver_count(), 1);
    assert!(!r.is_approved());
    assert_eq!(r.approvals[0].approver_id, Some(5));
    // Two people who held the same login are two approvers.
    r.reconcile_reviews(
        &[7, 8, 9],
        &[by(7, "carol", 5), by(8, "carol-new", 5), by(9, "carol", 6)],
        2,
        at(4),
    );
    assert_eq!(r.approver_count(), 2);
    assert!(r.is_approved());
}

#[test]
fn approvals_follow_the_reviews_and_the_required_count() {
    let mut r = record();
    assert!(r.reconcile_reviews(&[7], &[counted(7, "carol")], 2, at(2)));
    assert_eq!(r.status, RecordStatus::Pending);
    let both = [counted(7, "carol"), counted(8, "dave")];
    assert!(r.reconcile_reviews(&[7, 8], &both, 2, at(3)));
    assert_eq!(r.status, RecordStatus::Approved);
    assert_eq!(r.approvals[0].review_id, Some(7));
    assert_eq!(r.approvals[0].plan_hash, "sha256:a");
    // Same reviews again: nothing changes, nothing to commit.
    assert!(!r.reconcile_reviews(&[7, 8], &both, 2, at(4)));
    // Carol's review dismissed: revoked (kept in the log), back to pending.
    assert!(r.reconcile_reviews(&[8], &[counted(8, "dave")], 2, at(5)));
    assert_eq!(r.status, RecordStatus::Pending);
    assert!(r.approvals[0].revoked_at.is_some());
    assert_eq!(r.approvals.len(), 2);
}

#[test]
fn a_new_text_makes_earlier_approvals_stale_and_the_comment_says_so() {
    let mut r = record();
    r.reconcile_reviews(&[7], &[counted(7, "carol")], 1, at(2));
    assert!(r.is_approved());
    r.replace_text("sha256:b", "alice", "edited with /plan edit", at(3));
    // The approving review still stands on GitHub but is older than the new text.
    r.reconcile_reviews(&[7], &[], 1, at(4));
    assert_eq!(r.status, RecordStatus::Pending);
    assert!(!r.is_approved());
    assert_eq!(r.superseded[0].hash, "sha256:a");
    assert_eq!(r.superseded[0].status, RecordStatus::Superseded);
    let why = r.stale_note().expect("stale approvals are noted");
    assert!(
        why.contains("@carol") && why.contains("/plan edit"),
        "{why}"
    );
    // A fresh approval of the new text counts again.
    r.reconcile_reviews(&[9], &[counted(9, "carol")], 1, at(5));
    assert!(r.is_approved());
    assert!(
        r.approvals[0].revoked_at.is_some(),
        "superseded by carol's own later review"
    );
}

#[test]
fn a_button_approval_outlives_review_recounts_goes_stale_with_the_text_and_counts_once() {
    let mut r = record();
    let mut button = ApprovalEntry::new("carol", "sha256:a", at(1), None).by_id(Some(5));
    button.via = Some(VIA_CHECK_RUN.to_owned());
    r.approvals.push(button);
    // No review stands: the recount keeps the button approval, which has none.
    r.reconcile_reviews(&[], &[], 1, at(2));
    assert!(r.is_approved());
    // Carol also approves by review: still one approver, so two are not enough.
    let review = CountedReview {
        review_id: 7,
        login: "carol".into(),
        user_id: Some(5),
        at: at(3),
    };
    r.reconcile_reviews(&[7], std::slice::from_ref(&review), 2, at(3));
    assert_eq!(r.approver_count(), 1);
    assert_eq!(r.status, RecordStatus::Pending);
    // A new text: the button approval is bound to the old one.
    r.replace_text("sha256:b", "alice", "edited with /plan edit", at(4));
    r.reconcile_reviews(&[7], &[], 1, at(5));
    assert_eq!(r.approver_count(), 0);
    assert!(r.stale_note().unwrap().contains("@carol"));
}

#[test]
fn approvals_written_before_via_existed_read_as_none_and_via_round_trips() {
    let old = r#"{"approver":"a","plan_hash":"h","at":"2026-01-01T00:00:00Z"}"#;
    let entry: ApprovalEntry = serde_json::from_str(old).unwrap();
    assert_eq!(entry.via, None);
    assert!(!serde_json::to_string(&entry).unwrap().contains("via"));
    let mut button = entry;
    button.via = Some(VIA_CHECK_RUN.to_owned());
    let back: ApprovalEntry =
        serde_json::from_str(&serde_json::to_string(&button).unwrap()).unwrap();
    assert_eq!(back.via.as_deref(), Some("check-run"));
}

fn doc(operation: Operation, dependencies: &[&str]) -> PlanDocument {
    let plan = Plan {
        title: "Greet by name".into(),
        persona: READ_ONLY_PERSONA.into(),
        goal: "Make the greeting configurable.".into(),
        architecture: "One crate.".into(),
        capabilities: "Greets.".into(),
        data_flow: "Name in, greeting out.".into(),
        target_state: "A configurable greeting.".into(),
        impact_isolation: "Only src/greet.rs.".into(),
        changes: vec![FileChange {
            path: "src/greet.rs".into(),
            operation,
            change: "change the greeting".into(),
            rationale: "it is where greetings live".into(),
            optional: false,
        }],
        new_dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        risks: vec!["a".into(), "b".into(), "c".into()],
        next_steps: vec!["run cargo test".into()],
        questions: vec![],
        handoff: None,
        stages: vec![],
    };
    PlanDocument::from_plan(&plan).unwrap()
}

#[test]
fn auto_accept_needs_the_threshold_and_never_takes_deletes_or_new_dependencies() {
    let config = AutoAcceptConfig {
        after_n_safe_operations: 2,
        ..AutoAcceptConfig::default()
    };
    let edit = doc(Operation::Edit, &[]);
    let mut r = record();
    r.hash = edit.hash().to_owned();
    assert!(!r.auto_accept(&edit, &config, 1, 1, at(1)));
    assert!(r
        .auto_accept
        .as_deref()
        .unwrap()
        .contains("only 1 of the 2"));
    assert_eq!(r.status, RecordStatus::Pending);
    assert!(r.auto_accept(&edit, &config, 2, 1, at(2)));
    assert_eq!(r.status, RecordStatus::Approved);
    assert_eq!(r.approvals[0].approver, AUTO_ACCEPT);
    assert_eq!(r.approvals[0].plan_hash, edit.hash());
    assert!(r.approvals[0].note.is_some());
    for risky in [
        doc(Operation::Delete, &[]),
        doc(Operation::Edit, &["serde"]),
    ] {
        let mut r = record();
        r.hash = risky.hash().to_owned();
        assert!(!r.auto_accept(&risky, &config, 1000, 1, at(3)));
        assert!(
            r.auto_accept.as_deref().unwrap().contains("always need"),
            "{:?}",
            r.auto_accept
        );
        assert!(!r.is_approved());
    }
}

#[test]
fn records_written_before_edits_existed_still_parse() {
    let old = r#"{"id":"issue-1","status":"approved","hash":"h","source":"s","request":"r",
        "repository":"o/r","issue":1,"requested_by":"a","created_at":"2026-01-01T00:00:00Z",
        "updated_at":"2026-01-01T00:00:00Z","approvals":[{"approver":"a","plan_hash":"h",
        "at":"2026-01-01T00:00:00Z"}],"rejections":[],"op_ids":[]}"#;
    let r: PlanRecord = serde_json::from_str(old).unwrap();
    assert!(r.is_approved());
    assert!(!r.pull_request);
}
