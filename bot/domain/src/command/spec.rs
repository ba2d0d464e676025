//! The command table: one `CommandKind` per `Command` variant, with the grammar, summary and permission of each.

use std::fmt::Write as _;

/// Declares `CommandKind` and `CommandKind::ALL` from one list, so a variant can never be
/// missing from the help text: the help iterates `ALL`, and `spec()` matches exhaustively.
macro_rules! command_kinds {
    ($($variant:ident),+ $(,)?) => {
        /// A `Command` without its arguments.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum CommandKind {
            $($variant),+
        }

        impl CommandKind {
            /// Every kind, in help order.
            pub const ALL: &'static [CommandKind] = &[$(CommandKind::$variant),+];
        }
    };
}

command_kinds!(
    Plan,
    PlanEdit,
    Approve,
    Reject,
    Mission,
    Cruise,
    MissionClose,
    Status,
    Next,
    Pause,
    Resume,
    Continue,
    Done,
    Retry,
    Replan,
    StepAdd,
    Update,
    Rollback,
    Answer,
    Help,
);

/// What the help text and error messages say about one command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// As typed after `/`, subcommand included.
    pub name: &'static str,
    /// Grammar, shown in `/help` and in every error about this command.
    pub usage: &'static str,
    /// One line for `/help`.
    pub summary: &'static str,
    /// A valid line, parsed by a test so the help never shows a form the parser rejects.
    pub example: &'static str,
    /// Needs write access.
    pub mutating: bool,
}

impl CommandKind {
    pub fn spec(self) -> CommandSpec {
        let (name, usage, summary, example, mutating) = match self {
            CommandKind::Plan => (
                "plan",
                "/plan <request>",
                "Map the repository read-only and post a plan for the request.",
                "/plan add a --json flag to the export command",
                true,
            ),
            CommandKind::PlanEdit => (
                "plan edit",
                "/plan edit + a ```markdown block below it",
                "Replace the plan with the block's text, merged with edits made since you wrote it; approvals of the old text go stale.",
                "/plan edit\n\n```markdown\n# Plan\n```",
                true,
            ),
            CommandKind::Approve => (
                "approve",
                "/approve",
                "Approve the current plan (on issues; on PRs, an approving review does it).",
                "/approve",
                true,
            ),
            CommandKind::Reject => (
                "reject",
                "/reject [feedback]",
                "Reject the current plan; the feedback shapes the next one.",
                "/reject too broad, leave the CLI alone",
                true,
            ),
            CommandKind::Mission => (
                "mission",
                "/mission [--replace] [goal]",
                "Start a mission (from the approved plan or task list when no goal is given).",
                "/mission --replace ship the export flag",
                true,
            ),
            CommandKind::Cruise => (
                "cruise",
                "/cruise [--replace] [goal]",
                "Start a single-stage mission: every step is handed out at once.",
                "/cruise tidy the error messages",
                true,
            ),
            CommandKind::MissionClose => (
                "mission close",
                "/mission close [done|failed] [reason]",
                "End the mission.",
                "/mission close failed superseded by #42",
                true,
            ),
            CommandKind::Status => (
                "status",
                "/status",
                "Refresh and show the mission panel.",
                "/status",
                false,
            ),
            CommandKind::Next => (
                "next",
                "/next",
                "Show the steps ready to start.",
                "/next",
                false,
            ),
            CommandKind::Pause => (
                "pause",
                "/pause [reason]",
                "Pause the mission until `/resume`.",
                "/pause waiting for the API freeze",
                true,
            ),
            CommandKind::Resume => (
                "resume",
                "/resume",
                "Resume a paused mission.",
                "/resume",
                true,
            ),
            CommandKind::Continue => (
                "continue",
                "/continue [note]",
                "Release the next stage once every step of the current one is done.",
                "/continue stage 1 looks right on staging",
                true,
            ),
            CommandKind::Done => (
                "done",
                "/done <step> [evidence]",
                "Mark a step done (steps validated by checks still need a green run).",
                "/done S3 checked by hand on staging",
                true,
            ),
            CommandKind::Retry => (
                "retry",
                "/retry <step>",
                "Retry a failed step.",
                "/retry S3",
                true,
            ),
            CommandKind::Replan => (
                "replan",
                "/replan <step> [reason]",
                "Replan the mission around a step.",
                "/replan S3 the API changed",
                true,
            ),
            CommandKind::Update => (
                "update",
                "/update <goal|fact|constraint|missing> <text>",
                "Edit the task ledger: a new goal, or add a fact, constraint or missing info.",
                "/update fact the API is frozen until Friday",
                true,
            ),
            CommandKind::Answer => (
                "answer",
                "/answer <n> <text>",
                "Answer open question n of the mission's missing info.",
                "/answer 1 French first, then German",
                true,
            ),
            CommandKind::Rollback => (
                "rollback",
                "/rollback v<N>",
                "Restore version N of the ledger as a new version.",
                "/rollback v3",
                true,
            ),
            CommandKind::StepAdd => (
                "step add",
                "/step add <ID> <title> [--after ID,ID] [--validation test|lint|verify|manual|none] [--acceptance \"text\"]",
                "Add a step to the mission.",
                "/step add S7 Document the flag --after S5,S6 --validation manual --acceptance \"README shows it\"",
                true,
            ),
            CommandKind::Help => ("help", "/help", "Show this list.", "/help", false),
        };
        CommandSpec {
            name,
            usage,
            summary,
            example,
            mutating,
        }
    }
}

/// Grammar of every command whose name is `name` or starts with `name ` (so `plan` gives
/// both `/plan` forms), joined for an error message.
pub fn usage_of(name: &str) -> String {
    let usages: Vec<&str> = CommandKind::ALL
        .iter()
        .map(|k| k.spec())
        .filter(|s| {
            s.name == name
                || s.name
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with(' '))
        })
        .map(|s| s.usage)
        .collect();
    usages.join("` or `")
}

/// Markdown help: every command's grammar and summary, then the shared rules.
pub fn help_text() -> String {
    let mut out = String::from("### Navin commands\n\n");
    out.push_str("Write each command at the start of its own line.\n\n");
    out.push_str("| Command | What it does | Needs write access |\n|---|---|---|\n");
    for kind in CommandKind::ALL {
        let spec = kind.spec();
        let access = if spec.mutating { "yes" } else { "no" };
        // A usage may hold backticks (```markdown), so fence it with a longer run.
        let usage = spec.usage.replace('|', "\\|");
        let _ = writeln!(out, "| `` {usage} `` | {} | {access} |", spec.summary);
    }
    out.push_str(
        "\nCommands inside code, quotes, links or HTML are ignored. Quote values with spaces \
         (`--acceptance \"docs build\"`). Start a request or goal with `--` when its first word \
         is `edit` or `close` (`/plan -- edit the README`).\n",
    );
    out
}
