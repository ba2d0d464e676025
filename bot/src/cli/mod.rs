//! The `navin` command line: dispatch and exit codes (the grammar is in `args`).

#[cfg(feature = "github")]
mod app_create;
mod args;
mod config_cmd;
mod ledger_cmd;
mod plan_cmd;
mod plan_local;
mod show;
mod verify;

use std::process::ExitCode;

use clap::FromArgMatches;

pub use args::*;

/// Exit code when a rule refuses the operation (nothing changed).
pub const EXIT_REFUSED: u8 = 1;
/// Exit code for usage errors and unreadable ledgers.
pub const EXIT_ERROR: u8 = 2;

/// What `navin serve` or `navin app` answers in a build without the `github` feature.
#[cfg(not(feature = "github"))]
pub const NOT_BUILT: &str = "`navin serve` and `navin app` are not in this build: it was built \
     without the `github` feature (--no-default-features). Install the default build: \
     cargo install --locked --path bot";

/// Runs the CLI and maps outcomes to exit codes.
pub fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    let result = match &cli.command {
        Command::Plan(cmd) => plan_cmd::run(&cli, cmd),
        #[cfg(feature = "github")]
        Command::Serve(args) => serve(args.clone()),
        Command::Mcp(args) => mcp(&cli, args),
        Command::Config(cmd) => config_cmd::run(&cli, cmd),
        #[cfg(feature = "github")]
        Command::App(AppCommand::Create(args)) => app_create::run(args),
        #[cfg(not(feature = "github"))]
        Command::NotBuilt { .. } => Err(CliError::usage(NOT_BUILT)),
        _ => ledger_cmd::run(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("navin: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

#[cfg(feature = "github")]
/// `navin serve`: logs to stderr (RUST_LOG filters, default info; `--log-format`), runs
/// until SIGTERM.
fn serve(args: crate::config::ServeArgs) -> Result<(), CliError> {
    // Before logging starts: a bad setting is one line on stderr and exit 2.
    args.validate()
        .map_err(|e| CliError::usage(format!("serve: {e}")))?;
    crate::logging::init(args.log_format, "info");
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| CliError::usage(format!("cannot start the async runtime: {e}")))?;
    let agent_token = args
        .agent_token()
        .map_err(|e| CliError::usage(format!("serve: {e}")))?;
    let planner = args
        .planner()
        .map_err(|e| CliError::usage(format!("serve: {e}")))?;
    // The URL itself is not logged: it may carry credentials in its user part.
    if planner.base_url.is_some() {
        tracing::info!(
            model = planner.model.as_deref().unwrap_or("(the repository's)"),
            key = planner.api_key.is_some(),
            "LLM planner endpoint configured"
        );
    }
    let engine_config = navin_engine::EngineConfig {
        agent_token,
        planner,
        source_depth: args.plan_history,
        ..navin_engine::EngineConfig::new(args.data_dir.clone())
    };
    runtime
        .block_on(crate::server::run_engine(args, engine_config))
        .map_err(|e| CliError {
            message: format!("serve: {e}"),
            code: EXIT_ERROR,
        })
}

/// `navin mcp`: the store opened as for any other command, then served on stdio. Logs
/// go to stderr (stdout carries the protocol).
fn mcp(cli: &Cli, args: &McpArgs) -> Result<(), CliError> {
    crate::logging::init(args.log_format, "warn");
    let store = ledger_cmd::open(cli)?;
    let mut server =
        crate::mcp::NavinMcp::new(store, cli.repo.clone(), args.mode, cli.actor.clone());
    if let Some(path) = &args.journal {
        server = server.with_journal(
            crate::mcp::journal::Journal::open(path.clone()).map_err(CliError::usage)?,
        );
    }
    crate::mcp::serve_stdio(move || {
        Ok(
            match crate::mcp::GitHubCi::from_env(|k| std::env::var(k).ok())? {
                Some(github) => {
                    tracing::info!(
                        repo = github.repo(),
                        "board_done reads CI evidence from GitHub"
                    );
                    server.with_github(github)
                }
                None => server,
            },
        )
    })
    .map_err(CliError::usage)
}

/// A failure to report: message and exit code.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: u8,
}

impl CliError {
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: EXIT_ERROR,
        }
    }
}

impl From<navin_ledger::store::StoreError> for CliError {
    fn from(e: navin_ledger::store::StoreError) -> Self {
        let code = if e.is_rule() {
            EXIT_REFUSED
        } else {
            EXIT_ERROR
        };
        let message = match &e {
            navin_ledger::store::StoreError::Rule(rule) => match cli_hint(rule) {
                Some(hint) => format!("{e}: {hint}"),
                None => e.to_string(),
            },
            _ => e.to_string(),
        };
        Self { message, code }
    }
}

/// What to type instead, for the rules whose fix is another CLI command.
fn cli_hint(rule: &navin_ledger::RuleError) -> Option<String> {
    use navin_ledger::model::TaskStatus;
    use navin_ledger::RuleError as R;
    let hint = match rule {
        R::NoMission => "start one with `navin ledger init --goal TEXT`",
        R::MissionLive { .. } => "pass --replace to replace it",
        R::Finished { .. } => "start a new one with `navin ledger init --goal TEXT`",
        R::AgentEvidence { .. } | R::StaleRun { .. } | R::DirtyRun { .. } | R::RedRun { .. } => {
            "run `navin board verify STEP` on a clean, committed tree, then `navin board done STEP`"
        }
        R::EvidenceRequired { .. } => {
            "an agent runs `navin board verify STEP`; CI evidence is recorded by Navin from GitHub"
        }
        R::UnknownStep { .. } => "`navin ledger show` lists the steps",
        R::InvalidTransition {
            step,
            operation,
            status: TaskStatus::Planned,
        } if *operation != "start" => return Some(format!("`navin board start {step}`")),
        R::InvalidTransition {
            step,
            status: TaskStatus::Failed,
            ..
        } => return Some(format!("`navin board retry {step}`")),
        _ => return None,
    };
    Some(hint.to_owned())
}
