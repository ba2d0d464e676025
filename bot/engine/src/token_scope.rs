//! The least an installation token needs for one event: the one repository, and the permissions the event's work uses, never more than the installation was granted.

use navin_github::TokenScope;
use std::collections::BTreeMap;

/// What the event will do with the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Read commands (`/status`, `/next`, `/help`): read the ledger and code, reply and
    /// refresh the panel.
    Read,
    /// Anything that may write the ledger, a check run, or hand steps out (issues and
    /// the agent workflow, which any ledger change can make ready).
    Write,
    /// The dashboard's reads: the ledger branch and a person's role, nothing written.
    View,
}

/// Permission name (as the access-token endpoint spells it) to level, for `need`.
/// A write event requests code owners' reviews on plan pull requests
/// (`pull_requests: write`) and, under `approval.require_codeowners`, reads team
/// memberships (the organization permission `members: read`; an installation on a
/// personal account has no such grant, and [`scope`] leaves it out).
pub fn needed(need: Need) -> &'static [(&'static str, &'static str)] {
    match need {
        Need::Read => &[
            ("contents", "read"),
            ("issues", "write"),
            ("pull_requests", "read"),
            ("checks", "read"),
            ("actions", "read"),
        ],
        Need::View => &[
            ("contents", "read"),
            ("issues", "read"),
            ("pull_requests", "read"),
            ("checks", "read"),
            ("actions", "read"),
        ],
        Need::Write => &[
            ("contents", "write"),
            ("issues", "write"),
            ("pull_requests", "write"),
            ("checks", "write"),
            ("actions", "write"),
            ("members", "read"),
        ],
    }
}

fn rank(level: &str) -> u8 {
    match level {
        "write" | "admin" => 2,
        "read" => 1,
        _ => 0,
    }
}

/// The token to ask for. Each needed permission is capped at what the installation has
/// (asking for more makes GitHub refuse the token with 422, failing every call); one it
/// lacks is left out, so the call that needs it fails naming it. Without the grant
/// (it could not be read) permissions are not narrowed, only the repository.
pub fn scope(
    repository_id: Option<u64>,
    need: Need,
    granted: Option<&BTreeMap<String, String>>,
) -> TokenScope {
    let mut scope = repository_id
        .map(TokenScope::repository)
        .unwrap_or_default();
    let Some(granted) = granted else {
        return scope;
    };
    for &(name, level) in needed(need) {
        let Some(have) = granted.get(name) else {
            continue;
        };
        let level = if rank(have) >= rank(level) {
            level
        } else if rank(have) > 0 {
            "read"
        } else {
            continue;
        };
        scope = scope.permission(name, level);
    }
    scope
}

/// The token for reading the ledger branch's protection settings, when the installation
/// was granted `administration` (optional: Navin's manifest does not ask for it): the
/// one repository and `administration` at the granted level, nothing else. Event tokens
/// never carry it. The level is the grant's because GitHub shows a ruleset's bypass
/// list only to those who may edit it (`write`); Navin only ever reads with it. Only a
/// grant read from GitHub counts; without one Navin does not try.
pub fn administration_scope(
    repository_id: Option<u64>,
    granted: Option<&BTreeMap<String, String>>,
) -> Option<TokenScope> {
    let level = match granted?.get("administration").map(|l| rank(l))? {
        2 => "write",
        1 => "read",
        _ => return None,
    };
    let scope = repository_id
        .map(TokenScope::repository)
        .unwrap_or_default();
    Some(scope.permission("administration", level))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_read_event_gets_read_contents_and_a_write_event_write_contents_on_one_repository() {
        let all = grants(&[
            ("contents", "write"),
            ("issues", "write"),
            ("pull_requests", "write"),
            ("checks", "write"),
            ("actions", "write"),
            ("metadata", "read"),
            ("members", "write"),
        ]);
        let read = scope(Some(7), Need::Read, Some(&all));
        assert_eq!(read.repository_ids, [7]);
        assert_eq!(read.permissions["contents"], "read");
        assert_eq!(read.permissions["checks"], "read");
        assert_eq!(read.permissions["pull_requests"], "read");
        let write = scope(Some(7), Need::Write, Some(&all));
        assert_eq!(write.permissions["contents"], "write");
        assert_eq!(write.permissions["checks"], "write");
        assert_eq!(
            write.permissions["pull_requests"], "write",
            "code owners' reviews are requested"
        );
        assert_eq!(
            write.permissions["members"], "read",
            "never more than needed"
        );
        assert!(!read.permissions.contains_key("members"));
    }

    #[test]
    fn a_dashboard_view_gets_a_token_that_can_write_nothing() {
        let all = grants(&[
            ("contents", "write"),
            ("issues", "write"),
            ("pull_requests", "write"),
            ("checks", "write"),
            ("actions", "write"),
        ]);
        let view = scope(Some(7), Need::View, Some(&all));
        assert_eq!(view.repository_ids, [7]);
        assert!(!view.permissions.is_empty());
        assert!(
            view.permissions.values().all(|level| level == "read"),
            "{:?}",
            view.permissions
        );
    }

    #[test]
    fn never_more_than_the_installation_was_granted() {
        let some = grants(&[("contents", "read"), ("issues", "write")]);
        let s = scope(Some(7), Need::Write, Some(&some));
        assert_eq!(s.permissions["contents"], "read");
        assert!(!s.permissions.contains_key("checks"));
        assert!(!s.permissions.contains_key("actions"));
        assert!(
            !s.permissions.contains_key("members"),
            "a personal account's installation has no organization permissions"
        );
    }

    #[test]
    fn administration_gets_a_token_of_its_own_at_the_granted_level_and_never_an_event_token() {
        let plain = grants(&[("contents", "write")]);
        assert_eq!(administration_scope(Some(7), Some(&plain)), None);
        assert_eq!(administration_scope(Some(7), None), None);
        for level in ["read", "write"] {
            let admin = grants(&[("contents", "write"), ("administration", level)]);
            let s = administration_scope(Some(7), Some(&admin)).expect("granted");
            assert_eq!(s.repository_ids, [7]);
            assert_eq!(s.permissions.len(), 1, "{:?}", s.permissions);
            assert_eq!(s.permissions["administration"], level);
            assert!(!scope(Some(7), Need::Write, Some(&admin))
                .permissions
                .contains_key("administration"));
        }
    }

    #[test]
    fn without_the_grant_only_the_repository_is_narrowed() {
        let s = scope(Some(7), Need::Write, None);
        assert_eq!(s.repository_ids, [7]);
        assert!(s.permissions.is_empty());
        assert_eq!(scope(None, Need::Read, None), TokenScope::default());
    }
}
