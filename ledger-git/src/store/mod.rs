//! The ledger branch in git: compare-and-swap transactions, remotes without force, checkpoints.
//!
//! Every write reads the tip, applies a pure operation, writes blobs, trees
//! and one commit whose parent is that tip, then moves the ref only if it
//! still points at the tip read (`reference_matching`). A lost race re-reads
//! and re-applies, with bounded jittered retries. With a remote, the same
//! happens against the remote's tip and the push never forces.

mod authorship;
mod checkpoints;
mod error;
pub use error::{transient_git_error, RemoteOp, Rewind, StoreError};
mod log;
mod op_message;
pub use checkpoints::checkpoint_ref;
mod files;
pub use files::{FileChanges, PLANS_DIR};
mod locks;
mod read_back;
mod remote;
pub use remote::tip_record_ref;
mod seal;
pub use seal::{github_repository, SealKey, SealScope, ShortKey, SEAL_TRAILER};
mod tips;
mod tree;
mod view;
pub use view::{BranchView, Reading};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use chrono::{DateTime, Utc};
use git2::{Commit, ErrorCode, Oid, Repository, Signature, Time};
use rand::Rng;

use crate::codec::{self, Corrupt};
use crate::model::Ledger;
use crate::ops::{self, Ctx, Effect, Operation, Outcome};

use remote::{PushError, RecordMove, RemoteTarget};

/// Where the ledger files live on the branch.
pub const BOARD_DIR: &str = ".navin/board";
pub const DEFAULT_BRANCH: &str = "navin/ledger";

/// How to open the ledger.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub branch: String,
    /// A remote configured in the repository; every write fetches first and pushes after.
    pub remote: Option<String>,
    /// Password for `x-access-token` over HTTPS (an installation token or GITHUB_TOKEN).
    pub token: Option<String>,
    pub committer_name: String,
    pub committer_email: String,
    /// Compare-and-swap attempts before giving up.
    pub max_attempts: u32,
    /// The key Navin seals its commits with and recognizes them by ([`SealKey`]).
    /// Without one, Navin's commits are told by committer and trailers, which anyone
    /// with push access can copy.
    pub seal_key: Option<SealKey>,
    /// The repository this ledger belongs to, as its seals name it ([`SealScope`]):
    /// `github:<repository id>` for the App and the Action, `local:<id>` for the CLI.
    /// Writers that share a key and a ledger must agree on it.
    pub repository: String,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            branch: DEFAULT_BRANCH.to_string(),
            remote: None,
            token: None,
            committer_name: "Navin".to_string(),
            committer_email: "navin@users.noreply.github.com".to_string(),
            max_attempts: 200,
            seal_key: None,
            repository: String::new(),
        }
    }
}

/// A ledger as read at a commit.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub ledger: Ledger,
    pub commit: String,
}

/// What a transaction did.
#[derive(Debug, Clone)]
pub enum Committed {
    Written {
        version: u64,
        commit: String,
        reason: String,
        effects: Vec<Effect>,
        attempts: u32,
        ledger: Box<Ledger>,
    },
    /// The operation id was already in the ledger's history: nothing written.
    AlreadyApplied { version: u64 },
}

/// One commit of the ledger branch, for `ledger history`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HistoryCommit {
    pub commit: String,
    pub version: Option<u64>,
    pub subject: String,
    pub body: String,
    pub at: DateTime<Utc>,
}

/// The git-backed ledger store for one repository and branch.
pub struct Store {
    repo_path: PathBuf,
    cfg: StoreConfig,
    /// The last ledger read or written, keyed by commit: skips re-parsing an unchanged tip.
    cache: Mutex<Option<(Oid, Ledger)>>,
    /// The newest tip this store has seen; a tip that does not descend from it was rewritten.
    seen: Mutex<Option<Oid>>,
    /// Op ids read from commit trailers for retried deliveries, extended as the tip moves.
    trailers: Mutex<Option<TrailerIndex>>,
    /// The newest tip whose commits were checked for foreign edits of gated steps.
    /// with whether a seal of this store's key was found at or below it (so commits on
    /// top are judged as a sealed ledger's, even when the vetted tip was itself a
    /// harmless foreign commit).
    vetted: Mutex<Option<(Oid, bool)>>,
}

/// The `Navin-Delivery` trailers of the commits from `tip` back to `since` (seconds).
struct TrailerIndex {
    tip: Oid,
    since: i64,
    ids: std::collections::HashSet<String>,
}

/// Slack for clocks: commits up to this long before a delivery's receipt are searched too.
const TRAILER_SKEW_SECS: i64 = 600;

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("repo", &self.repo_path)
            .field("branch", &self.cfg.branch)
            .finish()
    }
}

/// One lock per (git dir, branch) in this process.
type LockTable = Mutex<HashMap<(PathBuf, String), Arc<Mutex<()>>>>;

/// Serializes writers to one ledger inside this process; CAS covers the rest.
fn ledger_lock(key: &Path, branch: &str) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<LockTable> = OnceLock::new();
    let mut map = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    map.entry((key.to_path_buf(), branch.to_string()))
        .or_default()
        .clone()
}

fn oid_str(oid: Oid) -> String {
    oid.to_string()
}

impl Store {
    /// Opens the repository containing `path` (discovering upwards, like git).
    pub fn open(path: &Path, cfg: StoreConfig) -> Result<Self, StoreError> {
        let repo = Repository::discover(path).map_err(|e| {
            StoreError::NotFound(format!(
                "{} is not in a git repository: {}",
                path.display(),
                e.message()
            ))
        })?;
        let repo_path = repo.path().canonicalize()?;
        if git2::Reference::is_valid_name(&format!("refs/heads/{}", cfg.branch)) {
            Ok(Self {
                repo_path,
                cfg,
                cache: Mutex::new(None),
                trailers: Mutex::new(None),
                seen: Mutex::new(None),
                vetted: Mutex::new(None),
            })
        } else {
            Err(StoreError::NotFound(format!(
                "{:?} is not a valid branch name",
                cfg.branch
            )))
        }
    }

    pub fn branch(&self) -> &str {
        &self.cfg.branch
    }

    /// The key this store seals with, for the notes Navin keeps beside the ledger
    /// (a base run's cached result) that must be as hard to forge as the ledger.
    pub fn seal_key(&self) -> Option<&SealKey> {
        self.cfg.seal_key.as_ref()
    }

    /// The repository this store's seals name (`github:<id>`, `local:<id>`).
    pub fn repository(&self) -> &str {
        &self.cfg.repository
    }

    /// What this store's seals name: its repository and branch.
    fn seal_scope(&self) -> seal::SealScope {
        seal::SealScope {
            repository: self.cfg.repository.clone(),
            branch: self.cfg.branch.clone(),
        }
    }

    fn refname(&self) -> String {
        format!("refs/heads/{}", self.cfg.branch)
    }

    fn repo(&self) -> Result<Repository, StoreError> {
        Ok(Repository::open(&self.repo_path)?)
    }

    fn tip(&self, repo: &Repository) -> Result<Option<Oid>, StoreError> {
        match repo.refname_to_id(&self.refname()) {
            Ok(oid) => Ok(Some(oid)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The branch tip for a reader: after syncing with the remote, if any. The sync
    /// moves refs (the fetched tip, the local branch), so it runs under this process's
    /// writer lock: two readers of one clone at once (a dashboard save beside a webhook)
    /// would otherwise trip over each other's git ref locks.
    fn reader_tip(&self, repo: &Repository) -> Result<Option<Oid>, StoreError> {
        if self.cfg.remote.is_none() {
            return self.tip(repo);
        }
        let lock = ledger_lock(&self.repo_path, &self.cfg.branch);
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        self.sync(repo)
    }

    /// Reads the ledger at the branch tip (after syncing with the remote, if any).
    pub fn read(&self) -> Result<Option<Snapshot>, StoreError> {
        let repo = self.repo()?;
        let tip = self.reader_tip(&repo)?;
        match tip {
            None => Ok(None),
            Some(oid) if !has_ledger(&repo, oid)? => Ok(None),
            Some(oid) => Ok(Some(Snapshot {
                ledger: {
                    self.vet(&repo, oid)?;
                    self.load(&repo, oid)?
                },
                commit: oid_str(oid),
            })),
        }
    }

    /// Parses the ledger at `oid`, from cache when unchanged.
    fn load(&self, repo: &Repository, oid: Oid) -> Result<Ledger, StoreError> {
        if let Some((cached, ledger)) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            if *cached == oid {
                return Ok(ledger.clone());
            }
        }
        let ledger = read_ledger_at(repo, oid)?;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = Some((oid, ledger.clone()));
        Ok(ledger)
    }

    /// Refuses a tip that does not descend from the newest tip this store saw.
    /// The last tip seen: this process's, else the record an earlier one wrote, so a
    /// `git reset` between two runs is caught too. Read it *before* the tip: the record
    /// moves only after the branch did, so a tip read later always descends from it,
    /// while a tip read first may be overtaken by another writer's record.
    fn last_seen(&self, repo: &Repository) -> Option<Oid> {
        let remembered = *self.seen.lock().unwrap_or_else(|p| p.into_inner());
        remembered.or_else(|| repo.refname_to_id(&self.local_seen_ref()).ok())
    }

    fn check_seen(
        &self,
        repo: &Repository,
        seen: Option<Oid>,
        tip: Option<Oid>,
    ) -> Result<(), StoreError> {
        match (seen, tip) {
            (Some(s), Some(t)) if s != t && !repo.graph_descendant_of(t, s)? => {
                Err(StoreError::Rewritten {
                    seen: oid_str(s),
                    tip: oid_str(t),
                })
            }
            (Some(s), None) => Err(StoreError::BranchVanished {
                branch: self.cfg.branch.clone(),
                remote: "this repository".to_string(),
                seen: oid_str(s),
            }),
            _ => Ok(()),
        }
    }

    /// The tip a write builds on: the remote's after a sync, else the local
    /// branch's, refused when it does not descend from the last tip seen.
    fn base_tip(&self, repo: &Repository) -> Result<Option<Oid>, StoreError> {
        if self.cfg.remote.is_some() {
            let tip = self.sync(repo)?;
            if let Some(t) = tip {
                self.vet(repo, t)?;
            }
            return Ok(tip);
        }
        let seen = self.last_seen(repo);
        let tip = self.tip(repo)?;
        self.check_seen(repo, seen, tip)?;
        if let Some(t) = tip {
            self.vet(repo, t)?;
        }
        Ok(tip)
    }

    fn mark_seen(&self, tip: Oid) {
        *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(tip);
    }

    /// Where a local-only store records the newest tip it wrote, for later processes:
    /// `refs/navin/seen/local/<branch>`. Beside the remote records, never under
    /// `refs/heads`, so plain git commands leave it alone. After a deliberate rewrite,
    /// deleting it (`git update-ref -d`) accepts the new tip.
    fn local_seen_ref(&self) -> String {
        format!("refs/navin/seen/local/{}", self.cfg.branch)
    }

    /// Records `tip` for later processes (local-only stores; remote ones keep theirs
    /// in `refs/navin/seen/<remote>/…` as part of every sync).
    /// Best effort, after the write has landed: when another process holds the record's
    /// lock it is recording a descendant of this tip itself, so a failure here loses no
    /// protection worth failing a landed write for.
    pub(crate) fn persist_seen(&self, repo: &Repository, tip: Oid) {
        if self.cfg.remote.is_some() {
            return;
        }
        let name = self.local_seen_ref();
        // Only forward: a slower writer must not move the record back to an ancestor
        // (checked and moved under the writer lock, so no other writer interleaves).
        // A failure (the lock, the disk) is ignored: see above.
        let _ = locks::move_ref(repo, &name, || {
            if let Ok(known) = repo.refname_to_id(&name) {
                if known == tip || repo.graph_descendant_of(known, tip)? {
                    return Ok(());
                }
            }
            repo.reference(&name, tip, true, "navin: last tip written")
                .map(|_| ())
        });
    }

    /// Applies `op` as one commit. Rule refusals change nothing.
    pub fn transact(&self, op: &Operation, ctx: &Ctx) -> Result<Committed, StoreError> {
        let lock = ledger_lock(&self.repo_path, &self.cfg.branch);
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        let repo = self.repo()?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (base, current) = match self.base_tip(&repo) {
                Ok(base) => {
                    let current = match base {
                        Some(oid) if has_ledger(&repo, oid)? => Some(self.load(&repo, oid)?),
                        _ => None,
                    };
                    (base, current)
                }
                // The one write a refused tip allows: a rollback, built from the last
                // state Navin trusts and committed (sealed) on top of the refused commit,
                // which then lies below Navin's seal and is history, not the ledger.
                Err(StoreError::Foreign {
                    below: Some(below), ..
                }) if matches!(op, Operation::Rollback { .. }) => {
                    let below = Oid::from_str(&below)?;
                    (self.tip(&repo)?, Some(read_ledger_at(&repo, below)?))
                }
                Err(e) => return Err(e),
            };
            self.refuse_keyless_on_sealed(&repo, base)?;
            // A retried delivery's op may lie past the history window: the log says.
            // Checked before the rules, which could refuse a replay (pausing twice).
            if let (Some(id), Some(since), Some(tip)) = (&ctx.op_id, ctx.retry_since, base) {
                if self.applied_in_log(&repo, tip, id, since)? {
                    return Ok(Committed::AlreadyApplied {
                        version: current.map_or(0, |l| l.mission.version),
                    });
                }
            }
            let applied = match ops::apply(current.as_ref(), op, ctx)? {
                Outcome::AlreadyApplied { version } => {
                    return Ok(Committed::AlreadyApplied { version })
                }
                Outcome::Applied(a) => *a,
            };
            let commit = self.write_commit(&repo, base, &applied, op, ctx)?;
            let landed = match &self.cfg.remote {
                Some(name) => self.publish(&repo, name, commit, base)?,
                None => self.swap(&repo, commit, base)?,
            };
            if landed {
                self.mark_seen(commit);
                self.persist_seen(&repo, commit);
                let version = applied.ledger.mission.version;
                // Automatic checkpoints, as the operation marked them: the mission's
                // start at its own commit, the others at the state just before.
                let known = current
                    .as_ref()
                    .map_or(&[][..], |l| &l.mission.checkpoints[..]);
                for mark in &applied.ledger.mission.checkpoints {
                    if known.contains(mark) {
                        continue;
                    }
                    if mark.version == version {
                        self.auto_checkpoint(&repo, commit, version);
                    } else if let (Some(before), Some(old)) = (base, current.as_ref()) {
                        if mark.version == old.mission.version {
                            self.auto_checkpoint(&repo, before, mark.version);
                        }
                    }
                }
                *self.cache.lock().unwrap_or_else(|p| p.into_inner()) =
                    Some((commit, applied.ledger.clone()));
                return Ok(Committed::Written {
                    version,
                    commit: oid_str(commit),
                    reason: applied.reason,
                    effects: applied.effects,
                    attempts: attempt,
                    ledger: Box::new(applied.ledger),
                });
            }
            if attempt >= self.cfg.max_attempts {
                return Err(self.gave_up(&repo, attempt));
            }
            backoff(attempt);
        }
    }

    /// Whether a commit from `tip` back to `since` carries `Navin-Delivery: <op_id>`. The
    /// trailers read are kept and extended when the tip moves on, so replaying a long
    /// delivery reads each commit once.
    fn applied_in_log(
        &self,
        repo: &Repository,
        tip: Oid,
        op_id: &str,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<bool, StoreError> {
        let since = since.timestamp() - TRAILER_SKEW_SECS;
        let mut slot = self.trailers.lock().unwrap_or_else(|p| p.into_inner());
        let mut walk = repo.revwalk()?;
        walk.push(tip)?;
        let mut ids = std::collections::HashSet::new();
        if let Some(known) = slot.take() {
            let extends = known.tip == tip || repo.graph_descendant_of(tip, known.tip)?;
            if known.since == since && extends {
                walk.hide(known.tip)?;
                ids = known.ids;
            }
        }
        for oid in walk {
            let commit = repo.find_commit(oid?)?;
            // The branch is linear and appended in time order: older commits predate
            // the delivery and cannot hold its operations.
            if commit.time().seconds() < since {
                break;
            }
            for line in commit.message().unwrap_or_default().lines() {
                if let Some(id) = line.strip_prefix("Navin-Delivery: ") {
                    ids.insert(id.trim().to_owned());
                }
            }
        }
        let found = ids.contains(op_id);
        *slot = Some(TrailerIndex { tip, since, ids });
        Ok(found)
    }

    /// Moves the local branch from `base` to `commit`; false when another writer won.
    fn swap(&self, repo: &Repository, commit: Oid, base: Option<Oid>) -> Result<bool, StoreError> {
        let msg = "navin: ledger transaction";
        let name = self.refname();
        let result = locks::move_ref(repo, &name, || match base {
            Some(old) => repo.reference_matching(&name, commit, true, old, msg),
            None => repo.reference(&name, commit, false, msg),
        })?;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.code(),
                    ErrorCode::Modified
                        | ErrorCode::Locked
                        | ErrorCode::Exists
                        | ErrorCode::NotFound
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Why writes gave up: a ref lock still there, or other writers.
    pub(crate) fn gave_up(&self, repo: &Repository, attempts: u32) -> StoreError {
        let lock = locks::lock_path(repo, &self.refname());
        if lock.exists() {
            return StoreError::Locked {
                branch: self.cfg.branch.clone(),
                path: lock.display().to_string(),
            };
        }
        StoreError::Contention {
            branch: self.cfg.branch.clone(),
            attempts,
        }
    }

    /// Our own record of the remote tip last seen. Not `refs/remotes/...`:
    /// libgit2 moves those opportunistically on any fetch, which would hide a
    /// force push from the next process.
    fn tracking_ref(&self, remote: &str) -> String {
        format!("refs/navin/seen/{remote}/{}", self.cfg.branch)
    }

    fn target<'a>(&'a self, name: &'a str) -> RemoteTarget<'a> {
        RemoteTarget {
            name,
            token: self.cfg.token.as_deref(),
        }
    }

    /// Fetches the remote branch, checks it was not rewritten or deleted since
    /// last seen, and fast-forwards the local branch to it. Returns the base tip.
    fn sync(&self, repo: &Repository) -> Result<Option<Oid>, StoreError> {
        let Some(name) = self.cfg.remote.as_deref() else {
            return self.tip(repo);
        };
        let tracking = self.tracking_ref(name);
        let seen = repo.refname_to_id(&tracking).ok();
        let incoming = self.fetch_checked(repo, name, seen)?.tip;
        let local = self.tip(repo)?;
        let base = match (local, incoming) {
            (Some(l), Some(i)) if l == i => Some(l),
            (Some(l), Some(i)) if repo.graph_descendant_of(i, l)? => {
                let branch = self.refname();
                locks::move_ref(repo, &branch, || {
                    repo.reference_matching(&branch, i, true, l, "navin: fast-forward from remote")
                })??;
                Some(i)
            }
            (Some(l), Some(i)) if repo.graph_descendant_of(l, i)? => Some(l),
            (Some(_), Some(_)) => {
                return Err(StoreError::Diverged {
                    branch: self.cfg.branch.clone(),
                    remote: name.to_string(),
                })
            }
            (None, Some(i)) => {
                let branch = self.refname();
                locks::move_ref(repo, &branch, || {
                    repo.reference(&branch, i, false, "navin: ledger from remote")
                })??;
                Some(i)
            }
            (local, None) => local,
        };
        if let Some(i) = incoming {
            locks::move_ref(repo, &tracking, || {
                repo.reference(&tracking, i, true, "navin: remote tip seen")
            })??;
        }
        Ok(base)
    }

    /// Refuses a fetched tip that does not descend from `seen`, the remote tip this
    /// clone saw last, or a branch that vanished since.
    fn check_remote_seen(
        &self,
        repo: &Repository,
        name: &str,
        seen: Option<Oid>,
        incoming: Option<Oid>,
    ) -> Result<(), StoreError> {
        match (seen, incoming) {
            (Some(s), None) => Err(StoreError::BranchVanished {
                branch: self.cfg.branch.clone(),
                remote: name.to_string(),
                seen: oid_str(s),
            }),
            (Some(s), Some(i)) if s != i && !repo.graph_descendant_of(i, s)? => {
                Err(StoreError::ForcePushed {
                    branch: self.cfg.branch.clone(),
                    remote: name.to_string(),
                    seen: oid_str(s),
                    remote_tip: oid_str(i),
                })
            }
            _ => Ok(()),
        }
    }

    /// Pushes `commit` expecting the remote at its last fetched tip, and in the same
    /// push moves the remote's tip record to that fetched tip (see `tips`); on success
    /// moves the local branch and the tracking ref. False when the push lost a race.
    fn publish(
        &self,
        repo: &Repository,
        name: &str,
        commit: Oid,
        base: Option<Oid>,
    ) -> Result<bool, StoreError> {
        let tracking = self.tracking_ref(name);
        let remote_tip = repo.refname_to_id(&tracking).ok();
        let record_ref = tip_record_ref(&self.cfg.branch);
        let recorded = repo.refname_to_id(&self.record_scratch(name)).ok();
        let record = remote_tip
            .filter(|tip| Some(*tip) != recorded)
            .map(|to| RecordMove {
                refname: &record_ref,
                from: recorded,
                to,
            });
        match self
            .target(name)
            .push(repo, &self.refname(), commit, remote_tip, record)
        {
            Ok(()) => {}
            Err(PushError::Rejected) => return Ok(false),
            Err(PushError::Failed(e)) => return Err(e),
        }
        locks::move_ref(repo, &tracking, || {
            repo.reference(&tracking, commit, true, "navin: pushed")
        })??;
        // The local branch only follows; nobody else should move it meanwhile.
        self.swap(repo, commit, base)?;
        Ok(true)
    }

    fn signature(&self, now: DateTime<Utc>) -> Result<Signature<'static>, StoreError> {
        let time = Time::new(now.timestamp(), 0);
        Ok(Signature::new(
            &self.cfg.committer_name,
            &self.cfg.committer_email,
            &time,
        )?)
    }

    fn write_commit(
        &self,
        repo: &Repository,
        base: Option<Oid>,
        applied: &ops::Applied,
        op: &Operation,
        ctx: &Ctx,
    ) -> Result<Oid, StoreError> {
        let (mission, board) = codec::encode(&applied.ledger)?;
        let mission_blob = repo.blob(&mission)?;
        let board_blob = repo.blob(&board)?;
        let parent = base.map(|oid| repo.find_commit(oid)).transpose()?;
        let base_tree = parent.as_ref().map(Commit::tree).transpose()?;
        let mission_path = format!("{BOARD_DIR}/{}", codec::MISSION_FILE);
        let board_path = format!("{BOARD_DIR}/{}", codec::BOARD_FILE);
        let tree_oid = tree::write_files(
            repo,
            base_tree.as_ref(),
            &[
                (mission_path.as_str(), mission_blob),
                (board_path.as_str(), board_blob),
            ],
        )?;
        let message = op_message::commit_message(applied, op, ctx);
        self.make_commit(repo, tree_oid, parent.as_ref(), &message, ctx.now)
    }

    /// Writes one commit of `tree` on `parent` (no ref moves), sealed when a key is
    /// configured: every commit Navin makes goes through here.
    fn make_commit(
        &self,
        repo: &Repository,
        tree: Oid,
        parent: Option<&Commit<'_>>,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<Oid, StoreError> {
        let sig = self.signature(now)?;
        let parent_ids: Vec<Oid> = parent.iter().map(|p| p.id()).collect();
        let message = match &self.cfg.seal_key {
            Some(key) => key.seal(&self.seal_scope(), tree, &parent_ids, message),
            None => message.to_owned(),
        };
        let tree = repo.find_tree(tree)?;
        let parents: Vec<&Commit<'_>> = parent.into_iter().collect();
        let commit = repo.commit(None, &sig, &sig, &message, &tree, &parents)?;
        read_back::read_back(repo, commit, parent.map(Commit::id))?;
        Ok(commit)
    }
}

/// Whether the commit holds a ledger at all: a branch may carry only plan records
/// (`/plan` before any mission), which is "no mission yet", not corruption.
fn has_ledger(repo: &Repository, oid: Oid) -> Result<bool, StoreError> {
    let tree = repo.find_commit(oid)?.tree()?;
    let present = |name: &str| {
        tree.get_path(Path::new(&format!("{BOARD_DIR}/{name}")))
            .is_ok()
    };
    Ok(present(codec::MISSION_FILE) || present(codec::BOARD_FILE))
}

fn read_ledger_at(repo: &Repository, oid: Oid) -> Result<Ledger, StoreError> {
    let commit = repo.find_commit(oid)?;
    let tree = commit.tree()?;
    let corrupt = |c: Corrupt| StoreError::Corrupt {
        commit: oid_str(oid),
        path: format!("{BOARD_DIR}/{}", c.file),
        field: c.field,
        message: c.message,
    };
    let mut files = Vec::with_capacity(2);
    for name in [codec::MISSION_FILE, codec::BOARD_FILE] {
        match tree::read_file(repo, &tree, &format!("{BOARD_DIR}/{name}"))? {
            Some(bytes) => files.push(bytes),
            None => {
                return Err(corrupt(Corrupt {
                    file: name.to_string(),
                    field: ".".to_string(),
                    message: "missing from the ledger branch".to_string(),
                }))
            }
        }
    }
    codec::decode(&files[0], &files[1]).map_err(corrupt)
}

/// Jittered exponential backoff: 1 ms doubling to a 64 ms ceiling, times a random factor.
fn backoff(attempt: u32) {
    let ceiling = 1u64 << attempt.min(6);
    let ms = rand::rng().random_range(0..=ceiling);
    std::thread::sleep(
        Duration::from_millis(ms) + Duration::from_micros(rand::rng().random_range(0..500)),
    );
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_refused;
#[cfg(test)]
mod tests_seal;
#[cfg(test)]
mod tests_tips;
