//! `navin plan`: read-only planning on a local checkout, plus `validate` and `diff` for plan files.

use std::io::Read;
use std::path::{Path, PathBuf};

use navin_ledger::plan::{diff, PlanDocument};
use serde_json::json;

use super::{CliError, PlanAction, PlanCmd, PlannerKind, EXIT_ERROR, EXIT_REFUSED};
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
pub(super) fn run(repo: &Path, json: bool, cmd: &PlanCmd) -> Result<(), CliError> {
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
        None => generate(repo, json, cmd),
    }
}

fn generate(repo: &Path, json: bool, cmd: &PlanCmd) -> Result<(), CliError> {
    let request = cmd.request.join(" ");
    let (doc, source, extra) = match cmd.planner {
        PlannerKind::Builtin => {
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
        PlannerKind::Http | PlannerKind::Command => {
            let kind = match cmd.planner {
                PlannerKind::Http => ExternalKind::Http,
                _ => ExternalKind::Command,
            };
            let cfg = ExternalConfig::from_env().map_err(|e| CliError::usage(e.to_string()))?;
            cfg.check(kind)
                .map_err(|e| CliError::usage(e.to_string()))?;
            let out = external::generate(kind, &cfg, repo, &request).map_err(|e| CliError {
                message: e.to_string(),
                code: EXIT_REFUSED,
            })?;
            let extra = json!({ "attempts": out.attempts });
            (out.document, out.source, extra)
        }
    };
    if let Some(out) = &cmd.out {
        write_export(out, doc.text())?;
        eprintln!("wrote {}", out.display());
    }
    if json {
        let value = json!({
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

/// `--out` is the one explicit export; planning itself writes nothing.
fn write_export(path: &PathBuf, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::usage(format!("writing {}: {e}", path.display())))
}
