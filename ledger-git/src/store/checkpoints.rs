//! Checkpoints and rollback: `refs/navin/checkpoints/v<N>` made on request and on their own (a mission's start, the state before a replan), and old versions read back and written anew.

use git2::{Oid, Repository};

use super::remote::{incoming_checkpoints, PushError, CHECKPOINT_PREFIX};
use super::tips::version_near;
use super::{locks, oid_str, read_ledger_at, Committed, Rewind, Store, StoreError};
use crate::error::RuleError;
use crate::model::Ledger;
use crate::ops::{Ctx, Operation};

impl Store {
    /// Creates `refs/navin/checkpoints/v<version>` at the tip (and pushes it with a remote).
    pub fn checkpoint(&self) -> Result<(String, u64), StoreError> {
        let snapshot = self.read()?.ok_or(RuleError::NoMission)?;
        let repo = self.repo()?;
        let version = snapshot.ledger.mission.version;
        let name = checkpoint_ref(version);
        let oid = Oid::from_str(&snapshot.commit)?;
        match repo.refname_to_id(&name) {
            Ok(existing) if existing == oid => {}
            Ok(existing) => {
                return Err(StoreError::NotFound(format!(
                    "{name} already points at {existing}, not the tip {oid}; refusing to move a checkpoint"
                )))
            }
            Err(_) => {
                repo.reference(&name, oid, false, "navin: checkpoint")?;
            }
        }
        if let Some(remote) = self.cfg.remote.as_deref() {
            match self.target(remote).push(&repo, &name, oid, None, None) {
                Ok(()) | Err(PushError::Rejected) => {}
                Err(PushError::Failed(e)) => return Err(e),
            }
        }
        Ok((name, version))
    }

    /// Marks `commit` (version `version`) with its checkpoint ref, when it has none yet,
    /// and pushes it when there is a remote. Best effort: the write it follows has
    /// landed, and a checkpoint only saves walking the branch later.
    pub(super) fn auto_checkpoint(&self, repo: &Repository, commit: Oid, version: u64) {
        let name = checkpoint_ref(version);
        if repo.refname_to_id(&name).is_ok() {
            return;
        }
        let made = locks::move_ref(repo, &name, || {
            repo.reference(&name, commit, false, "navin: automatic checkpoint")
        });
        if !matches!(made, Ok(Ok(_))) {
            tracing::warn!(checkpoint = %name, "cannot write an automatic checkpoint");
            return;
        }
        if let Some(remote) = self.cfg.remote.as_deref() {
            if let Err(PushError::Failed(e)) =
                self.target(remote).push(repo, &name, commit, None, None)
            {
                tracing::warn!(checkpoint = %name, error = %e, "cannot push an automatic checkpoint");
            }
        }
    }

    /// The ledger as it was at `version`: from its checkpoint ref, else by walking the
    /// branch. Below a refused tip, only the history under the refused commit counts:
    /// a checkpoint outside it, or the refused commit's own version, is not Navin's.
    pub fn read_version(&self, version: u64) -> Result<Ledger, StoreError> {
        let repo = self.repo()?;
        let tip = self.tip(&repo)?.ok_or(RuleError::NoMission)?;
        let start = match self.vet(&repo, tip) {
            Err(StoreError::Foreign {
                below: Some(below), ..
            }) => Oid::from_str(&below)?,
            _ => tip,
        };
        if let Ok(oid) = repo.refname_to_id(&checkpoint_ref(version)) {
            let inside = oid == start || repo.graph_descendant_of(start, oid)?;
            if inside {
                let ledger = read_ledger_at(&repo, oid)?;
                if ledger.mission.version == version {
                    return Ok(ledger);
                }
            }
        }
        let mut walk = repo.revwalk()?;
        walk.push(start)?;
        walk.simplify_first_parent()?;
        for oid in walk {
            let oid = oid?;
            let commit = repo.find_commit(oid)?;
            if subject_version(commit.summary().ok().flatten().unwrap_or_default()) == Some(version)
            {
                return read_ledger_at(&repo, oid);
            }
        }
        let current = read_ledger_at(&repo, start)?.mission.version;
        Err(RuleError::UnknownVersion { version, current }.into())
    }

    /// Writes the content of `version` as a new commit on top.
    pub fn rollback(&self, version: u64, ctx: &Ctx) -> Result<Committed, StoreError> {
        let target = self.read_version(version)?;
        self.transact(
            &Operation::Rollback {
                to_version: version,
                target: Box::new(target),
            },
            ctx,
        )
    }
}

/// The ref of version `version`'s checkpoint.
pub fn checkpoint_ref(version: u64) -> String {
    format!("{CHECKPOINT_PREFIX}v{version}")
}

/// Parses the version out of `navin: <operation> v<version> by <actor>`.
pub(super) fn subject_version(subject: &str) -> Option<u64> {
    let rest = subject.strip_prefix("navin: ")?;
    rest.split_whitespace()
        .find_map(|w| w.strip_prefix('v')?.parse().ok())
}

impl Store {
    /// A store that never saw the remote (a fresh clone, a server with a new data
    /// directory) has no last tip to compare with; the remote's own checkpoints stand in.
    /// Checkpoints are never moved and versions only grow, so every checkpoint is in the
    /// branch's history: one that is not means the branch was rewound past it.
    pub(super) fn check_checkpoints(
        &self,
        repo: &Repository,
        remote: &str,
        tip: Oid,
    ) -> Result<(), StoreError> {
        let prefix = incoming_checkpoints(remote);
        for reference in repo.references_glob(&format!("{prefix}*"))? {
            let reference = reference?;
            let (Ok(name), Some(commit)) = (reference.name(), reference.target()) else {
                continue;
            };
            let Some(version) = name
                .strip_prefix(&prefix)
                .and_then(|v| v.strip_prefix('v'))
                .and_then(|v| v.parse::<u64>().ok())
            else {
                continue;
            };
            if commit != tip && !repo.graph_descendant_of(tip, commit)? {
                return Err(StoreError::Rewound(Box::new(Rewind {
                    branch: self.cfg.branch.clone(),
                    remote: remote.to_owned(),
                    record: checkpoint_ref(version),
                    version: Some(version),
                    commit: oid_str(commit),
                    tip: oid_str(tip),
                    tip_version: version_near(repo, tip),
                })));
            }
        }
        Ok(())
    }
}
