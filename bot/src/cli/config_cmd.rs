//! `navin config`: check a `.github/navin.yml` with Navin's own parser before it is merged,
//! and print the JSON Schema editors use to complete and check it.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Cli, CliError, ConfigCommand, EXIT_REFUSED};

/// Runs `navin config …`.
pub(super) fn run(cli: &Cli, cmd: &ConfigCommand) -> Result<(), CliError> {
    match cmd {
        ConfigCommand::Validate { file } => validate(&cli.repo, file.as_deref()),
        ConfigCommand::Schema => {
            print!("{}", navin_domain::config::schema_json());
            Ok(())
        }
    }
}

/// Exit 0 and `FILE: valid`, or 1 with the parser's first problem; 2 when FILE cannot be
/// read (a missing file is a mistake here, although Navin runs on defaults without one).
fn validate(repo: &Path, file: Option<&Path>) -> Result<(), CliError> {
    let (name, text) = match file {
        Some(path) if path == Path::new("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| CliError::usage(format!("reading stdin: {e}")))?;
            ("<stdin>".to_owned(), text)
        }
        Some(path) => (path.display().to_string(), read(path)?),
        None => {
            let path = default_file(repo);
            (shown(&path), read(&path)?)
        }
    };
    match navin_domain::config::parse_repo_config(&text) {
        Ok(_) => {
            println!("{name}: valid");
            Ok(())
        }
        Err(e) => Err(CliError {
            message: e.in_file(&name),
            code: EXIT_REFUSED,
        }),
    }
}

fn read(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))
}

/// `.github/navin.yml` at the top of the checkout holding `repo`, the file the other
/// commands read; `repo` itself when it is not in a git checkout.
fn default_file(repo: &Path) -> PathBuf {
    let root = git2::Repository::discover(repo)
        .ok()
        .and_then(|r| r.workdir().map(Path::to_path_buf))
        .unwrap_or_else(|| repo.to_path_buf());
    root.join(".github/navin.yml")
}

/// `path` relative to the current directory when it is below it, as a person would type it.
fn shown(path: &Path) -> String {
    let relative = std::env::current_dir()
        .and_then(|cwd| cwd.canonicalize())
        .ok()
        .and_then(|cwd| {
            let full = path.parent()?.canonicalize().ok()?.join(path.file_name()?);
            full.strip_prefix(&cwd).ok().map(Path::to_path_buf)
        });
    relative
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}
