//! Store tests against real git repositories in temporary directories.

use std::path::Path;

use chrono::{TimeZone, Utc};
use git2::{Oid, Repository, Signature};

use super::*;
use crate::model::{Actor, MissionStatus, TaskStatus, Validation};
use crate::ops::{InitArgs, NewTask, UpdateArgs};

pub(super) fn ctx() -> Ctx {
    Ctx::new(
        Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
            .single()
            .expect("time"),
        Actor::Human("alice".into()),
    )
}

pub(super) fn init_op(goal: &str) -> Operation {
    Operation::Init(InitArgs {
        goal: goal.into(),
        steps: vec![NewTask {
            id: "S1".into(),
            title: "first".into(),
            validation: Validation::Test,
            ..NewTask::default()
        }],
        ..InitArgs::default()
    })
}

pub(super) fn fact(n: usize) -> Operation {
    Operation::Update(UpdateArgs {
        add_facts: vec![format!("fact {n}")],
        reason: format!("note {n}"),
        ..UpdateArgs::default()
    })
}

fn repo_in(dir: &Path) -> Repository {
    Repository::init(dir).expect("init repo")
}

pub(super) fn store(dir: &Path, cfg: StoreConfig) -> Store {
    Store::open(dir, cfg).expect("open store")
}

pub(super) fn written(c: Committed) -> (u64, String) {
    match c {
        Committed::Written {
            version, commit, ..
        } => (version, commit),
        other => panic!("expected a write, got {other:?}"),
    }
}

pub(super) fn tip(repo: &Repository, branch: &str) -> Option<Oid> {
    repo.refname_to_id(&format!("refs/heads/{branch}")).ok()
}

#[test]
fn init_writes_an_orphan_commit_with_both_files_and_a_readable_message() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    let (version, commit) = written(s.transact(&init_op("ship"), &ctx()).expect("init"));
    assert_eq!(version, 1);
    let c = repo
        .find_commit(Oid::from_str(&commit).expect("oid"))
        .expect("commit");
    assert_eq!(c.parent_count(), 0, "orphan branch");
    assert_eq!(
        c.summary().expect("utf8"),
        Some("navin: init v1 by human:alice")
    );
    let msg = c.message().expect("utf8");
    assert!(
        msg.contains("Navin-Version: 1") && msg.contains("Navin-Actor: human:alice"),
        "{msg}"
    );
    assert_eq!(
        c.author().name().expect("utf8"),
        "Navin",
        "identity never comes from user config"
    );
    let tree = c.tree().expect("tree");
    let mission = tree::read_file(&repo, &tree, ".navin/board/mission.json")
        .expect("read")
        .expect("present");
    let text = String::from_utf8(mission).expect("utf8");
    assert!(
        text.starts_with("{\n  \"schema_version\": 1,\n  \"goal\": \"ship\""),
        "pretty, stable order: {text}"
    );
    assert!(tree::read_file(&repo, &tree, ".navin/board/board.json")
        .expect("read")
        .is_some());
}

#[test]
fn each_transaction_is_one_commit_whose_parent_is_the_previous_tip() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    let (_, first) = written(s.transact(&init_op("ship"), &ctx()).expect("init"));
    let (v, second) = written(
        s.transact(&fact(1), &ctx().with_op_id("delivery-42"))
            .expect("update"),
    );
    assert_eq!(v, 2);
    let c = repo
        .find_commit(Oid::from_str(&second).expect("oid"))
        .expect("commit");
    assert_eq!(c.parent_id(0).expect("parent").to_string(), first);
    assert!(c
        .message()
        .expect("msg")
        .contains("Navin-Delivery: delivery-42"));
    // The same delivery again is recognised and writes nothing.
    let again = s
        .transact(&fact(1), &ctx().with_op_id("delivery-42"))
        .expect("idempotent");
    assert!(matches!(again, Committed::AlreadyApplied { version: 2 }));
    assert_eq!(tip(&repo, DEFAULT_BRANCH).expect("tip").to_string(), second);
}

#[test]
fn a_refused_operation_writes_nothing() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("ship"), &ctx()).expect("init");
    let before = tip(&repo, DEFAULT_BRANCH);
    let err = s
        .transact(
            &Operation::Done {
                step: "S1".into(),
                evidence: None,
            },
            &ctx(),
        )
        .expect_err("gate");
    assert!(err.is_rule());
    assert!(
        err.to_string().contains("S1 has validation 'test'"),
        "{err}"
    );
    assert_eq!(tip(&repo, DEFAULT_BRANCH), before);
}

pub(super) fn commit_files(repo: &Repository, branch: &str, files: &[(&str, &[u8])]) -> Oid {
    let parent = tip(repo, branch).map(|o| repo.find_commit(o).expect("parent"));
    let base = parent.as_ref().map(|p| p.tree().expect("tree"));
    let blobs: Vec<(&str, Oid)> = files
        .iter()
        .map(|(p, b)| (*p, repo.blob(b).expect("blob")))
        .collect();
    let tree = repo
        .find_tree(tree::write_files(repo, base.as_ref(), &blobs).expect("tree"))
        .expect("tree");
    let sig = Signature::now("someone", "someone@example.com").expect("sig");
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(
        Some(&format!("refs/heads/{branch}")),
        &sig,
        &sig,
        "hand edit",
        &tree,
        &parents,
    )
    .expect("commit")
}

#[test]
fn a_corrupt_mission_file_is_reported_with_its_field_and_left_untouched() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("ship"), &ctx()).expect("init");
    let snapshot = s.read().expect("read").expect("ledger");
    let (mission, _) = codec::encode(&snapshot.ledger).expect("encode");
    let broken = String::from_utf8(mission)
        .expect("utf8")
        .replace("\"status\": \"running\"", "\"status\": \"sleeping\"");
    let bad = commit_files(
        &repo,
        DEFAULT_BRANCH,
        &[(".navin/board/mission.json", broken.as_bytes())],
    );
    let fresh = store(dir.path(), StoreConfig::default());
    let err = fresh.transact(&fact(1), &ctx()).expect_err("corrupt");
    match &err {
        StoreError::Corrupt { path, field, .. } => {
            assert_eq!(path, ".navin/board/mission.json");
            assert_eq!(field, "status");
        }
        other => panic!("expected corrupt, got {other}"),
    }
    assert_eq!(tip(&repo, DEFAULT_BRANCH), Some(bad), "never overwritten");
    let tree = repo.find_commit(bad).expect("c").tree().expect("t");
    let still = tree::read_file(&repo, &tree, ".navin/board/mission.json")
        .expect("read")
        .expect("present");
    assert_eq!(still, broken.as_bytes(), "byte-for-byte unchanged");
}

#[test]
fn a_board_with_a_dependency_cycle_on_disk_is_reported_as_corrupt() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("ship"), &ctx()).expect("init");
    s.transact(
        &Operation::AddSteps(vec![NewTask {
            id: "S2".into(),
            title: "t".into(),
            depends_on: vec!["S1".into()],
            ..NewTask::default()
        }]),
        &ctx(),
    )
    .expect("add");
    let ledger = s.read().expect("read").expect("ledger").ledger;
    let (_, board) = codec::encode(&ledger).expect("encode");
    let cyclic = String::from_utf8(board).expect("utf8").replacen(
        "\"depends_on\": []",
        "\"depends_on\": [\"S2\"]",
        1,
    );
    commit_files(
        &repo,
        DEFAULT_BRANCH,
        &[(".navin/board/board.json", cyclic.as_bytes())],
    );
    let err = store(dir.path(), StoreConfig::default())
        .read()
        .expect_err("cycle");
    assert!(err.to_string().contains("dependency cycle"), "{err}");
    assert!(err.to_string().contains(".navin/board/board.json"), "{err}");
}

#[test]
fn a_local_branch_rewound_under_a_running_store_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    let (_, first) = written(s.transact(&init_op("ship"), &ctx()).expect("init"));
    s.transact(&fact(1), &ctx()).expect("update");
    // Someone rewinds the branch to an unrelated commit.
    let other = commit_files(&repo, "scratch", &[("x", b"y")]);
    repo.reference(
        &format!("refs/heads/{DEFAULT_BRANCH}"),
        other,
        true,
        "rewrite",
    )
    .expect("force");
    let err = s.transact(&fact(2), &ctx()).expect_err("rewritten");
    assert!(matches!(err, StoreError::Rewritten { .. }), "{err}");
    assert_eq!(tip(&repo, DEFAULT_BRANCH), Some(other));
    assert_ne!(first, other.to_string());
}

#[test]
fn eight_threads_times_two_hundred_transactions_lose_no_update() {
    let dir = tempfile::tempdir().expect("tmp");
    repo_in(dir.path());
    let s = std::sync::Arc::new(store(dir.path(), StoreConfig::default()));
    s.transact(&init_op("race"), &ctx()).expect("init");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = dir.path().to_path_buf();
            std::thread::spawn(move || {
                // A store per thread, as separate handlers would have.
                let s = store(&path, StoreConfig::default());
                for i in 0..200 {
                    s.transact(&fact(t * 1000 + i), &ctx())
                        .expect("transaction");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    let ledger = s.read().expect("read").expect("ledger").ledger;
    assert_eq!(ledger.mission.version, 1 + 8 * 200);
    assert_eq!(ledger.mission.facts.len(), 8 * 200, "every update present");
    assert_eq!(
        s.history(10_000).expect("history").len(),
        1 + 8 * 200,
        "one commit each"
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bare remote plus `n` clones with `origin` pointing at it.
pub(super) fn remote_and_clones(
    root: &Path,
    n: usize,
) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let bare = root.join("remote.git");
    Repository::init_bare(&bare).expect("bare");
    let clones = (0..n)
        .map(|i| {
            let dir = root.join(format!("clone{i}"));
            let repo = Repository::init(&dir).expect("clone");
            repo.remote("origin", bare.to_str().expect("utf8 path"))
                .expect("remote");
            dir
        })
        .collect();
    (bare, clones)
}

pub(super) fn remote_cfg() -> StoreConfig {
    StoreConfig {
        remote: Some("origin".into()),
        ..StoreConfig::default()
    }
}

#[test]
fn two_clones_pushing_to_one_bare_remote_concurrently_lose_nothing() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 2);
    store(&clones[0], remote_cfg())
        .transact(&init_op("shared"), &ctx())
        .expect("init");
    let handles: Vec<_> = clones
        .iter()
        .enumerate()
        .map(|(c, dir)| {
            let dir = dir.clone();
            std::thread::spawn(move || {
                let s = store(&dir, remote_cfg());
                for i in 0..50 {
                    s.transact(&fact(c * 1000 + i), &ctx()).expect("push");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread");
    }
    let ledger = store(&bare, StoreConfig::default())
        .read()
        .expect("read")
        .expect("ledger")
        .ledger;
    assert_eq!(
        ledger.mission.facts.len(),
        100,
        "every write from both clones is on the remote"
    );
    assert_eq!(ledger.mission.version, 101);
}

#[test]
fn a_force_pushed_remote_is_detected_and_not_overwritten() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 1);
    let s = store(&clones[0], remote_cfg());
    s.transact(&init_op("shared"), &ctx()).expect("init");
    s.transact(&fact(1), &ctx()).expect("update");
    let remote = Repository::open_bare(&bare).expect("bare");
    let rogue = commit_files(&remote, "rogue", &[("x", b"y")]);
    remote
        .reference(
            &format!("refs/heads/{DEFAULT_BRANCH}"),
            rogue,
            true,
            "force push",
        )
        .expect("force");
    let err = s.transact(&fact(2), &ctx()).expect_err("force push");
    assert!(matches!(err, StoreError::ForcePushed { .. }), "{err}");
    assert_eq!(
        tip(&remote, DEFAULT_BRANCH),
        Some(rogue),
        "remote left as found"
    );
    // A fresh process on the same clone still refuses.
    let err = store(&clones[0], remote_cfg())
        .transact(&fact(3), &ctx())
        .expect_err("still refused");
    assert!(matches!(err, StoreError::ForcePushed { .. }), "{err}");
}

#[test]
fn a_deleted_remote_ledger_branch_is_reported_not_recreated() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 1);
    let s = store(&clones[0], remote_cfg());
    s.transact(&init_op("shared"), &ctx()).expect("init");
    let remote = Repository::open_bare(&bare).expect("bare");
    remote
        .find_reference(&format!("refs/heads/{DEFAULT_BRANCH}"))
        .expect("ref")
        .delete()
        .expect("delete");
    let err = s.transact(&fact(1), &ctx()).expect_err("vanished");
    assert!(matches!(err, StoreError::BranchVanished { .. }), "{err}");
    assert!(tip(&remote, DEFAULT_BRANCH).is_none(), "not recreated");
}

#[test]
fn pushes_to_a_network_remote_go_through_git_and_land() {
    // `git daemon` is not needed: a file:// URL exercises the same CAS path as a
    // local path, and the CLI can read what we pushed.
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 1);
    store(&clones[0], remote_cfg())
        .transact(&init_op("shared"), &ctx())
        .expect("init");
    let check = root.path().join("check");
    git(
        root.path(),
        &[
            "clone",
            "-q",
            "--branch",
            DEFAULT_BRANCH,
            bare.to_str().expect("utf8"),
            "check",
        ],
    );
    let mission =
        std::fs::read_to_string(check.join(".navin/board/mission.json")).expect("mission file");
    assert!(mission.contains("\"goal\": \"shared\""));
}

#[test]
fn checkpoint_and_rollback_restore_old_content_as_a_new_commit() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("ship"), &ctx()).expect("init");
    let (name, version) = s.checkpoint().expect("checkpoint");
    assert_eq!((name.as_str(), version), ("refs/navin/checkpoints/v1", 1));
    assert!(repo.refname_to_id(&name).is_ok());
    s.transact(
        &Operation::Pause {
            reason: crate::model::PauseReason::Human,
            note: "stop".into(),
        },
        &ctx(),
    )
    .expect("pause");
    s.transact(
        &Operation::Resume {
            note: String::new(),
        },
        &ctx(),
    )
    .expect("resume");
    s.transact(&Operation::Start { step: "S1".into() }, &ctx())
        .expect("start");
    let (v, _) = written(s.rollback(1, &ctx()).expect("rollback"));
    assert_eq!(v, 5);
    let ledger = s.read().expect("read").expect("ledger").ledger;
    assert_eq!(
        ledger.board.task("S1").expect("S1").status,
        TaskStatus::Planned
    );
    assert_eq!(ledger.mission.status, MissionStatus::Running);
    // Rolling back to a version found by walking history (no checkpoint) works too.
    written(s.rollback(4, &ctx()).expect("rollback to v4"));
    let ledger = s.read().expect("read").expect("ledger").ledger;
    assert_eq!(
        ledger.board.task("S1").expect("S1").status,
        TaskStatus::InProgress
    );
    let err = s.rollback(99, &ctx()).expect_err("unknown");
    assert!(err.to_string().contains("version 99"), "{err}");
}

#[test]
fn plain_git_reads_the_ledger_branch() {
    let dir = tempfile::tempdir().expect("tmp");
    repo_in(dir.path());
    store(dir.path(), StoreConfig::default())
        .transact(&init_op("readable"), &ctx())
        .expect("init");
    let out = std::process::Command::new("git")
        .args([
            "show",
            &format!("{DEFAULT_BRANCH}:.navin/board/mission.json"),
        ])
        .current_dir(dir.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(out.status.success());
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(value["goal"], "readable");
}

/// The i-th command of a long `/pause` … `/resume` comment: replaying one that was applied
/// would be refused by the rules (pausing a paused mission), so only the op id saves it.
fn toggle(i: usize) -> Operation {
    if i % 2 == 0 {
        Operation::Pause {
            reason: crate::model::PauseReason::Human,
            note: format!("pause {i}"),
        }
    } else {
        Operation::Resume {
            note: format!("resume {i}"),
        }
    }
}

/// A delivery of N operations, cut off after every k-th commit and redelivered from its
/// start each time (what the queue does after a crash), ends with each operation applied
/// exactly once, however far past the 100-entry history window it reaches.
#[test]
fn a_delivery_cut_off_after_every_kth_commit_and_redelivered_applies_each_operation_once() {
    for (n, k) in [(1, 1), (5, 2), (150, 40), (500, 120)] {
        let dir = tempfile::tempdir().expect("tmp");
        repo_in(dir.path());
        let received = ctx().now;
        store(dir.path(), StoreConfig::default())
            .transact(&init_op("g"), &ctx())
            .expect("init");
        let mut attempts = 0;
        loop {
            attempts += 1;
            // A fresh store each attempt: a restarted process remembers nothing.
            let s = store(dir.path(), StoreConfig::default());
            let mut written = 0;
            for i in 0..n {
                let mut c = ctx().with_op_id(format!("delivery-1#{i}"));
                if attempts > 1 {
                    c = c.with_retry_since(received);
                }
                if let Committed::Written { .. } = s.transact(&toggle(i), &c).expect("transaction")
                {
                    written += 1;
                }
                if written == k {
                    break; // killed right after its k-th commit
                }
            }
            if written < k {
                break; // the attempt ran to the end
            }
        }
        let s = store(dir.path(), StoreConfig::default());
        let ledger = s.read().expect("read").expect("ledger").ledger;
        assert_eq!(ledger.mission.version, 1 + n as u64, "N={n} k={k}");
        assert_eq!(
            s.history(10_000).expect("history").len(),
            1 + n,
            "N={n}: each op once"
        );
        assert!(
            attempts >= n.div_ceil(k),
            "N={n} k={k}: {attempts} attempts"
        );
    }
}

/// Why the log is searched: the history window alone forgets op ids, so a replay that
/// does not say it is a retry re-applies what fell out of it.
#[test]
fn the_history_window_alone_forgets_op_ids_beyond_its_size() {
    let dir = tempfile::tempdir().expect("tmp");
    repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("g"), &ctx()).expect("init");
    for i in 0..150 {
        s.transact(&toggle(i), &ctx().with_op_id(format!("d#{i}")))
            .expect("write");
    }
    // The mission is running after 150 toggles; op 1 (a resume) is past the window:
    // without retry_since it would be judged anew (and refused, the mission not paused).
    let replay = s.transact(&toggle(1), &ctx().with_op_id("d#1"));
    assert!(replay.is_err(), "{replay:?}");
    // Op 0 (a pause) replayed without retry_since would pause the mission a second time.
    let twice = s
        .transact(&toggle(0), &ctx().with_op_id("d#0"))
        .expect("replay");
    assert!(matches!(twice, Committed::Written { .. }));
    // With it, the commit log says it was applied.
    let retried = s
        .transact(
            &toggle(2),
            &ctx().with_op_id("d#2").with_retry_since(ctx().now),
        )
        .expect("retry");
    assert!(matches!(retried, Committed::AlreadyApplied { .. }));
}

#[test]
fn a_ref_lock_left_by_a_killed_writer_is_removed_and_the_write_goes_through() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("g"), &ctx()).expect("init");
    let lock = locks::lock_path(&repo, &s.refname());
    let file = std::fs::File::create(&lock).expect("a lock as a killed writer leaves it");
    file.set_modified(std::time::SystemTime::now() - locks::STALE_AFTER * 2)
        .expect("age the lock");
    drop(file);
    let (version, _) = written(
        s.transact(&fact(1), &ctx())
            .expect("the write goes through"),
    );
    assert_eq!(version, 2);
    assert!(!lock.exists(), "the stale lock is gone");
}

#[test]
fn a_ref_held_by_a_live_writer_gives_up_naming_the_lock() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let cfg = StoreConfig {
        max_attempts: 3,
        ..StoreConfig::default()
    };
    let s = store(dir.path(), cfg);
    s.transact(&init_op("g"), &ctx()).expect("init");
    let before = tip(&repo, DEFAULT_BRANCH);
    let lock = locks::lock_path(&repo, &s.refname());
    std::fs::write(&lock, b"").expect("a live writer's lock");
    let err = s
        .transact(&fact(1), &ctx())
        .expect_err("the ref stays locked");
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("ledger.lock"), "{err}");
    assert!(lock.exists(), "a fresh lock is not touched");
    assert_eq!(tip(&repo, DEFAULT_BRANCH), before, "nothing was written");
}

#[test]
fn a_mission_start_and_the_state_before_a_replan_are_checkpointed_on_their_own() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    let (v1, c1) = written(s.transact(&init_op("g"), &ctx()).expect("init"));
    assert_eq!(
        repo.refname_to_id(&checkpoint_ref(v1))
            .map(|o| o.to_string())
            .ok(),
        Some(c1),
        "the mission's start"
    );
    let (v2, c2) = written(s.transact(&fact(1), &ctx()).expect("fact"));
    assert!(
        repo.refname_to_id(&checkpoint_ref(v2)).is_err(),
        "an edit is no checkpoint"
    );
    let replan = Operation::Replan {
        step: "S1".into(),
        reason: "the API changed".into(),
    };
    let (v3, _) = written(s.transact(&replan, &ctx()).expect("replan"));
    assert_eq!(v3, v2 + 1);
    assert_eq!(
        repo.refname_to_id(&checkpoint_ref(v2))
            .map(|o| o.to_string())
            .ok(),
        Some(c2),
        "the state just before the replan"
    );
    assert_eq!(s.read_version(v2).expect("v2").mission.version, v2);
}

/// Defect 6 of the hardening review: a fresh clone (or a server with a new data
/// directory) has no last tip of its own, so a remote rewound past a checkpoint is
/// caught by the checkpoint that is no longer in the branch's history.
#[test]
fn a_fresh_clone_refuses_a_remote_rewound_past_a_checkpoint() {
    let root = tempfile::tempdir().expect("tmp");
    let (bare, clones) = remote_and_clones(root.path(), 2);
    let s = store(&clones[0], remote_cfg());
    s.transact(&init_op("shared"), &ctx()).expect("init");
    s.transact(&fact(1), &ctx()).expect("v2");
    let remote = Repository::open_bare(&bare).expect("bare");
    let v2 = tip(&remote, DEFAULT_BRANCH).expect("v2");
    s.transact(&fact(2), &ctx()).expect("v3");
    let (name, version) = s.checkpoint().expect("checkpoint v3");
    assert_eq!(version, 3);
    s.transact(&fact(3), &ctx()).expect("v4");
    let v4 = tip(&remote, DEFAULT_BRANCH).expect("v4");
    // Someone moves the branch back to v2 on the remote.
    remote
        .reference(&format!("refs/heads/{DEFAULT_BRANCH}"), v2, true, "rewind")
        .expect("rewind");
    let fresh = store(&clones[1], remote_cfg());
    let err = fresh.read().expect_err("the rewind is caught");
    assert!(
        matches!(&err, StoreError::Rewound(r) if r.version == Some(3)),
        "{err}"
    );
    assert!(err.to_string().contains(&name), "{err}");
    let err = fresh
        .transact(&fact(9), &ctx())
        .expect_err("nothing is written");
    assert!(matches!(err, StoreError::Rewound(_)), "{err}");
    assert_eq!(
        tip(&remote, DEFAULT_BRANCH),
        Some(v2),
        "remote left as found"
    );
    // Restored: the same fresh clone reads it as before.
    remote
        .reference(&format!("refs/heads/{DEFAULT_BRANCH}"), v4, true, "restore")
        .expect("restore");
    let ledger = store(&clones[1], remote_cfg())
        .read()
        .expect("read")
        .expect("ledger")
        .ledger;
    assert_eq!(ledger.mission.version, 4);
}

/// Defect 6 of the hardening review: versions only grow by one, so a branch whose
/// commit log skips a version (history cut out and the rest re-parented) is refused,
/// even by a store with no record of its own to compare with.
#[test]
fn a_ledger_history_with_a_version_cut_out_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let repo = repo_in(dir.path());
    let s = store(dir.path(), StoreConfig::default());
    s.transact(&init_op("g"), &ctx()).expect("v1");
    s.transact(&fact(1), &ctx()).expect("v2");
    let v2 = tip(&repo, DEFAULT_BRANCH).expect("v2");
    s.transact(&fact(2), &ctx()).expect("v3");
    s.transact(&fact(3), &ctx()).expect("v4");
    let v4 = repo
        .find_commit(tip(&repo, DEFAULT_BRANCH).expect("v4"))
        .expect("commit");
    // v3 cut out: v4's content and message re-parented onto v2.
    let parent = repo.find_commit(v2).expect("v2");
    let cut = repo
        .commit(
            None,
            &v4.author(),
            &v4.committer(),
            v4.message().expect("utf8"),
            &v4.tree().expect("tree"),
            &[&parent],
        )
        .expect("commit");
    repo.reference(&format!("refs/heads/{DEFAULT_BRANCH}"), cut, true, "cut")
        .expect("move");
    // No record of the old tip: as a fresh clone would be.
    repo.find_reference(&format!("refs/navin/seen/local/{DEFAULT_BRANCH}"))
        .expect("seen ref")
        .delete()
        .expect("delete");
    let err = store(dir.path(), StoreConfig::default())
        .read()
        .expect_err("the gap is caught");
    assert!(
        matches!(
            err,
            StoreError::VersionGap {
                version: 4,
                previous: 2,
                ..
            }
        ),
        "{err}"
    );
}
