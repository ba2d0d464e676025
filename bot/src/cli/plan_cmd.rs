//! `navin plan`: read-only planning on a local checkout, plus `validate` and `diff` for plan files.

use std::io::Read;
use std::path::{Path, PathBuf};

use navin_ledger::plan::{diff, PlanDocument};
use serde_json::json;

use super::{
    plan_local, Cli, CliError, PlanAction, PlanCmd, PlannerKind, EXIT_ERROR, EXIT_REFUSED,
};
use navin_planner::external::{self, ExternalConfig, ExternalKind};
use navin_planner::{plan_repository, LocalSource, PlannerOptions};

fn read_text(path: &Path) -> Result<String, CliError> {
    if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| CliError::usage(format!("reading stdin: {e}")))?;
        return Ok(s);
    }
    std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("reading {}: {e}", path.display())))
}

fn parse_file(path: &Path) -> Result<PlanDocument, CliError> {
    let text = read_text(path)?;
    PlanDocument::parse(&text).map_err(|e| CliError {
        message: format!("{}: {e}", path.display()),
        code: EXIT_REFUSED,
    })
}

/// Runs `navin plan …`.
pub(super) fn run(cli: &Cli, cmd: &PlanCmd) -> Result<(), CliError> {
    let (repo, json) = (cli.repo.as_path(), cli.json);
    match &cmd.action {
        Some(PlanAction::Validate { file }) => {
            let doc = parse_file(file)?;
            if json {
                println!(
                    "{}",
                    json!({ "valid": true, "title": doc.plan().title, "hash": doc.hash() })
                );
            } else {
                println!("valid plan: {} ({})", doc.plan().title, doc.hash());
            }
            Ok(())
        }
        Some(PlanAction::Diff { original, edited }) => {
            let (a, b) = (parse_file(original)?, parse_file(edited)?);
            let d = diff(a.plan(), b.plan());
            if json {
                let text = serde_json::to_string(&d).map_err(|e| CliError::usage(e.to_string()))?;
                println!("{text}");
            } else if d.is_empty() {
                println!("no changes");
            } else {
                print!("{}", d.to_markdown());
            }
            Ok(())
        }
        Some(PlanAction::List) => plan_local::list(&super::ledger_cmd::open(cli)?, json),
        Some(PlanAction::Show { id }) => plan_local::show(&super::ledger_cmd::open(cli)?, id, json),
        Some(PlanAction::Approve { id }) => {
            let store = super::ledger_cmd::open(cli)?;
            let approval = plan_local::repo_config(repo)?.approval;
            let record =
                plan_local::approve(&store, &super::ledger_cmd::actor(cli), id, &approval)?;
            decided(json, &record, "approved")
        }
        Some(PlanAction::Reject { id, feedback }) => {
            let store = super::ledger_cmd::open(cli)?;
            let record = plan_local::reject(
                &store,
                &super::ledger_cmd::actor(cli),
                id,
                feedback.as_deref(),
            )?;
            decided(json, &record, "rejected")
        }
        Some(PlanAction::Edit { id, file }) => {
            let store = super::ledger_cmd::open(cli)?;
            let actor = super::ledger_cmd::actor(cli);
            if !actor.is_human() {
                // Checked before an editor opens: only people edit plans.
                plan_local::edit(&store, &actor, id, "")?;
            }
            let text = plan_local::edited_text(&store, id, file.as_deref())?;
            let (record, _) = plan_local::edit(&store, &actor, id, &text)?;
            if json {
                println!(
                    "{}",
                    json!({ "id": record.id, "status": record.status.word(), "hash": record.hash, "diff": record.diff })
                );
            } else {
                println!(
                    "plan {} edited: {} (approve it again)",
                    record.id, record.hash
                );
                if let Some(edits) = record.binding_edits() {
                    print!("{edits}");
                }
            }
            Ok(())
        }
        None => generate(cli, cmd),
    }
}

/// What `approve` and `reject` print.
fn decided(
    json: bool,
    record: &navin_ledger::plan::record::PlanRecord,
    verb: &str,
) -> Result<(), CliError> {
    if json {
        println!(
            "{}",
            json!({ "id": record.id, "status": record.status.word(), "approvers": record.approver_count(), "hash": record.hash })
        );
    } else if verb == "approved" && !record.is_approved() {
        println!(
            "plan {}: approval recorded; {} approver(s) so far, it needs more (approval.required_approvals)",
            record.id,
            record.approver_count()
        );
    } else if verb == "approved" {
        println!(
            "plan {} approved; start it with `navin mission start --from-plan {}`",
            record.id, record.id
        );
    } else {
        println!("plan {} {verb}", record.id);
    }
    Ok(())
}

fn generate(cli: &Cli, cmd: &PlanCmd) -> Result<(), CliError> {
    let (repo, json) = (cli.repo.as_path(), cli.json);
    let request = cmd.request.join(" ");
    let config = plan_local::repo_config(repo)?;
    let kind = match cmd.planner {
        Some(PlannerKind::Builtin) => None,
        Some(PlannerKind::Llm) => Some(ExternalKind::Http),
        Some(PlannerKind::Command) => Some(ExternalKind::Command),
        None => config.planner.kind(),
    };
    let mut run = None;
    let (doc, source, extra) = match kind {
        // The built-in planner reads the checkout as it is, uncommitted files included.
        None => {
            let source = LocalSource::new(repo).map_err(|e| CliError::usage(e.to_string()))?;
            let out = plan_repository(&source, &request, &PlannerOptions::default())
                .map_err(|e| CliError::usage(e.to_string()))?;
            // Every plan passes the one validator before anyone sees it.
            let doc = PlanDocument::from_plan(&out.plan).map_err(|e| CliError {
                message: format!(
                    "the built-in planner produced an invalid plan ({e}); please report this"
                ),
                code: EXIT_ERROR,
            })?;
            let extra =
                json!({ "map": out.map, "ranked": out.ranked, "files": out.planned_files() });
            (doc, "builtin".to_string(), extra)
        }
        Some(kind) => {
            let mut cfg = ExternalConfig::from_env().map_err(|e| CliError::usage(e.to_string()))?;
            if cfg.model.is_none() {
                cfg.model = config
                    .planner
                    .model
                    .clone()
                    .or_else(|| config.models.plan.clone());
            }
            cfg.check(kind)
                .map_err(|e| CliError::usage(e.to_string()))?;
            let tree = external::head_tree(repo).map_err(|e| CliError::usage(e.to_string()))?;
            let fallback = config.planner.fallback == navin_domain::config::Fallback::Builtin;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| CliError::usage(format!("cannot start the runtime: {e}")))?;
            let planned = runtime
                .block_on(external::plan_commit(
                    Some(kind),
                    &cfg,
                    &config.planner.budgets(),
                    fallback,
                    &tree,
                    &request,
                ))
                .map_err(|e| CliError {
                    message: e.to_string(),
                    code: EXIT_REFUSED,
                })?;
            if let Some(why) = &planned.fallback {
                eprintln!("the {kind} planner failed, so this is the built-in plan: {why}");
            }
            let extra = json!({
                "attempts": planned.run.as_ref().map(|r| r.attempts),
                "run": planned.run,
                "fallback": planned.fallback,
            });
            run = planned.run;
            (planned.document, planned.source, extra)
        }
    };
    if let Some(out) = &cmd.out {
        write_export(out, doc.text())?;
        eprintln!("wrote {}", out.display());
    }
    let saved = match cmd.save {
        true => {
            let store = super::ledger_cmd::open(cli)?;
            let repository = repository_label(repo);
            let (record, fresh) = plan_local::save(
                &store,
                &super::ledger_cmd::actor(cli),
                &doc,
                &request,
                &source,
                &repository,
                run,
            )?;
            if !json {
                let what = if fresh { "saved" } else { "already saved" };
                eprintln!(
                    "{what} as plan {} ({}) on {}; approve it with `navin plan approve {}`",
                    record.id,
                    record.status.word(),
                    store.branch(),
                    record.id
                );
            }
            Some(record.id)
        }
        false => None,
    };
    if json {
        let value = json!({
            "id": saved,
            "source": source,
            "hash": doc.hash(),
            "markdown": doc.text(),
            "plan": doc.plan(),
            "repository": extra,
        });
        println!("{value}");
    } else if cmd.out.is_none() {
        print!("{}", doc.text());
    }
    Ok(())
}

/// What a local plan's record names as its repository: the checkout's folder.
fn repository_label(repo: &Path) -> String {
    let root = git2::Repository::discover(repo)
        .ok()
        .and_then(|r| r.workdir().map(Path::to_path_buf))
        .unwrap_or_else(|| repo.to_path_buf());
    let name = root
        .canonicalize()
        .unwrap_or(root)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repository".to_owned());
    format!("local:{name}")
}

/// `--out` is the one explicit export; planning itself writes nothing.
fn write_export(path: &PathBuf, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::usage(format!("writing {}: {e}", path.display())))
}
