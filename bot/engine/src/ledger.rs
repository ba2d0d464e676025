//! One local bare clone of each repository's ledger branch under the data directory, with `origin` pointing at GitHub and the installation token as the git password.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use navin_ledger::store::{Store, StoreConfig, StoreError};

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

/// Removes `full_name`'s ledger clone and source clone, once the App can no longer reach
/// the repository (uninstalled, or deselected from the installation). Returns the folders
/// that were there; a folder already gone is not an error. A later event for the
/// repository starts both again from GitHub.
pub fn remove_clones(data_dir: &Path, full_name: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for dir in [
        clone_dir(data_dir, full_name),
        crate::source::source_dir(data_dir, full_name),
    ] {
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => removed.push(dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(removed)
}

/// Opens (creating on first use) the clone and a store that fetches before and pushes
/// after every write. The token is only ever handed to git's credential callback, never
/// written into the remote URL or the repository config.
pub fn open_store(
    data_dir: &Path,
    full_name: &str,
    remote_url: &str,
    branch: &str,
    token: String,
) -> Result<Arc<Store>, StoreError> {
    let dir = clone_dir(data_dir, full_name);
    let repo = match git2::Repository::open_bare(&dir) {
        Ok(repo) => repo,
        Err(_) => {
            std::fs::create_dir_all(&dir)?;
            git2::Repository::init_bare(&dir)?
        }
    };
    match repo.find_remote("origin") {
        Ok(remote) if remote.url().ok() == Some(remote_url) => {}
        Ok(_) => repo.remote_set_url("origin", remote_url)?,
        Err(_) => {
            repo.remote("origin", remote_url)?;
        }
    }
    let cfg = StoreConfig {
        branch: branch.to_owned(),
        remote: Some("origin".to_owned()),
        token: Some(token),
        committer_name: "navin[bot]".to_owned(),
        ..StoreConfig::default()
    };
    Ok(Arc::new(Store::open(&dir, cfg)?))
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
            std::fs::create_dir_all(crate::source::source_dir(data.path(), repo)).unwrap();
        }
        let removed = remove_clones(data.path(), "o/gone").unwrap();
        assert_eq!(removed.len(), 2, "{removed:?}");
        assert!(!clone_dir(data.path(), "o/gone").exists());
        assert!(!crate::source::source_dir(data.path(), "o/gone").exists());
        assert!(clone_dir(data.path(), "o/kept").exists());
        assert!(remove_clones(data.path(), "o/gone").unwrap().is_empty());
    }
}
