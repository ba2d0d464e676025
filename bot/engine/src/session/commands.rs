//! Each slash command mapped to ledger operations, then the sticky mission panel re-rendered on the mission's issue.

use std::sync::Arc;

use navin_ledger::model::MissionMode;
use navin_ledger::store::{Committed, Reading, Store};
use navin_ledger::{
    Actor, Effect, Evidence, InitArgs, Ledger, MissionStatus, NewTask, Operation, Origin,
    PauseReason, TaskStatus, UpdateArgs,
};

use super::comments::Upserted;
use super::PanelBatch;
use super::{blocking, plans, Answer, EngineError, Refusal, Session};
use navin_domain::command::{help_text, CloseOutcome, Command, UpdateField};
use navin_domain::render::{reply, RepoRef};
use navin_domain::rules::steps;
use navin_ledger::plan::convert;

impl Session<'_> {
    pub(crate) async fn execute(
        &self,
        command: Command,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let who = format!("@{}", self.origin.author);
        let op = match command {
            Command::Help => return Ok(Answer::Reply(reply::help(&help_text()))),
            Command::Status => return self.status().await,
            Command::Next => return self.next().await,
            Command::Plan { request } => return self.plan(&request, op_id).await,
            Command::PlanEdit { plan } => return self.plan_edit(&plan, op_id).await,
            Command::Approve => return self.approve(op_id).await,
            Command::Reject { feedback } => return self.reject(feedback, op_id).await,
            Command::Mission { replace, goal } => {
                return self
                    .mission(replace, goal, MissionMode::Staged, op_id)
                    .await
            }
            Command::Cruise { replace, goal } => {
                return self
                    .mission(replace, goal, MissionMode::Cruise, op_id)
                    .await
            }
            Command::Done { step, evidence } => {
                return self.done(step.as_str(), evidence, op_id).await
            }
            Command::MissionClose { outcome, reason } => {
                let Some(ledger) = self.read_ledger().await? else {
                    return Ok(no_mission());
                };
                let all_done = ledger
                    .board
                    .tasks
                    .iter()
                    .all(|t| t.status == TaskStatus::Done);
                let status = match outcome {
                    Some(CloseOutcome::Done) => MissionStatus::Done,
                    Some(CloseOutcome::Failed) => MissionStatus::Failed,
                    None if all_done => MissionStatus::Done,
                    None => MissionStatus::Failed,
                };
                Operation::Close {
                    status,
                    reason: reason.unwrap_or_else(|| format!("closed by {who}")),
                }
            }
            Command::Pause { reason } => Operation::Pause {
                reason: PauseReason::Human,
                note: reason.unwrap_or_else(|| format!("paused by {who}")),
            },
            Command::Resume => Operation::Resume {
                note: format!("resumed by {who}"),
            },
            Command::Continue { note } => Operation::Continue {
                note: note.map_or_else(|| format!("by {who}"), |n| format!("by {who}: {n}")),
            },
            Command::Retry { step } => Operation::Retry {
                step: step.into_string(),
            },
            Command::Replan { step, reason } => Operation::Replan {
                step: step.into_string(),
                reason: reason.unwrap_or_else(|| format!("requested by {who}")),
            },
            Command::Update { field, text } => {
                let mut args = UpdateArgs {
                    reason: match field {
                        UpdateField::Goal => format!("goal changed by {who}"),
                        UpdateField::Fact => format!("fact added by {who}"),
                        UpdateField::Constraint => format!("constraint added by {who}"),
                        UpdateField::Missing => format!("missing info added by {who}"),
                    },
                    ..UpdateArgs::default()
                };
                match field {
                    UpdateField::Goal => args.goal = Some(text),
                    UpdateField::Fact => args.add_facts = vec![text],
                    UpdateField::Constraint => args.add_constraints = vec![text],
                    UpdateField::Missing => args.add_missing_info = vec![text],
                }
                Operation::Update(args)
            }
            Command::Rollback { version } => return self.rollback(version, op_id).await,
            Command::Answer { number, text } => {
                let Some(ledger) = self.read_ledger().await? else {
                    return Ok(no_mission());
                };
                let question = match ledger.open_question(number) {
                    Ok(q) => q.to_owned(),
                    Err(listed) => {
                        return Ok(Answer::Refuse(Refusal::NoOpenQuestion { number, listed }))
                    }
                };
                let op = Operation::Update(UpdateArgs {
                    answers: vec![(question, text)],
                    reason: format!("answered by {who}"),
                    ..UpdateArgs::default()
                });
                return self.answer(op, op_id).await;
            }
            Command::StepAdd(add) => Operation::AddSteps(vec![NewTask {
                id: add.id.into_string(),
                title: add.title,
                depends_on: add.after.into_iter().map(|s| s.into_string()).collect(),
                acceptance: add.acceptance,
                validation: add.validation.unwrap_or_default(),
                ..NewTask::default()
            }]),
        };
        self.apply(op, op_id).await?;
        Ok(Answer::React("+1"))
    }

    /// `/answer`: the fact recorded as the writer, then a mission Navin paused for that
    /// question resumed, then ready steps handed out and the panel refreshed.
    async fn answer(&self, op: Operation, op_id: &str) -> Result<Answer, EngineError> {
        let ledger = self.land(op, op_id).await?;
        let ledger = self.resume_if_answered(ledger, op_id).await?;
        let ledger = self.dispatch_ready(ledger).await;
        self.refresh_panel(&ledger).await?;
        Ok(Answer::React("+1"))
    }

    /// Writes one operation as `actor`. `None` when its op id is already in the
    /// history (a redelivery): nothing was written.
    pub(crate) async fn transact(
        &self,
        op: Operation,
        op_id: &str,
        actor: Actor,
    ) -> Result<Option<(Ledger, Vec<Effect>)>, EngineError> {
        let ctx = self.ledger_ctx(actor, op_id);
        self.transact_in(op, ctx).await
    }

    /// Writes one operation under `ctx` (see [`Session::transact`]).
    pub(crate) async fn transact_in(
        &self,
        op: Operation,
        ctx: navin_ledger::Ctx,
    ) -> Result<Option<(Ledger, Vec<Effect>)>, EngineError> {
        let store = self.store().await?;
        blocking(move || match store.transact(&op, &ctx)? {
            Committed::Written {
                ledger, effects, ..
            } => Ok(Some((*ledger, effects))),
            Committed::AlreadyApplied { .. } => Ok(None),
        })
        .await
    }

    /// The command's operation as its author (skipped when its op id is already in the
    /// history), then ready steps handed out and the panel refreshed either way, so a
    /// retry after a failed edit still lands it.
    async fn apply(&self, op: Operation, op_id: &str) -> Result<Ledger, EngineError> {
        let ledger = self.land(op, op_id).await?;
        let ledger = self.dispatch_ready(ledger).await;
        self.refresh_panel(&ledger).await?;
        Ok(ledger)
    }

    /// The command's operation as its author; on a redelivery, the ledger as it stands.
    async fn land(&self, op: Operation, op_id: &str) -> Result<Ledger, EngineError> {
        let actor = Actor::Human(self.origin.author.clone());
        match self.transact(op, op_id, actor).await? {
            Some((ledger, _)) => Ok(ledger),
            None => self
                .read_ledger()
                .await?
                .ok_or_else(|| EngineError::Internal("the ledger vanished after a write".into())),
        }
    }

    pub(crate) async fn read_ledger(&self) -> Result<Option<Ledger>, EngineError> {
        let store: Arc<Store> = self.store().await?;
        blocking(move || Ok(store.read()?.map(|s| s.ledger))).await
    }

    /// [`Session::read_ledger`] for the read-only answers (`/status`) and `/rollback`:
    /// a tip holding a commit Navin refuses yields the state below it and the refusal.
    pub(crate) async fn read_ledger_or_trusted(&self) -> Result<Reading, EngineError> {
        let store: Arc<Store> = self.store().await?;
        blocking(move || store.read_or_trusted()).await
    }

    /// The issue carrying the mission's panel: its origin when it lives in this
    /// repository, else the issue the command came from.
    pub(crate) fn panel_issue(&self, ledger: &Ledger) -> u64 {
        crate::effects::panel::panel_issue(ledger, &self.repo).unwrap_or(self.origin.issue)
    }

    pub(crate) fn repo_ref(&self) -> RepoRef {
        let mut repo = RepoRef::new(self.repo.clone(), self.html_base.clone());
        repo.ledger_branch = self.repo_config().ledger_branch.clone();
        repo
    }

    pub(crate) async fn refresh_panel(&self, ledger: &Ledger) -> Result<Upserted, EngineError> {
        {
            let mut batch = self
                .panel_batch
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let PanelBatch::Deferred(due) = &mut *batch {
                *due = Some(Box::new(ledger.clone()));
                return Ok(Upserted::Unchanged);
            }
        }
        self.write_panel(ledger).await
    }

    /// From here until [`Session::flush_panel`], panel refreshes only note the newest
    /// ledger: a comment of ten commands edits the panel once.
    pub(crate) fn defer_panel(&self) {
        *self
            .panel_batch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = PanelBatch::Deferred(None);
    }

    /// Writes the panel of the newest ledger noted since [`Session::defer_panel`], if any.
    pub(crate) async fn flush_panel(&self) -> Result<(), EngineError> {
        let batch = std::mem::take(
            &mut *self
                .panel_batch
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if let PanelBatch::Deferred(Some(ledger)) = batch {
            self.write_panel(&ledger).await?;
        }
        Ok(())
    }

    async fn write_panel(&self, ledger: &Ledger) -> Result<Upserted, EngineError> {
        let issue = self.panel_issue(ledger);
        let mut ctx = navin_domain::render::PanelContext::new(self.repo_ref());
        let config = self.repo_config();
        let me = match &self.admin_client {
            Some(admin) => Some((admin, self.engine.me().await)),
            None => None,
        };
        let admin = me.as_ref().map(|(client, me)| (*client, me));
        if let Some(notice) = self
            .engine
            .protection
            .notice(&self.client, &self.repo, &config.ledger_branch, admin)
            .await
        {
            ctx.notices.push(notice);
        }
        if config.dispatch.agent() == navin_domain::config::AgentKind::Copilot
            && self.engine.agent_app().is_none()
        {
            ctx.notices
                .push(super::dispatch::copilot_notice().to_owned());
        }
        Ok(crate::effects::panel::refresh_panel(&self.client, &ctx, issue, ledger).await?)
    }

    async fn status(&self) -> Result<Answer, EngineError> {
        let reading = self.read_ledger_or_trusted().await?;
        let Some(ledger) = reading.snapshot.map(|s| s.ledger) else {
            return match reading.refused {
                Some(e) => Err(EngineError::Store(e)),
                None => Ok(no_mission()),
            };
        };
        if let Some(refused) = reading.refused {
            // Read-only: the panel and the answer show what Navin last trusted.
            self.refresh_panel(&ledger).await?;
            let done = ledger
                .board
                .tasks
                .iter()
                .filter(|t| t.status == TaskStatus::Done)
                .count();
            let trusted = format!(
                "v{} ({}), {done}/{} steps done.",
                ledger.mission.version,
                ledger.mission.status,
                ledger.board.tasks.len()
            );
            return Ok(Answer::Reply(reply::read_only(
                &refused.to_string(),
                &trusted,
            )));
        }
        self.refresh_panel(&ledger).await?;
        let panel = self.panel_issue(&ledger);
        if panel == self.origin.issue {
            Ok(Answer::React("eyes"))
        } else {
            Ok(Answer::Reply(reply::accepted(&format!(
                "The mission panel is on #{panel} (refreshed now)."
            ))))
        }
    }

    async fn next(&self) -> Result<Answer, EngineError> {
        let Some(ledger) = self.read_ledger().await? else {
            return Ok(no_mission());
        };
        let ready: Vec<String> = ledger
            .ready()
            .iter()
            .map(|t| format!("`{}` {}", t.id, t.title))
            .collect();
        let text = if ready.is_empty() {
            format!(
                "No step is ready (mission {}, v{}).",
                ledger.mission.status, ledger.mission.version
            )
        } else {
            format!("Ready to start: {}", ready.join(" · "))
        };
        Ok(Answer::Reply(reply::accepted(&text)))
    }

    /// `/mission` (staged) and `/cruise` (one stage, every step at once).
    async fn mission(
        &self,
        replace: bool,
        goal: Option<String>,
        mode: MissionMode,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let current = self.read_ledger().await?;
        if let Some(live) = current.as_ref().filter(|l| l.mission.status.is_live()) {
            // A retry of this very command finds its own mission: refresh, do not refuse.
            let own = live
                .mission
                .history
                .iter()
                .any(|h| h.op_id.as_deref() == Some(op_id));
            if own {
                self.refresh_panel(live).await?;
                return Ok(Answer::React("+1"));
            }
            if !replace {
                let place = live
                    .mission
                    .origin
                    .as_ref()
                    .and_then(|o| Some(format!("{}#{}", o.repository.as_deref()?, o.issue?)))
                    .unwrap_or_else(|| "the ledger branch".to_owned());
                return Ok(Answer::Refuse(Refusal::MissionLive {
                    status: live.mission.status.to_string(),
                    place,
                    goal: live.mission.goal.clone(),
                }));
            }
        }
        let mut origin = Origin {
            repository: Some(self.repo.clone()),
            issue: Some(self.origin.issue),
            plan_id: None,
        };
        let config = self.repo_config();
        // The commands the mission will record are checked against the default branch,
        // read when there are any: a plan's verification, or configured commands.
        let configured = &config.validation.commands;
        let tree = match goal.is_none()
            || configured.test.is_some()
            || configured.lint.is_some()
            || configured.verify.is_some()
        {
            true => self.default_tree().await?,
            false => None,
        };
        let mut plan_doc = None;
        let mut init = match goal {
            Some(goal) => {
                let steps = steps::task_list_steps(&self.origin.issue_body);
                InitArgs {
                    goal,
                    steps: match mode {
                        MissionMode::Cruise => convert::single_stage(steps),
                        MissionMode::Staged => steps,
                    },
                    mode,
                    ..InitArgs::default()
                }
            }
            None => match self.approved_plan().await? {
                Some((record, doc)) => {
                    origin.plan_id = Some(record.id.clone());
                    let init = {
                        let toolchain = match &tree {
                            Some(tree) => self.toolchain(tree).await?,
                            None => None,
                        };
                        let knobs = convert::Knobs {
                            toolchain,
                            ..config.plan_knobs()
                        };
                        let mut init = convert::plan_init(doc.plan(), mode, &knobs, self.now());
                        init.base = convert::plan_base(&record);
                        init
                    };
                    plan_doc = Some(doc);
                    init
                }
                None => return Ok(Answer::Refuse(Refusal::NoApprovedPlan)),
            },
        };
        init.replace = replace;
        init.commands = Some(config.validation.commands.clone());
        init.origin = Some(origin);
        let configured = crate::cache::repo_config::budget(&config);
        init.budget = Some(match &plan_doc {
            Some(doc) => convert::plan_budget(doc.plan(), configured),
            None => configured,
        });
        if let Some(tree) = &tree {
            if let Some((source, problem)) = self.unrunnable_command(tree, &init).await? {
                return Ok(Answer::Refuse(Refusal::CommandCannotRun {
                    step: match source {
                        navin_runner::checks::LineSource::Config => None,
                        navin_runner::checks::LineSource::Step(step) => Some(step),
                    },
                    problem: problem.to_string(),
                }));
            }
        }
        let op = Operation::Init(init);
        self.apply(op, op_id).await?;
        Ok(Answer::React("+1"))
    }

    /// `/rollback v<N>`: the content of version N written as a new version, by the
    /// writer who asked; ready steps are handed out and the panel refreshed.
    /// Also the way back from a refused tip: the store writes the trusted version's
    /// content on top of the refused commit (see `read_ledger_or_trusted`).
    async fn rollback(&self, version: u64, op_id: &str) -> Result<Answer, EngineError> {
        if self.read_ledger_or_trusted().await?.snapshot.is_none() {
            return Ok(no_mission());
        }
        let store = self.store().await?;
        let ctx = self.ledger_ctx(Actor::Human(self.origin.author.clone()), op_id);
        // An unknown version is a rule refusal (`unknown_version`), answered as any other.
        let ledger = blocking(move || match store.rollback(version, &ctx)? {
            Committed::Written { ledger, .. } => Ok(Some(*ledger)),
            Committed::AlreadyApplied { .. } => Ok(None),
        })
        .await?;
        let ledger = match ledger {
            Some(ledger) => ledger,
            None => match self.read_ledger().await? {
                Some(ledger) => ledger,
                None => return Ok(no_mission()),
            },
        };
        let ledger = self.dispatch_ready(ledger).await;
        self.refresh_panel(&ledger).await?;
        Ok(Answer::React("+1"))
    }

    /// With `done_on: merged`, a step whose linked pull request is merged on GitHub but
    /// not on the ledger (the `closed` webhook was lost) gets its merge recorded now,
    /// read from the pull request itself.
    async fn merged_since(
        &self,
        ledger: &navin_ledger::Ledger,
        step: &str,
        policy: &navin_domain::evidence::EvidencePolicy,
    ) -> Result<Option<navin_ledger::Ledger>, EngineError> {
        let Some(task) = ledger.board.task(step) else {
            return Ok(None);
        };
        let merge = crate::reads::unrecorded_merge(&self.client, &self.repo, task, policy);
        let Some(op) = merge.await? else {
            return Ok(None);
        };
        let op_id = format!("{}#{step}#merged", self.delivery.id);
        Ok(self
            .transact(op, &op_id, super::ci::ci_actor())
            .await?
            .map(|(after, _)| after))
    }

    async fn done(
        &self,
        step: &str,
        evidence: Option<String>,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let Some(ledger) = self.read_ledger().await? else {
            return Ok(no_mission());
        };
        let Some(task) = ledger.board.task(step) else {
            return Ok(Answer::Refuse(Refusal::NoStep {
                step: step.to_owned(),
            }));
        };
        let validation = task.validation;
        if validation.needs_run() {
            // The same judgement as CI completions: the runs on the linked head, re-read
            // now, judged by the evidence policy; a green head closes the step, anything
            // else is refused with the policy's own account of what is missing.
            let policy = navin_domain::evidence::policy_from(&self.repo_config());
            let Some(head) = task.links.head_sha.clone() else {
                return Ok(done_refusal(
                    task,
                    &navin_domain::evidence::unlinked(task, &policy),
                ));
            };
            // A merge whose webhook never came: the pull request says so itself.
            let ledger = match self.merged_since(&ledger, step, &policy).await? {
                Some(after) => after,
                None => ledger,
            };
            let Some(task) = ledger.board.task(step) else {
                return Ok(no_mission());
            };
            let head = task.links.head_sha.clone().unwrap_or(head);
            let runs = self.check_runs(&head).await?;
            let judged = crate::reads::judge_step_on_github(
                &self.client,
                &self.repo,
                task,
                &ledger.board,
                &runs,
                None,
                &policy,
                self.now(),
            )
            .await?
            .judged;
            if !judged.verdict.is_green() {
                return Ok(match navin_domain::evidence::not_done(task, &judged) {
                    Some(why) => done_refusal(task, &why),
                    None => Answer::React("+1"),
                });
            }
            let (after, _) = self
                .judge(ledger.clone(), &head, runs.clone(), None)
                .await?;
            self.refresh_panel_of(&after).await?;
            let Some(task) = after.board.task(step) else {
                return Ok(no_mission());
            };
            if task.status == navin_ledger::TaskStatus::Done {
                return Ok(Answer::React("+1"));
            }
            // Green but not done after writing: judged again on the ledger as it is now.
            let again = crate::reads::judge_step_on_github(
                &self.client,
                &self.repo,
                task,
                &after.board,
                &runs,
                None,
                &policy,
                self.now(),
            )
            .await?
            .judged;
            let why = navin_domain::evidence::not_done(task, &again).unwrap_or(
                navin_domain::evidence::NotDone::Waiting {
                    why: again.decision.describe(step),
                },
            );
            return Ok(done_refusal(task, &why));
        }
        let evidence = match (validation, evidence) {
            (navin_ledger::Validation::Manual, None) => {
                return Ok(Answer::Refuse(Refusal::ManualNeedsNote {
                    step: step.to_owned(),
                }))
            }
            (_, text) => text.map(Evidence::prose),
        };
        self.apply(
            Operation::Done {
                step: step.to_owned(),
                evidence,
            },
            op_id,
        )
        .await?;
        Ok(Answer::React("+1"))
    }

    async fn approved_plan(
        &self,
    ) -> Result<Option<(plans::PlanRecord, navin_ledger::plan::PlanDocument)>, EngineError> {
        let Some((record, doc)) = self.read_plan().await? else {
            return Ok(None);
        };
        let approved = record.is_approved() && record.hash == doc.hash();
        Ok(approved.then_some((record, doc)))
    }
}

/// `/done` refused: what the evidence lacks.
fn done_refusal(task: &navin_ledger::Task, why: &navin_domain::evidence::NotDone) -> Answer {
    Answer::Refuse(Refusal::NotDone {
        step: task.id.clone(),
        validation: task.validation.to_string(),
        why: why.clone(),
    })
}

fn no_mission() -> Answer {
    Answer::Refuse(Refusal::NoMission)
}
