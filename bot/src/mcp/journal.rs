//! `navin mcp --journal FILE`: each write that landed, one JSON line, for a later job to replay on the real ledger.
//!
//! In the agent workflow the agent's job holds no token that can push the ledger
//! branch, so its writes stay in the job's checkout. The journal carries them out (the
//! job uploads it) and the Action's `progress` mode replays what an agent may report.
//! A line is written only after its write landed, and carries the write's op key, so a
//! replay applies each once however often the job that replays it is re-run.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;

use navin_ledger::Actor;
use serde_json::{json, Value};

/// An append-only journal file.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    lock: Mutex<()>,
}

impl Journal {
    /// Creates the file (and its directory) if missing; an existing journal is appended to.
    pub fn open(path: PathBuf) -> Result<Self, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("cannot open the journal {}: {e}", path.display()))?;
        Ok(Self {
            path,
            lock: Mutex::new(()),
        })
    }

    /// Appends one write. A failure is logged: the write itself has landed.
    pub fn record(&self, tool: &str, args: &Value, key: &str, actor: &Actor) {
        let line = json!({ "tool": tool, "args": args, "key": key, "actor": actor.to_string() });
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let written = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            tracing::warn!(error = %e, path = %self.path.display(), tool, "cannot append to the MCP journal");
        }
    }
}
