//! Who may change a mission: the collaborator-permission endpoint's `role_name`, cached briefly per repository and person (numeric user id).

use navin_github::ops;
use navin_github::{GitHubError, InstallationClient};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Roles that may run mutating commands. `triage` and `read` may not.
pub fn may_mutate(role: &str) -> bool {
    matches!(role, "admin" | "maintain" | "write")
}

/// Who a cached role belongs to: the numeric user id when the event carried it (logins
/// can be renamed and then reused by someone else), else the lowercase login.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Person {
    Id(u64),
    Login(String),
}

impl Person {
    pub fn new(login: &str, id: Option<u64>) -> Self {
        match id {
            Some(id) => Person::Id(id),
            None => Person::Login(login.to_ascii_lowercase()),
        }
    }
}

type Roles = HashMap<(String, Person), (String, Instant)>;

/// Roles by `(repository, person)`, kept for `ttl` so a burst of commands costs one call.
#[derive(Debug)]
pub struct PermissionCache {
    ttl: Duration,
    roles: Mutex<Roles>,
}

impl PermissionCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            roles: Mutex::new(HashMap::new()),
        }
    }

    /// The person's role on the repository (`none` when GitHub answers 404: not a collaborator).
    pub async fn role(
        &self,
        client: &InstallationClient,
        repo: &str,
        login: &str,
        user_id: Option<u64>,
    ) -> Result<String, GitHubError> {
        let key = (repo.to_ascii_lowercase(), Person::new(login, user_id));
        if let Some((role, at)) = self.lock().get(&key) {
            if at.elapsed() < self.ttl {
                return Ok(role.clone());
            }
        }
        self.role_now(client, repo, login, user_id).await
    }

    /// The person's role read from GitHub now (and kept for the next cached lookup): for
    /// acts a page offered minutes ago, where a role taken away since must count.
    pub async fn role_now(
        &self,
        client: &InstallationClient,
        repo: &str,
        login: &str,
        user_id: Option<u64>,
    ) -> Result<String, GitHubError> {
        let key = (repo.to_ascii_lowercase(), Person::new(login, user_id));
        let path = ops::collaborator_permission(repo, login);
        let role = match client.get_json::<serde_json::Value>(&path).await {
            Ok(v) => role_of(&v),
            Err(e) if e.status() == Some(404) => "none".to_owned(),
            Err(e) => return Err(e),
        };
        self.lock().insert(key, (role.clone(), Instant::now()));
        Ok(role)
    }

    /// Drops every role cached for `repo`: the App lost access to it.
    pub fn forget(&self, repo: &str) {
        let repo = repo.to_ascii_lowercase();
        self.lock().retain(|(r, _), _| *r != repo);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Roles> {
        self.roles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `role_name` (admin, maintain, write, triage, read, or a custom role name), falling
/// back to the legacy `permission` field only when `role_name` is absent.
fn role_of(v: &serde_json::Value) -> String {
    v.get("role_name")
        .and_then(|r| r.as_str())
        .or_else(|| v.get("permission").and_then(|p| p.as_str()))
        .unwrap_or("none")
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_admin_maintain_and_write_may_mutate() {
        for role in ["admin", "maintain", "write"] {
            assert!(may_mutate(role), "{role}");
        }
        for role in ["triage", "read", "none", "custom-reviewer", ""] {
            assert!(!may_mutate(role), "{role}");
        }
    }

    #[test]
    fn a_cached_role_belongs_to_the_person_not_the_login() {
        // Renamed: same person, same cache entry.
        assert_eq!(
            Person::new("alice", Some(5)),
            Person::new("alice-new", Some(5))
        );
        // A login taken over by someone else: another person, asked again.
        assert_ne!(Person::new("alice", Some(5)), Person::new("alice", Some(9)));
        assert_eq!(Person::new("Alice", None), Person::new("alice", None));
    }

    #[test]
    fn role_name_wins_over_the_legacy_permission_field() {
        let v = serde_json::json!({"permission": "write", "role_name": "triage"});
        assert_eq!(role_of(&v), "triage");
        let legacy = serde_json::json!({"permission": "admin"});
        assert_eq!(role_of(&legacy), "admin");
        assert_eq!(role_of(&serde_json::json!({})), "none");
    }
}
