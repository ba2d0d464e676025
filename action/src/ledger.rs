//! The ledger branch as the Action sees it: a throwaway bare repository whose `origin` is the job's repository.

use navin_ledger::store::{Store, StoreConfig, StoreError};

use crate::env::ActionEnv;
use crate::error::ActionError;

/// An opened ledger store and the temporary directory holding its git repository.
#[derive(Debug)]
pub struct LedgerAccess {
    pub store: Store,
    _dir: tempfile::TempDir,
}

/// Opens the ledger: a fresh bare repository under `RUNNER_TEMP` (or the
/// system temp dir) with `origin` pointing at the job's repository; the
/// store fetches before every read and write and pushes after every write,
/// never forced, so concurrent jobs are safe without `concurrency:`.
pub fn open(env: &ActionEnv, token: &str, branch: &str) -> Result<LedgerAccess, ActionError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("navin-ledger-");
    let dir = match &env.runner_temp {
        Some(t) => builder.tempdir_in(t),
        None => builder.tempdir(),
    }
    .map_err(|e| ActionError::io("creating the ledger work directory", e))?;
    let url = env.git_url()?;
    let ledger_err = |message: String| ActionError::Ledger {
        branch: branch.to_string(),
        message,
    };
    let repo = git2::Repository::init_bare(dir.path())
        .map_err(|e| ledger_err(format!("cannot create a work repository: {}", e.message())))?;
    repo.remote("origin", &url)
        .map_err(|e| ledger_err(format!("cannot add remote {url}: {}", e.message())))?;
    let store = Store::open(
        dir.path(),
        StoreConfig {
            branch: branch.to_string(),
            remote: Some("origin".to_string()),
            token: Some(token.to_string()),
            ..StoreConfig::default()
        },
    )
    .map_err(|e| store_error(e, branch, false))?;
    Ok(LedgerAccess { store, _dir: dir })
}

/// Names the missing permission when git was refused, otherwise passes the store's own words on.
pub fn store_error(e: StoreError, branch: &str, writing: bool) -> ActionError {
    let message = e.to_string();
    let lower = message.to_ascii_lowercase();
    if lower.contains("403") || lower.contains("permission to") {
        return if writing {
            ActionError::Permission {
                scope: "contents: write",
                what: format!("update the ledger branch {branch}"),
            }
        } else {
            ActionError::Permission {
                scope: "contents: read",
                what: format!("read the ledger branch {branch}"),
            }
        };
    }
    if lower.contains("401") || lower.contains("authentication") {
        return ActionError::BadCredentials(format!("fetch the ledger branch {branch}"));
    }
    if lower.contains("404") {
        return ActionError::Ledger {
            branch: branch.to_string(),
            message: format!(
                "{message} (the repository was not found: check GITHUB_SERVER_URL, or the token lacks `contents: read`)"
            ),
        };
    }
    ActionError::Ledger {
        branch: branch.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(message: &str) -> StoreError {
        StoreError::Remote {
            remote: "origin".into(),
            message: message.into(),
        }
    }

    #[test]
    fn refused_push_names_contents_write_and_refused_fetch_contents_read() {
        let push = store_error(
            remote("unexpected http status code: 403"),
            "navin/ledger",
            true,
        );
        assert!(push.to_string().contains("`contents: write`"), "{push}");
        let fetch = store_error(remote("fetch failed: 403"), "navin/ledger", false);
        assert!(fetch.to_string().contains("`contents: read`"), "{fetch}");
    }

    #[test]
    fn other_store_failures_keep_their_own_words() {
        let e = store_error(
            StoreError::Contention {
                branch: "navin/ledger".into(),
                attempts: 200,
            },
            "navin/ledger",
            true,
        );
        assert!(e.to_string().contains("gave up after 200 attempts"), "{e}");
    }
}
