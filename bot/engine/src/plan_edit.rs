//! Saving a plan from an editor outside GitHub (the dashboard): the same checks and the same write as `/plan edit`, against the text the editor started from.
//!
//! Several people may edit one plan at once. Each save names the hash of the text its
//! editor loaded ([`PlanEditRequest::base_hash`]). When that is still the stored text
//! the save applies as is; otherwise it is merged section by section with what was
//! saved since ([`navin_ledger::plan::merge`]): different sections both land, the same
//! section is merged line by line when the lines do not overlap, and anything else comes
//! back as [`PlanEditOutcome::Conflict`] with both versions, changing nothing. Every save
//! is an edit in the plan's history under the editor's name, makes approvals of the old
//! text stale and updates the plan comment and `navin/plan` check, exactly as `/plan
//! edit` does.

use crate::cache::permission;
use crate::features::plan_save::save_edit;
use crate::features::plan_save::{Base, Saved};
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Delivery, Engine, EngineError, Inbound, Report};
use navin_domain::command::CommandKind;
use navin_domain::event::Repository;
use navin_github::ops;
use navin_ledger::plan::{PlanDocument, PlanError, Section, SectionConflict};

/// The largest plan text a save may carry: what one GitHub comment holds, the bound a
/// `/plan edit` has.
pub const MAX_PLAN_BYTES: usize = 65_536;

/// The longest idempotency key accepted (it becomes a commit trailer).
const MAX_EDIT_ID: usize = 100;

/// One save from a plan editor.
#[derive(Debug, Clone)]
pub struct PlanEditRequest {
    /// The App installation the repository belongs to.
    pub installation: u64,
    pub repository: Repository,
    /// The plan's id on the ledger branch: `issue-<n>` or `pr-<n>`.
    pub plan_id: String,
    /// The content hash of the text the editor started from.
    pub base_hash: String,
    /// The editor's whole markdown.
    pub text: String,
    /// The signed-in person's GitHub login and numeric user id.
    pub editor: String,
    pub editor_id: u64,
    /// The form's idempotency key: a resubmitted save applies once. Letters, digits and
    /// `._:-`, at most 100 characters.
    pub edit_id: String,
}

/// What a save did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanEditOutcome {
    /// The plan's text is now `hash`. `merged_sections` were also changed by a save that
    /// landed after the editor's base and were combined line by line; empty when the
    /// base was current or the saves touched different sections. A resubmitted save
    /// answers with the hash it stored the first time, and no sections.
    Saved {
        hash: String,
        merged_sections: Vec<Section>,
    },
    /// The text (merged with the saves since its base) is the plan as it stands.
    Unchanged,
    /// The text is not a valid plan: the parser's first problem, with its line (counted
    /// from the text's first line) and section.
    Invalid(PlanError),
    /// Saves since the base changed the same lines, or combined with them the text would
    /// not be a valid plan (`invalid`, naming the rule). Nothing changed: show each
    /// conflict's base, ours (this save) and theirs (`current_text`) side by side, and
    /// save the resolution with `current_hash` as the base.
    Conflict {
        current_hash: String,
        current_text: String,
        conflicts: Vec<SectionConflict>,
        invalid: Option<PlanError>,
        /// Every part merged, and each conflicting part as `current_text` has it: the
        /// text to put in front of the saver to resolve from (their other changes kept).
        draft: String,
    },
    /// The base is not a text this plan had in the ledger branch's newest 500 commits
    /// (an editor left open very long, or a wrong hash): nothing to merge against, and
    /// nothing changed. Reload `current_text` and apply the changes to it.
    UnknownBase {
        current_hash: String,
        current_text: String,
    },
    /// The editor may not change this plan now: not a writer, the issue or pull
    /// request is closed or locked, the repository's config is invalid, or the text is
    /// too long. `reason` is a sentence for the person.
    NotAllowed { reason: String },
    /// No plan with that id, or no issue or pull request it belongs to.
    NotFound,
}

impl Engine {
    /// Saves an edited plan text for `request.editor`, checked as `/plan edit` is
    /// (write access, open and unlocked, valid text), merged with the saves that landed
    /// after `request.base_hash`, and written only while the stored text is the one it
    /// was merged with (another save in between makes it read and merge again). Errors
    /// are GitHub's or the ledger's; a malformed `edit_id` is [`EngineError::Invalid`].
    pub async fn edit_plan(
        &self,
        request: PlanEditRequest,
    ) -> Result<PlanEditOutcome, EngineError> {
        check_edit_id(&request.edit_id)?;
        let Some((on_pull_request, number)) = parse_plan_id(&request.plan_id) else {
            return Ok(PlanEditOutcome::NotFound);
        };
        // One op id per save, shaped like a delivery's: the record remembers it.
        let op_id = format!("plan-edit:{}", request.edit_id);
        let mut delivery = Delivery::new(op_id.clone(), 1);
        delivery.installation = Some(request.installation);
        delivery.repository = Some(request.repository.full_name.clone());
        let inbound = Inbound {
            delivery,
            report: Report::default(),
        };
        let origin = EventOrigin::new(number, &request.editor)
            .author_id(Some(request.editor_id))
            .on_pull_request(on_pull_request);
        let cx = RepoCtx::open(
            self,
            &inbound,
            Need::Write,
            request.installation,
            &request.repository,
            origin,
        )
        .await?;
        if let Some(invalid) = &cx.config_error {
            return Ok(not_allowed(format!(
                "{invalid} Fix the file on the default branch, then save again."
            )));
        }
        let repo = request.repository.full_name.as_str();
        let role = self
            .permissions
            .role(&cx.client, repo, &request.editor, Some(request.editor_id))
            .await?;
        if !permission::may_mutate(&role) {
            return Ok(not_allowed(format!(
                "editing the plan needs write access to {repo}; @{}'s role is `{role}`.",
                request.editor
            )));
        }
        let issue: navin_domain::event::Issue =
            match cx.client.get_json(&ops::issue(repo, number)).await {
                Ok(issue) => issue,
                Err(e) if e.status() == Some(404) => return Ok(PlanEditOutcome::NotFound),
                Err(e) => return Err(e.into()),
            };
        // Only now is it known whether the issue takes changes: the context is rebuilt
        // with that fact rather than patched.
        let cx = cx.with_origin(|origin| origin.closed(issue.closed_for_changes()));
        if let Some(why) = cx.origin.closed {
            let name = CommandKind::PlanEdit.spec().name;
            let allowed = cx
                .repo_config()
                .allow_on_closed
                .iter()
                .any(|n| n.trim_start_matches('/') == name);
            if !allowed {
                let what = if on_pull_request {
                    "pull request"
                } else {
                    "issue"
                };
                return Ok(not_allowed(format!(
                    "the {what} #{number} is {why}, so its plan takes no changes. Reopen (or unlock) it first; a maintainer can allow it with `allow_on_closed: [{name}]` in `.github/navin.yml`."
                )));
            }
        }
        if request.text.len() > MAX_PLAN_BYTES {
            return Ok(not_allowed(format!(
                "the plan is {} bytes; Navin takes at most {MAX_PLAN_BYTES}.",
                request.text.len()
            )));
        }
        let edited = match PlanDocument::parse(&request.text) {
            Ok(doc) => doc,
            Err(problem) => return Ok(PlanEditOutcome::Invalid(problem)),
        };
        let saved = save_edit(
            &cx,
            &request.plan_id,
            Base::Hash(request.base_hash),
            edited,
            &op_id,
            "edited in the dashboard",
        )
        .await?;
        Ok(match saved {
            Saved::Stored {
                hash,
                merged_sections,
            } => PlanEditOutcome::Saved {
                hash,
                merged_sections,
            },
            Saved::Replayed { hash } => PlanEditOutcome::Saved {
                hash,
                merged_sections: Vec::new(),
            },
            Saved::Unchanged => PlanEditOutcome::Unchanged,
            Saved::Conflict {
                current,
                conflicts,
                invalid,
                draft,
            } => PlanEditOutcome::Conflict {
                current_hash: current.hash().to_owned(),
                current_text: current.text().to_owned(),
                conflicts,
                invalid,
                draft,
            },
            Saved::UnknownBase { current } => PlanEditOutcome::UnknownBase {
                current_hash: current.hash().to_owned(),
                current_text: current.text().to_owned(),
            },
            Saved::NotFound => PlanEditOutcome::NotFound,
        })
    }
}

fn not_allowed(reason: String) -> PlanEditOutcome {
    PlanEditOutcome::NotAllowed { reason }
}

/// `issue-12` → (false, 12), `pr-3` → (true, 3); `None` for any other id (the CLI's
/// `local-…` plans belong to no issue).
pub(crate) fn parse_plan_id(id: &str) -> Option<(bool, u64)> {
    let (on_pull_request, number) = match id.strip_prefix("pr-") {
        Some(number) => (true, number),
        None => (false, id.strip_prefix("issue-")?),
    };
    let valid = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    let number: u64 = number.parse().ok().filter(|n| valid && *n > 0)?;
    Some((on_pull_request, number))
}

/// The key ends up in a commit trailer and the record's op ids: one plain line.
pub(crate) fn check_edit_id(edit_id: &str) -> Result<(), EngineError> {
    let plain = edit_id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if edit_id.is_empty() || edit_id.len() > MAX_EDIT_ID || !plain {
        return Err(EngineError::Invalid(format!(
            "edit_id must be 1 to {MAX_EDIT_ID} letters, digits or ._:- characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_ids_name_an_issue_or_a_pull_request() {
        assert_eq!(parse_plan_id("issue-12"), Some((false, 12)));
        assert_eq!(parse_plan_id("pr-3"), Some((true, 3)));
        for other in [
            "local-0123456789ab",
            "issue-",
            "pr-0",
            "issue-+1",
            "issue-1x",
            "pr--3",
        ] {
            assert_eq!(parse_plan_id(other), None, "{other}");
        }
    }

    #[test]
    fn an_edit_id_must_fit_on_one_trailer_line() {
        assert!(check_edit_id("9f1c-2024:alice.1_a").is_ok());
        for bad in ["", "a\nNavin-Plan: x", "a b", &"x".repeat(101)] {
            assert!(
                matches!(check_edit_id(bad), Err(EngineError::Invalid(_))),
                "{bad:?}"
            );
        }
    }
}
