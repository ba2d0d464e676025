//! Which pull-request reviews approve a plan: pure rules over the REST review list (latest decisive review per reviewer, author rule, plan text time).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Deserialize;

/// One entry of `GET /repos/{o}/{r}/pulls/{n}/reviews` (REST states are uppercase).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RestReview {
    pub id: u64,
    /// Null when the reviewer's account was deleted.
    #[serde(default)]
    pub user: Option<RestUser>,
    pub state: String,
    #[serde(default)]
    pub submitted_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RestUser {
    pub login: String,
    /// The numeric user id: the identity that survives renames.
    #[serde(default)]
    pub id: Option<u64>,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

impl RestUser {
    fn is_bot(&self) -> bool {
        is_bot_account(&self.login, self.kind.as_deref())
    }
}

/// Apps and agents: GitHub's `type: Bot`, or a `[bot]` login when a payload lacks the type.
/// Neither approves a plan, whether by review or by the check's button.
pub fn is_bot_account(login: &str, kind: Option<&str>) -> bool {
    kind.is_some_and(|k| k.eq_ignore_ascii_case("bot"))
        || login.to_ascii_lowercase().ends_with("[bot]")
}

/// A review that approves the plan's current text, pending the reviewer's role check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub review_id: u64,
    pub login: String,
    pub user_id: Option<u64>,
    pub at: Option<DateTime<Utc>>,
}

/// Why a reviewer's approval does not count, for logs and the check summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCounted {
    /// The pull request's author approving their own plan (`approval.allow_author_approval`).
    Author { login: String },
    /// The approval was given before the plan's current text was written.
    BeforeText { login: String },
}

/// Is this state one that decides a reviewer's stand? GitHub itself keeps an approval in
/// place when the same reviewer later only comments, so `COMMENTED` and `PENDING` do not
/// replace an earlier approval; `CHANGES_REQUESTED` and `DISMISSED` do.
fn decisive(state: &str) -> bool {
    matches!(
        state.to_ascii_uppercase().as_str(),
        "APPROVED" | "CHANGES_REQUESTED" | "DISMISSED"
    )
}

/// The reviewers whose latest decisive review is `APPROVED`, by numeric user id (else
/// lowercase login, for payloads without ids), in list order (the REST list is
/// chronological; a later entry wins). Keyed by id, a reviewer renamed between two
/// reviews is one reviewer.
pub fn latest_approvals(reviews: &[RestReview]) -> BTreeMap<String, &RestReview> {
    let mut latest: BTreeMap<String, &RestReview> = BTreeMap::new();
    for review in reviews {
        let Some(user) = review.user.as_ref() else {
            continue;
        };
        if user.is_bot() || !decisive(&review.state) {
            continue;
        }
        let who = match user.id {
            Some(id) => format!("id:{id}"),
            None => format!("login:{}", user.login.to_ascii_lowercase()),
        };
        latest.insert(who, review);
    }
    latest.retain(|_, r| r.state.eq_ignore_ascii_case("APPROVED"));
    latest
}

/// Is `who` approving the plan they asked for themselves, with the repository not allowing
/// it? The rule GitHub applies to a pull request's author, applied to `/approve` on issues
/// and `navin plan approve` too: a plan nobody else looked at is not approved. A record
/// without a requester (older ledgers) is nobody's own.
pub fn own_plan(requester: &str, who: &str, allow_author_approval: bool) -> bool {
    !allow_author_approval && !requester.is_empty() && requester.eq_ignore_ascii_case(who)
}

/// The approvals that may count for the plan text written at `text_at`: each reviewer's
/// latest decisive review is an approval, the reviewer is not the PR author (unless
/// allowed), and the review was submitted no earlier than the text (GitHub reports whole
/// seconds, so the comparison is at second precision). Write access is checked by the
/// caller, which has to ask GitHub.
pub fn candidates(
    reviews: &[RestReview],
    pr_author: &str,
    allow_author_approval: bool,
    text_at: Option<DateTime<Utc>>,
) -> (Vec<Candidate>, Vec<NotCounted>) {
    let floor = text_at.map(|t| t.timestamp());
    let mut counted = Vec::new();
    let mut refused = Vec::new();
    for review in latest_approvals(reviews).into_values() {
        let Some(user) = review.user.as_ref() else {
            continue;
        };
        let login = user.login.clone();
        if !allow_author_approval && login.eq_ignore_ascii_case(pr_author) {
            refused.push(NotCounted::Author { login });
            continue;
        }
        let before = match (floor, review.submitted_at) {
            (Some(floor), Some(at)) => at.timestamp() < floor,
            _ => false,
        };
        if before {
            refused.push(NotCounted::BeforeText { login });
            continue;
        }
        counted.push(Candidate {
            review_id: review.id,
            login,
            user_id: user.id,
            at: review.submitted_at,
        });
    }
    (counted, refused)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn review(id: u64, login: &str, state: &str, second: i64) -> RestReview {
        RestReview {
            id,
            user: Some(RestUser {
                login: login.to_owned(),
                id: None,
                kind: Some("User".to_owned()),
            }),
            state: state.to_owned(),
            submitted_at: DateTime::from_timestamp(1_700_000_000 + second, 0),
        }
    }

    fn review_by(user_id: u64, id: u64, login: &str, state: &str, second: i64) -> RestReview {
        let mut r = review(id, login, state, second);
        if let Some(user) = r.user.as_mut() {
            user.id = Some(user_id);
        }
        r
    }

    #[test]
    fn a_reviewer_renamed_between_reviews_is_one_reviewer_and_a_reused_login_is_another() {
        // alice (id 7) approves, renames to alice-new and requests changes: revoked.
        let renamed = vec![
            review_by(7, 1, "alice", "APPROVED", 0),
            review_by(7, 2, "alice-new", "CHANGES_REQUESTED", 1),
        ];
        let (counted, _) = candidates(&renamed, "octocat", false, None);
        assert!(counted.is_empty(), "{counted:?}");
        // alice (id 7) approves; later someone else (id 9) takes the login and requests
        // changes: alice's approval still stands, and it carries her id.
        let reused = vec![
            review_by(7, 1, "alice", "APPROVED", 0),
            review_by(9, 2, "alice", "CHANGES_REQUESTED", 1),
        ];
        let (counted, _) = candidates(&reused, "octocat", false, None);
        assert_eq!(counted.len(), 1);
        assert_eq!(counted[0].user_id, Some(7));
    }

    fn logins(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.login.as_str()).collect()
    }

    #[test]
    fn a_later_changes_request_or_dismissal_revokes_but_a_comment_does_not() {
        let reviews = vec![
            review(1, "alice", "APPROVED", 0),
            review(2, "carol", "APPROVED", 1),
            review(3, "alice", "CHANGES_REQUESTED", 2),
            review(4, "carol", "COMMENTED", 3),
            review(5, "dave", "DISMISSED", 4),
        ];
        let (counted, _) = candidates(&reviews, "octocat", false, None);
        assert_eq!(logins(&counted), ["carol"]);
        assert_eq!(counted[0].review_id, 2);
    }

    #[test]
    fn the_requester_approves_their_own_plan_only_when_allowed() {
        assert!(own_plan("Alice", "alice", false));
        assert!(!own_plan("alice", "alice", true));
        assert!(!own_plan("alice", "carol", false));
        assert!(!own_plan("", "carol", false), "no requester recorded");
    }

    #[test]
    fn the_authors_own_approval_counts_only_when_allowed() {
        let reviews = vec![review(1, "Octocat", "APPROVED", 0)];
        let (counted, refused) = candidates(&reviews, "octocat", false, None);
        assert!(counted.is_empty());
        assert_eq!(
            refused,
            [NotCounted::Author {
                login: "Octocat".into()
            }]
        );
        let (counted, _) = candidates(&reviews, "octocat", true, None);
        assert_eq!(logins(&counted), ["Octocat"]);
    }

    #[test]
    fn an_approval_older_than_the_plan_text_is_stale() {
        let reviews = vec![review(1, "alice", "APPROVED", 0)];
        let text_at = DateTime::from_timestamp(1_700_000_010, 0);
        let (counted, refused) = candidates(&reviews, "octocat", false, text_at);
        assert!(counted.is_empty());
        assert!(matches!(refused[0], NotCounted::BeforeText { .. }));
        // Same second: GitHub's whole-second timestamps must not make a fresh review stale.
        let same = DateTime::from_timestamp(1_700_000_000, 900_000_000);
        assert_eq!(candidates(&reviews, "octocat", false, same).0.len(), 1);
    }

    #[test]
    fn bots_and_deleted_accounts_never_approve() {
        let mut bot = review(1, "ci[bot]", "APPROVED", 0);
        bot.user.as_mut().unwrap().kind = Some("Bot".into());
        let ghost = RestReview {
            user: None,
            ..review(2, "x", "APPROVED", 0)
        };
        assert!(candidates(&[bot, ghost], "octocat", false, None)
            .0
            .is_empty());
    }
}
