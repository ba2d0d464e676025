//! Turns a comment body into the commands written on its lines, one small parser per command.

use super::lexer::{free_text, next_token, split_word, tokens, Token};
use super::markdown::{self, Fence, SlashLine};
use super::suggest::{is_command_name, nearest, typo_of};
use super::{CloseOutcome, Command, CommandError, StepAdd, StepId, UpdateField, Validation};

/// What a rejected step id should have looked like.
const STEP_ID_RULE: &str = "letters, digits, `-`, `_` or `.` (at most 100), like `S3`";
const VALIDATIONS: &str = "`test`, `lint`, `verify`, `manual` or `none`";
const STEP_ADD_FLAGS: &[&str] = &["--after", "--validation", "--acceptance"];

/// One command line of a comment and what it parsed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCommand {
    /// 1-based line of the comment body, for replies that point at the line.
    pub line: usize,
    /// Byte offset of the `/` in the body.
    pub offset: usize,
    /// The line as written, from the `/` on, trimmed (a `/plan edit` block is not included).
    pub source: String,
    pub result: Result<Command, CommandError>,
}

/// Every command in a comment, in order. Lines that start with `/` but are clearly not meant
/// for Navin (`/usr/bin`, `/cc`) are left out; typos of a command (`/aprove`) come back as
/// [`CommandError::UnknownCommand`] so the author learns why nothing happened.
pub fn parse_comment(body: &str) -> Vec<ParsedCommand> {
    let scan = markdown::scan(body);
    let lines: Vec<SlashLine<'_>> = markdown::slash_lines(body, &scan)
        .into_iter()
        .filter(|line| is_candidate(line.text))
        .collect();
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            // A `/plan edit` block must come before the next command line.
            let bound = lines.get(i + 1).map_or(body.len(), |next| next.offset);
            let fences = Fences {
                all: &scan.fences,
                after: line.offset,
                before: bound,
            };
            ParsedCommand {
                line: line.number,
                offset: line.offset,
                source: format!("/{}", line.text.trim_end()),
                result: parse_line(line.text, &fences),
            }
        })
        .collect()
}

/// The commands of an edited comment that were not in its previous text, so an edit never
/// re-runs what already ran. Commands are compared by what they parse to (so `/Approve`
/// and `/approve ` are the same), keeping multiplicity: a second identical line is new.
pub fn new_commands(old_body: &str, new_body: &str) -> Vec<ParsedCommand> {
    let mut old: Vec<Result<Command, CommandError>> = parse_comment(old_body)
        .into_iter()
        .map(|parsed| parsed.result)
        .collect();
    parse_comment(new_body)
        .into_iter()
        .filter(
            |parsed| match old.iter().position(|r| *r == parsed.result) {
                Some(i) => {
                    // Matched: this line ran when the comment was first posted.
                    let _ = old.swap_remove(i);
                    false
                }
                None => true,
            },
        )
        .collect()
}

/// A line after `/` is for Navin when its first word is a command or a typo of one.
fn is_candidate(text: &str) -> bool {
    if text.starts_with(char::is_whitespace) || text.is_empty() {
        return false;
    }
    let (word, _) = split_word(text);
    is_command_name(word) || typo_of(word).is_some()
}

/// The fenced blocks a `/plan edit` on one line may use.
struct Fences<'a> {
    all: &'a [Fence],
    after: usize,
    before: usize,
}

impl Fences<'_> {
    fn plan_block(&self) -> Option<&str> {
        self.all
            .iter()
            .filter(|f| f.start > self.after && f.start < self.before)
            .find(|f| matches!(f.lang.as_str(), "markdown" | "md"))
            .map(|f| f.text.as_str())
            .filter(|text| !text.trim().is_empty())
    }
}

fn parse_line(text: &str, fences: &Fences<'_>) -> Result<Command, CommandError> {
    let (word, rest) = split_word(text);
    let name = word.to_ascii_lowercase();
    match name.as_str() {
        "plan" => parse_plan(rest, fences),
        "approve" => no_arguments("approve", rest, Command::Approve),
        "reject" => Ok(Command::Reject {
            feedback: free_text(rest),
        }),
        "mission" => parse_mission(rest),
        "cruise" => parse_cruise(rest),
        "status" => no_arguments("status", rest, Command::Status),
        "next" => no_arguments("next", rest, Command::Next),
        "pause" => Ok(Command::Pause {
            reason: free_text(rest),
        }),
        "resume" => no_arguments("resume", rest, Command::Resume),
        "continue" => Ok(Command::Continue {
            note: free_text(rest),
        }),
        "done" => {
            let (step, rest) = step_argument("done", rest)?;
            Ok(Command::Done {
                step,
                evidence: free_text(rest),
            })
        }
        "retry" => {
            let (step, rest) = step_argument("retry", rest)?;
            no_arguments("retry", rest, Command::Retry { step })
        }
        "replan" => {
            let (step, rest) = step_argument("replan", rest)?;
            Ok(Command::Replan {
                step,
                reason: free_text(rest),
            })
        }
        "step" => parse_step(rest),
        "update" => parse_update(rest),
        "rollback" => parse_rollback(rest),
        "answer" => parse_answer(rest),
        "help" => no_arguments("help", rest, Command::Help),
        _ => Err(CommandError::UnknownCommand {
            name: word.to_string(),
            did_you_mean: typo_of(word),
        }),
    }
}

/// `/update <goal|fact|constraint|missing> <text>`.
fn parse_update(rest: &str) -> Result<Command, CommandError> {
    const FIELDS: &str = "`goal`, `fact`, `constraint` or `missing`";
    let (word, text) = split_word(rest.trim_start());
    let field = match word.to_ascii_lowercase().as_str() {
        "" => {
            return Err(CommandError::MissingArgument {
                command: "update",
                argument: "what to update (goal, fact, constraint or missing)",
            })
        }
        "goal" => UpdateField::Goal,
        "fact" => UpdateField::Fact,
        "constraint" => UpdateField::Constraint,
        "missing" => UpdateField::Missing,
        _ => {
            return Err(CommandError::InvalidArgument {
                command: "update",
                argument: "something to update",
                value: word.to_string(),
                expected: FIELDS,
            })
        }
    };
    let text = free_text(text).ok_or(CommandError::MissingArgument {
        command: "update",
        argument: "the text",
    })?;
    Ok(Command::Update { field, text })
}

/// `/answer <n> <text>`.
fn parse_answer(rest: &str) -> Result<Command, CommandError> {
    let (word, text) = split_word(rest.trim_start());
    if word.is_empty() {
        return Err(CommandError::MissingArgument {
            command: "answer",
            argument: "the number of the question",
        });
    }
    let number = word
        .trim_start_matches('#')
        .trim_end_matches(['.', ':'])
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| CommandError::InvalidArgument {
            command: "answer",
            argument: "a question number",
            value: word.to_string(),
            expected: "the number the panel shows before the question (`1`)",
        })?;
    let text = free_text(text).ok_or(CommandError::MissingArgument {
        command: "answer",
        argument: "the answer",
    })?;
    Ok(Command::Answer { number, text })
}

/// `/rollback v<N>` (or `N`).
fn parse_rollback(rest: &str) -> Result<Command, CommandError> {
    let (word, tail) = split_word(rest.trim_start());
    if word.is_empty() {
        return Err(CommandError::MissingArgument {
            command: "rollback",
            argument: "a version",
        });
    }
    let digits = word.strip_prefix(['v', 'V']).unwrap_or(word);
    let version = digits
        .parse::<u64>()
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| CommandError::InvalidArgument {
            command: "rollback",
            argument: "a version",
            value: word.to_string(),
            expected: "`v` and a version number, as the panel shows it (`v3`)",
        })?;
    no_arguments("rollback", tail, Command::Rollback { version })
}

fn no_arguments(
    command: &'static str,
    rest: &str,
    parsed: Command,
) -> Result<Command, CommandError> {
    match rest.trim() {
        "" => Ok(parsed),
        extra => Err(CommandError::UnexpectedArgument {
            command,
            value: extra.to_string(),
        }),
    }
}

/// The step id that opens the arguments of `command`, and the text after it.
fn step_argument<'a>(
    command: &'static str,
    rest: &'a str,
) -> Result<(StepId, &'a str), CommandError> {
    match next_token(rest) {
        Err(_) => Err(CommandError::UnterminatedQuote { command }),
        Ok(None) => Err(CommandError::MissingArgument {
            command,
            argument: "a step id",
        }),
        Ok(Some((token, tail))) => Ok((step_id(command, &token.text)?, tail)),
    }
}

fn step_id(command: &'static str, value: &str) -> Result<StepId, CommandError> {
    StepId::parse(value).ok_or_else(|| CommandError::InvalidArgument {
        command,
        argument: "a step id",
        value: value.to_string(),
        expected: STEP_ID_RULE,
    })
}

fn is_end_of_flags(word: &str) -> bool {
    matches!(word, "--" | "—" | "–")
}

/// `/plan <request>`, `/plan -- <request>`, `/plan edit` + fenced block.
fn parse_plan(rest: &str, fences: &Fences<'_>) -> Result<Command, CommandError> {
    let (word, after) = split_word(rest);
    let request = if is_end_of_flags(word) {
        free_text(after)
    } else if word.eq_ignore_ascii_case("edit") {
        if let Some(extra) = free_text(after) {
            return Err(CommandError::UnexpectedArgument {
                command: "plan edit",
                value: extra,
            });
        }
        return match fences.plan_block() {
            Some(plan) => Ok(Command::PlanEdit {
                plan: plan.to_string(),
            }),
            None => Err(CommandError::MissingPlanBlock),
        };
    } else {
        free_text(rest)
    };
    match request {
        Some(request) => Ok(Command::Plan { request }),
        None => Err(CommandError::MissingArgument {
            command: "plan",
            argument: "a request",
        }),
    }
}

/// `/mission [--replace] [goal]`, `/mission -- <goal>`, `/mission close [done|failed] [reason]`.
fn parse_mission(rest: &str) -> Result<Command, CommandError> {
    let (word, after) = split_word(rest);
    if word.eq_ignore_ascii_case("close") {
        return Ok(parse_mission_close(after));
    }
    let (replace, goal) = replace_and_goal("mission", rest)?;
    Ok(Command::Mission { replace, goal })
}

/// `/cruise [--replace] [goal]`, `/cruise -- <goal>`: `/mission`'s grammar, without
/// `close` (a cruise is closed with `/mission close` like any mission).
fn parse_cruise(rest: &str) -> Result<Command, CommandError> {
    let (replace, goal) = replace_and_goal("cruise", rest)?;
    Ok(Command::Cruise { replace, goal })
}

/// The `--replace` flag and the free-text goal after it, for `command`.
fn replace_and_goal(
    command: &'static str,
    rest: &str,
) -> Result<(bool, Option<String>), CommandError> {
    let mut replace = false;
    let mut cursor = rest;
    loop {
        let (word, after) = split_word(cursor);
        if is_end_of_flags(word) {
            cursor = after;
            break;
        }
        let token = Token {
            text: word.to_string(),
            quoted: false,
        };
        let Some((flag, value)) = token.as_flag() else {
            break;
        };
        if flag != "--replace" {
            return Err(CommandError::UnknownFlag {
                command,
                did_you_mean: nearest(&flag, ["--replace"], 2),
                flag: word.to_string(),
            });
        }
        if value.is_some() {
            return Err(CommandError::UnexpectedArgument {
                command,
                value: word.to_string(),
            });
        }
        if replace {
            return Err(CommandError::DuplicateFlag {
                command,
                flag: "--replace",
            });
        }
        replace = true;
        cursor = after;
    }
    Ok((replace, free_text(cursor)))
}

fn parse_mission_close(rest: &str) -> Command {
    let (word, after) = split_word(rest);
    let outcome = match word.to_ascii_lowercase().as_str() {
        "done" => Some(CloseOutcome::Done),
        "failed" => Some(CloseOutcome::Failed),
        _ => None,
    };
    let reason = if outcome.is_some() {
        free_text(after)
    } else {
        free_text(rest)
    };
    Command::MissionClose { outcome, reason }
}

/// `/step add …`; `add` is the only subcommand so far.
fn parse_step(rest: &str) -> Result<Command, CommandError> {
    let (word, after) = split_word(rest);
    if word.is_empty() {
        return Err(CommandError::MissingArgument {
            command: "step",
            argument: "a subcommand",
        });
    }
    if !word.eq_ignore_ascii_case("add") {
        return Err(CommandError::InvalidArgument {
            command: "step",
            argument: "a subcommand",
            value: word.to_string(),
            expected: "`add`",
        });
    }
    parse_step_add(after).map(|add| Command::StepAdd(Box::new(add)))
}

/// What `/step add` says is missing after each flag.
fn flag_value_name(flag: &str) -> &'static str {
    match flag {
        "--after" => "step ids after `--after`",
        "--validation" => "a validation after `--validation`",
        _ => "a text after `--acceptance`",
    }
}

/// `/step add <ID> <title> [--after ID,ID] [--validation V] [--acceptance text]`.
fn parse_step_add(rest: &str) -> Result<StepAdd, CommandError> {
    const COMMAND: &str = "step add";
    let words = tokens(rest).map_err(|_| CommandError::UnterminatedQuote { command: COMMAND })?;
    let mut words = words.into_iter().peekable();
    let id = match words.next() {
        Some(token) if token.as_flag().is_none() => step_id(COMMAND, &token.text)?,
        _ => {
            return Err(CommandError::MissingArgument {
                command: COMMAND,
                argument: "a step id",
            })
        }
    };
    let mut title: Vec<String> = Vec::new();
    while let Some(token) = words.next_if(|t| t.as_flag().is_none()) {
        title.push(token.text);
    }
    let title = title.join(" ").trim().to_string();
    if title.is_empty() {
        return Err(CommandError::MissingArgument {
            command: COMMAND,
            argument: "a title",
        });
    }
    let mut add = StepAdd {
        id,
        title,
        after: Vec::new(),
        validation: None,
        acceptance: None,
    };
    while let Some(token) = words.next() {
        let Some((flag, inline)) = token.as_flag() else {
            return Err(CommandError::UnexpectedArgument {
                command: COMMAND,
                value: token.text,
            });
        };
        let Some(known) = STEP_ADD_FLAGS.iter().copied().find(|f| *f == flag) else {
            return Err(CommandError::UnknownFlag {
                command: COMMAND,
                did_you_mean: nearest_flag(&flag),
                flag: token.text,
            });
        };
        let value = match inline {
            Some(value) => value,
            None => match words.next_if(|t| t.as_flag().is_none()) {
                Some(next) => next.text,
                None => String::new(),
            },
        };
        if value.trim().is_empty() {
            return Err(CommandError::MissingArgument {
                command: COMMAND,
                argument: flag_value_name(known),
            });
        }
        match known {
            "--after" => {
                let mut list = value;
                // `--after S1, S2`: a trailing comma continues the list into the next word.
                while list.trim_end().ends_with(',') {
                    match words.next_if(|t| t.as_flag().is_none()) {
                        Some(next) => list.push_str(&next.text),
                        None => break,
                    }
                }
                let before = add.after.len();
                for piece in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    add.after.push(step_id(COMMAND, piece)?);
                }
                if add.after.len() == before {
                    return Err(CommandError::MissingArgument {
                        command: COMMAND,
                        argument: flag_value_name(known),
                    });
                }
            }
            "--validation" => {
                if add.validation.is_some() {
                    return Err(duplicate(known));
                }
                let parsed = value.trim().to_ascii_lowercase().parse::<Validation>();
                add.validation = Some(parsed.map_err(|_| CommandError::InvalidArgument {
                    command: COMMAND,
                    argument: "a validation",
                    value: value.clone(),
                    expected: VALIDATIONS,
                })?);
            }
            _ => {
                if add.acceptance.is_some() {
                    return Err(duplicate(known));
                }
                add.acceptance = Some(value.trim().to_string());
            }
        }
    }
    Ok(add)
}

fn duplicate(flag: &'static str) -> CommandError {
    CommandError::DuplicateFlag {
        command: "step add",
        flag,
    }
}

/// A typo (`--valdation`) or an unambiguous prefix (`--accept`) of a `/step add` flag.
fn nearest_flag(flag: &str) -> Option<&'static str> {
    if let Some(close) = nearest(flag, STEP_ADD_FLAGS.iter().copied(), 2) {
        return Some(close);
    }
    let mut prefixed = STEP_ADD_FLAGS
        .iter()
        .copied()
        .filter(|known| flag.len() > 3 && known.starts_with(flag));
    match (prefixed.next(), prefixed.next()) {
        (Some(only), None) => Some(only),
        _ => None,
    }
}
