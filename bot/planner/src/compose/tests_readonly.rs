//! The read-only guarantee, checked on a real git repository and on a read-only copy.
//!
//! Tests run as root in CI, where `chmod a-w` does not stop writes; so besides
//! planning on a read-only copy, every test compares a snapshot of contents,
//! sizes, inode numbers, mtimes and ctimes of every file and directory
//! (`.git` included), plus the bytes of `.git/index` and `git for-each-ref`.
//! Any write, create, delete, rename or chmod changes one of those.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::*;

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    bytes: Option<Vec<u8>>,
    len: u64,
    ino: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Entry> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
        let md = std::fs::symlink_metadata(dir).unwrap();
        out.insert(dir.to_path_buf(), entry(&md, None));
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let md = std::fs::symlink_metadata(&p).unwrap();
            if md.is_dir() {
                walk(&p, out);
            } else {
                out.insert(p.clone(), entry(&md, Some(std::fs::read(&p).unwrap())));
            }
        }
    }
    fn entry(md: &std::fs::Metadata, bytes: Option<Vec<u8>>) -> Entry {
        Entry {
            bytes,
            len: md.len(),
            ino: md.ino(),
            mode: md.mode(),
            mtime: (md.mtime(), md.mtime_nsec()),
            ctime: (md.ctime(), md.ctime_nsec()),
        }
    }
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn sample_repo(root: &Path) {
    git(root, &["init", "-q", "-b", "main"]);
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"demo\"\n[dependencies]\naxum = \"0.8\"\n",
    );
    write(
        root,
        "src/main.rs",
        "mod auth;\nmod routes;\nfn main() {}\n",
    );
    write(root, "src/auth.rs", "pub fn check_token() {}\n");
    write(
        root,
        "src/routes.rs",
        "use crate::auth::check_token;\npub fn users() {}\n",
    );
    write(
        root,
        "migrations/0001_init.sql",
        "create table users(id int);\n",
    );
    write(root, ".github/workflows/ci.yml", "on: push\n");
    write(root, ".gitignore", "target/\n");
    write(root, "target/debug/junk", "ignored build output\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "initial"]);
    git(root, &["branch", "feature"]);
    git(root, &["tag", "v1"]);
    // An uncommitted edit and an untracked file must survive untouched too.
    write(
        root,
        "src/routes.rs",
        "use crate::auth::check_token;\npub fn users() { /* wip */ }\n",
    );
    write(root, "notes.txt", "untracked\n");
}

const REQUESTS: &[&str] = &[
    "add an email column to users and check tokens on every route",
    "build(deps): bump axum from 0.8.0 to 0.8.1",
    "update the CI workflow to run clippy",
];

#[test]
fn planning_a_git_checkout_changes_no_file_index_or_ref() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    sample_repo(root);
    let before = snapshot(root);
    let index_before = std::fs::read(root.join(".git/index")).unwrap();
    let refs_before = git(root, &["for-each-ref", "--format=%(refname) %(objectname)"]);
    assert!(refs_before.contains("refs/heads/feature") && refs_before.contains("refs/tags/v1"));

    let src = LocalSource::new(root).unwrap();
    for request in REQUESTS {
        let out = plan_repository(&src, request, &PlannerOptions::default()).unwrap();
        assert!(!out.plan.changes.is_empty());
    }

    assert_eq!(
        std::fs::read(root.join(".git/index")).unwrap(),
        index_before,
        ".git/index changed"
    );
    assert_eq!(
        git(root, &["for-each-ref", "--format=%(refname) %(objectname)"]),
        refs_before
    );
    let after = snapshot(root);
    assert_eq!(before.len(), after.len(), "a file was created or deleted");
    for (path, entry) in &before {
        assert_eq!(after.get(path), Some(entry), "{} changed", path.display());
    }
}

#[test]
fn planning_a_read_only_copy_succeeds_and_changes_no_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).unwrap();
    sample_repo(&root);
    set_writable(&root, false);
    let before = snapshot(&root);

    let src = LocalSource::new(&root).unwrap();
    let result = REQUESTS
        .iter()
        .map(|r| plan_repository(&src, r, &PlannerOptions::default()).map(|o| o.plan.changes.len()))
        .collect::<Result<Vec<_>, _>>();

    let after = snapshot(&root);
    set_writable(&root, true);
    let counts = result.expect("planning a read-only tree succeeds");
    assert!(counts.iter().all(|&n| n > 0));
    assert_eq!(before, after, "planning touched the read-only tree");
}

fn set_writable(root: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt;
    fn walk(p: &Path, writable: bool) {
        let md = std::fs::symlink_metadata(p).unwrap();
        if md.is_dir() && writable {
            set(p, &md, writable);
        }
        if md.is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                walk(&e.unwrap().path(), writable);
            }
        }
        if !(md.is_dir() && writable) {
            set(p, &md, writable);
        }
    }
    fn set(p: &Path, md: &std::fs::Metadata, writable: bool) {
        let mode = md.permissions().mode();
        let mode = if writable {
            mode | 0o200
        } else {
            mode & !0o222
        };
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    walk(root, writable);
}
