//! Whether the ledger branch is protected against rewrites, read through the branch and rules APIs and cached briefly per repository, for the panel's warning.
//!
//! Navin detects a rewritten or forged ledger after the fact (seen records, checkpoints,
//! foreign commits); protection stops it before. The read needs no admin access:
//! `GET /branches/{b}` says `protected` (classic protection) and `GET /rules/branches/{b}`
//! lists ruleset rules. Which actors may bypass them is admin-only, so this says whether
//! the branch is guarded at all, not who may still push.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use navin_github::{ops, GitHubError, InstallationClient};

/// Rule types that stop a rewrite (or any push but a bypass actor's).
const GUARDING_RULES: [&str; 2] = ["non_fast_forward", "update"];

#[derive(Debug, serde::Deserialize)]
struct Branch {
    #[serde(default)]
    protected: bool,
}

#[derive(Debug, serde::Deserialize)]
struct Rule {
    #[serde(rename = "type", default)]
    kind: String,
}

/// (repository, branch) → the warning (or none) and when it was read.
type Seen = HashMap<(String, String), (Option<String>, Instant)>;

/// The panel warning for an unguarded ledger branch, by repository and branch.
#[derive(Debug)]
pub struct ProtectionCache {
    ttl: Duration,
    seen: Mutex<Seen>,
}

impl ProtectionCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The warning to show, or `None` when the branch is guarded, does not exist yet, or
    /// cannot be read (then the log says why; the panel is not the place to guess).
    pub async fn notice(
        &self,
        client: &InstallationClient,
        repo: &str,
        branch: &str,
    ) -> Option<String> {
        let key = (repo.to_ascii_lowercase(), branch.to_owned());
        if let Some((notice, at)) = self.lock().get(&key) {
            if at.elapsed() < self.ttl {
                return notice.clone();
            }
        }
        let notice = match check(client, repo, branch).await {
            Ok(notice) => notice,
            Err(e) => {
                tracing::info!(repo, branch, error = %e, "cannot tell whether the ledger branch is protected");
                None
            }
        };
        self.lock().insert(key, (notice.clone(), Instant::now()));
        notice
    }

    /// Drops every branch of `repo`: the App lost access to it.
    pub fn forget(&self, repo: &str) {
        let repo = repo.to_ascii_lowercase();
        self.lock().retain(|(r, _), _| *r != repo);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

async fn check(
    client: &InstallationClient,
    repo: &str,
    branch: &str,
) -> Result<Option<String>, GitHubError> {
    let found: Branch = match client.get_json(&ops::branch(repo, branch)).await {
        Ok(b) => b,
        Err(e) if e.status() == Some(404) => return Ok(None),
        Err(e) => return Err(e),
    };
    if found.protected {
        return Ok(None);
    }
    let rules: Vec<Rule> = client.get_json(&ops::branch_rules(repo, branch)).await?;
    if rules
        .iter()
        .any(|r| GUARDING_RULES.contains(&r.kind.as_str()))
    {
        return Ok(None);
    }
    Ok(Some(format!(
        "The ledger branch `{branch}` is not protected: anyone who can push to this repository can rewrite or forge the mission's history (Navin refuses what it detects, after the fact). Add a ruleset for `{branch}` that blocks force pushes and deletions and restricts updates, with Navin as the only bypass."
    )))
}
