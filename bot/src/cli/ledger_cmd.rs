//! `navin ledger …` and `navin board …`: map arguments to ledger operations and print results.

use std::io::Read;
use std::path::Path;

use chrono::Utc;
use navin_ledger::model::{Actor, Evidence, PauseReason};
use navin_ledger::ops::{Ctx, InitArgs, NewTask, Operation, ProgressArgs, UpdateArgs};
use navin_ledger::store::{Committed, Store, StoreConfig};
use serde_json::json;

use super::show;
use super::{BoardCommand, Cli, CliError, Command, LedgerCommand};

/// `human:$USER` (or `%USERNAME%`), as the README promises; `human:local` only when
/// neither names a login the ledger accepts. The login is the bare user name: it was
/// parsed as a whole actor before, so every local write said `human:local`.
fn default_actor() -> Actor {
    ["USER", "USERNAME"]
        .iter()
        .filter_map(|var| std::env::var(var).ok())
        .find_map(|login| format!("human:{}", login.trim()).parse::<Actor>().ok())
        .unwrap_or_else(|| Actor::Human("local".to_string()))
}

pub(super) fn open(cli: &Cli) -> Result<Store, CliError> {
    let seal = crate::seal_key::local_seal(&cli.repo, &|name| std::env::var(name).ok())
        .map_err(CliError::usage)?;
    let cfg = StoreConfig {
        branch: cli.branch.clone(),
        remote: cli.remote.clone(),
        token: std::env::var("NAVIN_GIT_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        seal_key: Some(seal.key),
        repository: seal.repository,
        ..StoreConfig::default()
    };
    Ok(Store::open(&cli.repo, cfg)?)
}

/// Who acts: `--actor` / NAVIN_ACTOR, else `human:$USER`.
pub(super) fn actor(cli: &Cli) -> Actor {
    cli.actor.clone().unwrap_or_else(default_actor)
}

fn ctx(cli: &Cli) -> Ctx {
    Ctx::new(Utc::now(), actor(cli))
}

fn read_evidence(path: &Path) -> Result<Evidence, CliError> {
    let text = if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| CliError::usage(format!("reading stdin: {e}")))?;
        s
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::usage(format!("reading {}: {e}", path.display())))?
    };
    serde_json::from_str(&text).map_err(|e| {
        CliError::usage(format!(
            "{}: not an evidence record ({e}); expected {{\"kind\": \"check_run|workflow_run|test_run|lint_run|verify_run|prose\", \"ok\": true, \"summary\": \"...\"}}",
            path.display()
        ))
    })
}

/// Runs one command.
pub(super) fn run(cli: &Cli) -> Result<(), CliError> {
    let store = open(cli)?;
    let op = match &cli.command {
        Command::Digest => return show::digest(&store, cli.json),
        Command::Mission(super::MissionCommand::Start {
            from_plan,
            cruise,
            replace,
        }) => {
            let mode = match cruise {
                true => navin_ledger::model::MissionMode::Cruise,
                false => navin_ledger::model::MissionMode::Staged,
            };
            let config = super::plan_local::repo_config(&cli.repo)?;
            let done = super::plan_local::start(
                &store,
                &ctx(cli),
                from_plan,
                mode,
                *replace,
                &config,
                &cli.repo,
            )?;
            return report(cli.json, &done);
        }
        Command::Mission(super::MissionCommand::Continue { note }) => Operation::Continue {
            note: note.clone().unwrap_or_default(),
        },
        Command::Ledger(cmd) => match cmd {
            LedgerCommand::Show => return show::mission(&store, cli.json),
            LedgerCommand::History { limit } => return show::history(&store, *limit, cli.json),
            LedgerCommand::Checkpoint => {
                let (name, version) = store.checkpoint()?;
                return print(
                    cli.json,
                    json!({ "checkpoint": name, "version": version }),
                    &format!("checkpoint v{version}: {name}"),
                );
            }
            LedgerCommand::Rollback { version } => {
                let done = store.rollback(*version, &ctx(cli))?;
                return report(cli.json, &done);
            }
            LedgerCommand::Init {
                goal,
                constraints,
                acceptance,
                replace,
            } => {
                let commands = crate::local::default_branch_config(&cli.repo)
                    .ok()
                    .map(|(config, _)| config.validation.commands);
                if let Some(c) = &commands {
                    crate::local::check_commands(
                        &cli.repo,
                        "validation.commands in .github/navin.yml",
                        [&c.test, &c.lint, &c.verify]
                            .into_iter()
                            .flatten()
                            .map(String::as_str),
                    )
                    .map_err(|m| CliError {
                        message: format!("{m}; fix it there, then run `navin ledger init` again"),
                        code: super::EXIT_REFUSED,
                    })?;
                }
                Operation::Init(InitArgs {
                    goal: goal.clone(),
                    constraints: constraints.clone(),
                    acceptance_criteria: acceptance.clone(),
                    replace: *replace,
                    commands,
                    ..InitArgs::default()
                })
            }
            LedgerCommand::Pause { reason } => {
                let kind = if cli.actor.as_ref().is_none_or(Actor::is_human) {
                    PauseReason::Human
                } else {
                    PauseReason::Manual
                };
                Operation::Pause {
                    reason: kind,
                    note: reason.clone(),
                }
            }
            LedgerCommand::Resume { reason } => Operation::Resume {
                note: reason.clone(),
            },
            LedgerCommand::Close { status, reason } => Operation::Close {
                status: (*status).into(),
                reason: reason.clone(),
            },
            LedgerCommand::Answer { number, text } => {
                let Some(snapshot) = store.read()? else {
                    return Err(navin_ledger::store::StoreError::Rule(
                        navin_ledger::RuleError::NoMission,
                    )
                    .into());
                };
                let question = match snapshot.ledger.open_question(*number) {
                    Ok(q) => q.to_owned(),
                    Err(listed) => {
                        return Err(CliError {
                            message: format!("there is no open question {number}: {listed}"),
                            code: super::EXIT_REFUSED,
                        })
                    }
                };
                Operation::Update(UpdateArgs {
                    answers: vec![(question, text.clone())],
                    reason: format!("answered by {}", actor(cli)),
                    ..UpdateArgs::default()
                })
            }
            LedgerCommand::Update(u) => Operation::Update(UpdateArgs {
                goal: u.goal.clone(),
                add_facts: u.add_fact.clone(),
                add_missing_info: u.add_missing_info.clone(),
                resolve_missing_info: u.resolve_missing_info.clone(),
                add_constraints: u.add_constraint.clone(),
                reason: u.reason.clone(),
                ..UpdateArgs::default()
            }),
        },
        Command::Board(cmd) => match cmd {
            BoardCommand::Next => return show::next(&store, cli.json),
            BoardCommand::Brief { id } => return show::brief(&store, &cli.repo, id, cli.json),
            BoardCommand::Verify {
                id,
                command,
                timeout,
            } => {
                let tree = super::verify::WorkTree::discover(&cli.repo)?;
                return super::verify::verify(
                    &store,
                    &tree,
                    ctx(cli),
                    id,
                    command,
                    *timeout,
                    cli.json,
                );
            }
            BoardCommand::Add {
                id,
                title,
                depends_on,
                validation,
                acceptance,
                agent,
                description,
                commands,
            } => {
                crate::local::check_commands(
                    &cli.repo,
                    &format!("step {id}'s --command"),
                    commands.iter().map(String::as_str),
                )
                .map_err(|m| CliError {
                    message: m,
                    code: super::EXIT_REFUSED,
                })?;
                Operation::AddSteps(vec![NewTask {
                    id: id.clone(),
                    title: title.clone(),
                    description: description.clone(),
                    depends_on: depends_on
                        .iter()
                        .map(|d| d.trim().to_string())
                        .filter(|d| !d.is_empty())
                        .collect(),
                    acceptance: acceptance.clone(),
                    validation: *validation,
                    agent: agent.clone(),
                    commands: commands.clone(),
                    ..NewTask::default()
                }])
            }
            BoardCommand::Start { id } => {
                if let Some(held) = crate::questions::hold_before_start(&store, id, Utc::now())? {
                    return Err(CliError {
                        message: format!(
                            "{}. Answer with `navin ledger answer N TEXT`; the mission resumes by itself (`navin ledger resume` goes on without an answer)",
                            held.message()
                        ),
                        code: super::EXIT_REFUSED,
                    });
                }
                Operation::Start { step: id.clone() }
            }
            BoardCommand::Progress {
                id,
                no_progress,
                fingerprint,
                tokens,
            } => Operation::Progress(ProgressArgs {
                step: id.clone(),
                real_progress: !no_progress,
                fingerprint: fingerprint.clone(),
                tokens: *tokens,
                ..ProgressArgs::default()
            }),
            BoardCommand::Done {
                id,
                evidence,
                evidence_json,
            } => {
                let evidence = match (evidence, evidence_json) {
                    (Some(text), _) => Some(Evidence::prose(text.clone())),
                    (None, Some(path)) => Some(read_evidence(path)?),
                    (None, None) => None,
                };
                Operation::Done {
                    step: id.clone(),
                    evidence,
                }
            }
            BoardCommand::Fail {
                id,
                evidence_json,
                reason,
            } => Operation::Fail {
                step: id.clone(),
                evidence: evidence_json.as_deref().map(read_evidence).transpose()?,
                reason: reason.clone(),
                outcome: navin_ledger::AttemptOutcome::Failed,
            },
            BoardCommand::Retry { id } => Operation::Retry { step: id.clone() },
            BoardCommand::Replan { id, reason } => Operation::Replan {
                step: id.clone(),
                reason: reason.clone(),
            },
        },
        Command::Plan(_) | Command::Mcp(_) | Command::Config(_) => {
            return Err(CliError::usage(
                "plan, mcp and config are dispatched before the ledger is opened",
            ))
        }
        #[cfg(not(feature = "github"))]
        Command::NotBuilt { .. } => return Err(CliError::usage(super::NOT_BUILT)),
        #[cfg(feature = "github")]
        Command::Serve(_) | Command::App(_) => {
            return Err(CliError::usage(
                "serve and app are dispatched before the ledger is opened",
            ))
        }
    };
    let ctx =
        crate::local::in_checkout(ctx(cli), &cli.repo, &store, &op).map_err(|e| CliError {
            message: e.to_string(),
            code: super::EXIT_REFUSED,
        })?;
    let done = store.transact(&op, &ctx)?;
    report(cli.json, &done)?;
    if matches!(op, Operation::Update(_)) {
        if let Some(resumed) = crate::questions::resume_if_answered(&store, &ctx.actor, Utc::now())?
        {
            report(cli.json, &resumed)?;
        }
    }
    Ok(())
}

fn print(json: bool, value: serde_json::Value, text: &str) -> Result<(), CliError> {
    if json {
        println!("{value}");
    } else {
        println!("{text}");
    }
    Ok(())
}

fn report(json: bool, done: &Committed) -> Result<(), CliError> {
    match done {
        Committed::AlreadyApplied { version } => print(
            json,
            json!({ "already_applied": true, "version": version }),
            &format!("already applied (v{version})"),
        ),
        Committed::Written {
            version,
            commit,
            reason,
            effects,
            ledger,
            ..
        } => {
            let effects_text = show::effects(effects);
            if json {
                let value = json!({
                    "version": version,
                    "commit": commit,
                    "reason": reason,
                    "status": ledger.mission.status,
                    "effects": effects_text,
                });
                println!("{value}");
            } else {
                println!("v{version}: {reason}");
                for line in effects_text {
                    println!("  {line}");
                }
            }
            Ok(())
        }
    }
}
