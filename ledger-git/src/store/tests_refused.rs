//! A refused tip is not a dead end: its trusted state stays readable, `/rollback` to it writes on top, and a revert of the forged commit is accepted.

use git2::{Repository, Signature};

use super::tests::{ctx, fact, init_op, store, tip};
use super::tests_seal::{forge, sealed_cfg, set_s1};
use super::*;
use crate::error::RuleError;
use crate::model::TaskStatus;

/// v1 and v2 by Navin, then a forged commit marking S1 done.
fn forged_ledger(cfg: StoreConfig) -> (tempfile::TempDir, Repository, git2::Oid) {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = Repository::init(dir.path()).expect("repo");
    let s = store(dir.path(), cfg);
    s.transact(&init_op("g"), &ctx()).expect("v1");
    s.transact(&fact(1), &ctx()).expect("v2");
    let forged = forge(&repo, "mallory", "close S1", |l| {
        set_s1(l, |t| t.status = TaskStatus::Done);
    });
    (dir, repo, forged)
}

#[test]
fn a_refused_tip_names_the_version_to_restore_and_still_reads_the_state_below_it() {
    let (dir, _repo, forged) = forged_ledger(sealed_cfg());
    let s = store(dir.path(), sealed_cfg());
    let err = s.read().expect_err("refused");
    let shown = err.to_string();
    assert!(shown.contains("`/rollback v2`"), "{shown}");
    let StoreError::Foreign {
        commit,
        trusted_version,
        ..
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(
        (commit.as_str(), *trusted_version),
        (forged.to_string().as_str(), Some(2))
    );

    let reading = s.read_or_trusted().expect("a reading");
    let snapshot = reading.snapshot.expect("the trusted state");
    assert_eq!(snapshot.ledger.mission.version, 2);
    assert_eq!(snapshot.ledger.board.tasks[0].status, TaskStatus::Planned);
    assert!(matches!(reading.refused, Some(StoreError::Foreign { .. })));
    let view = s.view(false).expect("view");
    assert!(view.ledger.is_err());
    assert_eq!(view.trusted.map(|l| l.mission.version), Some(2));
}

#[test]
fn rollback_over_a_refused_tip_writes_the_trusted_state_on_top_and_the_ledger_reads_again() {
    for cfg in [sealed_cfg(), StoreConfig::default()] {
        let sealed = cfg.seal_key.is_some();
        let (dir, repo, forged) = forged_ledger(cfg.clone());
        let s = store(dir.path(), cfg.clone());
        let written = s
            .rollback(2, &ctx())
            .expect("rollback over the refused tip");
        assert!(
            matches!(written, Committed::Written { version: 3, .. }),
            "{written:?}"
        );
        let after = tip(&repo, DEFAULT_BRANCH).expect("tip");
        let parent = repo
            .find_commit(after)
            .expect("commit")
            .parent_id(0)
            .expect("parent");
        assert_eq!(
            parent, forged,
            "written on top: no force push (sealed: {sealed})"
        );

        // A fresh reader (no vetted note) reads it, with S1 as Navin last knew it, and
        // builds on it.
        let fresh = store(dir.path(), cfg);
        let ledger = fresh.read().expect("readable").expect("a ledger").ledger;
        assert_eq!(ledger.mission.version, 3);
        assert_eq!(ledger.board.tasks[0].status, TaskStatus::Planned);
        fresh.transact(&fact(3), &ctx()).expect("builds on it");
    }
}

#[test]
fn rollback_past_a_refused_tip_cannot_restore_the_forged_version() {
    let (dir, _repo, _) = forged_ledger(sealed_cfg());
    let s = store(dir.path(), sealed_cfg());
    // The forged commit's content is no version Navin wrote.
    let err = s
        .rollback(3, &ctx())
        .expect_err("v3 is not in the trusted history");
    assert!(
        matches!(
            err,
            StoreError::Rule(RuleError::UnknownVersion {
                version: 3,
                current: 2
            })
        ),
        "{err}"
    );
}

#[test]
fn a_revert_of_the_forged_commit_makes_the_ledger_readable_and_a_partial_one_does_not() {
    let (dir, repo, forged) = forged_ledger(sealed_cfg());
    let base = repo
        .find_commit(forged)
        .expect("forged")
        .parent(0)
        .expect("v2");
    let sig = Signature::now("alice", "alice@example.invalid").expect("sig");
    // `git revert`: the tree as it was below the forged commit.
    let tree = base.tree().expect("tree");
    let head = repo.find_commit(forged).expect("forged");
    repo.commit(
        Some(&format!("refs/heads/{DEFAULT_BRANCH}")),
        &sig,
        &sig,
        "Revert \"close S1\"",
        &tree,
        &[&head],
    )
    .expect("revert");
    let s = store(dir.path(), sealed_cfg());
    let ledger = s
        .read()
        .expect("readable after the revert")
        .expect("ledger")
        .ledger;
    assert_eq!(ledger.board.tasks[0].status, TaskStatus::Planned);
    s.transact(&fact(3), &ctx()).expect("and written on");

    // A "revert" that leaves S1 done is no revert.
    let (dir, repo, _) = forged_ledger(sealed_cfg());
    forge(&repo, "mallory", "tidy", |l| {
        l.mission.missing_info.push("x".into())
    });
    let err = store(dir.path(), sealed_cfg())
        .read()
        .expect_err("still refused");
    assert!(matches!(err, StoreError::Foreign { .. }), "{err}");
}
