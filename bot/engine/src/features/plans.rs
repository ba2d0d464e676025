//! `/plan`, `/approve`, `/reject` on issues and pull requests: the built-in planner run read-only through the API, the plan record on the ledger branch, and the plan comment.

use super::{blocking, comments, Answer, EngineError, Refusal, RepoCtx};
use crate::source::{fetch_commit, SourceError, TreeFiles, Want};
use navin_domain::config::Fallback;
use navin_domain::render::{plan_comment, Marker, PlanCommentInfo};
use navin_domain::rules::plan_policy;
use navin_github::ops;
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::policy::safe_operations_in;
pub(crate) use navin_ledger::plan::record::{
    ApprovalEntry, PlanRecord, RecordStatus, RejectionEntry,
};
use navin_ledger::plan::PlanDocument;
use navin_planner::external::{plan_commit, Planned};
use navin_planner::CommitTree;
use navin_runner::checks::{self, LineProblem, LineSource};
use secrecy::ExposeSecret as _;
use std::sync::Arc;

const SOURCE: &str = "built-in planner";

use navin_ledger::plan::record::record_path as json_path;

use super::checks::sync_check;
use super::gate::refresh_named_gates;
use super::owners::{owner_verdict, plan_owners, request_owner_reviews};
use super::plan_types::{PullInfo, Seen};
use super::records::{origin_plan_id, read_plan, update_record};
use super::step_drift::refresh_step_checks;

pub(crate) async fn pull_info(cx: &RepoCtx<'_>) -> Result<PullInfo, EngineError> {
    let path = ops::pull_request(&cx.repo, cx.origin.issue);
    let pr: navin_domain::event::PullRequest = cx.client.get_json(&path).await?;
    Ok(PullInfo::from_payload(&pr))
}

/// Fetches the commit `at` (a pull request's head), or the default branch's tip, by
/// git and plans it with the repository's planner. Nothing is written anywhere; the
/// planner reads git objects only.
async fn draft_plan(
    cx: &RepoCtx<'_>,
    request: &str,
    at: Option<&str>,
) -> Result<Result<Planned, String>, EngineError> {
    let want = match at {
        Some(sha) => Want::Commit(sha.to_owned()),
        None => Want::Branch(cx.default_branch.clone()),
    };
    let tree = match fetch_source(cx, want).await? {
        Ok(tree) => tree,
        // The payload's default branch may be stale (renamed since): ask the repository.
        Err(SourceError::Missing(_)) if at.is_none() => {
            let repo: serde_json::Value = cx.client.get_json(&ops::repository(&cx.repo)).await?;
            let found = repo["default_branch"].as_str().unwrap_or_default();
            if found.is_empty() || found == cx.default_branch {
                return Ok(Err(format!(
                    "the default branch {} could not be fetched",
                    cx.default_branch
                )));
            }
            match fetch_source(cx, Want::Branch(found.to_owned())).await? {
                Ok(tree) => tree,
                Err(e) => return Ok(Err(e.to_string())),
            }
        }
        Err(e) => return Ok(Err(e.to_string())),
    };
    let config = cx.repo_config();
    let mut planner = config.planner.clone();
    if let Some(source) = cx.engine.config.planner_source {
        planner.source = source;
    }
    let mut external = cx.engine.config.planner.clone();
    if let Some(model) = planner.model.clone().or_else(|| config.models.plan.clone()) {
        external.model = Some(model);
    }
    let request = request.to_owned();
    let handle = tokio::runtime::Handle::current();
    // The built-in planner is CPU work (a second on a big tree): keep it off the workers.
    let planned = tokio::task::spawn_blocking(move || {
        handle.block_on(plan_commit(
            planner.kind(),
            &external,
            &planner.budgets(),
            planner.fallback == Fallback::Builtin,
            &tree,
            &request,
        ))
    })
    .await
    .map_err(|e| EngineError::Internal(format!("planner task failed: {e}")))?;
    Ok(planned.map_err(|e| {
        tracing::warn!(repo = %cx.repo, error = %e, "the planner gave no plan");
        e.to_string()
    }))
}

/// The default branch's tree, fetched by git; `None` when it cannot be read (logged):
/// what needs it then falls back (the well-known programs, no command checks).
pub(crate) async fn default_tree(cx: &RepoCtx<'_>) -> Result<Option<Arc<CommitTree>>, EngineError> {
    let want = Want::Branch(cx.default_branch.clone());
    match fetch_source(cx, want).await? {
        Ok(tree) => Ok(Some(Arc::new(tree))),
        Err(e) => {
            tracing::warn!(repo = %cx.repo, error = %e, "cannot read the default branch");
            Ok(None)
        }
    }
}

/// The programs the default branch's manifests, scripts and commands run, which a
/// plan's verification may call. `None` when they cannot be mapped (logged).
pub(crate) async fn toolchain(
    tree: &Arc<CommitTree>,
) -> Result<Option<navin_ledger::plan::commands::Toolchain>, EngineError> {
    let tree = Arc::clone(tree);
    blocking(move || {
        Ok(navin_planner::repository_toolchain(
            tree.as_ref(),
            &navin_planner::PlannerOptions::default(),
        )
        .map_err(|e| tracing::warn!(error = %e, "cannot map the toolchain"))
        .ok())
    })
    .await
}

/// The first command line of the mission about to be made that can never run on
/// `tree` (see `navin_runner::checks`), with where it comes from.
pub(crate) async fn unrunnable_command(
    tree: &Arc<CommitTree>,
    init: &navin_ledger::InitArgs,
) -> Result<Option<(LineSource, LineProblem)>, EngineError> {
    let tree = Arc::clone(tree);
    let init = init.clone();
    blocking(move || Ok(checks::check_init(&init, &TreeFiles(tree.as_ref())).err())).await
}

/// The planned commit, fetched by git with a fresh installation token.
async fn fetch_source(
    cx: &RepoCtx<'_>,
    want: Want,
) -> Result<Result<CommitTree, SourceError>, EngineError> {
    let token = cx.client.token().await?.expose_secret().to_owned();
    let data_dir = cx.engine.config.data_dir.clone();
    let repo = cx.repo.clone();
    let url = cx.engine.github.git_remote_url(&cx.repo);
    let depth = cx.engine.config.source_depth;
    match tokio::task::spawn_blocking(move || {
        fetch_commit(&data_dir, &repo, &url, &token, &want, depth)
    })
    .await
    {
        Ok(Err(SourceError::Store(e))) => Err(e.into()),
        Ok(result) => Ok(result),
        Err(e) => Err(EngineError::Internal(format!(
            "source fetch task failed: {e}"
        ))),
    }
}

pub(crate) async fn show_plan(
    cx: &RepoCtx<'_>,
    record: &PlanRecord,
    doc: &PlanDocument,
) -> Result<(), EngineError> {
    let info = PlanCommentInfo {
        plan_id: record.id.clone(),
        source: record.source.clone(),
        status: navin_domain::render::plan_status(record),
        diff: record.diff.clone(),
        repo: Some(cx.repo_ref()),
        run: record.run.clone(),
        owner_notes: navin_domain::render::owner_notes(record),
    };
    let body = plan_comment(doc, &info);
    let id = record.id.clone();
    let probe = Marker::Plan {
        id: record.id.clone(),
        hash: doc.hash().to_owned(),
    }
    .to_string();
    comments::upsert(
        &cx.client,
        &cx.repo,
        cx.origin.issue,
        |m| matches!(m, Marker::Plan { id: found, .. } if *found == id),
        &probe,
        body,
    )
    .await?;
    Ok(())
}

/// The plan comment, and on a pull request the `navin/plan` check on its head, after
/// asking the code owners of a new text's proposed files to review it.
pub(crate) async fn publish_plan(
    cx: &RepoCtx<'_>,
    record: &PlanRecord,
    doc: &PlanDocument,
    pr: Option<&PullInfo>,
    notes: &[String],
) -> Result<(), EngineError> {
    if !record.pull_request {
        show_plan(cx, record, doc).await?;
        // Boxed: these re-judge steps and gates, whose futures would otherwise sit
        // inside every caller's and overflow a worker's stack in debug builds.
        Box::pin(refresh_step_checks(cx, &record.id)).await?;
        return Box::pin(refresh_named_gates(cx, record)).await;
    }
    let fetched;
    let pr = match pr {
        Some(pr) => pr,
        None => {
            fetched = pull_info(cx).await?;
            &fetched
        }
    };
    let asked = Box::pin(request_owner_reviews(cx, record, doc, pr)).await?;
    let record = asked.as_ref().unwrap_or(record);
    show_plan(cx, record, doc).await?;
    let required = cx.repo_config().approval.required_approvals;
    let check = navin_domain::render::plan_check::own_plan_check(record, required, notes);
    sync_check(cx, pr, &check, &record.id).await
}

pub(crate) async fn plan(
    cx: &RepoCtx<'_>,
    request: &str,
    op_id: &str,
) -> Result<Answer, EngineError> {
    // A retried `/plan` whose record landed only re-posts the comment.
    if let Some((record, doc)) = read_plan(cx).await? {
        if record.op_ids.iter().any(|o| o == op_id) {
            publish_plan(cx, &record, &doc, None, &[]).await?;
            return Ok(Answer::React("+1"));
        }
    }
    new_text(cx, request.trim(), None, op_id).await
}

/// Drafts a plan for `request` (on a pull request: at its head) and stores it as the
/// plan's new text; the old text, if any, is superseded and its approvals go stale.
async fn new_text(
    cx: &RepoCtx<'_>,
    request: &str,
    rejection: Option<RejectionEntry>,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let pr = match cx.origin.on_pull_request {
        true => Some(pull_info(cx).await?),
        false => None,
    };
    let at = pr.as_ref().map(|p| p.head_sha.as_str());
    let planned = match draft_plan(cx, request, at).await? {
        Ok(planned) => planned,
        Err(reason) => return Ok(Answer::Refuse(Refusal::PlannerFailed(reason))),
    };
    let doc = planned.document;
    let source = match planned.source.as_str() {
        "builtin" => SOURCE.to_owned(),
        other => other.to_owned(),
    };
    let run = planned.run;
    let id = origin_plan_id(cx);
    let now = cx.now();
    let config = cx.repo_config();
    let auto = plan_policy::auto_accept_config(&config);
    let safe_ops = auto
        .as_ref()
        .map(|a| safe_operations_in(doc.plan(), a))
        .unwrap_or(0);
    let verb = if rejection.is_some() {
        "regenerate"
    } else {
        "plan"
    };
    let message = commit_message(
        &id,
        verb,
        &Actor::Human(cx.origin.author.clone()),
        request,
        Some(op_id),
    );
    let fresh = PlanRecord {
        source,
        run,
        request: request.to_owned(),
        repository: cx.repo.clone(),
        issue: cx.origin.issue,
        pull_request: cx.origin.on_pull_request,
        requested_by: cx.origin.author.clone(),
        safe_operations: safe_ops,
        ..PlanRecord::pending(&id, doc.hash(), now)
    };
    let who = cx.origin.author.clone();
    let required = config.approval.required_approvals;
    let checked = doc.clone();
    let change = move |old: Option<PlanRecord>, seen: &Seen| {
        let mut record = match old {
            None => fresh.clone(),
            Some(mut old) => {
                let reason = match &rejection {
                    Some(_) => "rejected with feedback and regenerated",
                    None => "regenerated with /plan",
                };
                old.replace_text(&fresh.hash, &who, reason, now);
                old.source = fresh.source.clone();
                old.run = fresh.run.clone();
                old.request = fresh.request.clone();
                // A `/reject` regenerates the same request: whoever rejected it
                // does not become its requester, or the original requester could
                // approve their own plan alone. A new `/plan` is a new request.
                if rejection.is_none() {
                    old.requested_by = fresh.requested_by.clone();
                }
                old.original = None;
                old.diff = None;
                old
            }
        };
        if let Some(rejection) = &rejection {
            record.rejections.push(rejection.clone());
        }
        if let Some(auto) = &auto {
            record.auto_accept(&checked, auto, seen.safe_operations, required, now);
        }
        Ok::<_, String>(Some(record))
    };
    let text = doc.text().to_owned();
    let record = update_record(
        cx,
        &id,
        Some((text, safe_ops)),
        message,
        Some(op_id),
        Box::new(change),
    )
    .await?;
    match record {
        Ok(Some(record)) => {
            publish_plan(cx, &record, &doc, pr.as_ref(), &[]).await?;
            Ok(Answer::React("+1"))
        }
        Ok(None) => Ok(Answer::Refuse(Refusal::PlanNotStored)),
        Err(reason) => Ok(Answer::Refuse(Refusal::Plan(reason))),
    }
}

pub(crate) async fn approve(cx: &RepoCtx<'_>, op_id: &str) -> Result<Answer, EngineError> {
    if cx.origin.on_pull_request {
        return Ok(Answer::Refuse(Refusal::ApproveWithReview));
    }
    let who = cx.origin.author.clone();
    let who_id = cx.origin.author_id;
    let required = cx.repo_config().approval.required_approvals;
    let allow_author = cx.repo_config().approval.allow_author_approval;
    let now = cx.now();
    let waiting = match owner_approval(cx, &who).await? {
        Ok(waiting) => waiting,
        Err(refusal) => return Ok(refusal),
    };
    decide(cx, op_id, "approve", move |record| {
        if record.is_approved() {
            return Err("the plan is already approved.".to_owned());
        }
        if navin_domain::rules::approvals::own_plan(&record.requested_by, &who, allow_author) {
            return Err(format!(
                "@{who} asked for this plan, and people do not approve their own plans unless `approval.allow_author_approval: true` is set in `.github/navin.yml`; another person with write access can `/approve` it."
            ));
        }
        let hash = record.hash.clone();
        let approval = ApprovalEntry::new(&who, &hash, now, None).by_id(who_id);
        if record
            .current_approvals()
            .any(|a| a.identity() == approval.identity())
        {
            return Err(format!(
                "@{who} already approved this text; it needs {required} distinct approvers."
            ));
        }
        record.status = RecordStatus::Pending;
        record.approvals.push(approval);
        record.settle(required);
        navin_domain::rules::codeowners_approval::hold(record, &waiting);
        Ok(())
    })
    .await
}

/// `/approve` under `approval.require_codeowners`: refused (nothing changes) unless
/// `who` owns one of the plan's owned proposed files, by login or through an
/// active team membership; otherwise the owned files no approver owns yet. Without
/// the setting, or with no owned files, nothing waits.
pub(crate) async fn owner_approval(
    cx: &RepoCtx<'_>,
    who: &str,
) -> Result<Result<Vec<navin_ledger::plan::record::FileOwners>, Answer>, EngineError> {
    if !cx.repo_config().approval.require_codeowners {
        return Ok(Ok(Vec::new()));
    }
    let Some((record, doc)) = read_plan(cx).await? else {
        return Ok(Ok(Vec::new()));
    };
    let files = plan_owners(cx, &doc, None).await?;
    if files.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    let mut approvers: Vec<String> = record
        .current_approvals()
        .filter(|a| a.review_id.is_none() && a.note.is_none())
        .map(|a| a.approver.clone())
        .filter(|a| !a.eq_ignore_ascii_case(who))
        .collect();
    approvers.push(who.to_owned());
    let verdict = owner_verdict(cx, &files, &approvers).await?;
    if verdict.owners.iter().any(|o| o.eq_ignore_ascii_case(who)) {
        return Ok(Ok(verdict.waiting));
    }
    let mut reason = format!(
        "@{who} owns none of the plan's proposed files, and `approval.require_codeowners` counts only code owners' approvals, so nothing changed."
    );
    for note in navin_domain::render::plan_check::verdict_notes(&verdict)
        .into_iter()
        .filter(|n| !n.starts_with('@'))
    {
        reason.push(' ');
        reason.push_str(&note);
    }
    if let Some(waiting) = navin_domain::rules::codeowners_approval::waiting_note(&verdict.waiting)
    {
        reason.push_str(&format!(" {waiting}."));
    }
    Ok(Err(Answer::Refuse(Refusal::NeedsCodeOwner(reason))))
}

pub(crate) async fn reject(
    cx: &RepoCtx<'_>,
    feedback: Option<String>,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let who = cx.origin.author.clone();
    let now = cx.now();
    if let Some(feedback) = feedback.filter(|f| !f.trim().is_empty()) {
        let Some((record, _)) = read_plan(cx).await? else {
            return Ok(no_plan("reject"));
        };
        if record.op_ids.iter().any(|o| o == op_id) {
            return plan(cx, &record.request, op_id).await;
        }
        let request = format!(
            "{}\n\nFeedback on the previous plan from @{who}: {}",
            record.request,
            feedback.trim()
        );
        let rejection = RejectionEntry {
            by: who,
            feedback: Some(feedback.trim().to_owned()),
            plan_hash: record.hash.clone(),
            at: now,
        };
        return new_text(cx, &request, Some(rejection), op_id).await;
    }
    decide(cx, op_id, "reject", move |record| {
        if record.status == RecordStatus::Rejected {
            return Err("the plan is already rejected.".to_owned());
        }
        record.reject(&who, &format!("@{who}"), None, now);
        Ok(())
    })
    .await
}

/// A status change of the current text (no new text) under compare-and-swap.
async fn decide(
    cx: &RepoCtx<'_>,
    op_id: &str,
    verb: &'static str,
    change: impl Fn(&mut PlanRecord) -> Result<(), String> + Send + 'static,
) -> Result<Answer, EngineError> {
    let Some((_, doc)) = read_plan(cx).await? else {
        return Ok(no_plan(verb));
    };
    let id = origin_plan_id(cx);
    let message = commit_message(
        &id,
        verb,
        &Actor::Human(cx.origin.author.clone()),
        "",
        Some(op_id),
    );
    let path = json_path(&id);
    let apply = move |old: Option<PlanRecord>, _: &Seen| {
        let Some(mut record) = old else {
            return Err(format!("{path} is missing or does not parse."));
        };
        change(&mut record)?;
        Ok(Some(record))
    };
    let outcome = update_record(cx, &id, None, message, Some(op_id), Box::new(apply)).await?;
    match outcome {
        Ok(Some(record)) => {
            publish_plan(cx, &record, &doc, None, &[]).await?;
            Ok(Answer::React("+1"))
        }
        Ok(None) => Ok(no_plan(verb)),
        Err(reason) => Ok(Answer::Refuse(Refusal::Plan(reason))),
    }
}

pub(crate) fn no_plan(verb: &'static str) -> Answer {
    Answer::Refuse(Refusal::NoPlan { verb })
}
