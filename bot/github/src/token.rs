//! Installation token scope and cache slot, apart from both the App client (which keeps the slots) and the installation client (which fills them).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use secrecy::SecretString;

/// Tokens live an hour; one is replaced when it has this little left, so a long handler
/// never starts with a token about to die.
pub const TOKEN_REFRESH_MARGIN: chrono::Duration = chrono::Duration::minutes(5);

/// Whether a token expiring at `expires_at` must be replaced at `now`.
pub fn token_needs_refresh(expires_at: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    expires_at - now <= TOKEN_REFRESH_MARGIN
}

/// What an installation token may touch. The default is the installation's whole grant;
/// narrowing it (least privilege) is done per use: e.g. one repository with
/// `contents: write, issues: write`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct TokenScope {
    /// At most 500 ids (GitHub's limit).
    pub repository_ids: Vec<u64>,
    /// Permission name to `read` or `write`, e.g. `("checks", "write")`.
    pub permissions: BTreeMap<String, String>,
}

impl TokenScope {
    pub fn repository(id: u64) -> Self {
        Self {
            repository_ids: vec![id],
            permissions: BTreeMap::new(),
        }
    }

    #[must_use]
    pub fn permission(mut self, name: &str, level: &str) -> Self {
        self.permissions.insert(name.to_owned(), level.to_owned());
        self
    }

    pub(super) fn request_body(&self) -> serde_json::Value {
        let mut body = serde_json::Map::new();
        if !self.repository_ids.is_empty() {
            body.insert(
                "repository_ids".to_owned(),
                serde_json::json!(self.repository_ids),
            );
        }
        if !self.permissions.is_empty() {
            body.insert(
                "permissions".to_owned(),
                serde_json::json!(self.permissions),
            );
        }
        serde_json::Value::Object(body)
    }
}

pub(super) struct CachedToken {
    pub(super) token: SecretString,
    pub(super) expires_at: DateTime<Utc>,
}

/// One token slot; the async mutex makes concurrent callers wait for a single mint.
#[derive(Default)]
pub(super) struct TokenCache(pub(super) tokio::sync::Mutex<Option<CachedToken>>);

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn token_is_refreshed_within_five_minutes_of_expiry() {
        let now = Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap();
        assert!(!token_needs_refresh(
            now + chrono::Duration::minutes(59),
            now
        ));
        assert!(!token_needs_refresh(
            now + chrono::Duration::seconds(301),
            now
        ));
        assert!(token_needs_refresh(now + chrono::Duration::minutes(5), now));
        assert!(token_needs_refresh(now - chrono::Duration::minutes(1), now));
    }

    #[test]
    fn scope_body_lists_repositories_and_permissions() {
        let scope = TokenScope::repository(42)
            .permission("issues", "write")
            .permission("contents", "write");
        assert_eq!(
            scope.request_body(),
            serde_json::json!({"repository_ids": [42], "permissions": {"contents": "write", "issues": "write"}})
        );
        assert_eq!(TokenScope::default().request_body(), serde_json::json!({}));
    }
}
