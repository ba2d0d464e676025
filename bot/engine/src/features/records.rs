//! Plan records on the ledger branch: which plan an event is about, reading one, and updating one under compare-and-swap.

use super::board::store;
use super::plan_types::Seen;
use super::{blocking, EngineError, RepoCtx};
use navin_domain::rules::plan_policy;
use navin_ledger::plan::record::{plan_id, pr_plan_id, PlanRecord};
use navin_ledger::plan::record::{record_path as json_path, text_path as md_path};
use navin_ledger::plan::PlanDocument;
use serde::{Deserialize, Serialize};

/// One plan per issue (`issue-<n>`) and one per pull request (`pr-<n>`).
pub(crate) fn origin_plan_id(cx: &RepoCtx<'_>) -> String {
    if cx.origin.on_pull_request {
        pr_plan_id(cx.origin.issue)
    } else {
        plan_id(cx.origin.issue)
    }
}

/// The plan of this issue or pull request: record and validated document.
pub(crate) async fn read_plan(
    cx: &RepoCtx<'_>,
) -> Result<Option<(PlanRecord, PlanDocument)>, EngineError> {
    read_plan_id(cx, &origin_plan_id(cx)).await
}

pub(crate) async fn read_plan_id(
    cx: &RepoCtx<'_>,
    id: &str,
) -> Result<Option<(PlanRecord, PlanDocument)>, EngineError> {
    let store = store(cx).await?;
    let owned = id.to_owned();
    let (json, md) = blocking(move || {
        Ok((
            store.read_file(&json_path(&owned))?,
            store.read_file(&md_path(&owned))?,
        ))
    })
    .await?;
    let (Some(json), Some(md)) = (json, md) else {
        return Ok(None);
    };
    let record: PlanRecord = serde_json::from_slice(&json)
        .map_err(|e| EngineError::Internal(format!("{} does not parse: {e}", json_path(id))))?;
    let text = String::from_utf8_lossy(&md);
    let doc = PlanDocument::parse(&text)
        .map_err(|e| EngineError::Internal(format!("{} is not a valid plan: {e}", md_path(id))))?;
    Ok(Some((record, doc)))
}

/// Read-modify-write of plan `id`'s record (and its text, when given) under
/// compare-and-swap. `change` sees the current record (`None` when there is none)
/// and returns the record to write, `None` for no change, or a refusal. A command
/// whose op id the record already holds is not applied again. When the result is
/// approved for a text whose safe operations were not yet counted, the repository's
/// auto-accept count grows (only when auto-accept is configured).
pub(crate) async fn update_record<E: Send + 'static>(
    cx: &RepoCtx<'_>,
    id: &str,
    text: Option<(String, u32)>,
    message: String,
    op_id: Option<&str>,
    mut change: Box<Change<E>>,
) -> Result<Result<Option<PlanRecord>, E>, EngineError> {
    let counting = plan_policy::auto_accept_config(&cx.repo_config()).is_some();
    let store = store(cx).await?;
    let paths = [json_path(id), md_path(id), AUTO_ACCEPT_PATH.to_owned()];
    let op = op_id.map(str::to_owned);
    let now = cx.now();
    let (text, safe_ops) = match text {
        Some((t, n)) => (Some(t.into_bytes()), Some(n)),
        None => (None, None),
    };
    blocking(move || {
        let mut outcome: Result<Option<PlanRecord>, E> = Ok(None);
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        store.update_files(&refs, &message, now, |current| {
            let old: Option<PlanRecord> = current[0]
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok());
            if let (Some(old), Some(op)) = (old.as_ref(), op.as_ref()) {
                if old.op_ids.contains(op) {
                    outcome = Ok(Some(old.clone()));
                    return None;
                }
            }
            let mut count: AutoAcceptCount = current[2]
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or_default();
            let seen = Seen {
                safe_operations: count.safe_operations_accepted,
            };
            let mut record = match change(old.clone(), &seen) {
                Ok(Some(record)) => record,
                Ok(None) => {
                    outcome = Ok(old);
                    return None;
                }
                Err(reason) => {
                    outcome = Err(reason);
                    return None;
                }
            };
            if let Some(op) = op.as_ref() {
                record.remember(op, now);
            }
            let mut files = vec![(paths[0].clone(), Vec::new())];
            if let Some(text) = text.as_ref() {
                files.push((paths[1].clone(), text.clone()));
            }
            let newly_approved = record.is_approved()
                && record.counted_hash.as_deref() != Some(record.hash.as_str());
            if counting && newly_approved {
                let ops = safe_ops.unwrap_or(record.safe_operations);
                count.safe_operations_accepted = count.safe_operations_accepted.saturating_add(ops);
                record.counted_hash = Some(record.hash.clone());
                let mut bytes = serde_json::to_vec_pretty(&count).unwrap_or_default();
                bytes.push(b'\n');
                files.push((paths[2].clone(), bytes));
            }
            if let Some(n) = safe_ops {
                record.safe_operations = n;
            }
            files[0].1 = record.to_json();
            outcome = Ok(Some(record));
            Some(files)
        })?;
        Ok(outcome)
    })
    .await
}

/// The repository's running count of accepted safe operations (see [`AutoAcceptCount`]).
const AUTO_ACCEPT_PATH: &str = ".navin/plans/auto-accept.json";

/// `.navin/plans/auto-accept.json`: safe operations accepted so far in this repository,
/// the running count the auto-accept threshold is compared with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct AutoAcceptCount {
    safe_operations_accepted: u32,
}

/// A record change: the record to write, `None` for no change, or why not (`E`: words
/// for a person, or a typed refusal the caller acts on).
pub(crate) type Change<E> =
    dyn FnMut(Option<PlanRecord>, &Seen) -> Result<Option<PlanRecord>, E> + Send;
