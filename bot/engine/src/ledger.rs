//! One local bare clone of each repository's ledger branch under the data directory, with `origin` pointing at GitHub and the installation token as the git password.

use crate::clones::clone_dir;
use navin_ledger::store::{Store, StoreConfig, StoreError};
use std::path::Path;
use std::sync::Arc;

/// Opens (creating on first use) the clone and a store that fetches before and pushes
/// after every write. The token is only ever handed to git's credential callback, never
/// written into the remote URL or the repository config.
pub fn open_store(
    data_dir: &Path,
    full_name: &str,
    remote_url: &str,
    branch: &str,
    token: String,
    seal_key: Option<navin_ledger::store::SealKey>,
    repository_id: Option<u64>,
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
        seal_key,
        repository: navin_ledger::store::github_repository(repository_id, full_name),
        ..StoreConfig::default()
    };
    Ok(Arc::new(Store::open(&dir, cfg)?))
}
