//! `/plan edit` and the dashboard's editor: saving an edited plan text against the text its author started from: applied as is when that is still the stored text, merged section by section with the texts stored since otherwise, and written only if nothing landed in between.

use super::answers::resume_if_answered;
use super::board::{read_ledger, store, transact};
use super::dispatch::dispatch_ready;
use super::panel::refresh_panel;
use super::plan_file::store_edit;
use super::plan_types::{EditRefused, TextEdit};
use super::plans::{no_plan, publish_plan};
use super::records::{origin_plan_id, read_plan_id};
use super::{blocking, Answer, Refusal};
use super::{EngineError, RepoCtx};
use chrono::{DateTime, Utc};
use navin_ledger::plan::record::text_path as md_path;
use navin_ledger::plan::record::PlanRecord;
use navin_ledger::plan::PlanDocument;
use navin_ledger::plan::{content_hash, merge, MergeOutcome, PlanError, Section, SectionConflict};
use navin_ledger::store::StoreError;
use navin_ledger::{Actor, Operation};

/// How many of the ledger branch's newest commits are searched for the text an edit
/// started from. An editor left open across more plan writes than this reloads.
pub(crate) const BASE_LOOKBACK: usize = 500;

/// Merges tried when other saves keep landing between the read and the write; each
/// lost race re-reads and merges again, so two saves at once both land.
const ATTEMPTS: u32 = 5;

/// The text an edit started from.
#[derive(Debug, Clone)]
pub(crate) enum Base {
    /// The text stored now (nothing says otherwise).
    Current,
    /// The text with this content hash (the dashboard's editor names it).
    Hash(String),
    /// The text that was current at this moment (when a `/plan edit` comment was written).
    WrittenAt(DateTime<Utc>),
}

/// What saving an edit did.
#[derive(Debug)]
pub(crate) enum Saved {
    /// Stored, with the comment and check published. `merged_sections` were changed on
    /// both sides and combined line by line.
    Stored {
        hash: String,
        merged_sections: Vec<Section>,
    },
    /// This op id was applied before: the hash that edit stored.
    Replayed { hash: String },
    /// The edit, merged with the texts stored since, is the stored text.
    Unchanged,
    /// The edit and the texts stored since do not fit together; nothing was written.
    Conflict {
        current: PlanDocument,
        conflicts: Vec<SectionConflict>,
        invalid: Option<PlanError>,
        /// The merged parts with each conflicting part as stored: what to resolve from.
        draft: String,
    },
    /// The text the edit started from is not among the newest [`BASE_LOOKBACK`]
    /// commits, so there is nothing to merge against; nothing was written.
    UnknownBase { current: PlanDocument },
    /// There is no plan `id`.
    NotFound,
}

/// Saves `edited`, started from `base`, as plan `id`'s text, under the event's
/// author and op id `op_id`, by the path `/plan edit` always took
/// ([`store_edit`]): logged as an edit, approvals of the old text stale,
/// comment and check published, answers in it applied to the plan's mission. When
/// `base` is no longer the stored text, `edited` is merged with what was stored since
/// ([`navin_ledger::plan::merge`]). The write lands only while the stored text is the
/// one merged with; otherwise this reads and merges again.
pub(crate) async fn save_edit(
    cx: &RepoCtx<'_>,
    id: &str,
    base: Base,
    edited: PlanDocument,
    op_id: &str,
    via: &str,
) -> Result<Saved, EngineError> {
    let mut found: Option<PlanDocument> = None;
    for _ in 0..ATTEMPTS {
        let Some((record, current)) = read_plan_id(cx, id).await? else {
            return Ok(Saved::NotFound);
        };
        if record.op_ids.iter().any(|o| o == op_id) {
            // A retry after the record landed: the comment and check again, if lost.
            publish_plan(cx, &record, &current, None, &[]).await?;
            return Ok(Saved::Replayed {
                hash: stored_by(&record, op_id),
            });
        }
        if edited.hash() == current.hash() {
            return Ok(Saved::Unchanged);
        }
        let base_hash = match &base {
            Base::Current => current.hash().to_owned(),
            Base::Hash(hash) => hash.clone(),
            Base::WrittenAt(at) => record.hash_at(*at).to_owned(),
        };
        let (document, merged_sections, via) = if base_hash == current.hash() {
            (edited.clone(), Vec::new(), via.to_owned())
        } else {
            let base_doc = match found.take().filter(|d| d.hash() == base_hash) {
                Some(doc) => doc,
                None => match base_text(cx, id, &base_hash, &record).await? {
                    Some(doc) => doc,
                    None => return Ok(Saved::UnknownBase { current }),
                },
            };
            let outcome = merge(&base_doc, &edited, &current);
            found = Some(base_doc);
            match outcome {
                MergeOutcome::Merged {
                    document,
                    merged_sections,
                } => {
                    let via = merged_via(via, &merged_sections);
                    (*document, merged_sections, via)
                }
                MergeOutcome::Conflict {
                    conflicts,
                    invalid,
                    draft,
                } => {
                    return Ok(Saved::Conflict {
                        current,
                        conflicts,
                        invalid,
                        draft,
                    })
                }
            }
        };
        if document.hash() == current.hash() {
            return Ok(Saved::Unchanged);
        }
        let plan = document.plan().clone();
        let hash = document.hash().to_owned();
        let edit = TextEdit {
            edited: document,
            via,
            file_hash: None,
            expected: Some(current.hash().to_owned()),
        };
        match store_edit(cx, record, &current, edit, op_id, None).await? {
            Ok(Some(stored)) if stored.hash == hash => {
                answers_from_plan(cx, &plan, op_id).await?;
                return Ok(Saved::Stored {
                    hash,
                    merged_sections,
                });
            }
            // The same op id landed meanwhile (a save submitted twice at once).
            Ok(Some(stored)) => {
                return Ok(Saved::Replayed {
                    hash: stored_by(&stored, op_id),
                })
            }
            Ok(None) | Err(EditRefused::Missing(_)) => return Ok(Saved::NotFound),
            Err(EditRefused::Moved) => {
                tracing::info!(repo = %cx.repo, plan = id, "the plan changed while an edit was saved; merging again");
            }
        }
    }
    Err(EngineError::Store(StoreError::Contention {
        branch: cx.repo_config().ledger_branch.clone(),
        attempts: ATTEMPTS,
    }))
}

/// Plan `id`'s text with content hash `hash`: the first text, or one of the ledger
/// branch's newest [`BASE_LOOKBACK`] commits.
async fn base_text(
    cx: &RepoCtx<'_>,
    id: &str,
    hash: &str,
    record: &PlanRecord,
) -> Result<Option<PlanDocument>, EngineError> {
    let original = record
        .original
        .as_deref()
        .and_then(|text| PlanDocument::parse(text).ok());
    if let Some(doc) = original.filter(|d| d.hash() == hash) {
        return Ok(Some(doc));
    }
    let store = store(cx).await?;
    let path = md_path(id);
    let wanted = hash.to_owned();
    let found = blocking(move || {
        // Stored texts are canonical, so their content hash is their document's.
        store.find_file_version(&path, BASE_LOOKBACK, |bytes| {
            content_hash(&String::from_utf8_lossy(bytes)) == wanted
        })
    })
    .await?;
    Ok(found
        .and_then(|bytes| PlanDocument::parse(&String::from_utf8_lossy(&bytes)).ok())
        .filter(|d| d.hash() == hash))
}

/// The text hash the edit with op id `op_id` stored; the current one for records
/// written before edits kept their op id.
fn stored_by(record: &PlanRecord, op_id: &str) -> String {
    record
        .edits
        .iter()
        .rev()
        .find(|e| e.op_id.as_deref() == Some(op_id))
        .map_or_else(|| record.hash.clone(), |e| e.to_hash.clone())
}

/// How a merged edit is logged: what the editor did, and that it was combined with the
/// edits stored since (naming the sections merged line by line).
fn merged_via(via: &str, merged: &[Section]) -> String {
    let mut out = format!("{via}, merged with the edits saved since it was started");
    if !merged.is_empty() {
        let names: Vec<&str> = merged.iter().map(|s| s.heading()).collect();
        out.push_str(&format!(" (line by line in {})", names.join(", ")));
    }
    out
}

/// A plan edit that answers questions of the mission started from that plan: each
/// answer becomes a fact (as the editor), and the mission resumes if that was all it
/// waited for. A plan with no live mission of its own changes no mission.
pub(crate) async fn answers_from_plan(
    cx: &RepoCtx<'_>,
    plan: &navin_ledger::plan::Plan,
    op_id: &str,
) -> Result<(), EngineError> {
    let Some(ledger) = read_ledger(cx).await? else {
        return Ok(());
    };
    let own = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.plan_id.as_deref())
        == Some(origin_plan_id(cx).as_str());
    if !own || !ledger.mission.status.is_live() {
        return Ok(());
    }
    let answers: Vec<(String, String)> = plan
        .questions
        .iter()
        .filter_map(|q| {
            let question = navin_ledger::model::clip(q.question.trim());
            let answer = q
                .answer
                .as_deref()
                .map(str::trim)
                .filter(|a| !a.is_empty())?;
            ledger
                .mission
                .missing_info
                .contains(&question)
                .then(|| (question, answer.to_owned()))
        })
        .collect();
    if answers.is_empty() {
        return Ok(());
    }
    let op = Operation::Update(navin_ledger::UpdateArgs {
        answers,
        reason: format!("answered in the plan by @{}", cx.origin.author),
        ..navin_ledger::UpdateArgs::default()
    });
    let op_id = format!("{op_id}:answers");
    let ledger = match transact(cx, op, &op_id, Actor::Human(cx.origin.author.clone())).await? {
        Some((after, _)) => after,
        None => ledger,
    };
    let ledger = resume_if_answered(cx, ledger, &op_id).await?;
    let ledger = dispatch_ready(cx, ledger).await;
    refresh_panel(cx, &ledger).await?;
    Ok(())
}

/// `/plan edit`: the block replaces the plan once it validates. When the plan changed
/// after the comment was written, the block is merged section by section with those
/// changes, and a conflict is refused naming the sections (see [`Self::save_edit`]).
pub(crate) async fn plan_edit(
    cx: &RepoCtx<'_>,
    block: &str,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let edited = match PlanDocument::parse(block) {
        Ok(doc) => doc,
        Err(e) => return Ok(Answer::Refuse(Refusal::PlanEditInvalid(e.to_string()))),
    };
    let base = match cx.origin.written_at {
        Some(at) => Base::WrittenAt(at),
        None => Base::Current,
    };
    let saved = save_edit(
        cx,
        &origin_plan_id(cx),
        base,
        edited,
        op_id,
        "edited with /plan edit",
    )
    .await?;
    Ok(match saved {
        Saved::Stored { .. } | Saved::Replayed { .. } => Answer::React("+1"),
        Saved::NotFound => no_plan("edit"),
        Saved::Unchanged => Answer::Refuse(Refusal::PlanUnchanged),
        Saved::Conflict {
            conflicts, invalid, ..
        } => {
            let names: Vec<String> = conflicts
                .iter()
                .map(|c| format!("\"{}\"", c.section))
                .collect();
            let sections = names.join(", ");
            let reason = match invalid {
                None => format!(
                    "the plan changed after this comment was written, and the block changes the same lines of {sections}: nothing changed."
                ),
                Some(problem) => format!(
                    "the plan changed after this comment was written; combined with those changes (in {sections}) the block would not be a valid plan ({problem}), so nothing changed."
                ),
            };
            Answer::Refuse(Refusal::EditConflict(reason))
        }
        Saved::UnknownBase { .. } => Answer::Refuse(Refusal::UnknownEditBase),
    })
}
