//! Plan records beside the ledger: reading and compare-and-swap writing of files under `.navin/plans/`.

use chrono::{DateTime, Utc};
use git2::{Commit, Oid, Repository};

use super::{backoff, oid_str, tree, Store, StoreError};

/// The only folder [`Store::update_files`] writes: the board files stay under the
/// ledger's own operations so their invariants cannot be bypassed.
pub const PLANS_DIR: &str = ".navin/plans";

/// Files to write (path, content), or `None` to leave the branch as it is.
pub type FileChanges = Option<Vec<(String, Vec<u8>)>>;

impl Store {
    /// The content of `path` at the branch tip (after syncing with the remote, if any).
    pub fn read_file(&self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let repo = self.repo()?;
        let tip = self.reader_tip(&repo)?;
        let Some(oid) = tip else { return Ok(None) };
        read_at(&repo, oid, path)
    }

    /// The names of the files under [`PLANS_DIR`] at the branch tip (after syncing with
    /// the remote, if any), sorted; none when the branch or the folder does not exist.
    pub fn plan_files(&self) -> Result<Vec<String>, StoreError> {
        let repo = self.repo()?;
        let tip = self.reader_tip(&repo)?;
        let Some(oid) = tip else {
            return Ok(Vec::new());
        };
        let Some(folder) = plans_tree(&repo, oid)? else {
            return Ok(Vec::new());
        };
        let mut names: Vec<String> = folder
            .iter()
            .filter(|e| e.kind() == Some(git2::ObjectType::Blob))
            .filter_map(|e| e.name().ok().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }

    /// Read-modify-write of files under [`PLANS_DIR`] as one commit, with the same
    /// compare-and-swap and no-force push as ledger operations. `change` sees the
    /// current content of each of `paths` (re-read after a lost race) and returns the
    /// files to write, or `None` for no change. Returns the new commit, or `None`
    /// when nothing was written (no change, or every file already had that content).
    pub fn update_files(
        &self,
        paths: &[&str],
        message: &str,
        now: DateTime<Utc>,
        mut change: impl FnMut(&[Option<Vec<u8>>]) -> FileChanges,
    ) -> Result<Option<String>, StoreError> {
        let lock = super::ledger_lock(&self.repo_path, &self.cfg.branch);
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let repo = self.repo()?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let base = self.base_tip(&repo)?;
            let mut current = Vec::with_capacity(paths.len());
            for path in paths {
                current.push(match base {
                    Some(oid) => read_at(&repo, oid, path)?,
                    None => None,
                });
            }
            let Some(files) = change(&current) else {
                return Ok(None);
            };
            for (path, _) in &files {
                check_plan_path(path)?;
            }
            let parent = base.map(|oid| repo.find_commit(oid)).transpose()?;
            let base_tree = parent.as_ref().map(Commit::tree).transpose()?;
            let mut blobs: Vec<(&str, Oid)> = Vec::with_capacity(files.len());
            for (path, bytes) in &files {
                blobs.push((path.as_str(), repo.blob(bytes)?));
            }
            let unchanged = base_tree.as_ref().is_some_and(|t| {
                blobs.iter().all(|(path, blob)| {
                    t.get_path(std::path::Path::new(path))
                        .is_ok_and(|e| e.id() == *blob)
                })
            });
            if unchanged {
                return Ok(None);
            }
            let tree_oid = tree::write_files(&repo, base_tree.as_ref(), &blobs)?;
            let commit = self.make_commit(&repo, tree_oid, parent.as_ref(), message, now)?;
            let landed = match &self.cfg.remote {
                Some(name) => self.publish(&repo, name, commit, base)?,
                None => self.swap(&repo, commit, base)?,
            };
            if landed {
                self.mark_seen(commit);
                self.persist_seen(&repo, commit);
                return Ok(Some(oid_str(commit)));
            }
            if attempt >= self.cfg.max_attempts {
                return Err(self.gave_up(&repo, attempt));
            }
            backoff(attempt);
        }
    }
}

fn read_at(repo: &Repository, oid: Oid, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
    let tree = repo.find_commit(oid)?.tree()?;
    Ok(tree::read_file(repo, &tree, path)?)
}

/// Plan files only: `.navin/plans/<name>` with a plain file name.
fn check_plan_path(path: &str) -> Result<(), StoreError> {
    let name = path
        .strip_prefix(PLANS_DIR)
        .and_then(|rest| rest.strip_prefix('/'));
    match name {
        Some(n)
            if !n.is_empty()
                && n != "."
                && n != ".."
                && !n.contains('/')
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) =>
        {
            Ok(())
        }
        _ => Err(StoreError::NotFound(format!(
            "{path:?} is not a plan file path ({PLANS_DIR}/<name> with letters, digits and ._-)"
        ))),
    }
}

/// The [`PLANS_DIR`] folder at commit `oid`; `None` when there is none.
pub(super) fn plans_tree(
    repo: &Repository,
    oid: git2::Oid,
) -> Result<Option<git2::Tree<'_>>, StoreError> {
    let tree = repo.find_commit(oid)?.tree()?;
    let entry = match tree.get_path(std::path::Path::new(PLANS_DIR)) {
        Ok(entry) => entry,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(repo.find_tree(entry.id()).ok())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use crate::model::Actor;
    use crate::ops::{Ctx, InitArgs, Operation};
    use crate::store::StoreConfig;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        Repository::init_bare(dir.path()).unwrap();
        let store = Store::open(dir.path(), StoreConfig::default()).unwrap();
        (dir, store)
    }

    fn write(store: &Store, path: &str, text: &str) -> Option<String> {
        let now = Utc::now();
        store
            .update_files(
                &[path],
                "navin: plan p1 plan by human:alice\n\nNavin-Plan: p1\n",
                now,
                |_| Some(vec![(path.to_string(), text.as_bytes().to_vec())]),
            )
            .unwrap()
    }

    #[test]
    fn plan_files_written_before_any_mission_leave_no_mission() {
        let (_dir, store) = store();
        assert!(write(&store, ".navin/plans/p1.md", "# Plan").is_some());
        assert!(store.read().unwrap().is_none());
        assert_eq!(
            store.read_file(".navin/plans/p1.md").unwrap().unwrap(),
            b"# Plan"
        );
        // A mission can still start on top, and the plan file survives it.
        let ctx = Ctx::new(Utc::now(), Actor::Human("alice".into()));
        let init = Operation::Init(InitArgs {
            goal: "ship".into(),
            ..InitArgs::default()
        });
        store.transact(&init, &ctx).unwrap();
        assert_eq!(store.read().unwrap().unwrap().ledger.mission.goal, "ship");
        assert!(store.read_file(".navin/plans/p1.md").unwrap().is_some());
    }

    #[test]
    fn identical_content_writes_no_commit() {
        let (_dir, store) = store();
        assert!(write(&store, ".navin/plans/p1.json", "{}").is_some());
        assert!(write(&store, ".navin/plans/p1.json", "{}").is_none());
        assert_eq!(store.history(10).unwrap().len(), 1);
    }

    #[test]
    fn an_earlier_version_of_a_plan_text_is_found_in_the_branch_history() {
        let (_dir, store) = store();
        for text in ["first", "second", "third"] {
            write(&store, ".navin/plans/p1.md", text);
            write(&store, ".navin/plans/other.md", text);
        }
        let find = |wanted: &str, limit| {
            store
                .find_file_version(".navin/plans/p1.md", limit, |b| b == wanted.as_bytes())
                .unwrap()
        };
        assert_eq!(find("first", 100).as_deref(), Some(&b"first"[..]));
        assert_eq!(find("third", 1).as_deref(), Some(&b"third"[..]));
        assert_eq!(find("never", 100), None);
        // Six commits: "first" is the fifth newest, out of reach of the newest four.
        assert_eq!(find("first", 4), None);
        let mut offered = 0;
        store
            .find_file_version(".navin/plans/p1.md", 100, |_| {
                offered += 1;
                false
            })
            .unwrap();
        assert_eq!(offered, 3, "each distinct text once");
    }

    #[test]
    fn readers_and_a_writer_of_one_clone_at_once_all_succeed() {
        let root = tempfile::tempdir().unwrap();
        let bare = root.path().join("remote.git");
        Repository::init_bare(&bare).unwrap();
        let clone = root.path().join("clone");
        Repository::init(&clone)
            .unwrap()
            .remote("origin", bare.to_str().unwrap())
            .unwrap();
        let open = || {
            let cfg = StoreConfig {
                remote: Some("origin".into()),
                ..StoreConfig::default()
            };
            Store::open(&clone, cfg).unwrap()
        };
        write(&open(), ".navin/plans/p1.md", "v0");
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let store = open();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        if t == 0 {
                            write(&store, ".navin/plans/p1.md", &format!("v{}", i + 1));
                        } else {
                            store.read_file(".navin/plans/p1.md").unwrap().unwrap();
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(
            open().read_file(".navin/plans/p1.md").unwrap().unwrap(),
            b"v25"
        );
    }

    #[test]
    fn refuses_paths_outside_the_plans_folder() {
        let (_dir, store) = store();
        for path in [
            ".navin/board/mission.json",
            ".navin/plans/../board/x",
            ".navin/plans/",
            "README.md",
        ] {
            let err = store
                .update_files(&[], "m", Utc::now(), |_| {
                    Some(vec![(path.to_string(), b"x".to_vec())])
                })
                .unwrap_err();
            assert!(err.to_string().contains("not a plan file path"), "{path}");
        }
    }
}
