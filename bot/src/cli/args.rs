//! The `navin` argument grammar: every command, option and example a user reads in `--help`.
//!
//! Every option carries a one-line description and every command an example
//! (`after_long_help`); `tests::every_option_has_help_and_every_command_an_example` walks
//! the tree. The ledger options (`--repo`, `--branch`, `--remote`, `--actor`, `--json`)
//! are global so that both `navin --repo X board next` and `navin board next --repo X`
//! work; [`command`] hides them under the commands that ignore them (`serve`, …).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use navin_ledger::model::{Actor, MissionStatus, Validation};

/// Plan coding work and run it as a mission: a task board on a git branch whose steps
/// close only on green CI.
#[derive(Debug, Parser)]
#[command(
    name = "navin",
    version,
    propagate_version = true,
    long_about = "Plan coding work and run it as a mission: a task board on a git branch whose \
steps close only on green CI.

`navin plan` maps a repository read-only and prints a validated plan; `navin ledger` and \
`navin board` keep the mission and its steps on the ledger branch (navin/ledger by \
default); `navin mcp` serves the board to a coding agent; `navin serve` runs the GitHub \
App webhook server.

Exit codes: 0 success; 1 when a rule refuses the operation (nothing changed); 2 for \
usage errors and unreadable ledgers.",
    after_long_help = "Examples:
  navin plan \"add a --since option to navin ledger history\"
  navin ledger init --goal \"Ship dark mode\"
  navin board add S1 --title \"theme tokens\" --validation test
  navin --repo ../app board next --json     # the ledger options go before or after the command
  navin serve --help                        # the webhook server's settings"
)]
pub struct Cli {
    /// Repository to work in (any path inside it).
    #[arg(long, global = true, default_value = ".", value_name = "PATH")]
    pub repo: PathBuf,
    /// Branch that holds the ledger.
    #[arg(long, global = true, default_value = navin_ledger::store::DEFAULT_BRANCH, env = "NAVIN_LEDGER_BRANCH", value_name = "NAME", value_parser = branch_name)]
    pub branch: String,
    /// Remote to fetch from before and push to after every write (never forced).
    #[arg(long, global = true, value_name = "NAME", value_parser = remote_name)]
    pub remote: Option<String>,
    /// Who is acting: human:LOGIN, main, subagent:NAME or app:NAME [default: human:$USER].
    #[arg(long, global = true, env = "NAVIN_ACTOR", value_name = "WHO", value_parser = parse_actor)]
    pub actor: Option<Actor>,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

/// Global options that mean nothing to a command, by command: hidden from its help.
const UNUSED_GLOBALS: &[(&str, &[&str])] = &[
    ("serve", &["repo", "branch", "remote", "actor", "json"]),
    ("mcp", &["json"]),
    ("config", &["branch", "remote", "actor", "json"]),
    ("app", &["repo", "branch", "remote", "actor", "json"]),
];

/// The command tree `navin` parses: the derived grammar, with each global option that a
/// command ignores hidden from that command's help (and its subcommands'). Parsing is
/// unchanged, so no existing invocation breaks.
pub fn command() -> clap::Command {
    let root = <Cli as clap::CommandFactory>::command();
    let globals: Vec<clap::Arg> = root
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    root.mut_subcommands(|sub| {
        let Some((_, unused)) = UNUSED_GLOBALS
            .iter()
            .find(|(name, _)| *name == sub.get_name())
        else {
            return sub;
        };
        // A subcommand's own argument of the same id stops the root's from propagating.
        globals
            .iter()
            .filter(|a| unused.contains(&a.get_id().as_str()))
            .fold(sub, |sub, arg| sub.arg(arg.clone().hide(true)))
    })
}

/// An empty `--branch` would reach git as `""`; name what is missing instead.
fn branch_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err(format!(
            "the ledger branch name is empty: give one (the default is {})",
            navin_ledger::store::DEFAULT_BRANCH
        ));
    }
    Ok(s.to_owned())
}

/// An empty `--remote` would reach git as `remote : no such remote`; name it instead.
fn remote_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err(
            "the remote name is empty: give one (e.g. origin), or drop --remote to work locally"
                .to_owned(),
        );
    }
    Ok(s.to_owned())
}

fn parse_actor(s: &str) -> Result<Actor, String> {
    s.parse()
}

#[derive(Debug, Subcommand)]
#[allow(
    clippy::large_enum_variant,
    reason = "parsed once per process; `serve`'s settings are the large variant"
)]
pub enum Command {
    /// The mission: its goal, status, history and checkpoints.
    #[command(
        subcommand,
        after_long_help = "Examples:
  navin ledger init --goal \"Ship dark mode\" --acceptance \"the toggle persists\"
  navin ledger show
  navin ledger history --limit 10"
    )]
    Ledger(LedgerCommand),
    /// The task board: steps, the ready queue and their evidence.
    #[command(
        subcommand,
        after_long_help = "Examples:
  navin board add S1 --title \"theme tokens\" --validation test
  navin board next
  navin board start S1"
    )]
    Board(BoardCommand),
    /// The board digest an agent reads each turn: goal, version, status, current and
    /// ready steps, stall, loop, budget, missing info, the last change and the protocol.
    #[command(after_long_help = "Example:
  navin digest")]
    Digest,
    /// Serve the board tools to a coding agent over MCP (stdio).
    #[command(after_long_help = "Examples:
  navin mcp --mode agent                   # in .mcp.json: {\"command\": \"navin\", \"args\": [\"mcp\"]}
  navin mcp --mode plan                    # read tools only
  navin mcp --remote origin                # fetch before and push after every write")]
    Mcp(McpArgs),
    /// Plan a change read-only: map the repository and print a validated plan document;
    /// save it on the ledger branch, approve, reject or edit it.
    #[command(after_long_help = "Examples:
  navin plan \"make the greeting configurable\"
  navin plan --out plan.md --planner llm \"split the parser module\"
  navin plan --save \"make the greeting configurable\"   # then: navin plan approve ID")]
    Plan(PlanCmd),
    /// Start a mission from an approved plan.
    #[command(
        subcommand,
        after_long_help = "Examples:
  navin mission start --from-plan local-1a2b3c4d5e6f
  navin mission continue --note \"stage 1 reviewed\""
    )]
    Mission(MissionCommand),
    #[cfg(feature = "github")]
    /// Run the GitHub App webhook server.
    #[command(after_long_help = "Example:
  NAVIN_APP_ID=12345 NAVIN_PRIVATE_KEY_PATH=app.pem NAVIN_WEBHOOK_SECRET_FILE=secret \\
    navin serve --listen 0.0.0.0:8080 --data-dir /var/lib/navin")]
    Serve(crate::config::ServeArgs),
    /// `navin serve` or `navin app` in a build without them: parsed only to say so.
    #[cfg(not(feature = "github"))]
    #[command(
        name = "serve",
        alias = "app",
        hide = true,
        disable_help_flag = true,
        after_long_help = "Install the default build: cargo install --locked --path bot"
    )]
    NotBuilt {
        /// Whatever followed the command; this build has nothing to run it with.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        rest: Vec<String>,
    },
    #[cfg(feature = "github")]
    /// Register Navin's GitHub App (`navin app create`) and save its credentials.
    #[command(
        subcommand,
        after_long_help = "Example:
  navin app create --org my-org"
    )]
    App(AppCommand),
    /// The repository configuration, `.github/navin.yml`: check it, or print its schema.
    #[command(
        subcommand,
        after_long_help = "Examples:
  navin config validate
  navin config schema > navin.schema.json"
    )]
    Config(ConfigCommand),
}

#[cfg(feature = "github")]
/// `navin app`.
#[derive(Debug, Subcommand)]
pub enum AppCommand {
    /// Register the GitHub App from Navin's manifest (GitHub's manifest flow, through a
    /// page served on 127.0.0.1) and save its id, client id, webhook secret and private
    /// key for `navin serve`.
    Create(super::app_create::AppCreateArgs),
}

/// `navin config`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Check a `.github/navin.yml` with Navin's own parser: exit 0 if valid, 1 naming the
    /// line, column and key of the first problem, 2 if the file cannot be read.
    #[command(after_long_help = "Examples:
  navin config validate                      # .github/navin.yml of this checkout
  navin config validate ../other/.github/navin.yml
  git show main:.github/navin.yml | navin config validate -")]
    Validate {
        /// The file to check (`-` for stdin) [default: .github/navin.yml under --repo].
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// Print the JSON Schema of `.github/navin.yml`, which editors use to complete and
    /// check keys.
    #[command(after_long_help = "Example:
  navin config schema > navin.schema.json")]
    Schema,
}

/// `navin mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// `plan` lists only the read tools; `agent` lists all of them.
    #[arg(long, value_enum, default_value = "agent")]
    pub mode: crate::mcp::Mode,
    /// Log lines on stderr as `text` or `json` (one object a line) [default: text on a
    /// terminal, json otherwise]; stdout carries the protocol either way.
    #[arg(long, env = "NAVIN_LOG_FORMAT", value_enum, value_name = "FORMAT")]
    pub log_format: Option<crate::logging::LogFormat>,
    /// Append every write that lands to FILE as a JSON line, for the Action's `progress`
    /// mode to replay on the real ledger (the agent workflow's read-only agent job).
    #[arg(long, env = "NAVIN_MCP_JOURNAL", value_name = "FILE")]
    pub journal: Option<std::path::PathBuf>,
}

/// `navin plan REQUEST`, or `navin plan validate|diff`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct PlanCmd {
    #[command(subcommand)]
    pub action: Option<PlanAction>,
    /// What to plan, in plain words.
    #[arg(required = true, value_name = "REQUEST")]
    pub request: Vec<String>,
    /// Export the plan's markdown to FILE (the only thing plan mode ever writes).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Who writes the plan: the built-in read-only planner, a tool-using model on an
    /// OpenAI-compatible endpoint (NAVIN_LLM_BASE_URL, NAVIN_LLM_MODEL,
    /// NAVIN_LLM_API_KEY) or a command (NAVIN_PLAN_COMMAND). Default: `planner.source`
    /// in .github/navin.yml, else builtin. The LLM and command planners plan the
    /// commit at HEAD, never uncommitted changes.
    #[arg(long, value_enum)]
    pub planner: Option<PlannerKind>,
    /// Store the plan on the ledger branch (never in the working tree) as pending, under
    /// an id derived from its text; approve it with `navin plan approve ID`.
    #[arg(long)]
    pub save: bool,
}

#[derive(Debug, Subcommand)]
pub enum PlanAction {
    /// Check a plan file; exit 1 naming the first problem.
    #[command(after_long_help = "Example:
  navin plan validate plan.md")]
    Validate {
        /// The plan document to check.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Section-aware diff between an original plan and an edited one.
    #[command(after_long_help = "Example:
  navin plan diff plan.md plan-edited.md --json")]
    Diff {
        /// The plan as first written.
        #[arg(value_name = "ORIGINAL")]
        original: PathBuf,
        /// The plan after editing.
        #[arg(value_name = "EDITED")]
        edited: PathBuf,
    },
    /// The plans saved on the ledger branch: id, status and title.
    #[command(after_long_help = "Example:
  navin plan list")]
    List,
    /// A saved plan's status and text (`--json`: its record too).
    #[command(after_long_help = "Example:
  navin plan show local-1a2b3c4d5e6f")]
    Show {
        /// The saved plan's id (`navin plan list`).
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Approve a saved plan's current text (people only).
    #[command(after_long_help = "Example:
  navin plan approve local-1a2b3c4d5e6f")]
    Approve {
        /// The saved plan's id (`navin plan list`).
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Reject a saved plan (people only); its approvals stop counting.
    #[command(after_long_help = "Example:
  navin plan reject local-1a2b3c4d5e6f --feedback \"keep the old flag as an alias\"")]
    Reject {
        /// The saved plan's id (`navin plan list`).
        #[arg(value_name = "ID")]
        id: String,
        /// What should change, kept on the record for whoever plans again.
        #[arg(long)]
        feedback: Option<String>,
    },
    /// Replace a saved plan's text with an edited one (people only). The changes are
    /// binding on whoever executes the plan; approvals of the old text go stale.
    #[command(after_long_help = "Examples:
  navin plan edit local-1a2b3c4d5e6f               # opens $EDITOR
  navin plan edit local-1a2b3c4d5e6f edited.md")]
    Edit {
        /// The saved plan's id (`navin plan list`).
        #[arg(value_name = "ID")]
        id: String,
        /// The edited plan (`-` for stdin); without it, $VISUAL or $EDITOR opens the text.
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum MissionCommand {
    /// Start the mission an approved plan describes: its stages (or proposed changes)
    /// become the board's steps, as `/mission` does on GitHub.
    #[command(after_long_help = "Examples:
  navin mission start --from-plan local-1a2b3c4d5e6f
  navin mission start --from-plan local-1a2b3c4d5e6f --cruise   # every step ready at once")]
    Start {
        /// The approved plan's id (`navin plan list`).
        #[arg(long, value_name = "ID")]
        from_plan: String,
        /// One stage: every step is ready at once (as `/cruise`).
        #[arg(long)]
        cruise: bool,
        /// Replace a live mission.
        #[arg(long)]
        replace: bool,
    },
    /// Release the next stage of a staged mission once every step of the current one
    /// is done (`/continue` on GitHub). Only a person may.
    #[command(after_long_help = "Example:
  navin mission continue --note \"stage 1 reviewed on staging\"")]
    Continue {
        /// What you checked, for the history.
        #[arg(long)]
        note: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlannerKind {
    Builtin,
    #[value(alias = "http")]
    Llm,
    Command,
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Start a mission (refuses to replace a live one without --replace).
    #[command(after_long_help = "Example:
  navin ledger init --goal \"Ship dark mode\" --constraint \"no new dependencies\" \\
    --acceptance \"the toggle persists across reloads\"")]
    Init {
        /// What the mission is for, in one sentence.
        #[arg(long, value_name = "TEXT")]
        goal: String,
        /// A rule every step must keep; repeat for several.
        #[arg(long = "constraint", value_name = "TEXT")]
        constraints: Vec<String>,
        /// A condition the finished mission must meet; repeat for several.
        #[arg(long = "acceptance", value_name = "TEXT")]
        acceptance: Vec<String>,
        /// Replace a live mission instead of refusing.
        #[arg(long)]
        replace: bool,
    },
    /// Show the mission and its board.
    #[command(after_long_help = "Examples:
  navin ledger show
  navin ledger show --json")]
    Show,
    /// The full history, from the ledger branch's commits (newest first).
    #[command(after_long_help = "Example:
  navin ledger history --limit 10")]
    History {
        /// How many entries to print, newest first.
        #[arg(long, default_value_t = 50, value_name = "N")]
        limit: usize,
    },
    /// Pause the mission: only resume, update and reads are accepted until resumed.
    #[command(after_long_help = "Example:
  navin ledger pause --reason \"waiting for the API freeze\"")]
    Pause {
        /// Why, for the history and the digest.
        #[arg(long, value_name = "TEXT")]
        reason: String,
    },
    /// Resume a paused mission.
    #[command(after_long_help = "Example:
  navin ledger resume --reason \"API frozen\"")]
    Resume {
        /// Why, for the history.
        #[arg(long, default_value = "", value_name = "TEXT")]
        reason: String,
    },
    /// Mark the current version with refs/navin/checkpoints/v<VERSION>.
    #[command(after_long_help = "Example:
  navin ledger checkpoint")]
    Checkpoint,
    /// Write the content of an older version as a new version.
    #[command(after_long_help = "Example:
  navin ledger rollback 7            # versions are listed by navin ledger history")]
    Rollback {
        /// The version to restore (`navin ledger history`).
        // Its own id: `version` is the propagated `--version` flag's, and the clash made
        // clap panic on `navin ledger rollback` in debug builds.
        #[arg(id = "target_version", value_name = "VERSION")]
        version: u64,
    },
    /// Close the mission as done (every step done) or failed.
    #[command(after_long_help = "Examples:
  navin ledger close --status done
  navin ledger close --status failed --reason \"superseded by #42\"")]
    Close {
        /// How the mission ended.
        #[arg(long, value_enum)]
        status: CloseStatus,
        /// Why, for the history.
        #[arg(long, default_value = "", value_name = "TEXT")]
        reason: String,
    },
    /// Answer open question N (numbered as `navin ledger show` lists missing info): the
    /// answer becomes a fact, and a mission paused for it resumes (`/answer` on GitHub).
    #[command(after_long_help = "Example:
  navin ledger answer 1 \"en-GB first\"")]
    Answer {
        /// The question's number.
        #[arg(value_name = "N")]
        number: usize,
        /// The answer.
        #[arg(value_name = "TEXT")]
        text: String,
    },
    /// Edit the task ledger; every edit bumps the version and is recorded with the actor.
    #[command(after_long_help = "Example:
  navin ledger update --add-fact \"the API returns UTC\" --reason \"checked the docs\"")]
    Update(UpdateCmd),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CloseStatus {
    Done,
    Failed,
}

impl From<CloseStatus> for MissionStatus {
    fn from(s: CloseStatus) -> Self {
        match s {
            CloseStatus::Done => MissionStatus::Done,
            CloseStatus::Failed => MissionStatus::Failed,
        }
    }
}

#[derive(Debug, Args)]
pub struct UpdateCmd {
    /// A new goal for the mission.
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,
    /// Something now known to be true; repeat for several.
    #[arg(long = "add-fact", value_name = "TEXT")]
    pub add_fact: Vec<String>,
    /// A question that blocks work until answered; repeat for several.
    #[arg(long = "add-missing-info", value_name = "TEXT")]
    pub add_missing_info: Vec<String>,
    /// A missing-info entry that is now answered (it moves to facts).
    #[arg(long = "resolve-missing-info", value_name = "TEXT")]
    pub resolve_missing_info: Vec<String>,
    /// A rule every step must keep; repeat for several.
    #[arg(long = "add-constraint", value_name = "TEXT")]
    pub add_constraint: Vec<String>,
    /// Why the ledger changes, for the history.
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
}

#[derive(Debug, Subcommand)]
pub enum BoardCommand {
    /// Add a step.
    #[command(after_long_help = "Examples:
  navin board add S1 --title \"theme tokens\" --validation test --command \"cargo test -p theme\"
  navin board add S2 --title \"toggle\" --depends-on S1 --acceptance \"the toggle persists\"")]
    Add {
        /// The step's id: 1 to 100 letters, digits, `-`, `_` or `.` (e.g. S1).
        #[arg(value_name = "ID")]
        id: String,
        /// What the step does, in a few words.
        #[arg(long, value_name = "TEXT")]
        title: String,
        /// Steps that must be done before this one is ready.
        #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
        depends_on: Vec<String>,
        /// What proves the step done: test, lint or verify (green run evidence), manual
        /// (a person says so) or none.
        #[arg(long, default_value = "none", value_parser = parse_validation, value_name = "KIND")]
        validation: Validation,
        /// When the step counts as done, in plain words (goes into the brief).
        #[arg(long, value_name = "TEXT")]
        acceptance: Option<String>,
        /// Who should take the step (e.g. copilot, claude, a login).
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// More about the step, for the brief.
        #[arg(long, value_name = "TEXT")]
        description: Option<String>,
        /// A command that validates the step (`navin board verify` runs each, in order,
        /// with no shell); repeat for several.
        #[arg(long = "command", value_name = "CMD")]
        commands: Vec<String>,
    },
    /// The ready queue: planned steps whose dependencies are all done.
    #[command(after_long_help = "Examples:
  navin board next
  navin board next --json        # a JSON array of tasks")]
    Next,
    /// The brief for one step: role, goal, context paths, constraints, done when, do not,
    /// validation, how to report back and the digest (as `board_brief` over MCP).
    #[command(after_long_help = "Example:
  navin board brief S1")]
    Brief {
        /// The step's id.
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Start a ready step.
    #[command(after_long_help = "Example:
  navin board start S1")]
    Start {
        /// The step's id (`navin board next` lists the ready ones).
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Report progress on the current step (drives stall, loop and budget checks).
    #[command(after_long_help = "Examples:
  navin board progress S1 --fingerprint \"edit src/theme.rs\" --tokens 1200
  navin board progress S1 --no-progress       # counts towards a stall")]
    Progress {
        /// The step in progress.
        #[arg(value_name = "ID")]
        id: String,
        /// This report made no real progress (counts towards a stall).
        #[arg(long)]
        no_progress: bool,
        /// A fingerprint of the action taken; repeats count as a loop.
        #[arg(long, value_name = "TEXT")]
        fingerprint: Option<String>,
        /// Tokens spent since the last report (counted against the budget).
        #[arg(long, default_value_t = 0, value_name = "N")]
        tokens: u64,
    },
    /// Mark a step done; test, lint and verify steps need green run evidence.
    #[command(after_long_help = "Examples:
  navin board done S3 --evidence \"checked on staging\"          # a manual step
  navin board verify S1 && navin board done S1                # a test step, by a recorded run")]
    Done {
        /// The step to close.
        #[arg(value_name = "ID")]
        id: String,
        /// Prose evidence (counts only for manual steps closed by a human).
        #[arg(long, conflicts_with = "evidence_json", value_name = "TEXT")]
        evidence: Option<String>,
        /// A JSON evidence record (kind, ok, summary, ...); `-` reads stdin.
        #[arg(long, value_name = "FILE")]
        evidence_json: Option<PathBuf>,
    },
    /// Record a failed attempt (retry, then local replan, then pause).
    #[command(after_long_help = "Example:
  navin board fail S1 --reason \"the fixture server never starts\"")]
    Fail {
        /// The step that failed.
        #[arg(value_name = "ID")]
        id: String,
        /// A JSON evidence record of the failure (kind, ok, summary, ...); `-` reads stdin.
        #[arg(long, value_name = "FILE")]
        evidence_json: Option<PathBuf>,
        /// What went wrong, for the history and the next attempt.
        #[arg(long, default_value = "", value_name = "TEXT")]
        reason: String,
    },
    /// Run the step's validation command in this checkout (no shell) and record the run:
    /// command, exit status, timing, output digest, HEAD and whether the tree was clean.
    /// An agent can close a test, lint or verify step only with such a run.
    #[command(after_long_help = "Examples:
  navin board verify S1                        # the step's or .github/navin.yml's command
  navin board verify S1 -- cargo test -p theme # humans, or when none is configured")]
    Verify {
        /// The step to validate.
        #[arg(value_name = "ID")]
        id: String,
        /// The command to run instead of the step's or the config's (humans only, or
        /// when none is configured).
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
        /// Seconds the command may run (at least 1); then it is killed, with everything
        /// it started, and the run is recorded red as timed out.
        #[arg(
            long,
            value_name = "SECS",
            default_value_t = 1800,
            env = "NAVIN_VERIFY_TIMEOUT",
            value_parser = clap::value_parser!(u64).range(1..)
        )]
        timeout: u64,
    },
    /// Put a failed step back in the queue.
    #[command(after_long_help = "Example:
  navin board retry S1")]
    Retry {
        /// The failed step.
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Local replan: the step and its dependents go back to planned.
    #[command(after_long_help = "Example:
  navin board replan S2 --reason \"the API changed under it\"")]
    Replan {
        /// The step to plan again, with everything that depends on it.
        #[arg(value_name = "ID")]
        id: String,
        /// Why, for the history.
        #[arg(long, value_name = "TEXT")]
        reason: String,
    },
}

fn parse_validation(s: &str) -> Result<Validation, String> {
    s.parse()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command in the tree with its path (`navin board add`), root first.
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.to_owned(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    fn tree() -> Vec<(String, clap::Command)> {
        let mut cmd = command();
        // Propagates the global options, so they are checked where they appear.
        cmd.build();
        let mut out = Vec::new();
        walk(&cmd, "navin", &mut out);
        out
    }

    #[test]
    fn every_option_has_help_and_every_command_an_example() {
        let mut missing = Vec::new();
        for (path, cmd) in tree() {
            if path.ends_with(" help") || path.contains(" help ") {
                continue;
            }
            if cmd.get_after_long_help().is_none() && cmd.get_after_help().is_none() {
                missing.push(format!("{path}: no example"));
            }
            for arg in cmd.get_arguments() {
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path}: {} has no help", arg.get_id()));
                }
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }

    #[test]
    fn ledger_options_are_hidden_where_a_command_ignores_them() {
        for (path, cmd) in tree() {
            let hidden = |id: &str| {
                cmd.get_arguments()
                    .find(|a| a.get_id() == id)
                    .is_some_and(clap::Arg::is_hide_set)
            };
            if path == "navin serve" {
                for id in ["repo", "branch", "remote", "actor", "json"] {
                    assert!(hidden(id), "{path}: --{id} is listed");
                }
            }
            if path == "navin board next" {
                assert!(!hidden("repo") && !hidden("json"), "{path}");
            }
        }
    }

    #[cfg(not(feature = "github"))]
    #[test]
    fn serve_and_app_in_a_build_without_them_parse_to_a_message_naming_the_feature() {
        use clap::FromArgMatches;
        for argv in [
            vec!["navin", "serve", "--listen", "0.0.0.0:8080"],
            vec!["navin", "app", "create", "--org", "o"],
        ] {
            let m = command()
                .try_get_matches_from(&argv)
                .expect("the build without github parses it");
            let cli = Cli::from_arg_matches(&m).expect("a command");
            assert!(matches!(cli.command, Command::NotBuilt { .. }), "{argv:?}");
        }
        assert!(super::super::NOT_BUILT.contains("`github` feature"));
    }

    #[test]
    fn the_top_line_is_navins_own_description() {
        let about = command().get_about().map(ToString::to_string);
        assert_eq!(
            about.as_deref(),
            Some(
                "Plan coding work and run it as a mission: a task board on a git branch whose steps close only on green CI"
            )
        );
    }
}
