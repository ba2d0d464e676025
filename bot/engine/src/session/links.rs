//! Step links from pull requests: the step a PR names (`Navin-Step:` line or `navin/<step>-…` branch) follows the PR's head, so only runs on that head count.

use navin_ledger::{Actor, Ledger, Operation, TaskStatus};

use super::ci::takes_step_operations;
use super::{Engine, EngineError, Session};
use crate::event::is_commit_sha;
use crate::event::PullRequestEvent;
use crate::evidence::step_from_pr_in;
use crate::rules::token_scope::Need;
use crate::Cx;

impl Engine {
    /// `opened`, `reopened`, `synchronize` and `edited` link the named step to
    /// the PR's head. A PR closed without merging keeps its link: the step may
    /// still be proven by a reopened PR or another one naming it, and a newer
    /// PR's event moves the link anyway.
    pub(crate) async fn link_steps(
        &self,
        event: &PullRequestEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        match event.action.as_str() {
            "opened" | "reopened" | "synchronize" | "edited" => {}
            "closed" => {
                if event.pull_request.merged != Some(true) {
                    tracing::info!(
                        repo = %event.repository.full_name,
                        pr = event.pull_request.number,
                        "pull request closed without merging: its step link is left as it is"
                    );
                }
                return Ok(());
            }
            _ => return Ok(()),
        }
        let installation = cx.delivery.installation()?;
        let pr = &event.pull_request;
        let sender = event.sender.as_ref().unwrap_or(&pr.user);
        let mut session = self
            .session(
                cx,
                Need::Write,
                installation,
                &event.repository,
                pr.number,
                &sender.login,
            )
            .await?;
        session.on_pull_request = true;
        let actor = if sender.kind.as_deref() == Some("Bot") || sender.login.ends_with("[bot]") {
            Actor::App(sender.login.clone())
        } else {
            Actor::Human(sender.login.clone())
        };
        session.settle(session.link_pull(event, actor).await, "pull_request")
    }
}

impl Session<'_> {
    async fn link_pull(&self, event: &PullRequestEvent, actor: Actor) -> Result<(), EngineError> {
        if self.config.is_err() {
            return Ok(());
        }
        let pr = &event.pull_request;
        let sha = pr.head.sha.trim();
        if !is_commit_sha(sha) {
            return Ok(());
        }
        let Some(ledger) = self.read_ledger().await? else {
            return Ok(());
        };
        if !takes_step_operations(&ledger) {
            return Ok(());
        }
        let body = pr.body.as_deref().unwrap_or("");
        let Some(step) = step_from_pr_in(body, &pr.head.name, &ledger.board) else {
            return Ok(());
        };
        let Some(task) = ledger.board.task(&step) else {
            return Ok(());
        };
        if !self.may_link(pr).await? {
            tracing::info!(repo = %self.repo, step = %step, pr = pr.number, author = %pr.user.login, "a pull request from a fork by someone without write access cannot link a step");
            return Ok(());
        }
        if task.status == TaskStatus::Done {
            // Relinking would drop the runs that proved it.
            tracing::info!(repo = %self.repo, step = %step, pr = pr.number, "step already done: link left as it is");
            return Ok(());
        }
        let same_head = task
            .links
            .head_sha
            .as_deref()
            .is_some_and(|h| h.eq_ignore_ascii_case(sha));
        let unchanged = same_head
            && task.links.prs.contains(&pr.number)
            && task.links.branch.as_deref() == Some(pr.head.name.as_str());
        let mut ledger = ledger;
        let mut written = false;
        if !unchanged {
            let op = Operation::Link {
                step: step.clone(),
                pr: Some(pr.number),
                head_sha: Some(sha.to_owned()),
                branch: Some(pr.head.name.clone()),
            };
            let op_id = format!("{}#{step}", self.delivery.id);
            if let Some((after, _)) = self.transact(op, &op_id, actor.clone()).await? {
                ledger = after;
                written = true;
            }
        }
        if let Some(after) = self.retry_on_new_head(&ledger, &step, actor).await? {
            ledger = after;
            written = true;
        }
        // Runs may have finished on this head before the PR named the step.
        if !same_head {
            let needs_runs = ledger
                .board
                .task(&step)
                .is_some_and(|t| t.validation.needs_run() || t.has_acceptance());
            if needs_runs {
                let runs = self.check_runs(sha).await?;
                let (after, judged) = self.judge(ledger, sha, runs, None).await?;
                ledger = after;
                written |= judged;
            }
        }
        if written || self.delivery.is_retry() {
            self.refresh_panel_of(&ledger).await?;
        }
        Ok(())
    }

    /// Whether this PR may carry a step. A head branch in this repository was pushed by
    /// someone with write access; a fork's head was not, and its CI runs green on
    /// whatever the fork wrote, so a fork PR links only when its author is a writer.
    /// Otherwise anyone could move a step's head to their own code and close it.
    async fn may_link(&self, pr: &crate::event::PullRequest) -> Result<bool, EngineError> {
        let same_repo = pr
            .head
            .repo
            .as_ref()
            .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&self.repo));
        if same_repo {
            return Ok(true);
        }
        let role = self
            .engine
            .permissions
            .role(&self.client, &self.repo, &pr.user.login, pr.user.id)
            .await?;
        Ok(super::permission::may_mutate(&role))
    }

    /// A failed step whose new head has no failure of its own gets its next
    /// attempt: the push is the fix the failure asked for. (A step out of
    /// retries was already sent back to planned by the ledger.)
    async fn retry_on_new_head(
        &self,
        ledger: &Ledger,
        step: &str,
        actor: Actor,
    ) -> Result<Option<Ledger>, EngineError> {
        let Some(task) = ledger.board.task(step) else {
            return Ok(None);
        };
        let head = task.links.head_sha.as_deref();
        let failed_here = task
            .evidence
            .iter()
            .any(|e| !e.ok && head.is_some() && e.head_sha.as_deref() == head);
        if task.status != TaskStatus::Failed || failed_here {
            return Ok(None);
        }
        let op = Operation::Retry {
            step: step.to_owned(),
        };
        let op_id = format!("{}#{step}#retry", self.delivery.id);
        Ok(self.transact(op, &op_id, actor).await?.map(|(l, _)| l))
    }
}
