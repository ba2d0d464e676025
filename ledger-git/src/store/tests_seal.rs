//! Sealed ledgers: commits made to look like Navin's, or foreign edits of what proves a step, are refused on read and write, naming the commit.

use git2::{Oid, Repository, Signature};

use super::tests::{ctx, fact, init_op, store, tip};
use super::*;
use crate::model::{TaskStatus, Validation};

const KEY: &str = "0123456789abcdef0123456789abcdef";

pub(super) fn sealed_cfg() -> StoreConfig {
    StoreConfig {
        seal_key: Some(SealKey::from_text(KEY).expect("key")),
        ..StoreConfig::default()
    }
}

/// Commits `change` of the tip's ledger as `committer` with `message`, as anyone with
/// push access could: both files edited consistently.
pub(super) fn forge(
    repo: &Repository,
    committer: &str,
    message: &str,
    change: impl FnOnce(&mut Ledger),
) -> Oid {
    let parent = repo
        .find_commit(tip(repo, DEFAULT_BRANCH).expect("a ledger"))
        .expect("tip");
    let mut ledger = read_ledger_at(repo, parent.id()).expect("ledger");
    change(&mut ledger);
    let (mission, board) = codec::encode(&ledger).expect("encode");
    let blobs = [
        (
            format!("{BOARD_DIR}/{}", codec::MISSION_FILE),
            repo.blob(&mission).expect("blob"),
        ),
        (
            format!("{BOARD_DIR}/{}", codec::BOARD_FILE),
            repo.blob(&board).expect("blob"),
        ),
    ];
    let blobs: Vec<(&str, Oid)> = blobs.iter().map(|(p, b)| (p.as_str(), *b)).collect();
    let tree = tree::write_files(repo, Some(&parent.tree().expect("tree")), &blobs).expect("tree");
    let tree = repo.find_tree(tree).expect("tree");
    let sig = Signature::now(committer, "navin@users.noreply.github.com").expect("sig");
    repo.commit(
        Some(&format!("refs/heads/{DEFAULT_BRANCH}")),
        &sig,
        &sig,
        message,
        &tree,
        &[&parent],
    )
    .expect("commit")
}

pub(super) fn set_s1(ledger: &mut Ledger, f: impl FnOnce(&mut crate::model::Task)) {
    let mut s1 = (*ledger.board.tasks[0]).clone();
    f(&mut s1);
    ledger.board.tasks[0] = std::sync::Arc::new(s1);
}

fn foreign(err: StoreError) -> (String, String, bool) {
    match err {
        StoreError::Foreign {
            commit,
            change,
            sealed_ledger,
            ..
        } => (commit, change, sealed_ledger),
        other => panic!("expected a foreign commit, got {other}"),
    }
}

#[test]
fn a_commit_forged_as_navin_with_its_trailers_is_refused_on_read_and_write_once_sealed() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    s.transact(&fact(1), &ctx()).expect("v2");
    let sealed_tip = tip(&repo, DEFAULT_BRANCH).expect("tip");
    let copied_seal = repo
        .find_commit(sealed_tip)
        .expect("commit")
        .message()
        .expect("utf8")
        .lines()
        .last()
        .expect("a seal line")
        .to_owned();
    assert!(copied_seal.starts_with("Navin-Seal: v2 "), "{copied_seal}");

    // Navin's committer name, its trailers, and even its last seal copied over.
    let message = format!(
        "navin: done v3 by human:alice\n\nS1 done\n\nNavin-Operation: done\nNavin-Version: 3\n{copied_seal}\n"
    );
    let forged = forge(&repo, "Navin", &message, |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });

    let fresh = store(dir.path(), sealed_cfg());
    let err = fresh.read().expect_err("the forged done is refused");
    let shown = err.to_string();
    let (commit, change, sealed) = foreign(err);
    assert_eq!(commit, forged.to_string());
    assert_eq!(change, "marks S1 done");
    assert!(sealed);
    assert!(shown.contains("no valid Navin seal"), "{shown}");

    let err = fresh
        .transact(&fact(2), &ctx())
        .expect_err("nor built upon");
    assert_eq!(foreign(err).0, forged.to_string());
    assert_eq!(tip(&repo, DEFAULT_BRANCH), Some(forged), "nothing written");
}

#[test]
fn relaxing_a_steps_validation_and_then_marking_it_done_is_refused_naming_the_first_commit() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    let relaxed = forge(&repo, "mallory", "relax S1", |l| {
        set_s1(l, |t| t.validation = Validation::None);
    });
    forge(&repo, "mallory", "close S1", |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });
    let err = store(dir.path(), sealed_cfg()).read().expect_err("refused");
    let (commit, change, _) = foreign(err);
    assert_eq!(commit, relaxed.to_string());
    assert_eq!(change, "changes S1's validation");

    // The same for the verification commands and the attempts.
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    forge(&repo, "mallory", "make the check pass", |l| {
        set_s1(l, |t| t.commands = vec!["true".to_owned()]);
    });
    let err = store(dir.path(), sealed_cfg()).read().expect_err("refused");
    assert_eq!(foreign(err).1, "changes S1's verification commands");
}

#[test]
fn a_foreign_edit_of_a_title_is_accepted_and_navins_next_commit_on_it_is_sealed() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    forge(&repo, "alice", "retitle S1", |l| {
        set_s1(l, |t| t.title = "First, clearer".to_owned());
    });
    let fresh = store(dir.path(), sealed_cfg());
    let read = fresh.read().expect("read").expect("a ledger");
    assert_eq!(read.ledger.board.tasks[0].title, "First, clearer");
    fresh.transact(&fact(1), &ctx()).expect("written");
    let key = SealKey::from_text(KEY).expect("key");
    let newest = repo
        .find_commit(tip(&repo, DEFAULT_BRANCH).expect("tip"))
        .expect("commit");
    let scope = SealScope {
        repository: String::new(),
        branch: DEFAULT_BRANCH.into(),
    };
    assert!(key.verifies(&scope, &newest));
}

#[test]
fn a_ledger_written_before_seals_is_read_then_sealed_and_a_lookalike_after_that_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let old = store(dir.path(), StoreConfig::default());
    old.transact(&init_op("g"), &ctx()).expect("v1");
    old.transact(&fact(1), &ctx()).expect("v2");

    let s = store(dir.path(), sealed_cfg());
    assert!(s.read().expect("an unsealed ledger is read").is_some());
    s.transact(&fact(2), &ctx()).expect("v3, sealed");

    let message = "navin: done v4 by human:alice\n\nNavin-Operation: done\nNavin-Version: 4\n";
    let forged = forge(&repo, "Navin", message, |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });
    let err = store(dir.path(), sealed_cfg()).read().expect_err("refused");
    assert_eq!(foreign(err).0, forged.to_string());
    // The same store, which vetted the sealed tip before, refuses it too.
    let err = s.read().expect_err("refused");
    assert_eq!(foreign(err).0, forged.to_string());
}

#[test]
fn starting_or_failing_a_step_without_a_seal_passes_but_undoing_a_failure_does_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    forge(&repo, "an agent", "start S1", |l| {
        set_s1(l, |t| t.status = TaskStatus::InProgress);
    });
    forge(&repo, "an agent", "S1 failed", |l| {
        set_s1(l, |t| {
            t.status = TaskStatus::Failed;
            t.retry_count += 1;
        });
    });
    assert!(store(dir.path(), sealed_cfg()).read().is_ok());
    let undone = forge(&repo, "an agent", "try S1 again for free", |l| {
        set_s1(l, |t| {
            t.status = TaskStatus::Planned;
            t.retry_count = 0;
        });
    });
    let err = store(dir.path(), sealed_cfg()).read().expect_err("refused");
    let (commit, change, _) = foreign(err);
    assert_eq!(commit, undone.to_string());
    assert_eq!(change, "marks S1 planned");
}

#[test]
fn a_harmless_foreign_commit_vetted_first_does_not_let_a_lookalike_through_later() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1, sealed");
    forge(&repo, "mallory", "retitle S1", |l| {
        set_s1(l, |t| t.title = "harmless".to_owned());
    });
    assert!(s.read().is_ok(), "the title edit is accepted and vetted");
    let message = "navin: done v2 by human:alice\n\nNavin-Operation: done\nNavin-Version: 2\n";
    let forged = forge(&repo, "Navin", message, |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });
    let err = s.read().expect_err("still a sealed ledger underneath");
    assert_eq!(foreign(err).0, forged.to_string());
}

#[test]
fn a_plan_record_edited_by_a_push_is_refused_but_a_hand_edit_of_a_plan_text_is_not() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1, sealed");
    let record = format!("{PLANS_DIR}/issue-7.json");
    let text = format!("{PLANS_DIR}/issue-7.md");
    s.update_files(
        &[&record, &text],
        "navin: plan issue-7 plan by human:alice\n\nNavin-Plan: issue-7\n",
        ctx().now,
        |_| {
            Some(vec![
                (
                    record.clone(),
                    br#"{"status":"pending","approvals":[]}"#.to_vec(),
                ),
                (text.clone(), b"# Plan\n".to_vec()),
            ])
        },
    )
    .expect("sealed plan write");
    super::tests::commit_files(&repo, DEFAULT_BRANCH, &[(&text, b"# Plan, edited\n")]);
    assert!(
        store(dir.path(), sealed_cfg()).read().is_ok(),
        "a text edit passes"
    );
    let forged = super::tests::commit_files(
        &repo,
        DEFAULT_BRANCH,
        &[(
            &record,
            br#"{"status":"approved","approvals":[{"approver":"mallory"}]}"#,
        )],
    );
    let err = store(dir.path(), sealed_cfg()).read().expect_err("refused");
    let (commit, change, _) = foreign(err);
    assert_eq!(commit, forged.to_string());
    assert_eq!(change, format!("changes the plan record {record}"));
}

/// `count` empty commits on the branch's tip, as anyone with push access could add.
fn bury(repo: &Repository, count: usize) {
    let sig = Signature::now("mallory", "m@example.com").expect("sig");
    for i in 0..count {
        let parent = repo
            .find_commit(tip(repo, DEFAULT_BRANCH).expect("tip"))
            .expect("tip");
        let tree = parent.tree().expect("tree");
        repo.commit(
            Some(&format!("refs/heads/{DEFAULT_BRANCH}")),
            &sig,
            &sig,
            &format!("chore {i}"),
            &tree,
            &[&parent],
        )
        .expect("commit");
    }
}

#[test]
fn a_forged_done_buried_under_a_thousand_empty_commits_is_still_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    let forged = forge(&repo, "mallory", "S1 done", |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });
    bury(&repo, 1000);
    // A fresh process (nothing vetted in memory) and the same one alike.
    for reader in [store(dir.path(), sealed_cfg()), s] {
        let (commit, change, _) = foreign(reader.read().expect_err("refused"));
        assert_eq!(commit, forged.to_string());
        assert_eq!(change, "marks S1 done");
        let (commit, _, _) = foreign(reader.transact(&fact(1), &ctx()).expect_err("refused"));
        assert_eq!(commit, forged.to_string(), "nothing is built on it");
    }
}

#[test]
fn a_vetted_tip_is_remembered_across_processes_and_a_forged_note_is_ignored() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), sealed_cfg());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    s.read().expect("read").expect("a ledger");
    let note = repo.path().join("navin").join("vetted-navin_ledger");
    let noted = std::fs::read_to_string(&note).expect("the vetted tip is noted");
    assert!(noted.starts_with(&tip(&repo, DEFAULT_BRANCH).expect("tip").to_string()));

    // Someone who can write the git directory notes their forgery as vetted.
    let forged = forge(&repo, "mallory", "S1 done", |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });
    std::fs::write(&note, format!("{forged} sealed {}\n", "00".repeat(32))).expect("write");
    let (commit, _, _) = foreign(
        store(dir.path(), sealed_cfg())
            .read()
            .expect_err("the note's MAC does not verify"),
    );
    assert_eq!(commit, forged.to_string());
}

#[test]
fn a_commit_navin_sealed_for_another_repository_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let in_repo = |repository: &str| StoreConfig {
        repository: repository.into(),
        ..sealed_cfg()
    };
    // The victim's ledger, sealed for it.
    store(dir.path(), in_repo("github:2"))
        .transact(&init_op("g"), &ctx())
        .expect("v1");
    // A fork on the same App shares that history; Navin seals a write there (the
    // attacker runs the fork's mission), which fast-forwards onto the victim's branch.
    let fork = store(dir.path(), in_repo("github:1"));
    fork.transact(&fact(1), &ctx())
        .expect("written for the fork");
    let replayed = tip(&repo, DEFAULT_BRANCH).expect("tip");
    let (commit, change, _) = foreign(
        store(dir.path(), in_repo("github:2"))
            .read()
            .expect_err("not sealed for this repository"),
    );
    assert_eq!(commit, replayed.to_string());
    assert_eq!(change, "changes the mission's facts");
}

#[test]
fn an_unsealed_change_of_the_missions_budget_goal_or_status_is_refused() {
    type Tweak = fn(&mut Ledger);
    let cases: [(&str, Tweak); 4] = [
        ("changes the mission's budget", |l| {
            l.mission.progress.budget.max_retries = 99;
        }),
        ("changes the mission's goal", |l| {
            l.mission.goal = "something else".into();
        }),
        ("changes the mission's status", |l| {
            l.mission.status = crate::model::MissionStatus::Done;
        }),
        ("changes the mission's spend", |l| {
            l.mission.progress.tokens_used = 0;
        }),
    ];
    for (want, change) in cases {
        let dir = tempfile::tempdir().expect("tmp");
        let repo = Repository::init(dir.path()).expect("repo");
        let s = store(dir.path(), sealed_cfg());
        s.transact(&init_op("g"), &ctx()).expect("v1");
        if want.ends_with("spend") {
            let usage = Operation::Usage {
                step: "S1".into(),
                tokens: 500,
                cost_usd: 0.0,
            };
            s.transact(&usage, &ctx()).expect("spent");
        }
        forge(&repo, "alice", "tweak", change);
        let (_, got, _) = foreign(store(dir.path(), sealed_cfg()).read().expect_err(want));
        assert_eq!(got, want);
    }
}
