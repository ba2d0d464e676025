//! Foreign commits and cut histories: a ledger commit Navin did not make that changes what proves a step (status, validation, commands, evidence, runs, attempts), or a version sequence with a gap, is refused, not built upon.
//!
//! Anyone who can push to the branch can edit both ledger files consistently, so reading
//! them alone cannot tell a forged `done` from a real one, and a committer named "Navin"
//! with Navin's trailers is as easy to forge. With a key configured, Navin's commits are
//! the ones its seal verifies on ([`super::seal`]); a sealed commit was written after
//! Navin vetted everything below it, so only the commits above the newest sealed one
//! need a look. A ledger with no seal anywhere (written before seals, or by a store
//! without a key) falls back to the committer and trailers.

use git2::{Oid, Repository};

use super::{has_ledger, oid_str, read_ledger_at, seal, Store, StoreError};
use crate::model::{Ledger, Task, TaskStatus};

/// The identities Navin's front ends commit as: the CLI, `navin mcp` and the Action
/// (`Navin`) and the App (`navin[bot]`) may all write one branch.
const NAVIN_COMMITTERS: [&str; 2] = ["Navin", "navin[bot]"];

/// The label of the vetted-tip note's MAC.
const VETTED_NOTE: &str = "navin vetted tip v1";

impl Store {
    /// Checks the commits from `tip` back to the newest sealed one or the last vetted
    /// tip, however many there are (a forged commit buried under any number of empty
    /// ones is still found), and remembers `tip` as vetted once it passes: in this
    /// process and in a note beside the repository, so the next process starts there.
    pub(super) fn vet(&self, repo: &Repository, tip: Oid) -> Result<(), StoreError> {
        let remembered = *self.vetted.lock().unwrap_or_else(|p| p.into_inner());
        let vetted = remembered.or_else(|| self.read_vetted_note(repo));
        if vetted.is_some_and(|(v, _)| v == tip) {
            return Ok(());
        }
        let key = self.cfg.seal_key.as_ref();
        let scope = self.seal_scope();
        let sealed = |oid: Oid| -> Result<bool, StoreError> {
            Ok(match key {
                Some(key) => key.verifies(&scope, &repo.find_commit(oid)?),
                None => false,
            })
        };
        let mut walk = repo.revwalk()?;
        walk.push(tip)?;
        // Above a vetted tip of a sealed ledger, an unsealed commit is foreign even if it
        // looks like Navin's, whether or not the vetted tip itself carried the seal (a
        // harmless foreign edit vetted first must not turn the check back to names).
        let mut found_seal = false;
        if let Some((v, was_sealed)) =
            vetted.filter(|(v, _)| repo.graph_descendant_of(tip, *v).unwrap_or(false))
        {
            walk.hide(v)?;
            found_seal = was_sealed;
        }
        let mut unsealed = Vec::new();
        for oid in walk {
            let oid = oid?;
            if sealed(oid)? {
                found_seal = true;
                break;
            }
            unsealed.push(oid);
        }
        // Oldest first, so the commit named is the first one to revert.
        for oid in unsealed.into_iter().rev() {
            let commit = repo.find_commit(oid)?;
            check_sequence(&commit)?;
            // Below no seal of ours (a ledger from before seals, or another writer's key,
            // as a CLI reading the App's ledger): Navin's commits are told by committer
            // and trailers.
            let navin = !found_seal && self.made_by_navin(&commit);
            // A commit that leaves the tree as it was changes nothing to vet.
            let same_tree = commit
                .parents()
                .next()
                .is_some_and(|p| p.tree_id() == commit.tree_id());
            if navin || same_tree {
                continue;
            }
            let change = match plan_record_change(repo, &commit)? {
                Some(change) => Some(change),
                None if has_ledger(repo, commit.id())? => {
                    let after = read_ledger_at(repo, commit.id())?;
                    let before = match commit.parents().next() {
                        Some(p) if has_ledger(repo, p.id())? => Some(read_ledger_at(repo, p.id())?),
                        _ => None,
                    };
                    protected_change(before.as_ref(), &after)
                }
                None => None,
            };
            if let Some(change) = change {
                // The commit below passed (everything older did), so it is a state
                // Navin trusts. When the tip holds nothing Navin alone records beyond
                // it, the refused commit was undone (reverted, or restored over by
                // `/rollback`) before anything was built on it.
                let below = commit.parent_id(0).ok();
                if below.is_some_and(|base| undone(repo, base, tip).unwrap_or(false)) {
                    break;
                }
                let by = commit
                    .committer()
                    .name()
                    .map_or_else(|_| "someone".to_owned(), str::to_owned);
                let trusted_version = match below {
                    Some(b) if has_ledger(repo, b)? => {
                        Some(read_ledger_at(repo, b)?.mission.version)
                    }
                    _ => None,
                };
                return Err(StoreError::Foreign {
                    commit: oid_str(commit.id()),
                    by,
                    change,
                    sealed_ledger: found_seal,
                    below: below.map(oid_str),
                    trusted_version,
                });
            }
        }
        *self.vetted.lock().unwrap_or_else(|p| p.into_inner()) = Some((tip, found_seal));
        self.write_vetted_note(repo, tip, found_seal);
        Ok(())
    }

    /// Where the last vetted tip of this branch is noted: inside the git directory,
    /// outside every ref (nothing fetched or pushed carries it).
    fn vetted_note_path(&self, repo: &Repository) -> std::path::PathBuf {
        let branch: String = self
            .cfg
            .branch
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        repo.path().join("navin").join(format!("vetted-{branch}"))
    }

    fn vetted_parts<'a>(&'a self, oid: &'a str, sealed: &'a str) -> [&'a [u8]; 4] {
        [
            self.cfg.repository.as_bytes(),
            self.cfg.branch.as_bytes(),
            oid.as_bytes(),
            sealed.as_bytes(),
        ]
    }

    /// The noted tip, when the note is there, names a commit this repository has, and
    /// (with a key) carries a MAC under it: a note anyone could write would let them
    /// skip the check of what lies below it. Anything else is no note: everything is
    /// vetted again.
    fn read_vetted_note(&self, repo: &Repository) -> Option<(Oid, bool)> {
        let text = std::fs::read_to_string(self.vetted_note_path(repo)).ok()?;
        let mut words = text.split_whitespace();
        let (oid, sealed, tag) = (words.next()?, words.next()?, words.next()?);
        let authentic = match &self.cfg.seal_key {
            Some(key) => key.tag_matches(VETTED_NOTE, &self.vetted_parts(oid, sealed), tag),
            None => tag == "-",
        };
        if !authentic {
            return None;
        }
        let oid = Oid::from_str(oid).ok()?;
        repo.find_commit(oid).ok()?;
        Some((oid, sealed == "sealed"))
    }

    /// Notes `tip` as vetted. Best effort: without the note the next process vets again.
    fn write_vetted_note(&self, repo: &Repository, tip: Oid, found_seal: bool) {
        let oid = tip.to_string();
        let sealed = if found_seal { "sealed" } else { "unsealed" };
        let tag = match &self.cfg.seal_key {
            Some(key) => key.tag(VETTED_NOTE, &self.vetted_parts(&oid, sealed)),
            None => "-".to_owned(),
        };
        let path = self.vetted_note_path(repo);
        let write = || -> std::io::Result<()> {
            let dir = path.parent().unwrap_or(repo.path());
            std::fs::create_dir_all(dir)?;
            // Written whole, then renamed over the old note: a crash leaves one or the other.
            let partial = dir.join(format!(".vetted-{}", std::process::id()));
            std::fs::write(&partial, format!("{oid} {sealed} {tag}\n"))?;
            std::fs::rename(&partial, &path)
        };
        if let Err(e) = write() {
            tracing::debug!(error = %e, "could not note the vetted ledger tip");
        }
    }

    /// Whether the ledger's newest sealed commit was sealed with a key this store does
    /// not hold (the App's, read by an agent's `navin mcp`): then what this store would
    /// record as proof of a step, the ledger's owner refuses. `false` for a ledger
    /// without seals, or sealed with this store's own key.
    pub fn sealed_by_another_key(&self) -> Result<bool, StoreError> {
        let repo = self.repo()?;
        let Some(tip) = self.reader_tip(&repo)? else {
            return Ok(false);
        };
        let mut walk = repo.revwalk()?;
        walk.push(tip)?;
        for oid in walk {
            let commit = repo.find_commit(oid?)?;
            if !commit.message().is_ok_and(seal::has_seal_line) {
                continue;
            }
            return Ok(!self
                .cfg
                .seal_key
                .as_ref()
                .is_some_and(|key| key.verifies(&self.seal_scope(), &commit)));
        }
        Ok(false)
    }

    /// A store that pushes, has no key, and finds the branch's tip sealed: refused before
    /// anything is written ([`StoreError::KeylessOnSealed`]). Only the tip is read: a
    /// sealed ledger's writers all seal, so its tip carries a seal unless it is already
    /// refused as foreign. A store that never pushes (an agent's `navin mcp` on a fetched
    /// ledger, whose writes are journaled and replayed by a job that has the key) writes.
    pub(super) fn refuse_keyless_on_sealed(
        &self,
        repo: &Repository,
        tip: Option<Oid>,
    ) -> Result<(), StoreError> {
        let (Some(tip), None, Some(_)) = (tip, &self.cfg.seal_key, &self.cfg.remote) else {
            return Ok(());
        };
        let commit = repo.find_commit(tip)?;
        if commit.message().is_ok_and(seal::has_seal_line) {
            return Err(StoreError::KeylessOnSealed {
                branch: self.cfg.branch.clone(),
            });
        }
        Ok(())
    }

    fn made_by_navin(&self, commit: &git2::Commit<'_>) -> bool {
        let committer = commit.committer();
        let name = committer.name().unwrap_or_default();
        (NAVIN_COMMITTERS.contains(&name) || name == self.cfg.committer_name)
            && commit
                .message()
                .is_ok_and(|m| m.contains("\nNavin-Operation: ") || m.contains("\nNavin-Plan: "))
    }
}

/// Whether `tip` holds nothing Navin alone records that `base` (a trusted commit below
/// it) does not: the same plan records, and no protected change to the ledger. Then the
/// commits between, a forged one among them, were undone before anything was built on
/// them, and the tip is as safe to read as one harmless commit on `base` would be.
fn undone(repo: &Repository, base: Oid, tip: Oid) -> Result<bool, StoreError> {
    let (base_commit, tip_commit) = (repo.find_commit(base)?, repo.find_commit(tip)?);
    let mut options = git2::DiffOptions::new();
    options.pathspec(super::PLANS_DIR);
    let diff = repo.diff_tree_to_tree(
        Some(&base_commit.tree()?),
        Some(&tip_commit.tree()?),
        Some(&mut options),
    )?;
    let plan_records_moved = diff.deltas().any(|d| {
        d.new_file()
            .path()
            .or_else(|| d.old_file().path())
            .and_then(|p| p.to_str())
            .is_some_and(|p| p.ends_with(".json"))
    });
    if plan_records_moved {
        return Ok(false);
    }
    Ok(match (has_ledger(repo, base)?, has_ledger(repo, tip)?) {
        (true, true) => {
            let before = read_ledger_at(repo, base)?;
            protected_change(Some(&before), &read_ledger_at(repo, tip)?).is_none()
        }
        (false, false) => true,
        _ => false,
    })
}

/// How far back along first parents the previous version is looked for (plan commits
/// carry none).
pub(super) const SEQUENCE_LOOKBACK: usize = 200;

/// A commit's `Navin-Version` trailer.
pub(super) fn version_of(commit: &git2::Commit<'_>) -> Option<u64> {
    commit
        .message()
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Navin-Version: ")?.trim().parse().ok())
}

/// Every change bumps the version by one, across replaces and rollbacks, so a commit
/// whose version is not one more than the previous versioned commit's means versions
/// were cut out or rewritten.
fn check_sequence(commit: &git2::Commit<'_>) -> Result<(), StoreError> {
    let Some(version) = version_of(commit) else {
        return Ok(());
    };
    let mut parent = commit.parent(0).ok();
    for _ in 0..SEQUENCE_LOOKBACK {
        let Some(p) = parent else {
            return Ok(());
        };
        if let Some(previous) = version_of(&p) {
            if version != previous + 1 {
                return Err(StoreError::VersionGap {
                    commit: oid_str(commit.id()),
                    version,
                    previous,
                });
            }
            return Ok(());
        }
        parent = p.parent(0).ok();
    }
    Ok(())
}

/// The first plan record (or the auto-accept count) `commit` adds, changes or removes
/// under [`super::PLANS_DIR`]: every change to them is a decision (an approval, a
/// rejection, a new text's hash, the op ids applied), which only Navin records. Plan
/// texts (`.md`) are not: a hand edit of one no longer matches its record's hash and is
/// reported as such.
fn plan_record_change(
    repo: &Repository,
    commit: &git2::Commit<'_>,
) -> Result<Option<String>, StoreError> {
    let tree = commit.tree()?;
    let parent_tree = match commit.parents().next() {
        Some(p) => Some(p.tree()?),
        None => None,
    };
    let mut options = git2::DiffOptions::new();
    options.pathspec(super::PLANS_DIR);
    let diff = repo.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut options))?;
    Ok(diff.deltas().find_map(|delta| {
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())?;
        let path = path.to_str()?;
        path.ends_with(".json")
            .then(|| format!("changes the plan record {path}"))
    }))
}

/// What `after` changes, against `before`, in what proves a step, in words naming the
/// step; `None` when a commit only touched what people and agents may change without
/// proof (titles, descriptions, facts, starting or failing a step). A step added as done,
/// or with evidence or attempts, counts; so does a step removed (a failing step deleted
/// is a step passed).
pub(crate) fn protected_change(before: Option<&Ledger>, after: &Ledger) -> Option<String> {
    if let Some(what) = before.and_then(|b| mission_change(b, after)) {
        return Some(format!("changes the mission's {what}"));
    }
    for task in &after.board.tasks {
        let id = &task.id;
        let Some(old) = before.and_then(|b| b.board.task(id)) else {
            if task.status == TaskStatus::Done {
                return Some(format!("adds {id} as done"));
            }
            if !task.evidence.is_empty() || !task.attempts.is_empty() {
                return Some(format!("adds {id} with evidence or attempts"));
            }
            continue;
        };
        if status_proves(old.status, task.status) {
            return Some(format!("marks {id} {}", task.status.as_str()));
        }
        if let Some(what) = changed_field(old, task) {
            return Some(format!("changes {id}'s {what}"));
        }
    }
    let removed = before?
        .board
        .tasks
        .iter()
        .find(|t| after.board.task(&t.id).is_none())?;
    Some(format!("removes {}", removed.id))
}

/// The first mission-level field an unsealed commit may not change: what the mission is
/// for and what it may spend (goal, constraints, facts, acceptance criteria, budgets and
/// what was spent against them) and its status. Two status moves pass: the running ⇄
/// blocked swing the ledger recomputes after every operation (starting or failing a
/// step moves it), and a pause, which only stops work (an agent's question pauses the
/// mission from a job that holds no key). Resuming, closing and reopening do not.
fn mission_change(before: &Ledger, after: &Ledger) -> Option<&'static str> {
    use crate::model::MissionStatus::{Blocked, Paused, Running};
    let (old, new) = (&before.mission, &after.mission);
    let pausing = matches!((old.status, new.status), (Running | Blocked, Paused));
    let status_moved = old.status != new.status
        && !pausing
        && !matches!(
            (old.status, new.status),
            (Running, Blocked) | (Blocked, Running)
        );
    let (op, np) = (&old.progress, &new.progress);
    let fields: [(&'static str, bool); 10] = [
        ("status", status_moved),
        ("goal", old.goal != new.goal),
        ("constraints", old.constraints != new.constraints),
        ("facts", old.facts != new.facts),
        (
            "acceptance criteria",
            old.acceptance_criteria != new.acceptance_criteria,
        ),
        ("budget", op.budget != np.budget),
        (
            "spend",
            np.tokens_used < op.tokens_used
                || np.cost_used_usd < op.cost_used_usd
                || np.replan_count < op.replan_count,
        ),
        (
            "pause",
            !pausing && (old.pause_reason != new.pause_reason || old.paused_by != new.paused_by),
        ),
        ("origin", old.origin != new.origin),
        ("validation commands", old.commands != new.commands),
    ];
    fields
        .into_iter()
        .find(|(_, differs)| *differs)
        .map(|(name, _)| name)
}

/// Whether a status change is one only proof may make: into `done`, or out of `done` or
/// `failed` (a failure undone is a retry the budget did not pay for). Starting a step,
/// handing it back, and failing it are what agents and people do all day.
fn status_proves(old: TaskStatus, new: TaskStatus) -> bool {
    old != new && (new == TaskStatus::Done || old == TaskStatus::Done || old == TaskStatus::Failed)
}

/// The first field of a step that proves it which changed in a way only Navin may change
/// it. What an agent's or a person's own operations do without proof passes: a prose note
/// appended to the evidence, an attempt opened or the open one ended, a failure counted.
/// Everything else (a changed validation or command list, evidence edited, removed or
/// appended other than prose, a closed attempt rewritten or removed, a retry budget
/// raised or a failure count lowered, a CI round) does not.
fn changed_field(old: &Task, new: &Task) -> Option<&'static str> {
    let evidence_ok = new.evidence.len() >= old.evidence.len()
        && new.evidence[..old.evidence.len()] == old.evidence[..]
        && new.evidence[old.evidence.len()..]
            .iter()
            .all(|e| e.kind == crate::model::EvidenceKind::Prose);
    let closed = old.attempts.iter().take_while(|a| !a.is_open()).count();
    let attempts_ok = new.attempts.len() >= old.attempts.len()
        && new.attempts[..closed] == old.attempts[..closed];
    let fields: [(&'static str, bool); 9] = [
        ("validation", old.validation != new.validation),
        ("base commit", old.base != new.base && old.base.is_some()),
        ("scope", old.scope != new.scope),
        ("fail_to_pass", old.fail_to_pass != new.fail_to_pass),
        ("verification commands", old.commands != new.commands),
        ("evidence and run records", !evidence_ok),
        ("attempts", !attempts_ok),
        (
            "retry budget",
            new.retry_count < old.retry_count || old.max_retries != new.max_retries,
        ),
        ("CI round", old.ci_round != new.ci_round),
    ];
    fields
        .into_iter()
        .find(|(_, differs)| *differs)
        .map(|(name, _)| name)
}
