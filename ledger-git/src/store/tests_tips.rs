//! The remote's tip record against real git repositories: a fresh clone refuses a rewind it could not see before, and concurrent writers and readers are never refused.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use git2::Repository;

use super::tests::{ctx, fact, init_op, remote_and_clones, remote_cfg, store, tip, written};
use super::*;

/// Defect 6 of the hardening review: a rewind that stays between two checkpoints and is
/// then written on reads as normal history to a clone that never saw the branch (every
/// checkpoint is still there, the versions run on without a gap). The tip record, which
/// a later write pushed, is not in the new history: refused, naming both versions.
#[test]
fn a_fresh_clone_refuses_a_remote_rewound_between_two_checkpoints_and_written_on() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 2);
    let s = store(&clones[0], remote_cfg());
    s.transact(&init_op("shared"), &ctx())
        .expect("v1, checkpointed");
    s.transact(&fact(1), &ctx()).expect("v2");
    s.transact(&fact(2), &ctx()).expect("v3");
    s.checkpoint().expect("checkpoint v3");
    let remote = Repository::open_bare(&bare).expect("bare");
    let mut tips = Vec::new();
    for n in 3..=6 {
        s.transact(&fact(n), &ctx()).expect("v4..v7");
        tips.push(tip(&remote, DEFAULT_BRANCH).expect("tip"));
    }
    let (v5, v7) = (tips[1], tips[3]);
    // Someone moves the branch back to v5 and writes a v6 of their own on it.
    let branch = format!("refs/heads/{DEFAULT_BRANCH}");
    remote
        .reference(&branch, v5, true, "rewind")
        .expect("rewind");
    let (version, _) = written(
        store(&bare, StoreConfig::default())
            .transact(&fact(99), &ctx())
            .expect("someone's v6"),
    );
    assert_eq!(version, 6, "the versions run on without a gap");
    let rewritten = tip(&remote, DEFAULT_BRANCH);

    let fresh = store(&clones[1], remote_cfg());
    let err = fresh.read().expect_err("the rewind is caught");
    assert!(
        matches!(&err, StoreError::Rewound(r) if r.version == Some(6) && r.tip_version == Some(6)),
        "{err}"
    );
    let text = err.to_string();
    assert!(text.contains(&tip_record_ref(DEFAULT_BRANCH)), "{text}");
    assert!(text.contains("v6 at") && text.contains("at v6"), "{text}");
    let err = fresh
        .transact(&fact(100), &ctx())
        .expect_err("nothing is written");
    assert!(matches!(err, StoreError::Rewound(_)), "{err}");
    assert_eq!(
        tip(&remote, DEFAULT_BRANCH),
        rewritten,
        "remote left as found"
    );

    // Restored: the same clone reads it as before.
    remote
        .reference(&branch, v7, true, "restore")
        .expect("restore");
    let ledger = store(&clones[1], remote_cfg())
        .read()
        .expect("read")
        .expect("ledger")
        .ledger;
    assert_eq!(ledger.mission.version, 7);
}

/// The record moves forward with every write and is always on the branch: three clones
/// writing at once (ledger operations and plan files) while fresh clones read are never
/// refused, and the record ends in the history of the tip.
#[test]
fn many_writers_and_fresh_readers_of_one_remote_are_never_refused() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 3);
    store(&clones[0], remote_cfg())
        .transact(&init_op("shared"), &ctx())
        .expect("init");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (done, bare, root) = (done.clone(), bare.clone(), root.path().to_path_buf());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) || reads == 0 {
                let dir = root.join(format!("reader{reads}"));
                let repo = Repository::init(&dir).expect("reader clone");
                repo.remote("origin", bare.to_str().expect("utf8 path"))
                    .expect("remote");
                if let Err(e) = store(&dir, remote_cfg()).read() {
                    panic!("fresh read {reads} refused: {e}");
                }
                reads += 1;
            }
            reads
        })
    };
    let writers: Vec<_> = clones
        .iter()
        .enumerate()
        .map(|(c, dir)| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let s = store(&dir, remote_cfg());
                for i in 0..15 {
                    s.transact(&fact(c * 1000 + i), &ctx()).expect("write");
                    let path = format!("{PLANS_DIR}/c{c}.md");
                    s.update_files(&[path.as_str()], "navin: plan", ctx().now, |_| {
                        Some(vec![(path.clone(), format!("{i}\n").into_bytes())])
                    })
                    .expect("plan write");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    done.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("reader");
    assert!(reads > 0);
    let remote = Repository::open_bare(&bare).expect("bare");
    let head = tip(&remote, DEFAULT_BRANCH).expect("tip");
    let record = remote
        .refname_to_id(&tip_record_ref(DEFAULT_BRANCH))
        .expect("a record");
    assert!(remote.graph_descendant_of(head, record).expect("graph"));
    let ledger = store(&clones[0], remote_cfg())
        .read()
        .expect("read")
        .expect("ledger")
        .ledger;
    assert_eq!(ledger.mission.version, 46);
}

/// A remote whose ledger branch was deleted, read by a clone that never saw it, is
/// reported as vanished (the record says it was there), not taken for a repository
/// without a ledger, where Navin would start a new one.
#[test]
fn a_fresh_clone_reports_a_deleted_ledger_branch_the_record_remembers() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 2);
    let s = store(&clones[0], remote_cfg());
    s.transact(&init_op("shared"), &ctx()).expect("v1");
    s.transact(&fact(1), &ctx()).expect("v2");
    let remote = Repository::open_bare(&bare).expect("bare");
    remote
        .find_reference(&format!("refs/heads/{DEFAULT_BRANCH}"))
        .expect("branch")
        .delete()
        .expect("delete");
    let err = store(&clones[1], remote_cfg())
        .transact(&init_op("again"), &ctx())
        .expect_err("not recreated");
    assert!(matches!(err, StoreError::BranchVanished { .. }), "{err}");
    assert!(tip(&remote, DEFAULT_BRANCH).is_none(), "not recreated");
}
