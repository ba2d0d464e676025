//! The `navin` argument grammar: every command, option and example a user reads in `--help`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use navin_ledger::model::{Actor, MissionStatus, Validation};

/// Navin: plans and missions for coding work, kept on a git branch.
#[derive(Debug, Parser)]
#[command(name = "navin", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Repository to work in (any path inside it).
    #[arg(long, global = true, default_value = ".", value_name = "PATH")]
    pub repo: PathBuf,
    /// Branch that holds the ledger.
    #[arg(long, global = true, default_value = navin_ledger::store::DEFAULT_BRANCH, env = "NAVIN_LEDGER_BRANCH", value_name = "NAME")]
    pub branch: String,
    /// Remote to fetch from before and push to after every write (never forced).
    #[arg(long, global = true, value_name = "NAME")]
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

fn parse_actor(s: &str) -> Result<Actor, String> {
    s.parse()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The mission: its goal, status, history and checkpoints.
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// The task board: steps, the ready queue and their evidence.
    #[command(subcommand)]
    Board(BoardCommand),
    /// The board digest an agent reads each turn: goal, version, status, current and
    /// ready steps, stall, loop, budget, missing info, the last change and the protocol.
    Digest,
    /// Serve the board tools to a coding agent over MCP (stdio).
    Mcp(McpArgs),
    /// Plan a change read-only: map the repository and print a validated plan document;
    /// save it on the ledger branch, approve, reject or edit it.
    Plan(PlanCmd),
    /// Start a mission from an approved plan.
    #[command(subcommand)]
    Mission(MissionCommand),
    /// Run the GitHub App webhook server.
    Serve(crate::config::ServeArgs),
    /// The repository configuration, `.github/navin.yml`: check it, or print its schema.
    #[command(subcommand)]
    Config(ConfigCommand),
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
    Validate {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Section-aware diff between an original plan and an edited one.
    Diff {
        #[arg(value_name = "ORIGINAL")]
        original: PathBuf,
        #[arg(value_name = "EDITED")]
        edited: PathBuf,
    },
    /// The plans saved on the ledger branch: id, status and title.
    List,
    /// A saved plan's status and text (`--json`: its record too).
    Show {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Approve a saved plan's current text (people only).
    Approve {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Reject a saved plan (people only); its approvals stop counting.
    Reject {
        #[arg(value_name = "ID")]
        id: String,
        /// What should change, kept on the record for whoever plans again.
        #[arg(long)]
        feedback: Option<String>,
    },
    /// Replace a saved plan's text with an edited one (people only). The changes are
    /// binding on whoever executes the plan; approvals of the old text go stale.
    Edit {
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
    Init {
        #[arg(long)]
        goal: String,
        #[arg(long = "constraint", value_name = "TEXT")]
        constraints: Vec<String>,
        #[arg(long = "acceptance", value_name = "TEXT")]
        acceptance: Vec<String>,
        #[arg(long)]
        replace: bool,
    },
    /// Show the mission and its board.
    Show,
    /// The full history, from the ledger branch's commits (newest first).
    History {
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Pause the mission: only resume, update and reads are accepted until resumed.
    Pause {
        #[arg(long)]
        reason: String,
    },
    /// Resume a paused mission.
    Resume {
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Mark the current version with refs/navin/checkpoints/v<VERSION>.
    Checkpoint,
    /// Write the content of an older version as a new version.
    Rollback { version: u64 },
    /// Close the mission as done (every step done) or failed.
    Close {
        #[arg(long, value_enum)]
        status: CloseStatus,
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Edit the task ledger; every edit bumps the version and is recorded with the actor.
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
    #[arg(long)]
    pub goal: Option<String>,
    #[arg(long = "add-fact", value_name = "TEXT")]
    pub add_fact: Vec<String>,
    #[arg(long = "add-missing-info", value_name = "TEXT")]
    pub add_missing_info: Vec<String>,
    /// A missing-info entry that is now answered (it moves to facts).
    #[arg(long = "resolve-missing-info", value_name = "TEXT")]
    pub resolve_missing_info: Vec<String>,
    #[arg(long = "add-constraint", value_name = "TEXT")]
    pub add_constraint: Vec<String>,
    #[arg(long)]
    pub reason: String,
}

#[derive(Debug, Subcommand)]
pub enum BoardCommand {
    /// Add a step.
    Add {
        id: String,
        #[arg(long)]
        title: String,
        #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
        depends_on: Vec<String>,
        #[arg(long, default_value = "none", value_parser = parse_validation)]
        validation: Validation,
        #[arg(long)]
        acceptance: Option<String>,
        #[arg(long)]
        agent: Option<String>,
        #[arg(long)]
        description: Option<String>,
        /// A command that validates the step (`navin board verify` runs each, in order,
        /// with no shell); repeat for several.
        #[arg(long = "command", value_name = "CMD")]
        commands: Vec<String>,
    },
    /// The ready queue: planned steps whose dependencies are all done.
    Next,
    /// The brief for one step: role, goal, context paths, constraints, done when, do not,
    /// validation, how to report back and the digest (as `board_brief` over MCP).
    Brief { id: String },
    /// Start a ready step.
    Start { id: String },
    /// Report progress on the current step (drives stall, loop and budget checks).
    Progress {
        id: String,
        /// This report made no real progress (counts towards a stall).
        #[arg(long)]
        no_progress: bool,
        /// A fingerprint of the action taken; repeats count as a loop.
        #[arg(long)]
        fingerprint: Option<String>,
        #[arg(long, default_value_t = 0)]
        tokens: u64,
    },
    /// Mark a step done; test, lint and verify steps need green run evidence.
    Done {
        id: String,
        /// Prose evidence (counts only for manual steps closed by a human).
        #[arg(long, conflicts_with = "evidence_json")]
        evidence: Option<String>,
        /// A JSON evidence record (kind, ok, summary, ...); `-` reads stdin.
        #[arg(long, value_name = "FILE")]
        evidence_json: Option<PathBuf>,
    },
    /// Record a failed attempt (retry, then local replan, then pause).
    Fail {
        id: String,
        #[arg(long, value_name = "FILE")]
        evidence_json: Option<PathBuf>,
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Run the step's validation command in this checkout (no shell) and record the run:
    /// command, exit status, timing, output digest, HEAD and whether the tree was clean.
    /// An agent can close a test, lint or verify step only with such a run.
    Verify {
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
    Retry { id: String },
    /// Local replan: the step and its dependents go back to planned.
    Replan {
        id: String,
        #[arg(long)]
        reason: String,
    },
}

fn parse_validation(s: &str) -> Result<Validation, String> {
    s.parse()
}
