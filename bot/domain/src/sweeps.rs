//! The repositories whose missions need Navin's clock: remembered on disk as the engine sees live missions, listed by the server's sweeper.
//!
//! One small JSON file per repository under `<data dir>/sweeps/`, written atomically, so
//! a restarted server keeps sweeping the missions it knew. A file that does not parse
//! is skipped and logged, never fatal: the next event on that repository writes it anew.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where a sweep is sent: the installation and the repository as its last event gave it
/// (its default branch is where agent workflows are dispatched).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepTarget {
    pub installation: u64,
    pub full_name: String,
    pub id: Option<u64>,
    pub default_branch: Option<String>,
}

impl SweepTarget {
    /// The `navin_sweep` payload for this repository.
    pub fn payload(&self) -> serde_json::Value {
        serde_json::json!({
            "action": "tick",
            "installation": { "id": self.installation },
            "repository": {
                "full_name": self.full_name,
                "id": self.id,
                "default_branch": self.default_branch,
            },
        })
    }
}

/// The on-disk list of [`SweepTarget`]s, and the ledger version each repository's last
/// tick saw (in memory: after a restart the first tick refreshes the panel once).
#[derive(Debug, Clone)]
pub struct Sweeps {
    dir: PathBuf,
    seen: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, u64>>>,
}

impl Sweeps {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("sweeps"),
            seen: std::sync::Arc::default(),
        }
    }

    /// Whether `version` differs from the one the last tick on `full_name` saw, and
    /// remembers it. A ledger written outside the App (the agent workflow's usage job,
    /// an agent's MCP server pushing) then gets its panel refreshed by the next tick.
    pub fn moved(&self, full_name: &str, version: u64) -> bool {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.insert(full_name.to_ascii_lowercase(), version) != Some(version)
    }

    fn file(&self, full_name: &str) -> PathBuf {
        let safe: String = full_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '+'
                }
            })
            .collect();
        self.dir.join(format!("{safe}.json"))
    }

    /// Remembers `target` (its mission is live). Unchanged targets are not rewritten.
    pub fn remember(&self, target: SweepTarget) {
        let path = self.file(&target.full_name);
        if std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<SweepTarget>(&b).ok())
            .is_some_and(|old| old == target)
        {
            return;
        }
        if let Err(e) = self.write(&path, &target) {
            tracing::warn!(error = %e, repo = %target.full_name, "cannot remember the repository for sweeps");
        }
    }

    fn write(&self, path: &Path, target: &SweepTarget) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        serde_json::to_writer(&mut tmp, target)?;
        tmp.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Forgets `full_name` (its mission ended or its ledger is gone).
    pub fn forget(&self, full_name: &str) {
        let path = self.file(full_name);
        if let Err(e) = std::fs::remove_file(&path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(error = %e, repo = full_name, "cannot forget the repository for sweeps");
            }
        }
    }

    /// Every remembered repository, sorted by name.
    pub fn list(&self) -> Vec<SweepTarget> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<SweepTarget> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let bytes = std::fs::read(e.path()).ok()?;
                match serde_json::from_slice(&bytes) {
                    Ok(t) => Some(t),
                    Err(err) => {
                        tracing::warn!(error = %err, file = %e.path().display(), "unreadable sweep target skipped");
                        None
                    }
                }
            })
            .collect();
        out.sort_by(|a: &SweepTarget, b| a.full_name.cmp(&b.full_name));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(name: &str) -> SweepTarget {
        SweepTarget {
            installation: 3,
            full_name: name.into(),
            id: Some(7),
            default_branch: Some("trunk".into()),
        }
    }

    #[test]
    fn remembered_repositories_are_listed_until_forgotten_and_survive_a_restart() {
        let dir = tempfile::tempdir().expect("tmp");
        let sweeps = Sweeps::new(dir.path());
        sweeps.remember(repo("octo/b"));
        sweeps.remember(repo("octo/a"));
        sweeps.remember(repo("octo/a"));
        let again = Sweeps::new(dir.path());
        let names: Vec<String> = again.list().into_iter().map(|t| t.full_name).collect();
        assert_eq!(names, ["octo/a", "octo/b"]);
        let a = &again.list()[0];
        assert_eq!(a.payload()["repository"]["default_branch"], "trunk");
        assert_eq!(a.payload()["installation"]["id"], 3);
        again.forget("octo/a");
        assert_eq!(again.list().len(), 1);
        std::fs::write(dir.path().join("sweeps/broken.json"), "{").expect("write");
        assert_eq!(again.list().len(), 1, "a broken file is skipped");
    }

    #[test]
    fn a_tick_sees_a_ledger_move_once_per_version_and_per_repository() {
        let dir = tempfile::tempdir().expect("tmp");
        let sweeps = Sweeps::new(dir.path());
        assert!(
            sweeps.moved("octo/a", 7),
            "the first tick after a start refreshes"
        );
        assert!(!sweeps.moved("octo/a", 7));
        assert!(!sweeps.moved("Octo/A", 7), "names compare as GitHub does");
        assert!(sweeps.moved("octo/a", 8), "written by the usage job since");
        assert!(sweeps.moved("octo/b", 8));
        let clone = sweeps.clone();
        assert!(!clone.moved("octo/a", 8), "clones share what was seen");
    }
}
