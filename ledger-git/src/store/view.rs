//! One consistent read of the whole branch (ledger and plan files at a single tip), for pages that show everything at once.

use git2::Repository;

use super::files::plans_tree;
use super::{has_ledger, oid_str, read_ledger_at, Snapshot, Store, StoreError};
use crate::model::Ledger;

/// The branch at one tip. A damaged ledger is carried as its error, so a reader can
/// report it beside the plans instead of losing the whole page to it.
#[derive(Debug)]
pub struct BranchView {
    /// The tip read; `None` when the branch does not exist yet.
    pub commit: Option<String>,
    /// The mission and board; `Ok(None)` when the branch holds no mission.
    pub ledger: Result<Option<Ledger>, StoreError>,
    /// Every file under [`PLANS_DIR`](super::PLANS_DIR) (name, content), sorted by name.
    pub plan_files: Vec<(String, Vec<u8>)>,
    /// When `ledger` is a refused commit ([`StoreError::Foreign`]): the ledger below it,
    /// the last state Navin trusts, to show read-only beside the refusal.
    pub trusted: Option<Ledger>,
}

/// The ledger for a reader that must answer even when the tip is refused.
#[derive(Debug)]
pub struct Reading {
    /// The ledger at the tip, or below a refused commit (then `refused` says why).
    pub snapshot: Option<Snapshot>,
    /// The refusal ([`StoreError::Foreign`]) when `snapshot` is the state below it.
    pub refused: Option<StoreError>,
}

impl Store {
    /// Reads the ledger and every plan file at one tip. With `fetch`, syncs with the
    /// remote first (one fetch, the same rewind checks as every read); without it,
    /// reads the local branch as the last sync left it, which costs no network.
    pub fn view(&self, fetch: bool) -> Result<BranchView, StoreError> {
        let repo = self.repo()?;
        let tip = match (&self.cfg.remote, fetch) {
            (Some(_), true) => self.sync(&repo)?,
            _ => self.tip(&repo)?,
        };
        let Some(oid) = tip else {
            return Ok(BranchView {
                commit: None,
                ledger: Ok(None),
                plan_files: Vec::new(),
                trusted: None,
            });
        };
        let ledger = if has_ledger(&repo, oid)? {
            self.vet(&repo, oid)
                .and_then(|()| self.load(&repo, oid))
                .map(Some)
        } else {
            Ok(None)
        };
        let trusted = match &ledger {
            Err(e) => trusted_below(&repo, e)?.map(|s| s.ledger),
            Ok(_) => None,
        };
        Ok(BranchView {
            commit: Some(oid_str(oid)),
            ledger,
            plan_files: plan_files_at(&repo, oid)?,
            trusted,
        })
    }

    /// [`Store::read`] for `/status` and other read-only answers: a tip holding a commit
    /// Navin refuses yields the ledger below that commit beside the refusal, instead of
    /// nothing at all. Every other error is returned as `read` returns it.
    pub fn read_or_trusted(&self) -> Result<Reading, StoreError> {
        match self.read() {
            Ok(snapshot) => Ok(Reading {
                snapshot,
                refused: None,
            }),
            Err(e @ StoreError::Foreign { .. }) => {
                let repo = self.repo()?;
                let snapshot = trusted_below(&repo, &e)?;
                Ok(Reading {
                    snapshot,
                    refused: Some(e),
                })
            }
            Err(e) => Err(e),
        }
    }
}

/// The ledger at the commit below a refused one, when it holds one.
fn trusted_below(repo: &Repository, refused: &StoreError) -> Result<Option<Snapshot>, StoreError> {
    let StoreError::Foreign {
        below: Some(below), ..
    } = refused
    else {
        return Ok(None);
    };
    let oid = git2::Oid::from_str(below)?;
    if !has_ledger(repo, oid)? {
        return Ok(None);
    }
    Ok(Some(Snapshot {
        ledger: read_ledger_at(repo, oid)?,
        commit: below.clone(),
    }))
}

fn plan_files_at(repo: &Repository, oid: git2::Oid) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    let Some(folder) = plans_tree(repo, oid)? else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for item in folder.iter() {
        if item.kind() != Some(git2::ObjectType::Blob) {
            continue;
        }
        let Ok(name) = item.name() else { continue };
        let blob = repo.find_blob(item.id())?;
        files.push((name.to_owned(), blob.content().to_vec()));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}
