//! One consistent read of the whole branch (ledger and plan files at a single tip), for pages that show everything at once.

use git2::Repository;

use super::files::plans_tree;
use super::{has_ledger, oid_str, Store, StoreError};
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
            });
        };
        let ledger = if has_ledger(&repo, oid)? {
            self.vet(&repo, oid)
                .and_then(|()| self.load(&repo, oid))
                .map(Some)
        } else {
            Ok(None)
        };
        Ok(BranchView {
            commit: Some(oid_str(oid)),
            ledger,
            plan_files: plan_files_at(&repo, oid)?,
        })
    }
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
