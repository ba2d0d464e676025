//! Plan files in pull requests: a PR whose diff adds or changes `*.plan.md` or a `.md` under a `plans/` directory carries its plan as that file; each event records it, stores an edit with its diff, or fails the `navin/plan` check naming the first problem.

use super::checks::sync_check;
use super::plan_types::{EditRefused, PullInfo, Seen, TextEdit};
use super::plans::publish_plan;
use super::records::{read_plan_id, update_record};
use super::{EngineError, RepoCtx};
use base64::Engine as _;
use navin_domain::render::plan_check::broken_check;
use navin_domain::rules::plan_file::{looks_like_plan, plan_file_candidates, plan_file_of};
use navin_domain::rules::plan_policy;
use navin_github::ops;
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::policy::{safe_operations_in, ChangedFile};
use navin_ledger::plan::record::{pr_plan_id, record_path as json_path};
use navin_ledger::plan::record::{EditEntry, PlanRecord};
use navin_ledger::plan::PlanDocument;

/// Candidates read at most per event: a PR with many notes under `plans/` costs a
/// bounded number of reads.
const MAX_CANDIDATES: usize = 5;

/// The plan file of the pull request at its head, if it has one. Returns whether the
/// `navin/plan` check on the head was written here (then the gate has nothing to add).
pub(crate) async fn plan_file(
    cx: &RepoCtx<'_>,
    pr: &PullInfo,
    files: &[ChangedFile],
) -> Result<bool, EngineError> {
    if plan_file_of(files).is_none() {
        return Ok(false);
    }
    let id = pr_plan_id(pr.number);
    let op_id = format!("{}#plan-file", cx.delivery.id);
    let existing = read_plan_id(cx, &id).await?;
    // Ordinary notes under a `plans/` folder are not Navin's business: a file is a
    // plan when it says so in its title, or when this PR's plan already came from it.
    let mut found = None;
    for path in plan_file_candidates(files).take(MAX_CANDIDATES) {
        let read = file_at(cx, path, &pr.head_sha).await?;
        let ours = existing
            .as_ref()
            .is_some_and(|(r, _)| r.source.ends_with(path));
        match read {
            Ok(text) if !ours && !looks_like_plan(&text) => continue,
            // Unreadable (binary, over 1 MB): a plan only if the plan came from it.
            Err(_) if !ours => continue,
            read => {
                found = Some((path, read));
                break;
            }
        }
    }
    let Some((path, read)) = found else {
        return Ok(false);
    };
    let parsed = match read {
        Ok(text) => PlanDocument::parse(&text).map_err(|e| (e.to_string(), e.line)),
        Err(unreadable) => Err((unreadable, None)),
    };
    let doc = match parsed {
        Ok(doc) => doc,
        Err((problem, line)) => {
            let check = broken_check(
                path,
                &pr.head_sha,
                &problem,
                line,
                existing.as_ref().map(|r| &r.0),
            );
            sync_check(cx, pr, &check, &id).await?;
            return Ok(true);
        }
    };
    let Some((record, current)) = existing else {
        return record_file(cx, pr, path, doc, &op_id).await;
    };
    if record.op_ids.contains(&op_id) {
        // A redelivery after the record landed: only the comment and check again.
        publish_plan(cx, &record, &current, Some(pr), &[]).await?;
        return Ok(true);
    }
    let unchanged = record.hash == doc.hash() || record.file_hash.as_deref() == Some(doc.hash());
    if unchanged {
        // An implementation commit, or a file `/plan edit` has overtaken since.
        return Ok(false);
    }
    let head: String = pr.head_sha.chars().take(7).collect();
    let edit = TextEdit {
        file_hash: Some(doc.hash().to_owned()),
        edited: doc,
        via: format!("edited in the pull request's file {path} at {head}"),
        expected: None,
    };
    match store_edit(cx, record, &current, edit, &op_id, Some(pr)).await? {
        Ok(_) => Ok(true),
        Err(refused) => Err(EngineError::Internal(refused.to_string())),
    }
}

/// The first text of plan `pr-<n>`, from its file: stored pending and published
/// exactly as `/plan` on a pull request does.
async fn record_file(
    cx: &RepoCtx<'_>,
    pr: &PullInfo,
    path: &str,
    doc: PlanDocument,
    op_id: &str,
) -> Result<bool, EngineError> {
    let id = pr_plan_id(pr.number);
    let now = cx.now();
    let config = cx.repo_config();
    let auto = plan_policy::auto_accept_config(&config);
    let required = config.approval.required_approvals;
    let safe_ops = auto
        .as_ref()
        .map(|a| safe_operations_in(doc.plan(), a))
        .unwrap_or(0);
    let source = format!("pull request file {path}");
    let fresh = PlanRecord {
        source: source.clone(),
        request: format!("the plan in {path} of pull request #{}", pr.number),
        repository: cx.repo.clone(),
        issue: pr.number,
        pull_request: true,
        requested_by: pr.author.clone(),
        safe_operations: safe_ops,
        file_hash: Some(doc.hash().to_owned()),
        ..PlanRecord::pending(&id, doc.hash(), now)
    };
    let message = commit_message(
        &id,
        &format!("from {source}"),
        &Actor::Human(pr.author.clone()),
        "",
        Some(op_id),
    );
    let checked = doc.clone();
    let change = move |old: Option<PlanRecord>, seen: &Seen| {
        if old.is_some() {
            // Written meanwhile (a concurrent event): this one is not the first text.
            return Ok(None);
        }
        let mut record = fresh.clone();
        if let Some(auto) = &auto {
            record.auto_accept(&checked, auto, seen.safe_operations, required, now);
        }
        Ok(Some(record))
    };
    let stored = update_record(
        cx,
        &id,
        Some((doc.text().to_owned(), safe_ops)),
        message,
        Some(op_id),
        Box::new(change),
    )
    .await?;
    match stored {
        Ok(Some(record)) if record.hash == doc.hash() => {
            publish_plan(cx, &record, &doc, Some(pr), &[]).await?;
            Ok(true)
        }
        // Another text won the race; the gate shows the record as it is.
        Ok(_) => Ok(false),
        Err(reason) => Err(EngineError::Internal(reason)),
    }
}

/// Replaces the plan's text with `edit`: the diff against the original text (kept
/// from the first edit on) is stored and shown, the edit is logged under the
/// event's author, approvals of the old text go stale, and the comment and check
/// are published again. With [`TextEdit::expected`], nothing is written when the
/// stored text has moved on ([`EditRefused::Moved`]).
pub(crate) async fn store_edit(
    cx: &RepoCtx<'_>,
    record: PlanRecord,
    current: &PlanDocument,
    edit: TextEdit,
    op_id: &str,
    pr: Option<&PullInfo>,
) -> Result<Result<Option<PlanRecord>, EditRefused>, EngineError> {
    let TextEdit {
        edited,
        via,
        file_hash,
        expected,
    } = edit;
    let original = match record.original.as_deref() {
        Some(text) => PlanDocument::parse(text).map_err(|e| {
            EngineError::Internal(format!(
                "{}: the stored original does not parse: {e}",
                json_path(&record.id)
            ))
        })?,
        None => current.clone(),
    };
    let diff = navin_ledger::plan::diff(original.plan(), edited.plan());
    let id = record.id.clone();
    let now = cx.now();
    let who = cx.origin.author.clone();
    let who_id = cx.origin.author_id;
    let op = op_id.to_owned();
    let config = cx.repo_config();
    let auto = plan_policy::auto_accept_config(&config);
    let required = config.approval.required_approvals;
    let safe_ops = auto
        .as_ref()
        .map(|a| safe_operations_in(edited.plan(), a))
        .unwrap_or(0);
    let (new_hash, original_text) = (edited.hash().to_owned(), original.text().to_owned());
    let checked = edited.clone();
    let message = commit_message(
        &id,
        "edit",
        &Actor::Human(who.clone()),
        &format!("Replaced with an edited text ({new_hash}): {via}."),
        Some(op_id),
    );
    let change = move |old: Option<PlanRecord>, seen: &Seen| {
        let Some(mut record) = old else {
            return Err(EditRefused::Missing(format!(
                "{} is missing or does not parse.",
                json_path(&id)
            )));
        };
        if expected.as_ref().is_some_and(|hash| *hash != record.hash) {
            return Err(EditRefused::Moved);
        }
        record.edits.push(EditEntry {
            by: who.clone(),
            by_id: who_id,
            at: now,
            from_hash: record.hash.clone(),
            to_hash: new_hash.clone(),
            via: Some(via.clone()),
            op_id: Some(op.clone()),
        });
        record.original = Some(original_text.clone());
        record.diff = (!diff.is_empty()).then(|| diff.clone());
        record.replace_text(&new_hash, &who, &via, now);
        if file_hash.is_some() {
            record.file_hash = file_hash.clone();
        }
        if let Some(auto) = &auto {
            record.auto_accept(&checked, auto, seen.safe_operations, required, now);
        }
        Ok(Some(record))
    };
    let text = edited.text().to_owned();
    let outcome = update_record(
        cx,
        &record.id,
        Some((text, safe_ops)),
        message,
        Some(op_id),
        Box::new(change),
    )
    .await?;
    if let Ok(Some(stored)) = &outcome {
        if stored.hash == edited.hash() {
            publish_plan(cx, stored, &edited, pr, &[]).await?;
        } else if let Some((record, doc)) = read_plan_id(cx, &stored.id).await? {
            // The op id had landed already, with another text: show what is stored.
            publish_plan(cx, &record, &doc, pr, &[]).await?;
        }
    }
    Ok(outcome)
}

/// The text of `path` at commit `sha` through the contents API, or why it cannot be
/// read as a plan (absent, a directory, over the API's 1 MB, not UTF-8).
pub(crate) async fn file_at(
    cx: &RepoCtx<'_>,
    path: &str,
    sha: &str,
) -> Result<Result<String, String>, EngineError> {
    let api = ops::contents(&cx.repo, path, Some(sha));
    let file: serde_json::Value = match cx.client.get_json(&api).await {
        Ok(file) => file,
        Err(e) if e.status() == Some(404) => {
            return Ok(Err(format!("`{path}` is not in the head commit")))
        }
        Err(e) => return Err(e.into()),
    };
    if file["type"].as_str() != Some("file") {
        return Ok(Err(format!("`{path}` is not a file")));
    }
    if file["encoding"].as_str() != Some("base64") {
        return Ok(Err(format!(
            "`{path}` is too large to read through the contents API (over 1 MB)"
        )));
    }
    let packed: String = file["content"]
        .as_str()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(packed) else {
        return Ok(Err(format!(
            "the contents API sent undecodable base64 for `{path}`"
        )));
    };
    Ok(String::from_utf8(bytes).map_err(|_| format!("`{path}` is not UTF-8 text")))
}
