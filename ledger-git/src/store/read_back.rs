//! Reading back what a commit just put in the object database, before anyone is told
//! it landed.

use git2::{Oid, Repository, Tree};

use super::error::StoreError;

/// Every object `commit` adds over `parent` reads back whole: the commit, and the trees
/// and blobs whose ids differ from the parent's at the same path.
///
/// On a full disk, a clone has been seen without a commit libgit2 had just reported
/// written. Pushing it then fails as if the object never existed, an error no retry
/// meets again, so the command would be answered as failed and its change lost. Found
/// here, it is a storage error, and the write waits for the disk like any other.
pub(crate) fn read_back(
    repo: &Repository,
    commit: Oid,
    parent: Option<Oid>,
) -> Result<(), StoreError> {
    let odb = repo.odb()?;
    let lost = |oid: Oid, e: git2::Error| {
        StoreError::Io(std::io::Error::other(format!(
            "object {oid} was written to the ledger clone at {} but cannot be read back ({}): \
             the data directory did not keep it",
            repo.path().display(),
            e.message()
        )))
    };
    odb.read(commit).map_err(|e| lost(commit, e))?;
    let new = repo.find_commit(commit)?.tree()?;
    let old = match parent {
        Some(p) => Some(repo.find_commit(p)?.tree()?),
        None => None,
    };
    let mut pending: Vec<(Tree<'_>, Option<Tree<'_>>)> = vec![(new, old)];
    while let Some((tree, before)) = pending.pop() {
        odb.read(tree.id()).map_err(|e| lost(tree.id(), e))?;
        for entry in tree.iter() {
            let previous = before
                .as_ref()
                .and_then(|b| b.get_name_bytes(entry.name_bytes()));
            let previous_id = previous.as_ref().map(git2::TreeEntry::id);
            if previous_id == Some(entry.id()) {
                continue;
            }
            match entry.kind() {
                Some(git2::ObjectType::Tree) => {
                    let subtree = repo
                        .find_tree(entry.id())
                        .map_err(|e| lost(entry.id(), e))?;
                    let old_subtree = previous
                        .filter(|p| p.kind() == Some(git2::ObjectType::Tree))
                        .and_then(|p| repo.find_tree(p.id()).ok());
                    pending.push((subtree, old_subtree));
                }
                Some(git2::ObjectType::Blob) => {
                    odb.read(entry.id()).map_err(|e| lost(entry.id(), e))?;
                }
                // A submodule's commit lives in another repository.
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit_with(repo: &Repository, parent: Option<Oid>, board: &[u8]) -> Oid {
        let blob = repo.blob(board).unwrap_or_else(|e| panic!("{e}"));
        let mut inner = repo.treebuilder(None).unwrap_or_else(|e| panic!("{e}"));
        inner
            .insert("board.json", blob, 0o100_644)
            .unwrap_or_else(|e| panic!("{e}"));
        let inner = inner.write().unwrap_or_else(|e| panic!("{e}"));
        let mut root = repo.treebuilder(None).unwrap_or_else(|e| panic!("{e}"));
        root.insert("board", inner, 0o040_000)
            .unwrap_or_else(|e| panic!("{e}"));
        let tree = repo
            .find_tree(root.write().unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        let sig = git2::Signature::now("t", "t@example.com").unwrap_or_else(|e| panic!("{e}"));
        let parents: Vec<git2::Commit<'_>> = parent
            .map(|p| repo.find_commit(p).unwrap_or_else(|e| panic!("{e}")))
            .into_iter()
            .collect();
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(None, &sig, &sig, "m", &tree, &refs)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn loose_path(repo: &Repository, oid: Oid) -> std::path::PathBuf {
        let hex = oid.to_string();
        repo.path().join("objects").join(&hex[..2]).join(&hex[2..])
    }

    #[test]
    fn a_blob_the_disk_lost_is_a_storage_error_and_an_unchanged_one_is_not_read() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let repo = Repository::init_bare(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let first = commit_with(&repo, None, b"{\"v\":1}");
        let second = commit_with(&repo, Some(first), b"{\"v\":2}");
        assert!(read_back(&repo, second, Some(first)).is_ok());

        // The new blob vanishes (as on the full disk): the write is not reported landed.
        let blob = repo
            .find_commit(second)
            .and_then(|c| c.tree())
            .and_then(|t| t.get_path(std::path::Path::new("board/board.json")))
            .map(|e| e.id())
            .unwrap_or_else(|e| panic!("{e}"));
        std::fs::remove_file(loose_path(&repo, blob)).unwrap_or_else(|e| panic!("{e}"));
        let repo = Repository::open_bare(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        match read_back(&repo, second, Some(first)) {
            Err(e) => {
                assert!(e.is_storage(), "{e}");
                assert!(e.to_string().contains(&blob.to_string()), "{e}");
            }
            Ok(()) => panic!("a lost blob must not read back"),
        }

        // Only what the commit adds is read: the first commit's blob may go unnoticed
        // by a third commit that replaces it.
        let first_blob = repo
            .find_commit(first)
            .and_then(|c| c.tree())
            .and_then(|t| t.get_path(std::path::Path::new("board/board.json")))
            .map(|e| e.id())
            .unwrap_or_else(|e| panic!("{e}"));
        let third = commit_with(&repo, Some(first), b"{\"v\":3}");
        std::fs::remove_file(loose_path(&repo, first_blob)).unwrap_or_else(|e| panic!("{e}"));
        assert!(read_back(&repo, third, Some(first)).is_ok());
    }
}
