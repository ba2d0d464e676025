//! Runs a step's command on the step's base commit, in a temporary tree, and holds the head's run against it.
//!
//! A red run says only that something fails; whether the change made it fail is the
//! question a step's proof must answer. So the same command runs on the commit the step
//! started from: a test failing there too is not the change's fault (reported, not
//! blocking), a test failing only on the head is a regression, and a test passing only
//! on the head is what the change repaired or added (recorded by id).
//!
//! The base's tree is written out of the object database into a temporary directory
//! (`$TMPDIR/navin-base-trees/<repository>/<pid>-<n>-<base>`), never a worktree the
//! repository tracks, and removed when the run ends; a directory left by a process that
//! died is swept by the next verify. Dependency directories the checkout keeps untracked (`node_modules`,
//! `.venv`, `venv`, `target`) are linked in, so the base runs with the same installed
//! tools. The result is cached per (repository, base, command) under the git directory
//! with a MAC under the ledger's key, so whoever can write `.git` cannot plant a base
//! that "failed already" on the test they broke.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use git2::{ObjectType, Oid, Repository, TreeWalkMode, TreeWalkResult};
use navin_ledger::model::BaseRun;
use navin_ledger::store::SealKey;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::results::{self, Runner, TestReport};
use crate::{run_bounded, RunError};

/// At most this many ids of each kind are recorded: a base with thousands of failing
/// tests must not make every run record megabytes long.
pub const MAX_IDS: usize = 100;

/// Untracked directories of the checkout linked into the base's tree: where projects
/// keep installed dependencies and build caches that the command expects to find.
pub const LINKED_DIRS: [&str; 4] = ["node_modules", ".venv", "venv", "target"];

const CACHE_LABEL: &str = "navin base run v1";

/// Why the base could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    #[error("the base commit {base} is not in this repository (force-pushed away, or not fetched); fetch it, or start the step again from the current HEAD")]
    Missing { base: String },
    #[error("cannot write the base commit {base}'s files to {dir}: {source}")]
    Write {
        base: String,
        dir: String,
        source: std::io::Error,
    },
    #[error("cannot read the base commit {base}: {source}")]
    Git { base: String, source: git2::Error },
}

/// How a command ended on the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseOutcome {
    pub base: String,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub output_sha256: String,
    /// The runner's output read test by test, when it could be.
    pub report: Option<TestReport>,
    /// Read from the cache rather than run now.
    pub cached: bool,
}

/// Where a repository's base runs are kept and how they are authenticated.
#[derive(Debug)]
pub struct BaseRuns<'a> {
    git_dir: PathBuf,
    checkout: PathBuf,
    /// Authenticates cached results; without a key nothing is cached or read back.
    key: Option<&'a SealKey>,
    repository: String,
}

impl<'a> BaseRuns<'a> {
    /// Base runs for the repository whose git directory is `git_dir` and whose working
    /// tree is `checkout`; `repository` names it in the cache's MAC (the seal's name).
    pub fn new(
        git_dir: &Path,
        checkout: &Path,
        key: Option<&'a SealKey>,
        repository: &str,
    ) -> Self {
        Self {
            git_dir: git_dir.to_owned(),
            checkout: checkout.to_owned(),
            key,
            repository: repository.to_owned(),
        }
    }

    /// Outside the repository: runners skip anything under a `.git` directory (jest
    /// finds no tests there), and a tree inside the checkout would be crawled by the
    /// head's own run. One directory per repository, so a sweep touches only its own.
    pub fn trees(&self) -> PathBuf {
        let id = hex::encode(Sha256::digest(self.git_dir.as_os_str().as_encoded_bytes()));
        std::env::temp_dir()
            .join("navin-base-trees")
            .join(&id[..16])
    }

    fn cache_dir(&self) -> PathBuf {
        self.git_dir.join("navin").join("base-runs")
    }

    /// Removes base trees whose process is gone (a verify that crashed or was
    /// killed). Best effort: what cannot be removed now is tried again next time.
    pub fn sweep(&self) {
        let Ok(entries) = std::fs::read_dir(self.trees()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.split('-').next())
                .and_then(|p| p.parse::<i32>().ok());
            let alive = pid
                .and_then(rustix::process::Pid::from_raw)
                .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok());
            if !alive {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    /// `argv` as run on `base`: from the cache when an authentic entry is there, else
    /// run now in a temporary tree of `base` (within `timeout`) and cached. A program
    /// that cannot be started is a base run that failed with no output read.
    pub fn run(
        &self,
        repo: &Repository,
        base: &str,
        argv: &[String],
        timeout: Duration,
    ) -> Result<BaseOutcome, BaseError> {
        let missing = || BaseError::Missing {
            base: base.to_owned(),
        };
        let oid = Oid::from_str(base).map_err(|_| missing())?;
        let commit = repo.find_commit(oid).map_err(|_| missing())?;
        if let Some(hit) = self.cached(base, argv) {
            return Ok(hit);
        }
        let tree_dir = Scratch::create(&self.trees(), base)?;
        write_tree(repo, &commit, tree_dir.path()).map_err(|e| match e {
            WriteError::Io(source) => BaseError::Write {
                base: base.to_owned(),
                dir: tree_dir.path().display().to_string(),
                source,
            },
            WriteError::Git(source) => BaseError::Git {
                base: base.to_owned(),
                source,
            },
        })?;
        self.link_dependencies(&commit, tree_dir.path());
        let (output, exit_code, timed_out, ran) = match run_bounded(argv, tree_dir.path(), timeout)
        {
            Ok(ran) => (ran.output, ran.exit_code, ran.timed_out, true),
            Err(RunError::Spawn { program, source }) => (
                format!("navin: {program} could not be started: {source}\n").into_bytes(),
                None,
                false,
                false,
            ),
            Err(e) => (format!("navin: {e}\n").into_bytes(), None, false, false),
        };
        drop(tree_dir);
        let outcome = BaseOutcome {
            base: base.to_owned(),
            exit_code,
            timed_out,
            output_sha256: hex::encode(Sha256::digest(&output)),
            report: results::parse(&String::from_utf8_lossy(&output)),
            cached: false,
        };
        // A run cut short by its time limit or one that never started says nothing
        // lasting about the base: run it again next time.
        if ran && !timed_out {
            self.store(argv, &outcome);
        }
        Ok(outcome)
    }

    /// Links the checkout's untracked dependency directories into the base's tree.
    fn link_dependencies(&self, commit: &git2::Commit<'_>, tree_dir: &Path) {
        let tree = commit.tree().ok();
        let tracked = |name: &str| tree.as_ref().is_some_and(|t| t.get_name(name).is_some());
        for name in LINKED_DIRS {
            let from = self.checkout.join(name);
            if from.is_dir() && !tracked(name) && !tree_dir.join(name).exists() {
                let _ = std::os::unix::fs::symlink(&from, tree_dir.join(name));
            }
        }
    }

    fn cache_path(&self, base: &str, argv: &[String]) -> PathBuf {
        let mut hash = Sha256::new();
        for part in std::iter::once(self.repository.as_str())
            .chain(std::iter::once(base))
            .chain(argv.iter().map(String::as_str))
        {
            hash.update((part.len() as u64).to_be_bytes());
            hash.update(part.as_bytes());
        }
        self.cache_dir()
            .join(format!("{}.json", hex::encode(hash.finalize())))
    }

    fn cached(&self, base: &str, argv: &[String]) -> Option<BaseOutcome> {
        let key = self.key?;
        let text = std::fs::read_to_string(self.cache_path(base, argv)).ok()?;
        let (tag, body) = text.split_once('\n')?;
        if !key.tag_matches(
            CACHE_LABEL,
            &[self.repository.as_bytes(), body.as_bytes()],
            tag,
        ) {
            // Not written under this key: whoever wrote it, it is not used.
            return None;
        }
        let entry: CacheEntry = serde_json::from_str(body).ok()?;
        if entry.base != base || entry.command != argv {
            return None;
        }
        Some(BaseOutcome {
            base: entry.base,
            exit_code: entry.exit_code,
            timed_out: false,
            output_sha256: entry.output_sha256,
            report: entry.runner.and_then(|r| {
                Some(TestReport {
                    runner: Runner::from_name(&r)?,
                    passed: entry.passed.into_iter().collect(),
                    failed: entry.failed.into_iter().collect(),
                    counts: None,
                    first_failure: None,
                })
            }),
            cached: true,
        })
    }

    fn store(&self, argv: &[String], outcome: &BaseOutcome) {
        let Some(key) = self.key else {
            return;
        };
        let entry = CacheEntry {
            base: outcome.base.clone(),
            command: argv.to_vec(),
            exit_code: outcome.exit_code,
            output_sha256: outcome.output_sha256.clone(),
            runner: outcome.report.as_ref().map(|r| r.runner.name().to_owned()),
            passed: outcome
                .report
                .as_ref()
                .map(|r| r.passed.iter().cloned().collect())
                .unwrap_or_default(),
            failed: outcome
                .report
                .as_ref()
                .map(|r| r.failed.iter().cloned().collect())
                .unwrap_or_default(),
        };
        let Ok(body) = serde_json::to_string(&entry) else {
            return;
        };
        let tag = key.tag(CACHE_LABEL, &[self.repository.as_bytes(), body.as_bytes()]);
        let path = self.cache_path(&outcome.base, argv);
        let write = || -> std::io::Result<()> {
            let dir = self.cache_dir();
            std::fs::create_dir_all(&dir)?;
            let partial = dir.join(format!(".partial-{}", std::process::id()));
            std::fs::write(&partial, format!("{tag}\n{body}"))?;
            std::fs::rename(&partial, &path)
        };
        let _ = write();
    }
}

/// A cached base run: what the verdict needs, not the output itself.
#[derive(Serialize, Deserialize)]
struct CacheEntry {
    base: String,
    command: Vec<String>,
    exit_code: Option<i32>,
    output_sha256: String,
    runner: Option<String>,
    passed: Vec<String>,
    failed: Vec<String>,
}

/// Holds the head's run (`head`, read test by test when it could be) against `base`.
/// Test by test only when both outputs were read by the same runner and name tests
/// (a bare `N passed, N failed` line names none); otherwise `runner` is `None` and the
/// verdict is the head's exit code.
pub fn hold(head: Option<&TestReport>, base: &BaseOutcome) -> BaseRun {
    let named = |r: &&TestReport| r.runner != Runner::Generic;
    let both = head
        .filter(named)
        .zip(base.report.as_ref().filter(named))
        .filter(|(h, b)| h.runner == b.runner);
    let mut record = BaseRun {
        base: base.base.clone(),
        exit_code: base.exit_code,
        output_sha256: base.output_sha256.clone(),
        cached: base.cached,
        runner: None,
        new_failures: Vec::new(),
        pre_existing: Vec::new(),
        fail_to_pass: Vec::new(),
    };
    if let Some((h, b)) = both {
        let c = results::compare(b, h);
        let first = |s: std::collections::BTreeSet<String>| s.into_iter().take(MAX_IDS).collect();
        record.runner = Some(h.runner.name().to_owned());
        record.new_failures = first(c.new_failures);
        record.pre_existing = first(c.pre_existing);
        record.fail_to_pass = first(c.fail_to_pass);
    }
    record
}

/// What the base run adds to a run's one-line summary.
pub fn describe(record: &BaseRun) -> String {
    let base = &record.base[..record.base.len().min(12)];
    let cached = if record.cached { ", cached" } else { "" };
    let Some(runner) = &record.runner else {
        let on_base = match record.exit_code {
            Some(0) => "passes on the base".to_owned(),
            Some(c) => format!("exits {c} on the base too"),
            None => "did not finish on the base".to_owned(),
        };
        return format!(
            "; {on_base} ({base}{cached}); its output could not be read test by test, so the verdict is the exit code"
        );
    };
    let mut parts = Vec::new();
    if !record.new_failures.is_empty() {
        parts.push(format!(
            "{} new failure(s): {}",
            record.new_failures.len(),
            shown(&record.new_failures)
        ));
    }
    if !record.pre_existing.is_empty() {
        parts.push(format!(
            "{} failing on the base already: {}",
            record.pre_existing.len(),
            shown(&record.pre_existing)
        ));
    }
    if !record.fail_to_pass.is_empty() {
        parts.push(format!(
            "{} fail-to-pass: {}",
            record.fail_to_pass.len(),
            shown(&record.fail_to_pass)
        ));
    }
    if parts.is_empty() {
        parts.push("no test changed outcome".to_owned());
    }
    format!(
        "; against base {base} ({runner}{cached}): {}",
        parts.join("; ")
    )
}

fn shown(ids: &[String]) -> String {
    let more = ids.len().saturating_sub(3);
    let mut out = ids
        .iter()
        .take(3)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if more > 0 {
        out.push_str(&format!(" and {more} more"));
    }
    out
}

/// A directory for one base tree, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn create(parent: &Path, base: &str) -> Result<Self, BaseError> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = parent.join(format!(
            "{}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            &base[..base.len().min(12)]
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|source| BaseError::Write {
            base: base.to_owned(),
            dir: dir.display().to_string(),
            source,
        })?;
        Ok(Self(dir))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

enum WriteError {
    Io(std::io::Error),
    Git(git2::Error),
}

/// Writes `commit`'s files into `dir` as git would check them out: executables with
/// their mode, symbolic links as links, submodules as empty directories.
fn write_tree(repo: &Repository, commit: &git2::Commit<'_>, dir: &Path) -> Result<(), WriteError> {
    let tree = commit.tree().map_err(WriteError::Git)?;
    let mut failure: Option<WriteError> = None;
    let walked = tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
        let Ok(name) = entry.name() else {
            return TreeWalkResult::Skip;
        };
        let path = dir.join(parent).join(name);
        let result = match entry.kind() {
            Some(ObjectType::Tree) => std::fs::create_dir_all(&path).map_err(WriteError::Io),
            Some(ObjectType::Blob) => write_blob(repo, entry.id(), entry.filemode(), &path),
            // A submodule: its commit is another repository's.
            Some(ObjectType::Commit) => std::fs::create_dir_all(&path).map_err(WriteError::Io),
            _ => Ok(()),
        };
        match result {
            Ok(()) => TreeWalkResult::Ok,
            Err(e) => {
                failure = Some(e);
                TreeWalkResult::Abort
            }
        }
    });
    match failure {
        Some(f) => Err(f),
        None => walked.map_err(WriteError::Git),
    }
}

fn write_blob(repo: &Repository, id: Oid, mode: i32, path: &Path) -> Result<(), WriteError> {
    use std::os::unix::fs::PermissionsExt as _;
    let blob = repo.find_blob(id).map_err(WriteError::Git)?;
    if mode == 0o120000 {
        let target = String::from_utf8_lossy(blob.content()).into_owned();
        return std::os::unix::fs::symlink(target, path).map_err(WriteError::Io);
    }
    std::fs::write(path, blob.content()).map_err(WriteError::Io)?;
    if mode == 0o100755 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .map_err(WriteError::Io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
