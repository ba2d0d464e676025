//! A temporary, read-only copy of one commit's tree for the plan command to run in, never the checkout.
//!
//! The command can read every committed file but cannot change the
//! checkout or its `.git` (it never sees them) and cannot write into the
//! copy (files are 0444, directories 0555). It can still write elsewhere
//! its user may (`/tmp`, its home): the copy bounds what it plans from,
//! not the machine; run it as a user with no other rights for more.

use std::path::{Path, PathBuf};

use super::error::ExternalError;
use crate::detect::commit_tree::CommitTree;
use crate::RepoSource;

/// The exported tree; removed (write bits restored first) on drop.
#[derive(Debug)]
pub(crate) struct ReadOnlyExport {
    /// Held for its drop, which removes the copy.
    _dir: tempfile::TempDir,
    root: PathBuf,
    dirs: Vec<PathBuf>,
}

fn failed(what: &str, e: impl std::fmt::Display) -> ExternalError {
    ExternalError::Runtime(format!("cannot export the planned commit ({what}): {e}"))
}

impl ReadOnlyExport {
    pub(crate) fn new(tree: &CommitTree) -> Result<Self, ExternalError> {
        let dir = tempfile::Builder::new()
            .prefix("navin-plan-")
            .tempdir()
            .map_err(|e| failed("temporary directory", e))?;
        let root = dir.path().join("tree");
        std::fs::create_dir(&root).map_err(|e| failed("temporary directory", e))?;
        let mut dirs = vec![root.clone()];
        for entry in tree.entries() {
            let target = root.join(&entry.path);
            if let Some(parent) = target.parent() {
                if !parent.exists() {
                    std::fs::create_dir_all(parent).map_err(|e| failed(&entry.path, e))?;
                    let mut p = parent;
                    while p != root && !dirs.iter().any(|d| d == p) {
                        dirs.push(p.to_path_buf());
                        match p.parent() {
                            Some(up) => p = up,
                            None => break,
                        }
                    }
                }
            }
            let bytes = tree
                .read(&entry.path, u64::MAX)
                .map_err(|e| failed(&entry.path, e))?
                .unwrap_or_default();
            std::fs::write(&target, bytes).map_err(|e| failed(&entry.path, e))?;
            set_mode(&target, 0o444).map_err(|e| failed(&entry.path, e))?;
        }
        // Deepest first, so a parent is locked after its children were written.
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in &dirs {
            set_mode(d, 0o555).map_err(|e| failed("permissions", e))?;
        }
        Ok(Self {
            _dir: dir,
            root,
            dirs,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.root
    }
}

impl Drop for ReadOnlyExport {
    fn drop(&mut self) {
        for d in self.dirs.iter().rev() {
            let _ = set_mode(d, 0o755);
        }
    }
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    let mut perms = std::fs::metadata(path)?.permissions();
    perms.set_readonly(mode & 0o200 == 0);
    std::fs::set_permissions(path, perms)
}
