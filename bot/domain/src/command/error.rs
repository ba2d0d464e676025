//! Why a command line was refused, worded as a reply that says what to type instead.

use super::spec::usage_of;

/// A command line Navin recognised but cannot run; `Display` is the reply text.
///
/// `command` fields hold the command's name as typed after `/` (`done`, `step add`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// A `/word` close to a command name but not one.
    #[error("Unknown command `/{name}`.{}", suggestion(*.did_you_mean))]
    UnknownCommand {
        name: String,
        did_you_mean: Option<&'static str>,
    },
    #[error("`/{command}` needs {argument}: type `{}`.", usage_of(.command))]
    MissingArgument {
        command: &'static str,
        argument: &'static str,
    },
    #[error("`/{command}`: `{value}` is not {argument}; expected {expected}. Type `{}`.", usage_of(.command))]
    InvalidArgument {
        command: &'static str,
        argument: &'static str,
        value: String,
        expected: &'static str,
    },
    /// Text after a command that takes none (or no more).
    #[error("`/{command}` does not take `{value}`: type `{}`.{}", usage_of(.command), escape_hint(.command))]
    UnexpectedArgument {
        command: &'static str,
        value: String,
    },
    #[error("`/{command}` has no flag `{flag}`.{} Type `{}`.", flag_suggestion(*.did_you_mean), usage_of(.command))]
    UnknownFlag {
        command: &'static str,
        flag: String,
        did_you_mean: Option<&'static str>,
    },
    #[error("`/{command}`: `{flag}` is given twice; give it once.")]
    DuplicateFlag {
        command: &'static str,
        flag: &'static str,
    },
    #[error("`/{command}`: a `\"` quote is not closed; close it on the same line.")]
    UnterminatedQuote { command: &'static str },
    /// `/plan edit` with no fenced `markdown` block after it in the same comment.
    #[error(
        "`/plan edit` needs the new plan in a fenced block below it in the same comment: \
         a line ```` ```markdown ````, the plan, then ```` ``` ````."
    )]
    MissingPlanBlock,
}

impl CommandError {
    /// The command the error is about, when there is one (`None` for unknown commands).
    pub fn command(&self) -> Option<&'static str> {
        match self {
            CommandError::UnknownCommand { .. } => None,
            CommandError::MissingArgument { command, .. }
            | CommandError::InvalidArgument { command, .. }
            | CommandError::UnexpectedArgument { command, .. }
            | CommandError::UnknownFlag { command, .. }
            | CommandError::DuplicateFlag { command, .. }
            | CommandError::UnterminatedQuote { command } => Some(command),
            CommandError::MissingPlanBlock => Some("plan edit"),
        }
    }
}

fn suggestion(did_you_mean: Option<&'static str>) -> String {
    match did_you_mean {
        Some(name) => format!(" Did you mean `/{name}`? `/help` lists every command."),
        None => " `/help` lists every command.".to_string(),
    }
}

fn flag_suggestion(did_you_mean: Option<&'static str>) -> String {
    did_you_mean
        .map(|flag| format!(" Did you mean `{flag}`?"))
        .unwrap_or_default()
}

/// Words that open a subcommand can still start a request or goal, behind `--`.
fn escape_hint(command: &str) -> &'static str {
    match command {
        "plan edit" => {
            " To ask for a plan whose request starts with `edit`, write `/plan -- edit …`."
        }
        _ => "",
    }
}
