//! The ledger branch as the Action sees it: a throwaway bare repository whose `origin` is the job's repository.

use navin_ledger::store::{RemoteOp, Store, StoreConfig, StoreError};

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
            seal_key: env.seal_key()?,
            repository: env.seal_repository(),
            ..StoreConfig::default()
        },
    )
    .map_err(|e| store_error(e, branch))?;
    Ok(LedgerAccess { store, _dir: dir })
}

/// Names the missing permission when the git server refused us, otherwise passes the
/// store's own words on.
pub fn store_error(e: StoreError, branch: &str) -> ActionError {
    refused(&e, branch).unwrap_or_else(|| ActionError::Ledger {
        branch: branch.to_string(),
        message: e.to_string(),
    })
}

/// The Action's wording of a refused fetch or push: 403 names the scope (read for a
/// fetch, write for a push), 401 the token, 404 where to look.
pub fn refused(e: &StoreError, branch: &str) -> Option<ActionError> {
    let StoreError::Refused { op, status, .. } = e else {
        return None;
    };
    Some(match (status, op) {
        (Some(403), RemoteOp::Push) => ActionError::Permission {
            scope: "contents: write".into(),
            what: format!("update the ledger branch {branch}"),
        },
        (Some(403), RemoteOp::Fetch) => ActionError::Permission {
            scope: "contents: read".into(),
            what: format!("read the ledger branch {branch}"),
        },
        (Some(404), _) => ActionError::Ledger {
            branch: branch.to_string(),
            message: format!(
                "{e} (the repository was not found: check GITHUB_SERVER_URL, or the token lacks `contents: read`)"
            ),
        },
        _ => ActionError::BadCredentials(format!("{op} the ledger branch {branch}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_with(op: RemoteOp, status: u16) -> StoreError {
        StoreError::Refused {
            remote: "origin".into(),
            op,
            status: Some(status),
        }
    }

    #[test]
    fn refused_push_names_contents_write_and_refused_fetch_contents_read() {
        let push = store_error(refused_with(RemoteOp::Push, 403), "navin/ledger");
        assert!(push.to_string().contains("`contents: write`"), "{push}");
        let fetch = store_error(refused_with(RemoteOp::Fetch, 403), "navin/ledger");
        assert!(fetch.to_string().contains("`contents: read`"), "{fetch}");
        let token = store_error(refused_with(RemoteOp::Fetch, 401), "navin/ledger");
        assert!(matches!(token, ActionError::BadCredentials(_)), "{token}");
    }

    #[test]
    fn other_store_failures_keep_their_own_words() {
        let e = store_error(
            StoreError::Contention {
                branch: "navin/ledger".into(),
                attempts: 200,
            },
            "navin/ledger",
        );
        assert!(e.to_string().contains("gave up after 200 attempts"), "{e}");
    }
}
