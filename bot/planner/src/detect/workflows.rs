//! The test and lint commands a repository's own GitHub Actions workflows run: the first source of a plan's verification, since CI is what the project already trusts.
//!
//! Only `run:` lines that invoke a known test runner or linter, and that run without a
//! shell (no pipes, `&&`, redirections, variables or `${{ }}` expressions), because a
//! step's commands run with none. A step's `working-directory` (or the job's or the
//! workflow's `defaults.run.working-directory`) becomes the runner's own directory flag
//! where it has one (`go -C`, `cargo --manifest-path`, `npm --prefix`, `make -C`); a
//! command that needs a directory and has no such flag is left out.

use serde_yaml_ng::Value;

use crate::detect::commands::{DetectedCommand, RepoCommandKind};
use crate::detect::scan::Scanned;

/// The commands, in workflow file order, then job and step order.
pub fn detect(scanned: &Scanned) -> Vec<DetectedCommand> {
    let mut out: Vec<DetectedCommand> = Vec::new();
    let mut workflows: Vec<_> = scanned
        .files
        .iter()
        .filter(|f| {
            f.path.starts_with(".github/workflows/")
                && (f.path.ends_with(".yml") || f.path.ends_with(".yaml"))
        })
        .collect();
    workflows.sort_by(|a, b| a.path.cmp(&b.path));
    for file in workflows {
        let Some(text) = &file.text else { continue };
        let Ok(doc) = serde_yaml_ng::from_str::<Value>(text) else {
            continue;
        };
        let default_dir = working_directory(&doc["defaults"]);
        let Some(jobs) = doc["jobs"].as_mapping() else {
            continue;
        };
        for job in jobs.values() {
            let job_dir = working_directory(&job["defaults"]).or(default_dir.clone());
            let Some(steps) = job["steps"].as_sequence() else {
                continue;
            };
            for step in steps {
                let Some(run) = step["run"].as_str() else {
                    continue;
                };
                let dir = step["working-directory"]
                    .as_str()
                    .map(str::to_owned)
                    .or(job_dir.clone());
                for line in lines(run) {
                    let Some((kind, command)) = command_of(&line, dir.as_deref()) else {
                        continue;
                    };
                    if !out.iter().any(|c| c.kind == kind && c.command == command) {
                        out.push(DetectedCommand {
                            kind,
                            command,
                            source: file.path.clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

fn working_directory(defaults: &Value) -> Option<String> {
    defaults["run"]["working-directory"]
        .as_str()
        .map(str::to_owned)
}

/// A `run:` block's command lines, with `\` continuations joined and comments dropped.
fn lines(run: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for raw in run.lines() {
        let line = raw.trim();
        if let Some(head) = line.strip_suffix('\\') {
            current.push_str(head.trim_end());
            current.push(' ');
            continue;
        }
        current.push_str(line);
        let whole = current.trim().to_owned();
        current.clear();
        if !whole.is_empty() && !whole.starts_with('#') {
            out.push(whole);
        }
    }
    out
}

/// The command `line` runs, in `dir`, when it is a test or lint run Navin can run as
/// written (no shell); its kind.
fn command_of(line: &str, dir: Option<&str>) -> Option<(RepoCommandKind, String)> {
    const SHELL: [&str; 10] = ["|", "&", ";", "$", "`", ">", "<", "(", "*", "~"];
    if SHELL.iter().any(|s| line.contains(s)) {
        return None;
    }
    let words = shell_words::split(line).ok()?;
    let (program, args) = words.split_first()?;
    let first = args.first().map(String::as_str);
    let kind = match (program.as_str(), first) {
        ("cargo", Some("test" | "nextest")) => RepoCommandKind::Test,
        ("cargo", Some("clippy")) => RepoCommandKind::Lint,
        ("pytest" | "tox" | "nox" | "jest" | "vitest" | "rspec" | "phpunit", _) => {
            RepoCommandKind::Test
        }
        ("python" | "python3", Some("-m"))
            if matches!(args.get(1).map(String::as_str), Some("pytest" | "unittest")) =>
        {
            RepoCommandKind::Test
        }
        ("go", Some("test")) => RepoCommandKind::Test,
        ("go", Some("vet")) | ("ruff" | "flake8" | "mypy" | "eslint", _) => RepoCommandKind::Lint,
        ("npm" | "yarn" | "pnpm" | "bun", Some(script)) => {
            let script = if script == "run" {
                args.get(1).map(String::as_str)?
            } else {
                script
            };
            if script == "test" || script.starts_with("test:") {
                RepoCommandKind::Test
            } else if script == "lint" {
                RepoCommandKind::Lint
            } else {
                return None;
            }
        }
        ("npx", Some("jest" | "vitest")) => RepoCommandKind::Test,
        ("make" | "just", Some(target)) if target == "test" || target.starts_with("test-") => {
            RepoCommandKind::Test
        }
        _ => return None,
    };
    let dir = dir.map(|d| d.trim_start_matches("./").trim_end_matches('/'));
    let command = match dir.filter(|d| !d.is_empty() && *d != ".") {
        None => line.to_owned(),
        Some(dir) => match program.as_str() {
            "go" => format!("go -C {dir} {}", args.join(" ")),
            "cargo" => format!(
                "cargo {} --manifest-path {dir}/Cargo.toml {}",
                args[0],
                args[1..].join(" ")
            ),
            "npm" => format!("npm --prefix {dir} {}", args.join(" ")),
            "make" => format!("make -C {dir} {}", args.join(" ")),
            // No directory flag Navin can rely on: left out rather than run elsewhere.
            _ => return None,
        },
    };
    Some((kind, command.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::scan::{ScanStats, ScannedFile};

    fn scanned(files: &[(&str, &str)]) -> Scanned {
        Scanned {
            source: "test".into(),
            files: files
                .iter()
                .map(|(path, text)| ScannedFile {
                    path: (*path).into(),
                    size: Some(text.len() as u64),
                    language: None,
                    text: Some((*text).into()),
                    is_test: false,
                })
                .collect(),
            stats: ScanStats::default(),
        }
    }

    const CI: &str = r#"
name: ci
on: [push]
defaults:
  run:
    working-directory: .
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e .[test]
      - run: |
          # the suite
          python -m pytest -q \
            tests/unit
      - run: ruff check .
      - run: cargo test --workspace | tee log.txt
      - run: pytest -k "${{ matrix.filter }}"
  api:
    runs-on: ubuntu-latest
    defaults:
      run:
        working-directory: services/api
    steps:
      - run: go test ./...
      - run: npm test
        working-directory: web
      - run: pytest
"#;

    #[test]
    fn run_lines_that_invoke_a_runner_become_commands_with_their_directory() {
        let found = detect(&scanned(&[(".github/workflows/ci.yml", CI)]));
        let got: Vec<(RepoCommandKind, &str)> =
            found.iter().map(|c| (c.kind, c.command.as_str())).collect();
        assert_eq!(
            got,
            [
                (RepoCommandKind::Test, "python -m pytest -q tests/unit"),
                (RepoCommandKind::Lint, "ruff check ."),
                (RepoCommandKind::Test, "go -C services/api test ./..."),
                (RepoCommandKind::Test, "npm --prefix web test"),
            ],
            "installs, pipes, expressions and a pytest with no directory flag are left out"
        );
        assert!(found.iter().all(|c| c.source == ".github/workflows/ci.yml"));
    }

    #[test]
    fn an_unreadable_workflow_or_one_without_jobs_gives_nothing() {
        let found = detect(&scanned(&[
            (".github/workflows/bad.yml", "jobs: [\n"),
            (".github/workflows/none.yml", "on: push\n"),
            (
                "ci/other.yml",
                "jobs:\n  t:\n    steps:\n      - run: pytest\n",
            ),
        ]));
        assert!(found.is_empty(), "{found:?}");
    }
}
