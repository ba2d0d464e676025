//! `/plan`, `/plan edit`, `/approve`, `/reject` on issues and pull requests: the built-in planner run read-only through the API, the plan record on the ledger branch, and the plan comment.

use navin_github::ops;
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::policy::safe_operations_in;
use navin_ledger::plan::PlanDocument;
use serde::{Deserialize, Serialize};

use super::plan_save::{Base, Saved};
use super::{blocking, comments, Answer, EngineError, Refusal, Session};
use crate::source::{fetch_commit, SourceError, TreeFiles, Want};
use navin_domain::config::Fallback;
use navin_domain::render::{plan_comment, Marker, PlanCommentInfo};
use navin_domain::rules::plan_policy;
pub(crate) use navin_ledger::plan::record::{
    ApprovalEntry, PlanRecord, RecordStatus, RejectionEntry,
};
use navin_planner::external::{plan_commit, Planned};
use navin_planner::CommitTree;
use navin_runner::checks::{self, LineProblem, LineSource};
use secrecy::ExposeSecret as _;
use std::sync::Arc;

const SOURCE: &str = "built-in planner";

/// The repository's running count of accepted safe operations (see [`AutoAcceptCount`]).
const AUTO_ACCEPT_PATH: &str = ".navin/plans/auto-accept.json";

/// Plan ids are one per issue (regenerated in place) and one per pull request.
pub use navin_ledger::plan::record::{plan_id, pr_plan_id};
use navin_ledger::plan::record::{record_path as json_path, text_path as md_path};

use super::plan_types::{PullInfo, Seen};

/// `.navin/plans/auto-accept.json`: safe operations accepted so far in this repository,
/// the running count the auto-accept threshold is compared with.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct AutoAcceptCount {
    safe_operations_accepted: u32,
}

/// A record change: the record to write, `None` for no change, or why not (`E`: words
/// for a person, or a typed refusal the caller acts on).
type Change<E> = dyn FnMut(Option<PlanRecord>, &Seen) -> Result<Option<PlanRecord>, E> + Send;

impl Session<'_> {
    /// One plan per issue (`issue-<n>`) and one per pull request (`pr-<n>`).
    pub(crate) fn plan_id(&self) -> String {
        if self.origin.on_pull_request {
            pr_plan_id(self.origin.issue)
        } else {
            plan_id(self.origin.issue)
        }
    }

    pub(crate) async fn pull_info(&self) -> Result<PullInfo, EngineError> {
        let path = ops::pull_request(&self.repo, self.origin.issue);
        let pr: navin_domain::event::PullRequest = self.client.get_json(&path).await?;
        Ok(PullInfo::from_payload(&pr))
    }

    /// The plan of this issue or pull request: record and validated document.
    pub(crate) async fn read_plan(
        &self,
    ) -> Result<Option<(PlanRecord, PlanDocument)>, EngineError> {
        self.read_plan_id(&self.plan_id()).await
    }

    pub(crate) async fn read_plan_id(
        &self,
        id: &str,
    ) -> Result<Option<(PlanRecord, PlanDocument)>, EngineError> {
        let store = self.store().await?;
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
        let doc = PlanDocument::parse(&text).map_err(|e| {
            EngineError::Internal(format!("{} is not a valid plan: {e}", md_path(id)))
        })?;
        Ok(Some((record, doc)))
    }

    /// Fetches the commit `at` (a pull request's head), or the default branch's tip, by
    /// git and plans it with the repository's planner. Nothing is written anywhere; the
    /// planner reads git objects only.
    async fn draft_plan(
        &self,
        request: &str,
        at: Option<&str>,
    ) -> Result<Result<Planned, String>, EngineError> {
        let want = match at {
            Some(sha) => Want::Commit(sha.to_owned()),
            None => Want::Branch(self.default_branch.clone()),
        };
        let tree = match self.fetch_source(want).await? {
            Ok(tree) => tree,
            // The payload's default branch may be stale (renamed since): ask the repository.
            Err(SourceError::Missing(_)) if at.is_none() => {
                let repo: serde_json::Value =
                    self.client.get_json(&ops::repository(&self.repo)).await?;
                let found = repo["default_branch"].as_str().unwrap_or_default();
                if found.is_empty() || found == self.default_branch {
                    return Ok(Err(format!(
                        "the default branch {} could not be fetched",
                        self.default_branch
                    )));
                }
                match self.fetch_source(Want::Branch(found.to_owned())).await? {
                    Ok(tree) => tree,
                    Err(e) => return Ok(Err(e.to_string())),
                }
            }
            Err(e) => return Ok(Err(e.to_string())),
        };
        let config = self.repo_config();
        let mut planner = config.planner.clone();
        if let Some(source) = self.engine.config.planner_source {
            planner.source = source;
        }
        let mut external = self.engine.config.planner.clone();
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
            tracing::warn!(repo = %self.repo, error = %e, "the planner gave no plan");
            e.to_string()
        }))
    }

    /// The default branch's tree, fetched by git; `None` when it cannot be read (logged):
    /// what needs it then falls back (the well-known programs, no command checks).
    pub(crate) async fn default_tree(&self) -> Result<Option<Arc<CommitTree>>, EngineError> {
        let want = Want::Branch(self.default_branch.clone());
        match self.fetch_source(want).await? {
            Ok(tree) => Ok(Some(Arc::new(tree))),
            Err(e) => {
                tracing::warn!(repo = %self.repo, error = %e, "cannot read the default branch");
                Ok(None)
            }
        }
    }

    /// The programs the default branch's manifests, scripts and commands run, which a
    /// plan's verification may call. `None` when they cannot be mapped (logged).
    pub(crate) async fn toolchain(
        &self,
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
        &self,
        tree: &Arc<CommitTree>,
        init: &navin_ledger::InitArgs,
    ) -> Result<Option<(LineSource, LineProblem)>, EngineError> {
        let tree = Arc::clone(tree);
        let init = init.clone();
        blocking(move || Ok(checks::check_init(&init, &TreeFiles(tree.as_ref())).err())).await
    }

    /// The planned commit, fetched by git with a fresh installation token.
    async fn fetch_source(
        &self,
        want: Want,
    ) -> Result<Result<CommitTree, SourceError>, EngineError> {
        let token = self.client.token().await?.expose_secret().to_owned();
        let data_dir = self.engine.config.data_dir.clone();
        let repo = self.repo.clone();
        let url = self.engine.github.git_remote_url(&self.repo);
        let depth = self.engine.config.source_depth;
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

    /// Read-modify-write of plan `id`'s record (and its text, when given) under
    /// compare-and-swap. `change` sees the current record (`None` when there is none)
    /// and returns the record to write, `None` for no change, or a refusal. A command
    /// whose op id the record already holds is not applied again. When the result is
    /// approved for a text whose safe operations were not yet counted, the repository's
    /// auto-accept count grows (only when auto-accept is configured).
    pub(crate) async fn update_record<E: Send + 'static>(
        &self,
        id: &str,
        text: Option<(String, u32)>,
        message: String,
        op_id: Option<&str>,
        mut change: Box<Change<E>>,
    ) -> Result<Result<Option<PlanRecord>, E>, EngineError> {
        let counting = plan_policy::auto_accept_config(&self.repo_config()).is_some();
        let store = self.store().await?;
        let paths = [json_path(id), md_path(id), AUTO_ACCEPT_PATH.to_owned()];
        let op = op_id.map(str::to_owned);
        let now = self.now();
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
                    count.safe_operations_accepted =
                        count.safe_operations_accepted.saturating_add(ops);
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

    pub(crate) async fn show_plan(
        &self,
        record: &PlanRecord,
        doc: &PlanDocument,
    ) -> Result<(), EngineError> {
        let info = PlanCommentInfo {
            plan_id: record.id.clone(),
            source: record.source.clone(),
            status: navin_domain::render::plan_status(record),
            diff: record.diff.clone(),
            repo: Some(self.repo_ref()),
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
            &self.client,
            &self.repo,
            self.origin.issue,
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
        &self,
        record: &PlanRecord,
        doc: &PlanDocument,
        pr: Option<&PullInfo>,
        notes: &[String],
    ) -> Result<(), EngineError> {
        if !record.pull_request {
            self.show_plan(record, doc).await?;
            // Boxed: these re-judge steps and gates, whose futures would otherwise sit
            // inside every caller's and overflow a worker's stack in debug builds.
            Box::pin(self.refresh_step_checks(&record.id)).await?;
            return Box::pin(self.refresh_named_gates(record)).await;
        }
        let fetched;
        let pr = match pr {
            Some(pr) => pr,
            None => {
                fetched = self.pull_info().await?;
                &fetched
            }
        };
        let asked = Box::pin(self.request_owner_reviews(record, doc, pr)).await?;
        let record = asked.as_ref().unwrap_or(record);
        self.show_plan(record, doc).await?;
        let required = self.repo_config().approval.required_approvals;
        let check = navin_domain::render::plan_check::own_plan_check(record, required, notes);
        self.sync_check(pr, &check, &record.id).await
    }

    pub(crate) async fn plan(&self, request: &str, op_id: &str) -> Result<Answer, EngineError> {
        // A retried `/plan` whose record landed only re-posts the comment.
        if let Some((record, doc)) = self.read_plan().await? {
            if record.op_ids.iter().any(|o| o == op_id) {
                self.publish_plan(&record, &doc, None, &[]).await?;
                return Ok(Answer::React("+1"));
            }
        }
        self.new_text(request.trim(), None, op_id).await
    }

    /// Drafts a plan for `request` (on a pull request: at its head) and stores it as the
    /// plan's new text; the old text, if any, is superseded and its approvals go stale.
    async fn new_text(
        &self,
        request: &str,
        rejection: Option<RejectionEntry>,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let pr = match self.origin.on_pull_request {
            true => Some(self.pull_info().await?),
            false => None,
        };
        let at = pr.as_ref().map(|p| p.head_sha.as_str());
        let planned = match self.draft_plan(request, at).await? {
            Ok(planned) => planned,
            Err(reason) => return Ok(Answer::Refuse(Refusal::PlannerFailed(reason))),
        };
        let doc = planned.document;
        let source = match planned.source.as_str() {
            "builtin" => SOURCE.to_owned(),
            other => other.to_owned(),
        };
        let run = planned.run;
        let id = self.plan_id();
        let now = self.now();
        let config = self.repo_config();
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
            &Actor::Human(self.origin.author.clone()),
            request,
            Some(op_id),
        );
        let fresh = PlanRecord {
            source,
            run,
            request: request.to_owned(),
            repository: self.repo.clone(),
            issue: self.origin.issue,
            pull_request: self.origin.on_pull_request,
            requested_by: self.origin.author.clone(),
            safe_operations: safe_ops,
            ..PlanRecord::pending(&id, doc.hash(), now)
        };
        let who = self.origin.author.clone();
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
        let record = self
            .update_record(
                &id,
                Some((text, safe_ops)),
                message,
                Some(op_id),
                Box::new(change),
            )
            .await?;
        match record {
            Ok(Some(record)) => {
                self.publish_plan(&record, &doc, pr.as_ref(), &[]).await?;
                Ok(Answer::React("+1"))
            }
            Ok(None) => Ok(Answer::Refuse(Refusal::PlanNotStored)),
            Err(reason) => Ok(Answer::Refuse(Refusal::Plan(reason))),
        }
    }

    pub(crate) async fn approve(&self, op_id: &str) -> Result<Answer, EngineError> {
        if self.origin.on_pull_request {
            return Ok(Answer::Refuse(Refusal::ApproveWithReview));
        }
        let who = self.origin.author.clone();
        let who_id = self.origin.author_id;
        let required = self.repo_config().approval.required_approvals;
        let allow_author = self.repo_config().approval.allow_author_approval;
        let now = self.now();
        let waiting = match self.owner_approval(&who).await? {
            Ok(waiting) => waiting,
            Err(refusal) => return Ok(refusal),
        };
        self.decide(op_id, "approve", move |record| {
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
        &self,
        who: &str,
    ) -> Result<Result<Vec<navin_ledger::plan::record::FileOwners>, Answer>, EngineError> {
        if !self.repo_config().approval.require_codeowners {
            return Ok(Ok(Vec::new()));
        }
        let Some((record, doc)) = self.read_plan().await? else {
            return Ok(Ok(Vec::new()));
        };
        let files = self.plan_owners(&doc, None).await?;
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
        let verdict = self.owner_verdict(&files, &approvers).await?;
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
        if let Some(waiting) =
            navin_domain::rules::codeowners_approval::waiting_note(&verdict.waiting)
        {
            reason.push_str(&format!(" {waiting}."));
        }
        Ok(Err(Answer::Refuse(Refusal::NeedsCodeOwner(reason))))
    }

    pub(crate) async fn reject(
        &self,
        feedback: Option<String>,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let who = self.origin.author.clone();
        let now = self.now();
        if let Some(feedback) = feedback.filter(|f| !f.trim().is_empty()) {
            let Some((record, _)) = self.read_plan().await? else {
                return Ok(no_plan("reject"));
            };
            if record.op_ids.iter().any(|o| o == op_id) {
                return self.plan(&record.request, op_id).await;
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
            return self.new_text(&request, Some(rejection), op_id).await;
        }
        self.decide(op_id, "reject", move |record| {
            if record.status == RecordStatus::Rejected {
                return Err("the plan is already rejected.".to_owned());
            }
            record.reject(&who, &format!("@{who}"), None, now);
            Ok(())
        })
        .await
    }

    /// `/plan edit`: the block replaces the plan once it validates. When the plan changed
    /// after the comment was written, the block is merged section by section with those
    /// changes, and a conflict is refused naming the sections (see [`Self::save_edit`]).
    pub(crate) async fn plan_edit(&self, block: &str, op_id: &str) -> Result<Answer, EngineError> {
        let edited = match PlanDocument::parse(block) {
            Ok(doc) => doc,
            Err(e) => return Ok(Answer::Refuse(Refusal::PlanEditInvalid(e.to_string()))),
        };
        let base = match self.origin.written_at {
            Some(at) => Base::WrittenAt(at),
            None => Base::Current,
        };
        let saved = self
            .save_edit(
                &self.plan_id(),
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

    /// A status change of the current text (no new text) under compare-and-swap.
    async fn decide(
        &self,
        op_id: &str,
        verb: &'static str,
        change: impl Fn(&mut PlanRecord) -> Result<(), String> + Send + 'static,
    ) -> Result<Answer, EngineError> {
        let Some((_, doc)) = self.read_plan().await? else {
            return Ok(no_plan(verb));
        };
        let id = self.plan_id();
        let message = commit_message(
            &id,
            verb,
            &Actor::Human(self.origin.author.clone()),
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
        let outcome = self
            .update_record(&id, None, message, Some(op_id), Box::new(apply))
            .await?;
        match outcome {
            Ok(Some(record)) => {
                self.publish_plan(&record, &doc, None, &[]).await?;
                Ok(Answer::React("+1"))
            }
            Ok(None) => Ok(no_plan(verb)),
            Err(reason) => Ok(Answer::Refuse(Refusal::Plan(reason))),
        }
    }
}

fn no_plan(verb: &'static str) -> Answer {
    Answer::Refuse(Refusal::NoPlan { verb })
}
