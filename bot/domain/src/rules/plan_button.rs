//! The "Approve plan" button on the `navin/plan` check: which text a click approves (the button carries the text's hash), who may click, and the approval it records.
//!
//! GitHub sends back only the button's identifier, while the check run stays on its
//! head and the plan text can change under it. So the identifier binds the text the
//! check was showing (`approve-` and the first 12 hex digits of its content hash), and a
//! click approves only that text: a click on a button drawn for an earlier text is
//! refused, never applied to the new one.

use chrono::{DateTime, Utc};
use navin_ledger::plan::record::{ApprovalEntry, PlanRecord, RecordStatus, VIA_CHECK_RUN};

use crate::check::CheckAction;

/// The button's label (GitHub: at most 20 characters).
pub const LABEL: &str = "Approve plan";

/// What every identifier of the button starts with.
const PREFIX: &str = "approve-";

/// Hex digits of the content hash the identifier carries: `approve-` plus these fill
/// GitHub's 20 characters.
const HASH_DIGITS: usize = 12;

/// The hex digits of a `sha256:<hex>` content hash that a button names.
fn digits(hash: &str) -> String {
    let hex = hash.strip_prefix("sha256:").unwrap_or(hash);
    hex.chars().take(HASH_DIGITS).collect()
}

/// The button that approves the text with content hash `hash`.
pub fn approve_action(hash: &str) -> CheckAction {
    CheckAction {
        label: LABEL.to_owned(),
        description: "Count your approval of the text shown".to_owned(),
        identifier: format!("{PREFIX}{}", digits(hash)),
    }
}

/// The text a clicked identifier approves (its hash digits), or `None` when the
/// identifier is not this button's.
pub fn clicked_text(identifier: &str) -> Option<&str> {
    let hex = identifier.strip_prefix(PREFIX)?;
    (hex.len() == HASH_DIGITS && hex.chars().all(|c| c.is_ascii_hexdigit())).then_some(hex)
}

/// The plan a `navin/plan` run belongs to, from its `external_id`: only a pull
/// request's own plan (`pr-<n>`) has the button; the gate's runs (`gate-<n>`) do not.
pub fn plan_of_run(external_id: Option<&str>) -> Option<u64> {
    external_id?.strip_prefix("pr-")?.parse().ok()
}

/// Who clicked, as the payload says and the role lookup answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clicker {
    pub login: String,
    pub id: Option<u64>,
    /// `Bot` for Apps and agents.
    pub kind: Option<String>,
}

impl Clicker {
    fn is_bot(&self) -> bool {
        super::approvals::is_bot_account(&self.login, self.kind.as_deref())
    }
}

/// Why a click changed nothing. Each says so to the person who clicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClickRefusal {
    /// Apps and agents do not approve plans.
    Bot,
    /// The pull request is closed or merged.
    Closed,
    /// The pull request's author, with `approval.allow_author_approval` off.
    Author,
    /// Approving needs write access; this is the person's role.
    Role { role: String },
    /// The button was drawn for another text than the current one.
    Stale { clicked: String, current: String },
    /// The plan was rejected; a new text is needed first.
    Rejected,
    /// Approved already: nothing left to approve.
    Approved,
    /// This person's approval of this text counts already (a review or an earlier click).
    Counted { required: u32 },
}

impl ClickRefusal {
    /// The reason and what to do instead, for the reply to the person who clicked.
    pub fn words(&self, login: &str, repo: &str) -> (String, String) {
        let review = "Approve with a pull-request review instead, or ask a maintainer.";
        match self {
            ClickRefusal::Bot => (
                format!("@{login} is an app or agent; plans are approved by people."),
                String::new(),
            ),
            ClickRefusal::Closed => (
                "the pull request is closed (or merged), so its plan takes no approvals.".to_owned(),
                "Reopen it first.".to_owned(),
            ),
            ClickRefusal::Author => (
                format!("@{login} opened this pull request, and `approval.allow_author_approval` is off: authors do not approve their own plan."),
                "Ask someone with write access to approve it.".to_owned(),
            ),
            ClickRefusal::Role { role } => (
                format!("“{LABEL}” counts an approval, which needs write access to {repo}; @{login}'s role is `{role}`."),
                review.to_owned(),
            ),
            ClickRefusal::Stale { clicked, current } => (
                format!("the button was for the plan text `sha256:{clicked}…`, and the plan has changed since (now `{}`), so that text cannot be approved any more.", short(current)),
                "Read the current plan in the plan comment, then use “Approve plan” on the updated `navin/plan` check.".to_owned(),
            ),
            ClickRefusal::Rejected => (
                "the plan was rejected, so there is no text waiting for approval.".to_owned(),
                "Ask for a new plan with `/plan <request>`.".to_owned(),
            ),
            ClickRefusal::Approved => ("the plan is already approved.".to_owned(), String::new()),
            ClickRefusal::Counted { required } => (
                format!("@{login} already approved this text; it needs {required} distinct approvers."),
                String::new(),
            ),
        }
    }
}

fn short(hash: &str) -> String {
    let cut: String = hash.chars().take(19).collect();
    format!("{cut}…")
}

/// Who may click at all, before the role is asked: no bots, an open pull request, and
/// not its author unless allowed. The same rules `/approve` and review approvals follow.
pub fn may_click(
    clicker: &Clicker,
    pr_author: &str,
    pr_open: bool,
    allow_author_approval: bool,
) -> Result<(), ClickRefusal> {
    if clicker.is_bot() {
        return Err(ClickRefusal::Bot);
    }
    if !pr_open {
        return Err(ClickRefusal::Closed);
    }
    if !allow_author_approval && clicker.login.eq_ignore_ascii_case(pr_author) {
        return Err(ClickRefusal::Author);
    }
    Ok(())
}

/// Records `clicker`'s approval of the text whose hash digits are `clicked`, when that
/// is still the plan's text and nothing else stands in the way. The approval is bound
/// to the current hash, marked [`VIA_CHECK_RUN`], and the status follows the count.
pub fn approve(
    record: &mut PlanRecord,
    clicker: &Clicker,
    clicked: &str,
    required: u32,
    now: DateTime<Utc>,
) -> Result<(), ClickRefusal> {
    if !digits(&record.hash).eq_ignore_ascii_case(clicked) {
        return Err(ClickRefusal::Stale {
            clicked: clicked.to_owned(),
            current: record.hash.clone(),
        });
    }
    match record.status {
        RecordStatus::Rejected | RecordStatus::Superseded => return Err(ClickRefusal::Rejected),
        _ if record.is_approved() => return Err(ClickRefusal::Approved),
        _ => {}
    }
    let hash = record.hash.clone();
    let mut approval = ApprovalEntry::new(&clicker.login, &hash, now, None).by_id(clicker.id);
    approval.via = Some(VIA_CHECK_RUN.to_owned());
    if record
        .current_approvals()
        .any(|a| a.identity() == approval.identity())
    {
        return Err(ClickRefusal::Counted { required });
    }
    record.approvals.push(approval);
    record.settle(required);
    record.updated_at = now;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    const HASH: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + s, 0).unwrap()
    }

    fn carol() -> Clicker {
        Clicker {
            login: "carol".into(),
            id: Some(5),
            kind: Some("User".into()),
        }
    }

    fn record() -> PlanRecord {
        PlanRecord {
            pull_request: true,
            issue: 4,
            ..PlanRecord::pending("pr-4", HASH, at(0))
        }
    }

    #[test]
    fn the_button_names_the_text_within_githubs_limits_and_reads_back() {
        let action = approve_action(HASH);
        assert_eq!(action.identifier, "approve-0123456789ab");
        assert!(action.label.chars().count() <= 20);
        assert!(action.description.chars().count() <= 40);
        assert!(action.identifier.chars().count() <= 20);
        assert_eq!(clicked_text(&action.identifier), Some("0123456789ab"));
        for other in [
            "lgtm|26764",
            "approve-",
            "approve-0123",
            "approve-0123456789az",
        ] {
            assert_eq!(clicked_text(other), None, "{other}");
        }
        assert_eq!(plan_of_run(Some("pr-12")), Some(12));
        assert_eq!(plan_of_run(Some("gate-12")), None);
        assert_eq!(plan_of_run(Some("")), None);
        assert_eq!(plan_of_run(None), None);
    }

    #[test]
    fn a_click_approves_only_the_text_its_button_was_drawn_for() {
        let mut r = record();
        approve(&mut r, &carol(), "0123456789ab", 1, at(1)).unwrap();
        assert!(r.is_approved());
        assert_eq!(r.approvals[0].via.as_deref(), Some(VIA_CHECK_RUN));
        assert_eq!(r.approvals[0].plan_hash, HASH);
        assert_eq!(r.approvals[0].approver_id, Some(5));
        let mut edited = record();
        edited.replace_text("sha256:ffff", "alice", "edited with /plan edit", at(2));
        let before = edited.clone();
        let refused = approve(&mut edited, &carol(), "0123456789ab", 1, at(3)).unwrap_err();
        assert!(matches!(refused, ClickRefusal::Stale { .. }), "{refused:?}");
        assert_eq!(edited, before, "a refused click changes nothing");
    }

    #[test]
    fn one_person_counts_once_and_finished_plans_take_no_clicks() {
        let mut r = record();
        approve(&mut r, &carol(), "0123456789ab", 2, at(1)).unwrap();
        assert_eq!(r.status, RecordStatus::Pending);
        assert_eq!(
            approve(&mut r, &carol(), "0123456789ab", 2, at(2)),
            Err(ClickRefusal::Counted { required: 2 })
        );
        assert_eq!(r.approvals.len(), 1);
        let dave = Clicker {
            login: "dave".into(),
            id: Some(6),
            kind: None,
        };
        approve(&mut r, &dave, "0123456789ab", 2, at(3)).unwrap();
        assert!(r.is_approved());
        assert_eq!(
            approve(&mut r, &dave, "0123456789ab", 2, at(4)),
            Err(ClickRefusal::Approved)
        );
        let mut rejected = record();
        rejected.reject("alice", "@alice", None, at(1));
        assert_eq!(
            approve(&mut rejected, &carol(), "0123456789ab", 1, at(2)),
            Err(ClickRefusal::Rejected)
        );
    }

    #[test]
    fn bots_authors_and_closed_pull_requests_are_refused_before_the_role_is_asked() {
        let bot = Clicker {
            login: "copilot-swe-agent[bot]".into(),
            id: Some(9),
            kind: Some("Bot".into()),
        };
        assert_eq!(may_click(&bot, "alice", true, true), Err(ClickRefusal::Bot));
        assert_eq!(
            may_click(&carol(), "alice", false, true),
            Err(ClickRefusal::Closed)
        );
        assert_eq!(
            may_click(&carol(), "Carol", true, false),
            Err(ClickRefusal::Author)
        );
        assert_eq!(may_click(&carol(), "carol", true, true), Ok(()));
        assert_eq!(may_click(&carol(), "alice", true, false), Ok(()));
    }
}
