//! The ledger's tip record through the real `navin-action` binary, whose every job starts from an empty clone: a rewound ledger is refused, and a record the server refuses leaves the write landed once.

use chrono::Utc;
use navin_ledger::model::Actor;
use navin_ledger::store::{tip_record_ref, Committed, Store, StoreConfig};
use navin_ledger::{Ctx, Operation, UpdateArgs};

use crate::harness::{Job, BRANCH, OWNER, REPO};

fn fact(n: usize) -> Operation {
    Operation::Update(UpdateArgs {
        add_facts: vec![format!("fact {n}")],
        reason: format!("note {n}"),
        ..UpdateArgs::default()
    })
}

fn ctx() -> Ctx {
    Ctx::new(Utc::now(), Actor::Human("octocat".into()))
}

/// Defect 6 of the hardening review: the ledger on GitHub is moved back between two
/// checkpoints and someone writes on it, so versions and checkpoints look whole; the
/// next job, on its fresh clone, refuses it naming the recorded version and the ref.
#[test]
fn a_job_refuses_a_ledger_branch_rewound_between_checkpoints_and_written_on() {
    let job = Job::new();
    job.seed(None);
    let (store, _dir) = job.store();
    let mut tips = Vec::new();
    for n in 0..4 {
        store.transact(&fact(n), &ctx()).expect("v2..v5");
        if n == 0 {
            store.checkpoint().expect("checkpoint v2 (v1 has its own)");
        }
        tips.push(job.ledger_tip().expect("tip"));
    }
    let before = job.run("summary", "workflow_dispatch", None, Some(&job.token));
    assert_eq!(before.code, Some(0), "{before:?}");

    let git_dir = job.fake.git_dir_path(OWNER, REPO);
    let bare = git2::Repository::open_bare(&git_dir).expect("bare");
    let v3 = git2::Oid::from_str(&tips[1]).expect("oid");
    bare.reference(&format!("refs/heads/{BRANCH}"), v3, true, "rewind")
        .expect("rewind");
    let someone = Store::open(
        &git_dir,
        StoreConfig {
            branch: BRANCH.into(),
            ..StoreConfig::default()
        },
    )
    .expect("store on the remote itself");
    match someone.transact(&fact(99), &ctx()).expect("someone's v4") {
        Committed::Written { version, .. } => assert_eq!(version, 4),
        other => panic!("{other:?}"),
    }
    let rewritten = job.ledger_tip();

    let r = job.run("summary", "workflow_dispatch", None, Some(&job.token));
    assert_ne!(r.code, Some(0), "{r:?}");
    let said = format!("{}{}", r.stdout, r.stderr);
    assert!(said.contains("was rewound"), "{said}");
    assert!(said.contains(&tip_record_ref(BRANCH)), "{said}");
    assert!(said.contains("v4 at"), "{said}");
    assert_eq!(job.ledger_tip(), rewritten, "left as found");
}

/// A git server that refuses the tip record alone (a hook of its own) does not undo or
/// repeat the write: the branch push landed, so the write counts once.
#[test]
fn a_tip_record_the_server_refuses_alone_leaves_the_write_landed_once() {
    let job = Job::new();
    job.seed(None);
    let hook = job
        .fake
        .git_dir_path(OWNER, REPO)
        .join("hooks")
        .join("update");
    std::fs::write(
        &hook,
        "#!/bin/sh\ncase \"$1\" in refs/navin/tips/*) echo 'no custom refs here' >&2; exit 1;; esac\nexit 0\n",
    )
    .expect("hook");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let (store, _dir) = job.store();
    let mut versions = Vec::new();
    for n in 0..2 {
        match store.transact(&fact(n), &ctx()).expect("written") {
            Committed::Written {
                version, commit, ..
            } => {
                assert_eq!(job.ledger_tip(), Some(commit), "the branch push landed");
                versions.push(version);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(versions, [2, 3], "each write once");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.facts.len(), 2);
}
