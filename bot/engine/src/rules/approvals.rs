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
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

impl RestUser {
    fn is_bot(&self) -> bool {
        self.kind
            .as_deref()
            .is_some_and(|k| k.eq_ignore_ascii_case("bot"))
            || self.login.to_ascii_lowercase().ends_with("[bot]")
    }
}

/// A review that approves the plan's current text, pending the reviewer's role check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub review_id: u64,
    pub login: String,
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

/// The reviewers whose latest decisive review is `APPROVED`, by lowercase login, in
/// list order (the REST list is chronological; a later entry wins).
pub fn latest_approvals(reviews: &[RestReview]) -> BTreeMap<String, &RestReview> {
    let mut latest: BTreeMap<String, &RestReview> = BTreeMap::new();
    for review in reviews {
        let Some(user) = review.user.as_ref() else {
            continue;
        };
        if user.is_bot() || !decisive(&review.state) {
            continue;
        }
        latest.insert(user.login.to_ascii_lowercase(), review);
    }
    latest.retain(|_, r| r.state.eq_ignore_ascii_case("APPROVED"));
    latest
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
    for (lower, review) in latest_approvals(reviews) {
        let login = review
            .user
            .as_ref()
            .map(|u| u.login.clone())
            .unwrap_or(lower.clone());
        if !allow_author_approval && lower == pr_author.to_ascii_lowercase() {
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
                kind: Some("User".to_owned()),
            }),
            state: state.to_owned(),
            submitted_at: DateTime::from_timestamp(1_700_000_000 + second, 0),
        }
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
