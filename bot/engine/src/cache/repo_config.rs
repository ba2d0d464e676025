//! `.github/navin.yml` from the default branch, read through the contents API and cached briefly per repository.

use base64::Engine as _;
pub use navin_domain::config::CONFIG_PATH;
use navin_domain::config::{parse_repo_config, RepoConfig};
use navin_github::ops;
use navin_github::{GitHubError, InstallationClient};
use navin_ledger::Budget;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Entry = (Result<Arc<RepoConfig>, String>, Instant);

/// Parsed configs (or the parse error, which names line, column and key) by repository.
#[derive(Debug)]
pub struct RepoConfigCache {
    ttl: Duration,
    configs: Mutex<HashMap<String, Entry>>,
}

impl RepoConfigCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            configs: Mutex::new(HashMap::new()),
        }
    }

    /// The repository's config: defaults when the file is absent, `Err(message)` when it
    /// is invalid (nothing of it is used then).
    pub async fn get(
        &self,
        client: &InstallationClient,
        repo: &str,
    ) -> Result<Result<Arc<RepoConfig>, String>, GitHubError> {
        let key = repo.to_ascii_lowercase();
        if let Some((config, at)) = self.lock().get(&key) {
            if at.elapsed() < self.ttl {
                return Ok(config.clone());
            }
        }
        let path = ops::contents(repo, CONFIG_PATH, None);
        let config = match client.get_json::<serde_json::Value>(&path).await {
            Ok(file) => off_workers(move || parse_file(&file))
                .await
                .unwrap_or_else(|| Err(too_slow())),
            Err(e) if e.status() == Some(404) => Ok(Arc::new(RepoConfig::default())),
            Err(e) => return Err(e),
        };
        self.lock().insert(key, (config.clone(), Instant::now()));
        Ok(config)
    }

    /// Drops `repo`'s entry: the App lost access to it (uninstalled or deselected).
    pub fn forget(&self, repo: &str) {
        self.lock().remove(&repo.to_ascii_lowercase());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.configs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Longest a repository's config may take to parse. The size and depth limits make a
/// slow file unlikely; the deadline bounds what one could cost anyway.
pub const PARSE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `work` (parsing a file anyone with push access wrote) on a blocking thread, so
/// it never holds an async worker, and gives up on it after [`PARSE_DEADLINE`].
pub(crate) async fn off_workers<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    match tokio::time::timeout(PARSE_DEADLINE, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(done)) => Some(done),
        _ => None,
    }
}

/// Why a config that missed [`PARSE_DEADLINE`] is refused.
pub(crate) fn too_slow() -> String {
    format!(
        "{CONFIG_PATH} took longer than {} s to parse; simplify it (fewer anchors and aliases, less nesting)",
        PARSE_DEADLINE.as_secs()
    )
}

fn parse_file(file: &serde_json::Value) -> Result<Arc<RepoConfig>, String> {
    let packed: String = file["content"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(packed)
        .map_err(|e| format!("{CONFIG_PATH}: the contents API sent undecodable base64: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|_| format!("{CONFIG_PATH} is not UTF-8"))?;
    parse_repo_config(&text)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The mission budget a repository's config sets.
pub fn budget(config: &RepoConfig) -> Budget {
    config.budgets.to_budget()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn required_checks_and_budgets_come_from_the_config() {
        let config = parse_repo_config(
            "evidence:\n  required_checks:\n    test: [ci/test]\nbudgets:\n  max_retries: 1\n  max_cost_usd: 2.5\n",
        )
        .unwrap();
        let policy = navin_domain::evidence::policy_from(&config);
        assert_eq!(
            policy.required_for(navin_ledger::Validation::Test),
            ["ci/test".to_owned()]
        );
        assert!(policy
            .required_for(navin_ledger::Validation::Lint)
            .is_empty());
        assert_eq!(policy.trusted_app_ids, [15368]);
        let budget = budget(&config);
        assert_eq!(budget.max_retries, 1);
        assert_eq!(budget.max_cost_usd, Some(2.5));
    }

    #[test]
    fn an_invalid_file_is_an_error_naming_the_file() {
        let text = base64::engine::general_purpose::STANDARD.encode("nonsense_key: 1\n");
        let err =
            parse_file(&serde_json::json!({ "content": text, "encoding": "base64" })).unwrap_err();
        assert!(err.starts_with(".github/navin.yml"), "{err}");
    }
}

#[cfg(test)]
mod deadline {
    use super::*;

    #[tokio::test]
    async fn a_parse_past_the_deadline_is_given_up_without_holding_a_worker() {
        let started = std::time::Instant::now();
        let slow = off_workers(|| {
            std::thread::sleep(PARSE_DEADLINE + std::time::Duration::from_millis(300))
        })
        .await;
        assert!(slow.is_none());
        assert!(started.elapsed() < PARSE_DEADLINE + std::time::Duration::from_millis(900));
        assert_eq!(off_workers(|| 7).await, Some(7));
        assert!(too_slow().contains("took longer than 2 s"));
    }
}
