//! Slash commands in issue and PR comments: the typed `Command`, a pure markdown-aware parser, and the help text.
//!
//! Nothing here does I/O or knows GitHub types: the engine feeds comment bodies in and gets
//! typed commands (or user-facing errors) out, so every rule is unit-testable.
//!
//! Grammar shared by every command:
//! - a command starts a line (at most three leading spaces) with `/` and a known name; names,
//!   subcommands (`edit`, `close`, `add`) and flags are matched case-insensitively;
//! - one command per line; free text (request, goal, reason, feedback, evidence) is the rest of
//!   the line, kept as written (a text that is entirely one `"quoted string"` loses its quotes);
//! - `"double"` or `“curly”` quotes group words in step ids, titles and flag values; `'` is an
//!   ordinary character so apostrophes never need escaping; `\"` and `\\` escape inside quotes;
//! - flags are `--name value` or `--name=value`; an em dash (`—name`, as phone keyboards turn
//!   `--` into) counts as `--`;
//! - `--` after `/plan` or `/mission` ends subcommands and flags, so `/plan -- edit the README`
//!   asks for a plan about editing and `/mission -- close the leak` starts a mission.

mod author;
mod error;
mod lexer;
mod markdown;
mod parser;
mod spec;
mod suggest;

#[cfg(test)]
mod tests;

pub use author::is_bot_author;
pub use error::CommandError;
pub use navin_ledger::Validation;
pub use parser::{new_commands, parse_comment, ParsedCommand};
pub use spec::{help_text, CommandKind, CommandSpec};

pub use navin_ledger::{StepId, MAX_STEP_ID_LEN};

/// How `/mission close` ends a mission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseOutcome {
    /// Every step is done; the ledger refuses otherwise.
    Done,
    /// Given up on; allowed with steps still open.
    Failed,
}

impl CloseOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CloseOutcome::Done => "done",
            CloseOutcome::Failed => "failed",
        }
    }
}

/// The fields of `/step add`, boxed in [`Command::StepAdd`] to keep `Command` small.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepAdd {
    pub id: StepId,
    pub title: String,
    /// Steps this one depends on, in the order written.
    pub after: Vec<StepId>,
    /// `None`: the engine's default validation applies.
    pub validation: Option<Validation>,
    pub acceptance: Option<String>,
}

/// One command a person typed in a comment.
///
/// Each variant's doc gives its grammar; `<x>` is required, `[x]` optional, `text` runs to
/// the end of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/plan <request>`: map the repository read-only and post a plan for the request.
    /// `/plan -- <request>` for a request whose first word is `edit`.
    Plan { request: String },
    /// `/plan edit` alone on its line, followed later in the same comment (before the next
    /// command) by a fenced block whose info string is `markdown` or `md`. The block's text
    /// replaces the plan; approvals of the old text go stale.
    PlanEdit { plan: String },
    /// `/approve`: approve the current plan (on issues, where there are no reviews).
    Approve,
    /// `/reject [feedback]`: reject the current plan; the feedback goes to the next plan.
    Reject { feedback: Option<String> },
    /// `/mission [--replace] [goal]`: start a mission. Without a goal the mission is started
    /// from the approved plan or task list. `--replace` retires a live mission first.
    /// `/mission -- <goal>` for a goal whose first word is `close`.
    Mission { replace: bool, goal: Option<String> },
    /// `/cruise [--replace] [goal]`: start a single-stage mission whose steps are all
    /// ready, and handed out, at once (agents get `models.dev`; `/mission` keeps the
    /// plan's stages in order and `models.deep`).
    Cruise { replace: bool, goal: Option<String> },
    /// `/mission close [done|failed] [reason]`: end the mission. Without an outcome the
    /// engine decides (done when every step is done).
    MissionClose {
        outcome: Option<CloseOutcome>,
        reason: Option<String>,
    },
    /// `/status`: refresh and show the mission panel.
    Status,
    /// `/next`: show the steps that are ready to start.
    Next,
    /// `/pause [reason]`: pause the mission; nothing advances until `/resume`.
    Pause { reason: Option<String> },
    /// `/resume`: resume a paused mission.
    Resume,
    /// `/continue [note]`: a writer inspected the finished stage and releases the next.
    Continue { note: Option<String> },
    /// `/done <step> [evidence]`: mark a step done; steps whose validation needs a green run
    /// still need one, the evidence text is recorded for manual steps.
    Done {
        step: StepId,
        evidence: Option<String>,
    },
    /// `/retry <step>`: retry a failed step.
    Retry { step: StepId },
    /// `/replan <step> [reason]`: replan the part of the mission around a step.
    Replan {
        step: StepId,
        reason: Option<String>,
    },
    /// `/step add <ID> <title> [--after ID,ID] [--validation test|lint|verify|manual|none]
    /// [--acceptance text]`: add a step. The title is every word between the id and the first
    /// flag; a flag value with spaces is quoted (`--acceptance "docs build"`); `--after` takes
    /// comma-separated ids and may be repeated.
    StepAdd(Box<StepAdd>),
    /// `/update <goal|fact|constraint|missing> <text>`: edit the task ledger. A new goal is
    /// the one way to a whole-plan rewrite; a fact, a constraint or a missing-info entry is
    /// added. Each bumps the version with the writer as actor.
    Update { field: UpdateField, text: String },
    /// `/rollback v<N>`: write the content of version N as a new version (history is never
    /// rewritten).
    Rollback { version: u64 },
    /// `/answer <n> <text>`: answer open question n of the mission's missing info; the
    /// answer becomes a fact.
    Answer { number: usize, text: String },
    /// `/help`: list the commands.
    Help,
}

/// What `/update` edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateField {
    Goal,
    Fact,
    Constraint,
    Missing,
}

impl Command {
    /// The variant without its arguments, for tables, metrics and permission checks.
    pub fn kind(&self) -> CommandKind {
        match self {
            Command::Plan { .. } => CommandKind::Plan,
            Command::PlanEdit { .. } => CommandKind::PlanEdit,
            Command::Approve => CommandKind::Approve,
            Command::Reject { .. } => CommandKind::Reject,
            Command::Mission { .. } => CommandKind::Mission,
            Command::Cruise { .. } => CommandKind::Cruise,
            Command::MissionClose { .. } => CommandKind::MissionClose,
            Command::Status => CommandKind::Status,
            Command::Next => CommandKind::Next,
            Command::Update { .. } => CommandKind::Update,
            Command::Rollback { .. } => CommandKind::Rollback,
            Command::Answer { .. } => CommandKind::Answer,
            Command::Pause { .. } => CommandKind::Pause,
            Command::Resume => CommandKind::Resume,
            Command::Continue { .. } => CommandKind::Continue,
            Command::Done { .. } => CommandKind::Done,
            Command::Retry { .. } => CommandKind::Retry,
            Command::Replan { .. } => CommandKind::Replan,
            Command::StepAdd(_) => CommandKind::StepAdd,
            Command::Help => CommandKind::Help,
        }
    }

    /// The name as typed after `/`, subcommand included (`plan edit`, `mission close`).
    pub fn name(&self) -> &'static str {
        self.kind().spec().name
    }

    /// Mutating commands need write access (`role_name` write, maintain or admin); the
    /// read-only ones (`/status`, `/next`, `/help`) are open to anyone who can comment.
    pub fn is_mutating(&self) -> bool {
        self.kind().spec().mutating
    }

    /// The free texts the command carries (request, goal, reason, title, …) with their
    /// names, so one bound applies to every text a person can make the ledger store.
    /// A `/plan edit` document is a plan, bounded by the comment itself, not listed.
    pub fn free_texts(&self) -> Vec<(&'static str, &str)> {
        let texts: [(&'static str, Option<&str>); 2] = match self {
            Command::Plan { request } => [("request", Some(request)), ("", None)],
            Command::Reject { feedback } => [("feedback", feedback.as_deref()), ("", None)],
            Command::Mission { goal, .. } | Command::Cruise { goal, .. } => {
                [("goal", goal.as_deref()), ("", None)]
            }
            Command::Continue { note: reason }
            | Command::MissionClose { reason, .. }
            | Command::Pause { reason }
            | Command::Replan { reason, .. } => [("reason", reason.as_deref()), ("", None)],
            Command::Done { evidence, .. } => [("evidence", evidence.as_deref()), ("", None)],
            Command::Update { text, .. } | Command::Answer { text, .. } => {
                [("text", Some(text)), ("", None)]
            }
            Command::StepAdd(add) => [
                ("title", Some(&add.title)),
                ("acceptance", add.acceptance.as_deref()),
            ],
            Command::PlanEdit { .. }
            | Command::Approve
            | Command::Status
            | Command::Next
            | Command::Resume
            | Command::Retry { .. }
            | Command::Rollback { .. }
            | Command::Help => [("", None), ("", None)],
        };
        texts
            .into_iter()
            .filter_map(|(name, text)| text.map(|t| (name, t)))
            .collect()
    }

    /// The step a command is about, for `Navin-Step` trailers and replies.
    pub fn step(&self) -> Option<&StepId> {
        match self {
            Command::Done { step, .. } | Command::Retry { step } | Command::Replan { step, .. } => {
                Some(step)
            }
            Command::StepAdd(add) => Some(&add.id),
            _ => None,
        }
    }
}
