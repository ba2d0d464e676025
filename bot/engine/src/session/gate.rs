//! Plans on pull requests: review approvals counted into the plan record, and the `navin/plan` check (the plan-required gate) on the head.

use navin_github::ops;
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::policy::{plan_requirement, ChangedFile};

use super::plan_types::PullInfo;
use super::Engine;
use super::{permission, EngineError, Session};
use crate::effects::plan_check::{self, CheckState, PlanCheck};
use crate::session::EventOrigin;
use crate::token_scope::Need;
use crate::Cx;
use navin_domain::event::{PullRequest, PullRequestEvent, ReviewEvent};
use navin_domain::render::plan_check::{not_counted, own_plan_check, short, verdict_notes};
use navin_domain::rules::approvals::{self, NotCounted, RestReview};
use navin_domain::rules::drift::{step_drift, with_drift};
use navin_domain::rules::plan_policy;
use navin_ledger::plan::record::pr_plan_id;
use navin_ledger::plan::record::{CountedReview, PlanRecord};

use crate::reads::MAX_FILE_PAGES;

impl Engine {
    /// `pull_request` opened/synchronize/reopened/edited: the `navin/plan` check on the
    /// new head, from the PR's own plan or, under `require_plan_for`, from the plan its
    /// body names.
    pub(crate) async fn gate_pull_request(
        &self,
        event: &PullRequestEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        let wanted = [
            "opened",
            "synchronize",
            "reopened",
            "edited",
            "ready_for_review",
        ];
        if !wanted.contains(&event.action.as_str())
            || event.pull_request.state.as_deref() == Some("closed")
        {
            return Ok(());
        }
        let installation = cx.delivery.installation()?;
        let pr = PullInfo::from_payload(&event.pull_request);
        let actor = event
            .sender
            .as_ref()
            .map(|s| s.login.clone())
            .unwrap_or_else(|| pr.author.clone());
        let origin = EventOrigin::new(pr.number, &actor)
            .on_pull_request(true)
            .author_id(event.sender.as_ref().and_then(|s| s.id))
            .body(Some(&pr.body));
        let session = self
            .session(cx, Need::Write, installation, &event.repository, origin)
            .await?;
        // A new head may carry a fix for the default branch's broken config: its
        // `navin/config` check runs whatever the default branch's file says.
        let new_head = ["opened", "synchronize", "reopened"].contains(&event.action.as_str());
        if let Err(invalid) = &session.config {
            tracing::warn!(repo = %session.repo, error = %invalid, "invalid config: no plan gate");
            if new_head {
                match session.changed_files(pr.number).await {
                    Ok(files) => session.config_check(&pr, &files).await?,
                    Err(e) if e.is_transient() => return Err(e),
                    Err(e) => {
                        tracing::warn!(repo = %session.repo, error = %e, "pull request files unreadable: no navin/config check")
                    }
                }
            }
            return Ok(());
        }
        // One files list serves the config check, the plan file, the automatic plan
        // and the `require_plan_for` gate.
        let files = match session.changed_files(pr.number).await {
            Ok(files) => Some(files),
            // GitHub does not know the pull request (deleted, or a stale payload): it
            // carries no plan file; the gate decides on its own as before.
            Err(EngineError::GitHub(e)) if e.status() == Some(404) => {
                tracing::warn!(repo = %session.repo, pr = pr.number, "pull request files not found: no plan file");
                None
            }
            Err(e) => return Err(e),
        };
        if let (Some(files), true) = (&files, new_head) {
            session.config_check(&pr, files).await?;
        }
        if let Some(files) = &files {
            if session.plan_file(&pr, files).await? {
                return Ok(());
            }
        }
        // After the plan file: a pull request that carries its own plan never gets an
        // automatic one on top.
        if event.action == "opened" {
            let pull = &event.pull_request;
            let title = pull.title.as_deref().unwrap_or_default();
            let body = pull.body.as_deref().unwrap_or_default();
            session.auto_plan(title, body, &pull.user).await?;
        }
        session.gate(&pr, files).await
    }

    /// `pull_request_review` submitted/edited/dismissed: the PR's plan approvals follow
    /// its reviews, then the plan comment and the check.
    pub(crate) async fn review_plan(
        &self,
        event: &ReviewEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        if !["submitted", "edited", "dismissed"].contains(&event.action.as_str()) {
            return Ok(());
        }
        let installation = cx.delivery.installation()?;
        let pr = PullInfo::from_payload(&event.pull_request);
        let actor = event
            .review
            .user
            .as_ref()
            .map(|u| u.login.clone())
            .unwrap_or_else(|| "ghost".to_owned());
        let origin = EventOrigin::new(pr.number, &actor)
            .on_pull_request(true)
            .author_id(event.review.user.as_ref().and_then(|u| u.id));
        let session = self
            .session(cx, Need::Write, installation, &event.repository, origin)
            .await?;
        if session.config.is_err() {
            return Ok(());
        }
        session.sync_reviews(&pr).await
    }
}

impl Session<'_> {
    pub(crate) async fn sync_check(
        &self,
        pr: &PullInfo,
        check: &PlanCheck,
        external_id: &str,
    ) -> Result<(), EngineError> {
        let done = plan_check::sync(
            &self.client,
            &self.repo,
            &pr.head_sha,
            check,
            pr.html_url.as_deref(),
            external_id,
        )
        .await?;
        tracing::debug!(repo = %self.repo, pr = pr.number, ?done, conclusion = check.conclusion(), "navin/plan check");
        Ok(())
    }

    /// Recounts the PR plan's approvals from `GET /pulls/{n}/reviews`.
    pub(crate) async fn sync_reviews(&self, pr: &PullInfo) -> Result<(), EngineError> {
        let Some((record, doc)) = self.read_plan().await? else {
            return Ok(());
        };
        let reviews = self.reviews(pr.number).await?;
        let config = self.repo_config();
        let standing: Vec<u64> = approvals::latest_approvals(&reviews)
            .values()
            .map(|r| r.id)
            .collect();
        let (candidates, refused) = approvals::candidates(
            &reviews,
            &pr.author,
            config.approval.allow_author_approval,
            record.text_at,
        );
        let mut notes: Vec<String> = refused.iter().map(not_counted).collect();
        let now = self.now();
        let mut counted = Vec::new();
        for c in candidates {
            // Recorded for an earlier text (an edit in the same second as the review).
            let earlier = record
                .approvals
                .iter()
                .any(|a| a.review_id == Some(c.review_id) && a.plan_hash != record.hash);
            if earlier {
                notes.push(not_counted(&NotCounted::BeforeText { login: c.login }));
                continue;
            }
            let role = self
                .engine
                .permissions
                .role(&self.client, &self.repo, &c.login, c.user_id)
                .await?;
            if permission::may_mutate(&role) {
                counted.push(CountedReview {
                    review_id: c.review_id,
                    login: c.login,
                    user_id: c.user_id,
                    at: c.at.unwrap_or(now),
                });
            } else {
                notes.push(format!(
                    "@{} has role `{role}`; approvals need write access.",
                    c.login
                ));
            }
        }
        // `approval.require_codeowners`: only owners of the proposed files count, and
        // every owned file needs one of its owners.
        let mut waiting = Vec::new();
        if config.approval.require_codeowners {
            let files = self.plan_owners(&doc, Some(&pr.base_ref)).await?;
            // Reviews, and the approvals given without one (the check's button), which
            // the recount keeps; an automatic approval is nobody's and never counts here.
            let mut approvers: Vec<String> = counted.iter().map(|c| c.login.clone()).collect();
            approvers.extend(
                record
                    .current_approvals()
                    .filter(|a| a.review_id.is_none() && a.note.is_none())
                    .map(|a| a.approver.clone()),
            );
            let verdict = self.owner_verdict(&files, &approvers).await?;
            notes.extend(verdict_notes(&verdict));
            counted.retain(|c| verdict.owners.iter().any(|o| o == &c.login));
            waiting = verdict.waiting;
        }
        let required = config.approval.required_approvals;
        let id = record.id.clone();
        let message = commit_message(
            &id,
            "reviews",
            &Actor::Human(self.origin.author.clone()),
            "Approvals recounted from the pull request's reviews.",
            Some(&self.delivery.id),
        );
        let change = move |old: Option<PlanRecord>, _: &super::plan_types::Seen| {
            let Some(mut record) = old else {
                return Ok(None);
            };
            let recounted = record.reconcile_reviews(&standing, &counted, required, now);
            let held = navin_domain::rules::codeowners_approval::hold(&mut record, &waiting);
            Ok((recounted || held).then_some(record))
        };
        let updated = self
            .update_record(&id, None, message, None, Box::new(change))
            .await?;
        let record = match updated {
            Ok(Some(record)) => record,
            Ok(None) => record,
            Err(reason) => return Err(EngineError::Internal(reason)),
        };
        self.publish_plan(&record, &doc, Some(pr), &notes).await
    }

    /// After a change to a plan that pull requests may name (`Navin-Plan:`), runs the
    /// gate again on every open pull request whose body names it, so approving an
    /// issue's plan turns their checks green without a push. Only when
    /// `require_plan_for` is set (otherwise no gate exists).
    pub(crate) async fn refresh_named_gates(&self, record: &PlanRecord) -> Result<(), EngineError> {
        if plan_policy::plan_triggers(&self.repo_config()).is_empty() {
            return Ok(());
        }
        let mut next = Some(ops::open_pull_requests(&self.repo));
        let mut pages = 0;
        while let Some(path) = next {
            pages += 1;
            let page = self.client.get(&path).await?;
            let pulls: Vec<PullRequest> = page.json(&path)?;
            for pull in &pulls {
                let info = PullInfo::from_payload(pull);
                if plan_policy::referenced_plans(&info.body).contains(&record.id) {
                    self.gate(&info, None).await?;
                }
            }
            next = page.next_page().filter(|_| pages < MAX_FILE_PAGES);
        }
        Ok(())
    }

    /// Every review of the pull request, oldest first.
    pub(crate) async fn reviews(&self, number: u64) -> Result<Vec<RestReview>, EngineError> {
        let mut all = Vec::new();
        let mut next = Some(ops::pull_request_reviews(&self.repo, number));
        while let Some(path) = next {
            let page = self.client.get(&path).await?;
            let reviews: Vec<RestReview> = page.json(&path)?;
            all.extend(reviews);
            next = page.next_page();
        }
        Ok(all)
    }

    /// The files the pull request changes, paged.
    pub(crate) async fn changed_files(&self, number: u64) -> Result<Vec<ChangedFile>, EngineError> {
        Ok(crate::reads::pull_request_files(&self.client, &self.repo, number).await?)
    }

    /// The gate: a PR with its own plan gets that plan's check; a PR carrying a step of a
    /// mission started from a plan gets the step's check (files outside the plan or its
    /// stage, see [`Session::step_check`]); otherwise, when the
    /// change sets off `require_plan_for`, the check waits for an approved plan the
    /// body names (`Navin-Plan: #12`). Nothing required, no check.
    /// `files` is the PR's files list when the caller already read it.
    async fn gate(
        &self,
        pr: &PullInfo,
        files: Option<Vec<ChangedFile>>,
    ) -> Result<(), EngineError> {
        let config = self.repo_config();
        if let Some((record, doc)) = self.read_plan_id(&pr_plan_id(pr.number)).await? {
            let mut check = own_plan_check(&record, config.approval.required_approvals, &[]);
            if let Some(files) = &files {
                let drift = step_drift(doc.plan(), None, files);
                check = with_drift(check, &record.id, &drift, config.plan.scope);
            }
            return self.sync_check(pr, &check, &record.id).await;
        }
        // A mission step's pull request is covered by the plan its mission came from,
        // and held to it: `require_plan_for` asks for nothing more.
        if let Some(step) = self.step_check(pr, files.as_deref()).await? {
            self.sync_check(pr, &step.check, &format!("step-{}", pr.number))
                .await?;
            if let Some(ledger) = step.written {
                self.refresh_panel_of(&ledger).await?;
            }
            return Ok(());
        }
        let triggers = plan_policy::plan_triggers(&config);
        if triggers.is_empty() {
            return Ok(());
        }
        let files = match files {
            Some(files) => files,
            None => self.changed_files(pr.number).await?,
        };
        let requirement = plan_requirement(&files, &triggers);
        if !requirement.is_required() {
            return Ok(());
        }
        let why = requirement.reason();
        let mut named = None;
        for id in plan_policy::referenced_plans(&pr.body) {
            if let Some((record, _)) = self.read_plan_id(&id).await? {
                named = Some(record);
                break;
            }
        }
        let check = match named {
            Some(record) if record.is_approved() => PlanCheck {
                verdict: CheckState::Approved,
                title: format!("Covered by approved plan {}", record.id),
                summary: format!(
                    "{why} (`require_plan_for`). The pull request names plan `{}` ({}), approved by {}.",
                    record.id,
                    short(&record.hash),
                    record
                        .current_approvals()
                        .map(|a| format!("@{}", a.approver))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                annotations: Vec::new(),
                actions: Vec::new(),
            },
            Some(record) => PlanCheck {
                verdict: CheckState::Waiting,
                title: format!("Plan {} is not approved", record.id),
                summary: format!(
                    "{why} (`require_plan_for`). The pull request names plan `{}`, which is {} rather than approved. Approve it on #{} (a review there, or `/approve` on an issue), then push or edit this pull request to re-run the check.",
                    record.id, record.status.word(), record.issue
                ),
                annotations: Vec::new(),
                actions: Vec::new(),
            },
            None => PlanCheck {
                verdict: CheckState::Waiting,
                title: "An approved plan is required".to_owned(),
                summary: format!(
                    "{why} (`require_plan_for`), and no approved plan covers this pull request. Either comment `/plan <what this change does>` here and approve the plan with a review, or name an approved plan in the pull request body with a line `Navin-Plan: #<issue>`."
                ),
                annotations: Vec::new(),
                actions: Vec::new(),
            },
        };
        self.sync_check(pr, &check, &format!("gate-{}", pr.number))
            .await
    }
}
