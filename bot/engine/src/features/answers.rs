//! Missing info on GitHub: due defaults applied, a ready step that names an open question paused and asked about once, and the mission resumed once it is answered (answers given in a plan's text are taken in `plan_save`).

use super::board::transact;
use super::panel::panel_issue;
use super::{EngineError, RepoCtx};
use crate::effects::comments;
use navin_domain::render::text::{code, inline};
use navin_ledger::model::{Ledger, MissionStatus, PauseReason};
use navin_ledger::{Actor, Operation};

/// The actor Navin writes its own decisions as.
pub(crate) fn navin() -> Actor {
    Actor::App("navin".to_owned())
}

/// Before anything is handed out: defaults whose wait is over become facts, then a
/// ready step that names missing info pauses the mission (`human`) and the question
/// is asked on the mission's issue. A failure is logged and leaves the ledger as it
/// was read: it never fails the change that got here.
pub(crate) async fn hold_for_answers(cx: &RepoCtx<'_>, ledger: Ledger) -> Ledger {
    match try_hold(cx, ledger.clone()).await {
        Ok(after) => after,
        Err(e) => {
            tracing::warn!(error = %e, repo = %cx.repo, "checking missing info failed; the next change retries");
            cx.report.engine("pause for missing info", &e);
            ledger
        }
    }
}

async fn try_hold(cx: &RepoCtx<'_>, mut ledger: Ledger) -> Result<Ledger, EngineError> {
    let now = cx.now();
    if ledger.mission.status.is_live()
        && ledger
            .mission
            .pending_defaults
            .iter()
            .any(|d| d.due_at <= now)
    {
        let op_id = format!("defaults:v{}", ledger.mission.version);
        if let Some((after, _)) = transact(cx, Operation::ApplyDefaults, &op_id, navin()).await? {
            let note = "the defaults stand".to_owned();
            ledger = resume_if_unblocked(cx, after, &op_id, navin(), note).await?;
        }
    }
    if ledger.mission.status != MissionStatus::Running {
        return Ok(ledger);
    }
    let blocks = ledger.info_blocks();
    if blocks.is_empty() {
        return Ok(ledger);
    }
    let op_id = ledger.hold_id(&blocks);
    let steps: Vec<&str> = blocks.iter().map(|b| b.step.as_str()).collect();
    let op = Operation::Pause {
        reason: PauseReason::Human,
        note: format!("{} needs an answer first", steps.join(", ")),
    };
    let Some((after, _)) = transact(cx, op, &op_id, navin()).await? else {
        // Asked before (and someone resumed without answering): go ahead.
        return Ok(ledger);
    };
    let issue = panel_issue(cx, &after);
    let body = ask_body(&after, &blocks);
    comments::reply_once(
        &cx.client,
        &cx.repo,
        issue,
        &op_id,
        &body,
        cx.delivery.is_retry(),
    )
    .await?;
    Ok(after)
}

/// After an answer: a mission Navin paused for missing info resumes, as the person
/// who answered, once no ready step names an open question any more.
pub(crate) async fn resume_if_answered(
    cx: &RepoCtx<'_>,
    ledger: Ledger,
    op_id: &str,
) -> Result<Ledger, EngineError> {
    let who = Actor::Human(cx.origin.author.clone());
    let note = format!("answered by @{}", cx.origin.author);
    resume_if_unblocked(cx, ledger, op_id, who, note).await
}

/// A mission paused for missing info (by Navin, or by an agent's question) resumes
/// as `actor` once nothing it waited on is open.
async fn resume_if_unblocked(
    cx: &RepoCtx<'_>,
    ledger: Ledger,
    op_id: &str,
    actor: Actor,
    note: String,
) -> Result<Ledger, EngineError> {
    // Navin's own hold or an agent's `ask_user`, with every question it waited on
    // answered (a paused ledger has the same ready queue, so the same blocks).
    if !ledger.answered() {
        return Ok(ledger);
    }
    let op = Operation::Resume { note };
    match transact(cx, op, &format!("{op_id}:resume"), actor).await? {
        Some((after, _)) => Ok(after),
        None => Ok(ledger),
    }
}

/// The question on the mission's issue: which step waits, on what, and how to answer.
fn ask_body(ledger: &Ledger, blocks: &[navin_ledger::model::InfoBlock]) -> String {
    let mut out = String::from("### ❓ Navin needs an answer before it goes on\n\n");
    for b in blocks {
        out.push_str(&format!("Step {} names open questions:\n\n", code(&b.step)));
        for item in &b.items {
            let n = ledger
                .mission
                .missing_info
                .iter()
                .position(|m| m == item)
                .map_or(0, |i| i + 1);
            out.push_str(&format!("- **{n}.** {}\n", inline(item, 300)));
        }
        out.push('\n');
    }
    out.push_str(
        "The mission is paused (`human`) so nothing is invented. A writer answers with \
         `/answer <n> <text>`; the answer becomes a fact and the mission resumes. \
         `/resume` goes on without an answer.\n",
    );
    out
}
