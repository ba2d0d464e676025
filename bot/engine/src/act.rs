//! Commands a person gives from the dashboard: checked and run exactly as the slash command on the issue would be, and recorded there with a reply.
//!
//! A dashboard button stands for one slash command ([`Action::command`]). It runs through
//! the same parser, permission check and rules as a comment, on the issue the mission or
//! plan lives on, so nothing the dashboard does is possible that the command is not. What
//! differs is who hears the answer: the person is on the dashboard, so a refusal is shown
//! there and posted nowhere (a reader clicking cannot make Navin write on an issue), and
//! an action that went through leaves one reply on the issue saying who did what from the
//! dashboard, where the command would have left a reaction.

use crate::cache::permission;
use crate::effects::comments;
use crate::features::panel::{defer_panel, flush_panel};
use crate::features::replies::run;
use crate::features::RepoCtx;
use crate::features::{Answer, EventOrigin};
use crate::plan_edit::check_edit_id;
use crate::token_scope::Need;
use crate::{Delivery, Engine, EngineError, Inbound, Report};
use navin_domain::command::parse_comment;
use navin_domain::event::Repository;
use navin_domain::render::reply;
use navin_github::ops;

/// The longest free text an action carries (a reason, feedback, an answer).
pub const MAX_ACTION_TEXT: usize = 2_000;

/// What a dashboard button asks for; each is one slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `/approve` of the issue's plan.
    Approve,
    /// `/reject [feedback]`.
    Reject { feedback: String },
    /// `/pause [reason]`.
    Pause { reason: String },
    /// `/resume`.
    Resume,
    /// `/continue [note]`: release the next stage.
    Continue { note: String },
    /// `/retry <step>`.
    Retry { step: String },
    /// `/answer <n> <text>`: open question `n` (1-based).
    Answer { question: usize, text: String },
}

impl Action {
    /// The slash command the action stands for, on one line: free text has its line
    /// breaks folded, so it can never carry a second command.
    pub fn command(&self) -> String {
        let with = |name: &str, text: &str| {
            let text = one_line(text);
            match text.is_empty() {
                true => name.to_owned(),
                false => format!("{name} {text}"),
            }
        };
        match self {
            Action::Approve => "/approve".to_owned(),
            Action::Reject { feedback } => with("/reject", feedback),
            Action::Pause { reason } => with("/pause", reason),
            Action::Resume => "/resume".to_owned(),
            Action::Continue { note } => with("/continue", note),
            Action::Retry { step } => with("/retry", step),
            Action::Answer { question, text } => with(&format!("/answer {question}"), text),
        }
    }

    fn text_len(&self) -> usize {
        match self {
            Action::Reject { feedback: t }
            | Action::Pause { reason: t }
            | Action::Continue { note: t }
            | Action::Retry { step: t }
            | Action::Answer { text: t, .. } => t.len(),
            Action::Approve | Action::Resume => 0,
        }
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One action from the dashboard.
#[derive(Debug, Clone)]
pub struct ActRequest {
    /// The App installation the repository belongs to.
    pub installation: u64,
    pub repository: Repository,
    /// The issue or pull request the mission's panel or the plan lives on: where the
    /// command would have been written.
    pub issue: u64,
    pub action: Action,
    /// The signed-in person's GitHub login and numeric user id.
    pub actor: String,
    pub actor_id: u64,
    /// The form's idempotency key: a resubmitted form applies once and replies once.
    /// Letters, digits and `._:-`, at most 100 characters.
    pub act_id: String,
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActOutcome {
    /// It went through: `command` ran as the actor, and the issue has a reply saying so.
    Done { command: String },
    /// Nothing changed: `reason`, and what to do about it.
    Refused { reason: String, todo: String },
    /// No such issue or pull request.
    NotFound,
}

impl Engine {
    /// Runs `request.action` as its slash command by `request.actor` on `request.issue`.
    /// The actor's role is read from GitHub now, not from a cache: a person whose access
    /// was just taken away cannot act on what a page showed them earlier.
    pub async fn act(&self, request: ActRequest) -> Result<ActOutcome, EngineError> {
        check_edit_id(&request.act_id)?;
        let command = request.action.command();
        if request.action.text_len() > MAX_ACTION_TEXT {
            return Ok(refused(
                format!("the text is longer than {MAX_ACTION_TEXT} characters"),
                "Shorten it, or write the command on the issue instead.",
            ));
        }
        // Shaped like a delivery's id, and flagged as a retry so every effect is looked
        // for before it is made: a form sent twice changes nothing twice.
        let mut delivery = Delivery::new(format!("dashboard:{}", request.act_id), 2);
        delivery.installation = Some(request.installation);
        delivery.repository = Some(request.repository.full_name.clone());
        let inbound = Inbound {
            delivery,
            report: Report::default(),
        };
        let repo = request.repository.full_name.clone();
        let origin =
            EventOrigin::new(request.issue, &request.actor).author_id(Some(request.actor_id));
        let cx = RepoCtx::open(
            self,
            &inbound,
            Need::Write,
            request.installation,
            &request.repository,
            origin,
        )
        .await?;
        let role = self
            .permissions
            .role_now(&cx.client, &repo, &request.actor, Some(request.actor_id))
            .await?;
        if !permission::may_mutate(&role) {
            return Ok(refused(
                format!(
                    "{command} needs write access to {repo}; @{}'s role is `{role}`",
                    request.actor
                ),
                "Ask a maintainer for write access, or ask one to do it.",
            ));
        }
        let issue: navin_domain::event::Issue =
            match cx.client.get_json(&ops::issue(&repo, request.issue)).await {
                Ok(issue) => issue,
                Err(e) if e.status() == Some(404) => return Ok(ActOutcome::NotFound),
                Err(e) => return Err(e.into()),
            };
        let cx = cx.with_origin(|origin| {
            origin
                .body(issue.body.as_deref())
                .on_pull_request(issue.pull_request.is_some())
                .closed(issue.closed_for_changes())
        });
        let mut parsed = parse_comment(&command);
        let (Some(one), true) = (parsed.pop(), parsed.is_empty()) else {
            return Err(EngineError::Invalid(format!(
                "the action is not one command: {command}"
            )));
        };
        let op_id = format!("{}#0", inbound.delivery.id);
        defer_panel(&cx);
        let answer = run(&cx, one, &op_id).await?;
        flush_panel(&cx).await?;
        let body = match answer {
            Answer::Refuse(refusal) => return Ok(refused(refusal.reason(), &refusal.todo())),
            Answer::Reply(body) => body,
            Answer::React(_) => reply::from_dashboard(&request.actor, &command),
        };
        comments::reply_once(
            &cx.client,
            &repo,
            request.issue,
            &format!("{}#answers", inbound.delivery.id),
            &body,
            true,
        )
        .await?;
        Ok(ActOutcome::Done { command })
    }
}

fn refused(reason: String, todo: &str) -> ActOutcome {
    ActOutcome::Refused {
        reason,
        todo: todo.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_cannot_smuggle_a_second_command_onto_its_own_line() {
        let action = Action::Pause {
            reason: "lunch\n/mission close failed\r\n/approve".into(),
        };
        let command = action.command();
        assert_eq!(command, "/pause lunch /mission close failed /approve");
        let parsed = parse_comment(&command);
        assert_eq!(parsed.len(), 1, "{parsed:?}");
    }

    #[test]
    fn each_action_parses_as_the_command_it_stands_for() {
        use navin_domain::command::CommandKind;
        let cases = [
            (Action::Approve, CommandKind::Approve),
            (
                Action::Reject {
                    feedback: "too broad".into(),
                },
                CommandKind::Reject,
            ),
            (
                Action::Pause {
                    reason: String::new(),
                },
                CommandKind::Pause,
            ),
            (Action::Resume, CommandKind::Resume),
            (
                Action::Continue {
                    note: "ok on staging".into(),
                },
                CommandKind::Continue,
            ),
            (Action::Retry { step: "S2".into() }, CommandKind::Retry),
            (
                Action::Answer {
                    question: 1,
                    text: "French first".into(),
                },
                CommandKind::Answer,
            ),
        ];
        for (action, kind) in cases {
            let parsed = parse_comment(&action.command());
            assert_eq!(parsed.len(), 1, "{action:?}");
            let command = parsed[0]
                .result
                .as_ref()
                .unwrap_or_else(|e| panic!("{action:?}: {e}"));
            assert_eq!(command.kind(), kind, "{action:?}");
        }
    }
}
