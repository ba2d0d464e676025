//! Writing files into a tree on top of a base tree, keeping every other entry.

use git2::{FileMode, Oid, Repository, Tree};

/// Returns a tree equal to `base` with each `(path, blob)` written at its
/// slash-separated path, creating directories as needed.
pub(crate) fn write_files(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    files: &[(&str, Oid)],
) -> Result<Oid, git2::Error> {
    let mut builder = repo.treebuilder(base)?;
    // Group by first path component so each subtree is rebuilt once.
    let mut dirs: Vec<(&str, Vec<(&str, Oid)>)> = Vec::new();
    for &(path, blob) in files {
        match path.split_once('/') {
            None => {
                builder.insert(path, blob, FileMode::Blob.into())?;
            }
            Some((dir, rest)) => match dirs.iter_mut().find(|(d, _)| *d == dir) {
                Some((_, list)) => list.push((rest, blob)),
                None => dirs.push((dir, vec![(rest, blob)])),
            },
        }
    }
    for (dir, list) in dirs {
        let sub = match base.and_then(|t| t.get_name(dir)) {
            Some(entry) if entry.kind() == Some(git2::ObjectType::Tree) => {
                Some(repo.find_tree(entry.id())?)
            }
            _ => None,
        };
        let oid = write_files(repo, sub.as_ref(), &list)?;
        builder.insert(dir, oid, FileMode::Tree.into())?;
    }
    builder.write()
}

/// Reads the blob at a slash-separated path, if present.
pub(crate) fn read_file(
    repo: &Repository,
    tree: &Tree<'_>,
    path: &str,
) -> Result<Option<Vec<u8>>, git2::Error> {
    match tree.get_path(std::path::Path::new(path)) {
        Ok(entry) => Ok(Some(repo.find_blob(entry.id())?.content().to_vec())),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}
