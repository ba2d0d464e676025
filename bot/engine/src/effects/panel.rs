//! The sticky mission panel and the plan comment as other adapters (the Action) reach them: where the panel lives, refreshing it, and the URL of an issue's plan comment.

use super::comments::{self, Upserted};
use navin_domain::render::{mission_panel, Marker, PanelContext, PANEL_FORMAT};
use navin_github::{GitHubError, InstallationClient};
use navin_ledger::model::Ledger;
use navin_ledger::plan::record::{plan_id, pr_plan_id, PlanRecord};

/// The issue that carries the mission's panel: the mission's origin issue when it
/// lives in `repo`; `None` when the mission came from elsewhere (then the caller picks
/// the issue its event is about, or shows no panel).
pub fn panel_issue(ledger: &Ledger, repo: &str) -> Option<u64> {
    ledger
        .mission
        .origin
        .as_ref()
        .filter(|o| {
            o.repository
                .as_deref()
                .is_some_and(|r| r.eq_ignore_ascii_case(repo))
        })
        .and_then(|o| o.issue)
}

/// Renders the panel for `ledger` and creates or edits it in place on `issue`, found by
/// its hidden marker, so every adapter updates the same comment.
pub async fn refresh_panel(
    client: &InstallationClient,
    ctx: &PanelContext,
    issue: u64,
    ledger: &Ledger,
) -> Result<Upserted, GitHubError> {
    let repo = &ctx.repo;
    let body = mission_panel(ledger, ctx);
    let marker = Marker::Panel {
        format: PANEL_FORMAT,
    }
    .to_string();
    comments::upsert(
        client,
        &repo.full_name,
        issue,
        |m| matches!(m, Marker::Panel { .. }),
        &marker,
        body,
    )
    .await
}

/// The ids a plan discussed on issue or pull request `number` may have: the issue's
/// own (`issue-<n>`) and, on a pull request, the PR's (`pr-<n>`).
pub fn plan_ids(number: u64) -> [String; 2] {
    [plan_id(number), pr_plan_id(number)]
}

/// The ledger path of plan `id`'s record (`.navin/plans/<id>.json`).
pub fn plan_record_path(id: &str) -> String {
    navin_ledger::plan::record::record_path(id)
}

/// Whether a command of `delivery_id` changed (or re-showed) this plan: the record
/// remembers the op ids `<delivery>#<index>` applied to it.
pub fn plan_touched_by(record: &PlanRecord, delivery_id: &str) -> bool {
    let prefix = format!("{delivery_id}#");
    record.op_ids.iter().any(|op| op.starts_with(&prefix))
}

/// The web URL of plan `id`'s comment on `issue`, when Navin has posted one.
pub async fn plan_comment_url(
    client: &InstallationClient,
    repo: &str,
    issue: u64,
    id: &str,
) -> Result<Option<String>, GitHubError> {
    let found = comments::find_marked(
        client,
        repo,
        issue,
        |m| matches!(m, Marker::Plan { id: found, .. } if *found == id),
    )
    .await?;
    Ok(found.and_then(|f| f.html_url))
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use chrono::{TimeZone, Utc};
    use navin_ledger::model::{Actor, Origin};
    use navin_ledger::{Ctx, InitArgs, Operation};

    fn ledger_from(origin: Option<Origin>) -> Ledger {
        let ctx = Ctx::new(
            Utc.with_ymd_and_hms(2026, 5, 1, 12, 0, 0).unwrap(),
            Actor::Human("alice".into()),
        );
        let op = Operation::Init(InitArgs {
            goal: "ship".into(),
            origin,
            ..InitArgs::default()
        });
        match navin_ledger::apply(None, &op, &ctx).unwrap() {
            navin_ledger::Outcome::Applied(applied) => applied.ledger,
            navin_ledger::Outcome::AlreadyApplied { .. } => unreachable!("no ledger yet"),
        }
    }

    #[test]
    fn the_panel_lives_on_the_origin_issue_of_this_repository_only() {
        let here = ledger_from(Some(Origin {
            repository: Some("Octo-Org/Hello".into()),
            issue: Some(7),
            ..Origin::default()
        }));
        assert_eq!(panel_issue(&here, "octo-org/hello"), Some(7));
        assert_eq!(panel_issue(&here, "octo-org/other"), None);
        assert_eq!(panel_issue(&ledger_from(None), "octo-org/hello"), None);
    }

    #[test]
    fn a_plan_is_touched_only_by_op_ids_of_that_delivery() {
        let mut record: PlanRecord = serde_json::from_value(serde_json::json!({
            "id": plan_id(3),
            "status": "pending",
            "hash": "sha256:x",
            "source": "built-in planner",
            "request": "r",
            "repository": "o/r",
            "issue": 3,
            "requested_by": "alice",
            "created_at": Utc::now(),
            "updated_at": Utc::now(),
            "approvals": [],
            "rejections": [],
            "op_ids": []
        }))
        .unwrap();
        record.op_ids.push("actions-run-12#0".into());
        assert!(plan_touched_by(&record, "actions-run-12"));
        assert!(!plan_touched_by(&record, "actions-run-1"));
        assert_eq!(
            plan_record_path(&plan_ids(3)[0]),
            ".navin/plans/issue-3.json"
        );
        assert_eq!(plan_ids(3)[1], "pr-3");
    }
}
