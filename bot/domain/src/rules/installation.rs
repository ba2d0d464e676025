//! What an `installation` or `installation_repositories` event asks of the engine: which repositories to warm (and refresh the panel of) and which to forget, with the warm list capped so one event stays cheap.

use crate::event::{InstallationEvent, InstalledRepository};

/// Repositories warmed per event at most: each costs a config read, a git fetch and,
/// with a mission, a panel refresh. The rest warm on their first event as usual.
pub const MAX_WARMED_PER_EVENT: usize = 50;

/// The work one installation event asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallationWork {
    /// Newly reachable repositories: read their config, refresh their panel if they
    /// already have a ledger. At most [`MAX_WARMED_PER_EVENT`].
    pub warm: Vec<InstalledRepository>,
    /// Repositories warmed later, on their own events, past the cap.
    pub not_warmed: usize,
    /// Repositories Navin can no longer reach: their clones and cached entries go.
    pub forget: Vec<InstalledRepository>,
    /// The installation's permissions changed or it is gone: its cached grant goes.
    pub forget_grant: bool,
}

/// Which work `event` asks for; `repositories_event` tells `installation_repositories`
/// from `installation` (they share one payload type).
pub fn installation_work(event: &InstallationEvent, repositories_event: bool) -> InstallationWork {
    let listed = |list: &Option<Vec<InstalledRepository>>| list.clone().unwrap_or_default();
    let (warm, forget, forget_grant) = match (repositories_event, event.action.as_str()) {
        (false, "created") => (listed(&event.repositories), Vec::new(), false),
        (false, "deleted") => (Vec::new(), listed(&event.repositories), true),
        (false, "new_permissions_accepted" | "unsuspend" | "suspend") => {
            (Vec::new(), Vec::new(), true)
        }
        (true, "added") => (listed(&event.repositories_added), Vec::new(), false),
        (true, "removed") => (Vec::new(), listed(&event.repositories_removed), false),
        _ => (Vec::new(), Vec::new(), false),
    };
    let not_warmed = warm.len().saturating_sub(MAX_WARMED_PER_EVENT);
    InstallationWork {
        warm: warm.into_iter().take(MAX_WARMED_PER_EVENT).collect(),
        not_warmed,
        forget,
        forget_grant,
    }
}

/// The web base (`https://github.com`, or a GHES host) from the installation's account
/// (`<base>/<login>`), since installation events list repositories without URLs; the
/// panel's links are built on it.
pub fn web_base(event: &InstallationEvent) -> Option<String> {
    let account = event.installation.account.as_ref()?;
    let url = account.html_url.as_deref()?;
    url.strip_suffix(&format!("/{}", account.login))
        .filter(|base| base.starts_with("http"))
        .map(str::to_owned)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn event(action: &str, field: &str, n: usize) -> InstallationEvent {
        let repos: Vec<serde_json::Value> = (0..n)
            .map(|i| serde_json::json!({ "id": i, "full_name": format!("o/r{i}") }))
            .collect();
        serde_json::from_value(serde_json::json!({
            "action": action,
            "installation": { "id": 7 },
            field: repos,
        }))
        .unwrap()
    }

    #[test]
    fn an_installation_warms_its_repositories_up_to_the_cap() {
        let work = installation_work(&event("created", "repositories", 60), false);
        assert_eq!(work.warm.len(), MAX_WARMED_PER_EVENT);
        assert_eq!(work.not_warmed, 10);
        assert!(work.forget.is_empty() && !work.forget_grant);
        let added = installation_work(&event("added", "repositories_added", 2), true);
        assert_eq!(added.warm[1].full_name, "o/r1");
    }

    #[test]
    fn removed_repositories_and_deleted_installations_are_forgotten() {
        let removed = installation_work(&event("removed", "repositories_removed", 3), true);
        assert_eq!(removed.forget.len(), 3);
        assert!(removed.warm.is_empty() && !removed.forget_grant);
        let deleted = installation_work(&event("deleted", "repositories", 2), false);
        assert_eq!(deleted.forget.len(), 2);
        assert!(deleted.forget_grant);
    }

    #[test]
    fn the_web_base_comes_from_the_accounts_page() {
        let on = |url: &str| -> InstallationEvent {
            serde_json::from_value(serde_json::json!({
                "action": "created",
                "installation": { "id": 7, "account": { "login": "octo-org", "html_url": url } },
            }))
            .unwrap()
        };
        let ghes = on("https://ghes.example.com/octo-org");
        assert_eq!(web_base(&ghes).as_deref(), Some("https://ghes.example.com"));
        assert_eq!(web_base(&on("https://github.com/someone-else")), None);
        assert_eq!(web_base(&event("created", "repositories", 1)), None);
    }

    #[test]
    fn other_actions_and_missing_lists_ask_for_nothing_but_a_fresh_grant() {
        let null: InstallationEvent = serde_json::from_value(serde_json::json!({
            "action": "created", "installation": { "id": 7 }, "repositories": null,
        }))
        .unwrap();
        assert_eq!(installation_work(&null, false), InstallationWork::default());
        let accepted =
            installation_work(&event("new_permissions_accepted", "repositories", 1), false);
        assert!(accepted.forget_grant && accepted.warm.is_empty());
    }
}
