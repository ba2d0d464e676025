//! One comment's commands run and answered: each command checked (size, closed issue, write access) and run, and all answers posted as one reply with reactions, within the per-person cap.

use super::commands::execute;
use crate::cache::permission;
use crate::effects::comments;
use crate::EngineError;
use navin_domain::render::reply;
use navin_github::GitHubError;

use super::{Answer, Refusal, RepoCtx};

/// Runs one command and says how to answer it; nothing is posted yet, so a comment's
/// answers go out together ([`answer_all`]).
pub(crate) async fn run(
    cx: &RepoCtx<'_>,
    parsed: navin_domain::command::ParsedCommand,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let answer = match (parsed.result, &cx.config_error) {
        (Err(e), _) => Ok(Answer::Refuse(Refusal::Unparsed(e.to_string()))),
        (Ok(_), Some(invalid)) => Ok(Answer::Refuse(Refusal::ConfigInvalid(invalid.clone()))),
        (Ok(command), None) => authorized(cx, command, op_id).await,
    };
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) => match e.refusal() {
            Some(reason) => {
                if e.missing_permission().is_some() || e.needs_ledger_key() {
                    cx.report.engine("write the ledger", &e);
                }
                Answer::Refuse(Refusal::Ledger(reason))
            }
            None if e.is_transient() => return Err(e),
            None => {
                tracing::error!(error = %e, op = op_id, "command failed");
                cx.report.engine("run a command", &e);
                Answer::Reply(reply::error(Some(&cx.delivery.id)))
            }
        },
    };
    Ok(answer)
}

/// Tells the commenter that the delivery of their comment failed for good (its last
/// attempt ended in `error`, which a retry would have met again): which commands ran
/// is on the board, and how to get the rest run. Best effort, once per delivery: if
/// GitHub refuses this comment too, the log says so.
pub(crate) async fn tell_given_up(cx: &RepoCtx<'_>, error: &EngineError) {
    let why = match (error.missing_permission(), error) {
        (Some(permission), _) => format!(
            "GitHub refused Navin the `{permission}` permission here (an admin grants it in the App's settings)"
        ),
        (None, EngineError::GitHub(_)) => {
            "GitHub kept refusing or failing Navin's requests".to_owned()
        }
        (None, EngineError::Store(_)) => {
            "the ledger branch stayed busy or out of reach".to_owned()
        }
        (None, _) => "of an error on Navin's side".to_owned(),
    };
    let body = reply::given_up(&why, &cx.delivery.id);
    let op_id = format!("{}#given-up", cx.delivery.id);
    if let Err(e) =
        comments::reply_once(&cx.client, &cx.repo, cx.origin.issue, &op_id, &body, true).await
    {
        tracing::warn!(repo = %cx.repo, issue = cx.origin.issue, error = %e, cause = %error, "cannot tell the commenter their comment failed");
    }
}

/// Answers every command of one comment at once: each reaction once, and all the
/// replies and refusals in one comment (in command order), so a comment of many
/// commands costs one reply, not one per command. A retry finds that reply by its
/// op tag before posting again.
pub(crate) async fn answer_all(
    cx: &RepoCtx<'_>,
    answers: Vec<Answer>,
    op_id: &str,
) -> Result<(), GitHubError> {
    let mut reactions: Vec<&'static str> = Vec::new();
    let mut bodies: Vec<String> = Vec::new();
    let mut seen = false;
    for answer in answers {
        match answer {
            Answer::React(content) => reactions.push(content),
            // A reply that answers a read gets an `eyes` reaction too; a refusal not.
            Answer::Reply(body) => {
                seen = true;
                bodies.push(body);
            }
            Answer::Refuse(refusal) => bodies.push(refusal.reply()),
        }
    }
    if seen {
        reactions.push("eyes");
    }
    let cap = cx.config.limits.max_replies_per_person_per_hour;
    let reacts = cx.origin.comment_id.is_some() && !reactions.is_empty();
    // A retry may still owe the answer it counted the first time; past the cap,
    // people with write access are still answered (and not counted).
    let allowed = (bodies.is_empty() && !reacts)
        || cx.delivery.is_retry()
        || cx.engine.replies.take(
            cx.delivery.installation.unwrap_or(0),
            &cx.origin.author,
            cap,
            std::time::Instant::now(),
        )
        || may_write(cx).await;
    if !allowed {
        tracing::warn!(repo = %cx.repo, issue = cx.origin.issue, author = %cx.origin.author, cap, "answer cap reached for this person across the installation; their commands ran, nothing is posted");
        return Ok(());
    }
    if !bodies.is_empty() {
        let body = join_answers(&bodies);
        comments::reply_once(
            &cx.client,
            &cx.repo,
            cx.origin.issue,
            op_id,
            &body,
            cx.delivery.is_retry(),
        )
        .await?;
    }
    // Reactions come last and are best effort: the commands have applied and the
    // reply is posted, so a reaction GitHub refuses is logged, never a failed
    // delivery (whose retry would only try the reaction again).
    if let Some(id) = cx.origin.comment_id {
        let mut done: Vec<&str> = Vec::new();
        for content in reactions {
            if !done.contains(&content) {
                if let Err(e) = comments::react(&cx.client, &cx.repo, id, content).await {
                    tracing::warn!(repo = %cx.repo, comment = id, content, error = %e, "reaction not posted; the commands applied");
                }
                done.push(content);
            }
        }
    }
    Ok(())
}

/// Whether the author has write access (a cached role lookup; a failed one is "no").
async fn may_write(cx: &RepoCtx<'_>) -> bool {
    cx.engine
        .permissions
        .role(&cx.client, &cx.repo, &cx.origin.author, cx.origin.author_id)
        .await
        .is_ok_and(|role| permission::may_mutate(&role))
}

/// The answer for the commands past the per-comment cap: which were skipped and why.
/// Nothing they asked for happens.
pub(crate) fn skipped_answer(
    _cx: &RepoCtx<'_>,
    skipped: &[navin_domain::command::ParsedCommand],
    cap: usize,
) -> Answer {
    const LISTED: usize = 10;
    let mut lines: Vec<String> = skipped
        .iter()
        .take(LISTED)
        .map(|c| {
            let first: String = c.source.chars().take(80).collect();
            format!(
                "line {}: {}",
                c.line,
                navin_domain::render::text::code(&first)
            )
        })
        .collect();
    if skipped.len() > LISTED {
        lines.push(format!("and {} more", skipped.len() - LISTED));
    }
    Answer::Refuse(Refusal::TooManyCommands {
        cap,
        skipped: skipped.len(),
        listed: lines,
    })
}

pub(crate) async fn authorized(
    cx: &RepoCtx<'_>,
    command: navin_domain::command::Command,
    op_id: &str,
) -> Result<Answer, EngineError> {
    let limit = cx.repo_config().limits.max_text_bytes;
    if let Some((name, text)) = command
        .free_texts()
        .into_iter()
        .find(|(_, text)| text.len() > limit)
    {
        return Ok(Answer::Refuse(Refusal::TextTooLong {
            command: command.name().to_owned(),
            part: name,
            bytes: text.len(),
            limit,
        }));
    }
    if let (true, Some(why)) = (command.is_mutating(), cx.origin.closed) {
        let allowed = cx
            .repo_config()
            .allow_on_closed
            .iter()
            .any(|name| name.trim_start_matches('/') == command.name());
        if !allowed {
            return Ok(Answer::Refuse(Refusal::ClosedForChanges {
                command: command.name().to_owned(),
                on_pull_request: cx.origin.on_pull_request,
                why,
            }));
        }
    }
    if command.is_mutating() {
        let role = cx
            .engine
            .permissions
            .role(&cx.client, &cx.repo, &cx.origin.author, cx.origin.author_id)
            .await?;
        if !permission::may_mutate(&role) {
            return Ok(Answer::Refuse(Refusal::NeedsWrite {
                command: command.name().to_owned(),
                repo: cx.repo.clone(),
                author: cx.origin.author.clone(),
                role: role.to_string(),
            }));
        }
    }
    execute(cx, command, op_id).await
}

/// Several answers as one comment body, in order, within GitHub's comment size: answers
/// that would not fit are counted at the end instead.
fn join_answers(bodies: &[String]) -> String {
    let mut out = String::new();
    for (i, body) in bodies.iter().enumerate() {
        let body = body.trim_end();
        if out.len() + body.len() + 16 > navin_domain::render::COMMENT_BUDGET {
            out.push_str(&format!(
                "\n\n---\n\n{} more answers did not fit in this comment.",
                bodies.len() - i
            ));
            break;
        }
        if !out.is_empty() {
            out.push_str("\n\n---\n\n");
        }
        out.push_str(body);
    }
    out
}
