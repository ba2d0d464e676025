//! What each installation was granted (`GET /app/installations/{id}`), kept briefly, so its tokens ask for no more than an event needs and never more than it has.

use navin_github::{ops, ApiRequest, GitHubApp};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Permission name to level, as the installation has them.
pub type Grants = BTreeMap<String, String>;

type Entry = (Option<Arc<Grants>>, Instant);

#[derive(Debug)]
pub struct GrantCache {
    ttl: Duration,
    grants: Mutex<HashMap<u64, Entry>>,
}

impl GrantCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            grants: Mutex::new(HashMap::new()),
        }
    }

    /// The installation's grant; `None` when it cannot be read (a token-mode client in
    /// the Action, or GitHub failing), and the token is then narrowed to the repository
    /// only. A failure is remembered for the same time, so it costs one call, not one
    /// per event.
    pub async fn get(&self, github: &GitHubApp, installation: u64) -> Option<Arc<Grants>> {
        if github.is_token_mode() {
            return None;
        }
        if let Some((grants, at)) = self.lock().get(&installation) {
            if at.elapsed() < self.ttl {
                return grants.clone();
            }
        }
        let path = ops::installation(installation);
        let read = match github.app_request(ApiRequest::get(&path)).await {
            Ok(response) => response
                .json::<serde_json::Value>(&path)
                .ok()
                .and_then(|v| serde_json::from_value::<Grants>(v["permissions"].clone()).ok()),
            Err(e) => {
                tracing::warn!(installation, error = %e, "cannot read the installation's permissions; tokens are narrowed to the repository only");
                None
            }
        };
        let grants = read.map(Arc::new);
        self.lock()
            .insert(installation, (grants.clone(), Instant::now()));
        grants
    }

    /// Drops the installation's grant: its permissions changed, or it is gone.
    pub fn forget(&self, installation: u64) {
        self.lock().remove(&installation);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Entry>> {
        self.grants.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
