//! One commit's tree read from git objects, never a working tree: what every LLM tool and the server's `/plan` read through.
//!
//! Reading blobs by id out of the object database cannot write anything
//! and cannot see uncommitted or ignored files, so a planner served from
//! here is read-only by construction whatever tool it misuses.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};

use crate::PlannerError;
use crate::RepoSource;
use crate::SourceEntry;

/// The files of one commit, with blob ids and sizes. `Sync` (the repository
/// handle sits behind a mutex) so async planners can hold it across awaits.
pub struct CommitTree {
    repo: Mutex<Repository>,
    commit: Oid,
    entries: Vec<SourceEntry>,
    ids: HashMap<String, Oid>,
}

impl std::fmt::Debug for CommitTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitTree")
            .field("commit", &self.commit)
            .field("files", &self.entries.len())
            .finish()
    }
}

fn git(e: git2::Error) -> PlannerError {
    PlannerError::Git(e.message().to_owned())
}

impl CommitTree {
    /// Opens the repository at `path` (bare or not) and reads `rev`
    /// (`HEAD`, a branch, a commit id).
    pub fn open(path: &Path, rev: &str) -> Result<Self, PlannerError> {
        let repo = Repository::open(path).map_err(git)?;
        let commit = repo
            .revparse_single(rev)
            .and_then(|o| o.peel_to_commit())
            .map_err(|e| {
                PlannerError::Git(format!(
                    "{rev} is not a commit in {}: {}",
                    path.display(),
                    e.message()
                ))
            })?
            .id();
        Self::at(repo, commit)
    }

    /// The tree of `commit` in `repo`.
    pub fn at(repo: Repository, commit: Oid) -> Result<Self, PlannerError> {
        let mut entries = Vec::new();
        let mut ids = HashMap::new();
        {
            let tree = repo
                .find_commit(commit)
                .and_then(|c| c.tree())
                .map_err(git)?;
            let odb = repo.odb().map_err(git)?;
            tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
                // Symlinks point anywhere (even outside the tree) and
                // submodules are other repositories: neither is read.
                if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
                    return TreeWalkResult::Ok;
                }
                let Ok(name) = entry.name() else {
                    return TreeWalkResult::Ok;
                };
                let path = format!("{dir}{name}");
                let size = odb.read_header(entry.id()).ok().map(|(n, _)| n as u64);
                ids.insert(path.clone(), entry.id());
                entries.push(SourceEntry { path, size });
                TreeWalkResult::Ok
            })
            .map_err(git)?;
        }
        Ok(Self {
            repo: Mutex::new(repo),
            commit,
            entries,
            ids,
        })
    }

    /// The commit id, hex.
    pub fn commit_id(&self) -> String {
        self.commit.to_string()
    }

    pub fn entries(&self) -> &[SourceEntry] {
        &self.entries
    }

    pub fn contains(&self, path: &str) -> bool {
        self.ids.contains_key(path)
    }

    /// Whether `dir` holds any file (`""` is the root).
    pub fn is_dir(&self, dir: &str) -> bool {
        dir.is_empty() || {
            let prefix = format!("{dir}/");
            self.entries.iter().any(|e| e.path.starts_with(&prefix))
        }
    }
}

impl RepoSource for CommitTree {
    fn history(&self, depth: usize) -> Option<crate::History> {
        let repo = self.repo.lock().ok()?;
        crate::History::from_git(&repo, self.commit, depth).ok()
    }

    fn list(&self) -> Result<Vec<SourceEntry>, PlannerError> {
        Ok(self.entries.clone())
    }

    fn read(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, PlannerError> {
        let Some(id) = self.ids.get(path) else {
            return Ok(None);
        };
        let repo = self
            .repo
            .lock()
            .map_err(|_| PlannerError::Git("the repository handle was poisoned".to_owned()))?;
        let blob = match repo.find_blob(*id) {
            Ok(b) => b,
            // A blob missing from a partial clone is "unavailable", not fatal.
            Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(git(e)),
        };
        let limit = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let content = blob.content();
        Ok(Some(content[..content.len().min(limit)].to_vec()))
    }

    fn describe(&self) -> String {
        format!("git:{}", &self.commit.to_string()[..12])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(dir: &Path, files: &[(&str, &str)]) -> Oid {
        let repo = Repository::init(dir).expect("init");
        let mut index = repo.index().expect("index");
        for (path, text) in files {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(&full, text).expect("write");
            index.add_path(Path::new(path)).expect("add");
        }
        let tree = repo
            .find_tree(index.write_tree().expect("tree"))
            .expect("tree");
        let sig = git2::Signature::now("T", "t@example.com").expect("sig");
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .expect("commit")
    }

    #[test]
    fn lists_and_reads_the_commit_not_the_working_tree() {
        let dir = tempfile::tempdir().expect("tmp");
        let id = commit(
            dir.path(),
            &[("src/a.rs", "fn a() {}\n"), ("README.md", "hi\n")],
        );
        std::fs::write(dir.path().join("src/a.rs"), "uncommitted").expect("write");
        std::fs::write(dir.path().join("new.rs"), "untracked").expect("write");
        let tree = CommitTree::open(dir.path(), "HEAD").expect("open");
        assert_eq!(tree.commit_id(), id.to_string());
        let mut paths: Vec<String> = tree
            .list()
            .expect("list")
            .into_iter()
            .map(|e| e.path)
            .collect();
        paths.sort();
        assert_eq!(paths, vec!["README.md", "src/a.rs"]);
        let read = tree.read("src/a.rs", 1024).expect("read").expect("file");
        assert_eq!(read, b"fn a() {}\n");
        assert_eq!(
            tree.read("src/a.rs", 3).expect("read").expect("file"),
            b"fn "
        );
        assert_eq!(tree.read("new.rs", 10).expect("read"), None);
        assert!(tree.is_dir("src") && !tree.is_dir("sr") && tree.is_dir(""));
        let err = CommitTree::open(dir.path(), "no-such-branch").expect_err("bad rev");
        assert!(
            err.to_string().contains("no-such-branch is not a commit"),
            "{err}"
        );
    }
}
