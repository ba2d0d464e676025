//! The planned commit by git: one shallow fetch of a branch or commit into a per-repository bare clone, instead of a REST call per file.
//!
//! `/plan` reads the repository it plans from git objects: a shallow fetch
//! (the commit and a bounded history, `--plan-history`) of the default branch or of a pull request's head commit (GitHub serves
//! any commit reachable from its refs, `refs/pull/*` included), then
//! every read is a local object lookup. The clone is apart from the
//! ledger's, so a shallow graft never touches ledger history, and it is
//! started afresh once it holds many packs, so it does not grow forever.

use crate::clones::source_dir;
use git2::{AutotagOption, ErrorCode, FetchOptions, Oid, RemoteCallbacks, Repository};
use navin_ledger::store::StoreError;
use navin_planner::CommitTree;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Where fetched commits land; only [`fetch_commit`] uses it.
const SOURCE_REF: &str = "refs/navin/source";
/// Packs accumulate one per fetch; past this many the clone is started again.
const MAX_PACKS: usize = 32;

/// What to plan: a branch's tip, or one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    Branch(String),
    Commit(String),
}

/// Why the commit could not be fetched. `Missing` is a branch or commit the
/// remote does not have (a renamed default branch, a force-pushed head).
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{0} is not on GitHub (renamed, deleted or force-pushed away)")]
    Missing(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the planner: {0}")]
    Planner(#[from] navin_planner::PlannerError),
}

/// One lock per clone: two plans of one repository must not fetch into it at once.
fn lock_for(dir: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut map = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    Arc::clone(map.entry(dir.to_path_buf()).or_default())
}

fn open_or_init(dir: &Path, url: &str) -> Result<Repository, StoreError> {
    let packs = std::fs::read_dir(dir.join("objects/pack"))
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "pack"))
            })
            .count()
        })
        .unwrap_or(0);
    if packs > MAX_PACKS {
        std::fs::remove_dir_all(dir)?;
    }
    let repo = match Repository::open_bare(dir) {
        Ok(repo) => repo,
        Err(_) => {
            std::fs::create_dir_all(dir)?;
            Repository::init_bare(dir)?
        }
    };
    match repo.find_remote("origin") {
        Ok(remote) if remote.url().ok() == Some(url) => {}
        Ok(_) => repo.remote_set_url("origin", url)?,
        Err(_) => {
            repo.remote("origin", url)?;
        }
    }
    Ok(repo)
}

/// Fetches `want` with `depth` commits of its history (at least the commit itself)
/// and returns its tree. A commit already in the clone is not fetched again.
/// Blocking: run it off the async workers.
pub fn fetch_commit(
    data_dir: &Path,
    full_name: &str,
    url: &str,
    token: &str,
    want: &Want,
    depth: usize,
) -> Result<CommitTree, SourceError> {
    let dir = source_dir(data_dir, full_name);
    let lock = lock_for(&dir);
    let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
    let repo = open_or_init(&dir, url)?;
    if let Want::Commit(sha) = want {
        if let Ok(oid) = Oid::from_str(sha) {
            if repo.find_commit(oid).is_ok() {
                return Ok(CommitTree::at(repo, oid)?);
            }
        }
    }
    let spec = match want {
        Want::Branch(b) => format!("+refs/heads/{b}:{SOURCE_REF}"),
        Want::Commit(sha) => format!("+{sha}:{SOURCE_REF}"),
    };
    let mut cb = RemoteCallbacks::new();
    cb.credentials(move |_url, _user, _allowed| {
        git2::Cred::userpass_plaintext("x-access-token", token)
    });
    let mut opts = FetchOptions::new();
    opts.remote_callbacks(cb);
    opts.download_tags(AutotagOption::None);
    opts.update_fetchhead(false);
    opts.depth(i32::try_from(depth.max(1)).unwrap_or(i32::MAX));
    let missing = || match want {
        Want::Branch(b) => SourceError::Missing(format!("branch {b}")),
        Want::Commit(c) => SourceError::Missing(format!("commit {c}")),
    };
    // A branch the remote lacks fetches nothing: the ref must not be an old one.
    if let Ok(mut old) = repo.find_reference(SOURCE_REF) {
        old.delete().map_err(StoreError::Git)?;
    }
    {
        let mut remote = repo.find_remote("origin").map_err(StoreError::Git)?;
        if let Err(e) = remote.fetch(&[spec.as_str()], Some(&mut opts), None) {
            if e.code() == ErrorCode::NotFound {
                return Err(missing());
            }
            return Err(StoreError::Remote {
                remote: "origin".to_owned(),
                message: format!("fetching {spec} failed: {}", e.message()),
                transient: navin_ledger::store::transient_git_error(&e),
            }
            .into());
        }
    }
    let oid = match repo.refname_to_id(SOURCE_REF) {
        Ok(oid) => oid,
        Err(e) if e.code() == ErrorCode::NotFound => return Err(missing()),
        Err(e) => return Err(StoreError::Git(e).into()),
    };
    let commit = repo
        .find_object(oid, None)
        .and_then(|o| o.peel_to_commit())
        .map_err(StoreError::Git)?
        .id();
    Ok(CommitTree::at(repo, commit)?)
}

/// A commit's tree as the files a command is checked against (`navin_runner::checks`):
/// the App has no checkout, only the planned commit's objects.
#[derive(Debug)]
pub struct TreeFiles<'a>(pub &'a CommitTree);

/// Most bytes of one file a command check reads (a `package.json`).
const MAX_CHECKED_FILE: u64 = 1 << 20;

impl navin_runner::checks::Files for TreeFiles<'_> {
    fn is_dir(&self, dir: &str) -> bool {
        self.0.is_dir(navin_runner::checks::normal(dir))
    }

    fn read(&self, file: &str) -> Option<String> {
        use navin_planner::RepoSource as _;
        let bytes = self
            .0
            .read(navin_runner::checks::normal(file), MAX_CHECKED_FILE)
            .ok()??;
        String::from_utf8(bytes).ok()
    }

    fn subdirs(&self, dir: &str) -> Vec<String> {
        let dir = navin_runner::checks::normal(dir);
        let prefix = match dir {
            "" => String::new(),
            dir => format!("{dir}/"),
        };
        let mut out: Vec<String> = self
            .0
            .entries()
            .iter()
            .filter_map(|e| {
                let rest = e.path.strip_prefix(&prefix)?;
                let (child, _) = rest.split_once('/')?;
                Some(format!("{prefix}{child}"))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use navin_runner::checks::{check_line, LineProblem};

    use super::*;

    /// A commit of `files` in a fresh repository, as its tree.
    fn committed(files: &[(&str, &str)]) -> (tempfile::TempDir, CommitTree) {
        let dir = tempfile::tempdir().expect("tmp");
        let repo = Repository::init(dir.path()).expect("init");
        let mut index = repo.index().expect("index");
        for (path, text) in files {
            let blob = repo.blob(text.as_bytes()).expect("blob");
            let entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: blob,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            };
            index.add(&entry).expect("add");
        }
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let sig = git2::Signature::now("T", "t@example.com").expect("sig");
        let oid = repo
            .commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .expect("commit");
        drop(tree);
        (dir, CommitTree::at(repo, oid).expect("commit tree"))
    }

    #[test]
    fn commands_are_checked_against_the_commits_directories_and_npm_workspaces() {
        let (_dir, tree) = committed(&[
            ("package.json", "{\"workspaces\": [\"packages/*\"]}"),
            ("packages/api/package.json", "{\"name\": \"@acme/api\"}"),
            ("svc/go.mod", "module svc\n"),
        ]);
        let files = TreeFiles(&tree);
        for ok in [
            "go -C svc test ./...",
            "go -C ./svc/ vet ./...",
            "npm test --workspace packages/api",
            "npm test -w @acme/api",
        ] {
            assert!(check_line(ok, &files).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("go -C web test ./...", "\"web\""),
            ("npm test -w @acme/web", "@acme/web"),
            ("go test \"./...", "not a valid command line"),
        ] {
            let err = check_line(bad, &files).expect_err(bad);
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
        assert!(matches!(
            check_line("cargo clippy --fix", &files),
            Err(LineProblem::Command(_))
        ));
    }
}
