//! Where each repository's local clones live under the data directory (the ledger's and the planner's source clone), and removing both when the App loses the repository.

use std::path::{Path, PathBuf};

/// Where the clone of `owner/name` lives: `<data_dir>/ledgers/<owner>/<name>.git`.
/// Owner and name are GitHub logins and repository names (letters, digits, `-_.`);
/// anything else is replaced so a hostile payload cannot leave the folder.
pub fn clone_dir(data_dir: &Path, full_name: &str) -> PathBuf {
    let (owner, name) = full_name.split_once('/').unwrap_or(("_", full_name));
    data_dir
        .join("ledgers")
        .join(safe_segment(owner))
        .join(format!("{}.git", safe_segment(name)))
}

fn safe_segment(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() || cleaned.chars().all(|c| c == '.') {
        "_".to_owned()
    } else {
        cleaned
    }
}

/// `<data_dir>/sources/<owner>/<name>.git`, beside the ledger clones.
pub fn source_dir(data_dir: &Path, full_name: &str) -> PathBuf {
    let ledger = clone_dir(data_dir, full_name);
    let name = ledger.file_name().map(PathBuf::from).unwrap_or_default();
    let owner = ledger
        .parent()
        .and_then(Path::file_name)
        .map(PathBuf::from)
        .unwrap_or_default();
    data_dir.join("sources").join(owner).join(name)
}

/// Removes `full_name`'s ledger clone and source clone, once the App can no longer reach
/// the repository (uninstalled, or deselected from the installation). Returns the folders
/// that were there; a folder already gone is not an error. A later event for the
/// repository starts both again from GitHub.
pub fn remove_clones(data_dir: &Path, full_name: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for dir in [
        clone_dir(data_dir, full_name),
        source_dir(data_dir, full_name),
    ] {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => removed.push(dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn clone_dirs_stay_inside_the_data_dir() {
        let base = Path::new("/data");
        assert_eq!(
            clone_dir(base, "Octo-Org/hello.rs"),
            Path::new("/data/ledgers/octo-org/hello.rs.git")
        );
        assert_eq!(
            clone_dir(base, "../../etc"),
            Path::new("/data/ledgers/_/.._etc.git")
        );
        assert_eq!(clone_dir(base, "a/.."), Path::new("/data/ledgers/a/_.git"));
    }

    #[test]
    fn removing_a_repositorys_clones_leaves_its_neighbours() {
        let data = tempfile::tempdir().unwrap();
        for repo in ["o/gone", "o/kept"] {
            std::fs::create_dir_all(clone_dir(data.path(), repo).join("objects")).unwrap();
            std::fs::create_dir_all(source_dir(data.path(), repo)).unwrap();
        }
        let removed = remove_clones(data.path(), "o/gone").unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(!clone_dir(data.path(), "o/gone").exists());
        assert!(!source_dir(data.path(), "o/gone").exists());
        assert!(clone_dir(data.path(), "o/kept").exists());
        assert!(remove_clones(data.path(), "o/gone").unwrap().is_empty());
    }
}
