//! Each slash command mapped to ledger operations, then the sticky mission panel re-rendered on the mission's issue.

use super::answers::resume_if_answered;
use super::board::{land, read_ledger, read_ledger_or_trusted, store, transact};
use super::ci::{check_runs, judge};
use super::dispatch::{dispatch_ready, refresh_panel_of};
use super::panel::{panel_issue, refresh_panel};
use super::plan_save::plan_edit;
use super::plans::{approve, default_tree, plan, reject, toolchain, unrunnable_command};
use super::records::read_plan;
use super::{blocking, plans, Answer, EngineError, Refusal, RepoCtx};
use navin_domain::command::{help_text, CloseOutcome, Command, UpdateField};
use navin_domain::render::reply;
use navin_domain::rules::steps;
use navin_ledger::model::MissionMode;
use navin_ledger::plan::convert;
use navin_ledger::store::Committed;
use navin_ledger::{
    Actor, Evidence, InitArgs, Ledger, MissionStatus, NewTask, Operation, Origin, PauseReason,
    TaskStatus, UpdateArgs,
};

pub(crate) async fn execute(
    cx: &RepoCtx<'_>,
    command: Command,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let who = format!("@{}", cx.origin.author);
    let op = match command {
        Command::Help => return Ok(Answer::Reply(reply::help(&help_text()))),
        Command::Status => return status(cx).await,
        Command::Next => return next(cx).await,
        Command::Plan { request } => return plan(cx, &request, op_id).await,
        Command::PlanEdit { plan } => return plan_edit(cx, &plan, op_id).await,
        Command::Approve => return approve(cx, op_id).await,
        Command::Reject { feedback } => return reject(cx, feedback, op_id).await,
        Command::Mission { replace, goal } => {
            return mission(cx, replace, goal, MissionMode::Staged, op_id).await
        }
        Command::Cruise { replace, goal } => {
            return mission(cx, replace, goal, MissionMode::Cruise, op_id).await
        }
        Command::Done { step, evidence } => return done(cx, step.as_str(), evidence, op_id).await,
        Command::MissionClose { outcome, reason } => {
            let Some(ledger) = read_ledger(cx).await? else {
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
        Command::Rollback { version } => return rollback(cx, version, op_id).await,
        Command::Answer { number, text } => {
            let Some(ledger) = read_ledger(cx).await? else {
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
            return answer(cx, op, op_id).await;
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
    apply(cx, op, op_id).await?;
    Ok(Answer::React("+1"))
}

/// `/answer`: the fact recorded as the writer, then a mission Navin paused for that
/// question resumed, then ready steps handed out and the panel refreshed.
async fn answer(cx: &RepoCtx<'_>, op: Operation, op_id: &str) -> Result<Answer, EngineError> {
    let ledger = land(cx, op, op_id).await?;
    let ledger = resume_if_answered(cx, ledger, op_id).await?;
    let ledger = dispatch_ready(cx, ledger).await;
    refresh_panel(cx, &ledger).await?;
    Ok(Answer::React("+1"))
}

/// The command's operation as its author (skipped when its op id is already in the
/// history), then ready steps handed out and the panel refreshed either way, so a
/// retry after a failed edit still lands it.
async fn apply(cx: &RepoCtx<'_>, op: Operation, op_id: &str) -> Result<Ledger, EngineError> {
    let ledger = land(cx, op, op_id).await?;
    let ledger = dispatch_ready(cx, ledger).await;
    refresh_panel(cx, &ledger).await?;
    Ok(ledger)
}

async fn status(cx: &RepoCtx<'_>) -> Result<Answer, EngineError> {
    let reading = read_ledger_or_trusted(cx).await?;
    let Some(ledger) = reading.snapshot.map(|s| s.ledger) else {
        return match reading.refused {
            Some(e) => Err(EngineError::Store(e)),
            None => Ok(no_mission()),
        };
    };
    if let Some(refused) = reading.refused {
        // Read-only: the panel and the answer show what Navin last trusted.
        refresh_panel(cx, &ledger).await?;
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
    refresh_panel(cx, &ledger).await?;
    let panel = panel_issue(cx, &ledger);
    if panel == cx.origin.issue {
        Ok(Answer::React("eyes"))
    } else {
        Ok(Answer::Reply(reply::accepted(&format!(
            "The mission panel is on #{panel} (refreshed now)."
        ))))
    }
}

async fn next(cx: &RepoCtx<'_>) -> Result<Answer, EngineError> {
    let Some(ledger) = read_ledger(cx).await? else {
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
    cx: &RepoCtx<'_>,
    replace: bool,
    goal: Option<String>,
    mode: MissionMode,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let current = read_ledger(cx).await?;
    if let Some(live) = current.as_ref().filter(|l| l.mission.status.is_live()) {
        // A retry of this very command finds its own mission: refresh, do not refuse.
        let own = live
            .mission
            .history
            .iter()
            .any(|h| h.op_id.as_deref() == Some(op_id));
        if own {
            refresh_panel(cx, live).await?;
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
        repository: Some(cx.repo.clone()),
        issue: Some(cx.origin.issue),
        plan_id: None,
    };
    let config = cx.repo_config();
    // The commands the mission will record are checked against the default branch,
    // read when there are any: a plan's verification, or configured commands.
    let configured = &config.validation.commands;
    let tree = match goal.is_none()
        || configured.test.is_some()
        || configured.lint.is_some()
        || configured.verify.is_some()
    {
        true => default_tree(cx).await?,
        false => None,
    };
    let mut plan_doc = None;
    let mut init = match goal {
        Some(goal) => {
            let steps = steps::task_list_steps(&cx.origin.issue_body);
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
        None => match approved_plan(cx).await? {
            Some((record, doc)) => {
                origin.plan_id = Some(record.id.clone());
                let init = {
                    let toolchain = match &tree {
                        Some(tree) => toolchain(tree).await?,
                        None => None,
                    };
                    let knobs = convert::Knobs {
                        toolchain,
                        ..config.plan_knobs()
                    };
                    let mut init = convert::plan_init(doc.plan(), mode, &knobs, cx.now());
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
        if let Some((source, problem)) = unrunnable_command(tree, &init).await? {
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
    apply(cx, op, op_id).await?;
    Ok(Answer::React("+1"))
}

/// `/rollback v<N>`: the content of version N written as a new version, by the
/// writer who asked; ready steps are handed out and the panel refreshed.
/// Also the way back from a refused tip: the store writes the trusted version's
/// content on top of the refused commit (see `read_ledger_or_trusted`).
async fn rollback(cx: &RepoCtx<'_>, version: u64, op_id: &str) -> Result<Answer, EngineError> {
    if read_ledger_or_trusted(cx).await?.snapshot.is_none() {
        return Ok(no_mission());
    }
    let store = store(cx).await?;
    let ctx = cx.ledger_ctx(Actor::Human(cx.origin.author.clone()), op_id);
    // An unknown version is a rule refusal (`unknown_version`), answered as any other.
    let ledger = blocking(move || match store.rollback(version, &ctx)? {
        Committed::Written { ledger, .. } => Ok(Some(*ledger)),
        Committed::AlreadyApplied { .. } => Ok(None),
    })
    .await?;
    let ledger = match ledger {
        Some(ledger) => ledger,
        None => match read_ledger(cx).await? {
            Some(ledger) => ledger,
            None => return Ok(no_mission()),
        },
    };
    let ledger = dispatch_ready(cx, ledger).await;
    refresh_panel(cx, &ledger).await?;
    Ok(Answer::React("+1"))
}

/// With `done_on: merged`, a step whose linked pull request is merged on GitHub but
/// not on the ledger (the `closed` webhook was lost) gets its merge recorded now,
/// read from the pull request itself.
async fn merged_since(
    cx: &RepoCtx<'_>,
    ledger: &navin_ledger::Ledger,
    step: &str,
    policy: &navin_domain::evidence::EvidencePolicy,
) -> Result<Option<navin_ledger::Ledger>, EngineError> {
    let Some(task) = ledger.board.task(step) else {
        return Ok(None);
    };
    let merge = crate::reads::unrecorded_merge(&cx.client, &cx.repo, task, policy);
    let Some(op) = merge.await? else {
        return Ok(None);
    };
    let op_id = format!("{}#{step}#merged", cx.delivery.id);
    Ok(transact(cx, op, &op_id, super::ci::ci_actor())
        .await?
        .map(|(after, _)| after))
}

async fn done(
    cx: &RepoCtx<'_>,
    step: &str,
    evidence: Option<String>,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let Some(ledger) = read_ledger(cx).await? else {
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
        let policy = navin_domain::evidence::policy_from(&cx.repo_config());
        let Some(head) = task.links.head_sha.clone() else {
            return Ok(done_refusal(
                task,
                &navin_domain::evidence::unlinked(task, &policy),
            ));
        };
        // A merge whose webhook never came: the pull request says so itself.
        let ledger = match merged_since(cx, &ledger, step, &policy).await? {
            Some(after) => after,
            None => ledger,
        };
        let Some(task) = ledger.board.task(step) else {
            return Ok(no_mission());
        };
        let head = task.links.head_sha.clone().unwrap_or(head);
        let runs = check_runs(cx, &head).await?;
        let judged = crate::reads::judge_step_on_github(
            &cx.client,
            &cx.repo,
            task,
            &ledger.board,
            &runs,
            None,
            &policy,
            cx.now(),
        )
        .await?
        .judged;
        if !judged.verdict.is_green() {
            return Ok(match navin_domain::evidence::not_done(task, &judged) {
                Some(why) => done_refusal(task, &why),
                None => Answer::React("+1"),
            });
        }
        let (after, _) = judge(cx, ledger.clone(), &head, runs.clone(), None).await?;
        refresh_panel_of(cx, &after).await?;
        let Some(task) = after.board.task(step) else {
            return Ok(no_mission());
        };
        if task.status == navin_ledger::TaskStatus::Done {
            return Ok(Answer::React("+1"));
        }
        // Green but not done after writing: judged again on the ledger as it is now.
        let again = crate::reads::judge_step_on_github(
            &cx.client,
            &cx.repo,
            task,
            &after.board,
            &runs,
            None,
            &policy,
            cx.now(),
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
    apply(
        cx,
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
    cx: &RepoCtx<'_>,
) -> Result<Option<(plans::PlanRecord, navin_ledger::plan::PlanDocument)>, EngineError> {
    let Some((record, doc)) = read_plan(cx).await? else {
        return Ok(None);
    };
    let approved = record.is_approved() && record.hash == doc.hash();
    Ok(approved.then_some((record, doc)))
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
