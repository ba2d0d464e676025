//! `issue_comment` events: slash commands in a new comment (or newly added to an edited one), run in order (at most the configured number), answered together in one reply.

use crate::features::panel::{defer_panel, flush_panel};
use crate::features::replies::{answer_all, run, skipped_answer, tell_given_up};
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Engine, EngineError, Inbound};
use navin_domain::command::{is_bot_author, new_commands, parse_comment};
use navin_domain::event::CommentEvent;

pub(crate) async fn on_comment(
    engine: &Engine,
    event: &CommentEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let author = &event.comment.user;
    let slug = engine.app_slug().await;
    if is_bot_author(&author.login, author.kind.as_deref().unwrap_or(""), &slug) {
        return Ok(());
    }
    let body = event.comment.body.as_deref().unwrap_or("");
    let parsed = match event.action.as_str() {
        "created" => parse_comment(body),
        "edited" => {
            let before = event.changes.as_ref().and_then(|c| c.body.as_ref());
            match before {
                Some(old) => new_commands(&old.from, body),
                // No previous body: nothing says which commands are new, so none run.
                None => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    if parsed.is_empty() {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    // A comment of only read commands (or typos) gets a token that cannot write code.
    let need = if parsed
        .iter()
        .any(|p| p.result.as_ref().is_ok_and(|c| c.is_mutating()))
    {
        Need::Write
    } else {
        Need::Read
    };
    let origin = EventOrigin::new(event.issue.number, &author.login)
        .author_id(author.id)
        .body(event.issue.body.as_deref())
        .comment(event.comment.id, event.comment.written_at(&event.action))
        .on_pull_request(event.issue.pull_request.is_some())
        .closed(event.issue.closed_for_changes());
    let cx = RepoCtx::open(
        engine,
        inbound,
        need,
        installation,
        &event.repository,
        origin,
    )
    .await?;
    let outcome = run_commands(engine, &cx, parsed, inbound).await;
    if let Err(e) = &outcome {
        // Nothing follows: the last attempt, or an error no retry gets past.
        // A full disk is not the commenter's to retry: Navin retries it itself.
        let storage = e.retry() == crate::error::Retry::Storage;
        if !storage && (inbound.delivery.final_attempt || e.retry() == crate::error::Retry::Never) {
            tell_given_up(&cx, e).await;
        }
    }
    outcome
}

/// The comment's commands in order (up to the cap), the panel once, one answer.
async fn run_commands(
    _engine: &Engine,
    cx: &crate::features::RepoCtx<'_>,
    parsed: Vec<navin_domain::command::ParsedCommand>,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let cap = cx.repo_config().limits.max_commands_per_comment;
    let mut parsed = parsed;
    let skipped = parsed.split_off(cap.min(parsed.len()));
    let mut answers = Vec::new();
    // The panel is written once, after the last command, with the newest ledger.
    defer_panel(cx);
    for (index, command) in parsed.into_iter().enumerate() {
        let op_id = format!("{}#{index}", inbound.delivery.id);
        answers.push(run(cx, command, &op_id).await?);
    }
    flush_panel(cx).await?;
    if !skipped.is_empty() {
        answers.push(skipped_answer(cx, &skipped, cap));
    }
    let op_id = format!("{}#answers", inbound.delivery.id);
    answer_all(cx, answers, &op_id).await?;
    Ok(())
}
