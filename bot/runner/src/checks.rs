//! Checks a validation command before it runs: arguments that cannot be right, and tools that would rewrite the tree they are meant to judge.
//!
//! A command that can never pass (`go -C "" test ./...`, `npm test --workspace api` in
//! a project without workspaces) would keep its step red for a reason no change can fix;
//! it is refused with the reason instead. A formatter or linter that fixes what it finds
//! (`ruff check` under `fix = true`, `black .`, `cargo fmt`, `prettier --write`) would
//! rewrite the checkout and be recorded green; it is run in its check mode, or refused
//! when it has none.

use std::path::Path;

use navin_ledger::ops::InitArgs;

/// The files a command is checked against: a checkout on disk (the CLI, `board verify`,
/// the Action), or a commit's tree read from git objects (the App, which has no
/// checkout). Paths are relative to the repository's root, `/`-separated.
pub trait Files {
    /// Whether `dir` is a directory of the tree (`""` and `"."` are the root).
    fn is_dir(&self, dir: &str) -> bool;
    /// The text of `file`, when the tree has it.
    fn read(&self, file: &str) -> Option<String>;
    /// The directories directly under `dir`, as paths from the root.
    fn subdirs(&self, dir: &str) -> Vec<String>;
}

impl Files for Path {
    fn is_dir(&self, dir: &str) -> bool {
        self.join(dir).is_dir()
    }

    fn read(&self, file: &str) -> Option<String> {
        std::fs::read_to_string(self.join(file)).ok()
    }

    fn subdirs(&self, dir: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.join(dir)) else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().to_str().map(|n| join(dir, n)))
            .collect()
    }
}

/// `dir/name`, with no leading `./` or doubled `/`.
fn join(dir: &str, name: &str) -> String {
    match normal(dir) {
        "" => name.to_owned(),
        dir => format!("{dir}/{name}"),
    }
}

/// `dir` as a path from the root: `./api/` is `api`, `.` is the root (`""`).
pub fn normal(dir: &str) -> &str {
    let mut dir = dir.trim_end_matches('/');
    while let Some(rest) = dir.strip_prefix("./") {
        dir = rest.trim_start_matches('/');
    }
    if dir == "." {
        ""
    } else {
        dir
    }
}

/// Why a command cannot be run as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandProblem {
    #[error("`{command}` has an empty argument (at position {position}): a variable that was not set? Write the argument out")]
    EmptyArgument { command: String, position: usize },
    #[error("`{command}` names the directory {dir:?}, which the repository does not have")]
    NoDirectory { command: String, dir: String },
    #[error(
        "`{command}` names the npm workspace {name:?}, but package.json declares no workspaces"
    )]
    NoWorkspaces { command: String, name: String },
    #[error(
        "`{command}` names the npm workspace {name:?}, which none of package.json's workspaces is"
    )]
    NoSuchWorkspace { command: String, name: String },
    #[error("`{command}` rewrites files ({why}) and has no check mode Navin knows: use the tool's check or dry-run form")]
    Rewrites { command: String, why: &'static str },
}

/// `argv` as it should run in the tree `root`: the same command, or its check mode when
/// it would rewrite files; an error when it can never be right.
pub fn prepare<F: Files + ?Sized>(
    argv: &[String],
    root: &F,
) -> Result<Vec<String>, CommandProblem> {
    let command = argv.join(" ");
    if let Some(position) = argv.iter().position(|a| a.trim().is_empty()) {
        return Err(CommandProblem::EmptyArgument { command, position });
    }
    let program = argv
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or_default();
    let word = |i: usize| argv.get(i).map(String::as_str);
    let has = |flag: &str| argv.iter().any(|a| a == flag);
    let has_prefix = |flag: &str| argv.iter().any(|a| a.starts_with(flag));
    let mut out = argv.to_vec();
    match program {
        "go" if word(1) == Some("-C") => {
            let dir = word(2).unwrap_or_default();
            if !root.is_dir(dir) {
                return Err(CommandProblem::NoDirectory {
                    command,
                    dir: dir.to_owned(),
                });
            }
        }
        "npm" | "yarn" | "pnpm" => {
            if let Some(name) = workspace_named(argv) {
                check_workspace(&command, name, root)?;
            }
        }
        "ruff" if word(1) == Some("format") && !has("--check") && !has("--diff") => {
            out.insert(2, "--check".to_owned());
        }
        "ruff" if word(1) == Some("check") && !has("--no-fix") && !has("--diff") => {
            // `--fix`, or `fix = true` in the project's config, would rewrite files.
            out.retain(|a| a != "--fix");
            out.insert(2, "--no-fix".to_owned());
        }
        "black" if !has("--check") && !has("--diff") => out.insert(1, "--check".to_owned()),
        "isort" if !has("--check-only") && !has("--check") && !has("--diff") => {
            out.insert(1, "--check-only".to_owned())
        }
        "cargo" if word(1) == Some("fmt") && !has("--check") => {
            // `cargo fmt -- --check` and `cargo fmt --check` both check.
            let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
            out.insert(at, "--check".to_owned());
        }
        "prettier" if has("--write") || has("-w") => {
            out.retain(|a| a != "--write" && a != "-w");
            out.insert(1, "--check".to_owned());
        }
        "eslint" if has("--fix") || has_prefix("--fix-") => {
            out.retain(|a| a != "--fix" && !a.starts_with("--fix-"));
        }
        "gofmt" if has("-w") => {
            return Err(CommandProblem::Rewrites {
                command,
                why: "gofmt -w writes the formatted files; `test -z \"$(gofmt -l .)\"` needs a shell, so use `go vet` or a script",
            })
        }
        "cargo" if word(1) == Some("clippy") && has("--fix") => {
            return Err(CommandProblem::Rewrites {
                command,
                why: "cargo clippy --fix applies suggestions; drop --fix",
            })
        }
        _ => {}
    }
    Ok(out)
}

/// The workspace an npm, yarn or pnpm command names (`--workspace NAME`, `-w NAME`,
/// `--workspace=NAME`); `None` for `--workspaces` (all of them) and commands without one.
fn workspace_named(argv: &[String]) -> Option<&str> {
    let mut words = argv.iter().map(String::as_str);
    while let Some(w) = words.next() {
        if let Some(name) = w.strip_prefix("--workspace=") {
            return Some(name);
        }
        if w == "--workspace" || (w == "-w" && argv.first().is_some_and(|p| p.ends_with("npm"))) {
            return words.next();
        }
    }
    None
}

fn check_workspace<F: Files + ?Sized>(
    command: &str,
    name: &str,
    root: &F,
) -> Result<(), CommandProblem> {
    let manifest = |dir: &str| {
        root.read(&join(dir, "package.json"))
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
    };
    let patterns: Vec<String> = manifest("")
        .as_ref()
        .and_then(|m| {
            let w = &m["workspaces"];
            w.as_array().or_else(|| w["packages"].as_array()).cloned()
        })
        .unwrap_or_default()
        .iter()
        .filter_map(|p| p.as_str().map(str::to_owned))
        .collect();
    if patterns.is_empty() {
        return Err(CommandProblem::NoWorkspaces {
            command: command.to_owned(),
            name: name.to_owned(),
        });
    }
    // A workspace is named by its directory or its package name.
    let dirs: Vec<String> = patterns
        .iter()
        .flat_map(|p| {
            let p = p.trim_end_matches('/');
            match p.strip_suffix("/*") {
                Some(parent) => root.subdirs(normal(parent)),
                None => vec![normal(p).to_owned()],
            }
        })
        .collect();
    let named = |d: &String| match manifest(d) {
        Some(m) => d == normal(name) || m["name"] == name,
        None => false,
    };
    if dirs.iter().any(named) {
        Ok(())
    } else {
        Err(CommandProblem::NoSuchWorkspace {
            command: command.to_owned(),
            name: name.to_owned(),
        })
    }
}

/// A command line of a mission about to be made that can never run as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineProblem {
    #[error("{line:?} is not a valid command line (unbalanced quotes?)")]
    Unparsable { line: String },
    #[error(transparent)]
    Command(#[from] CommandProblem),
}

/// Where a refused command line of a new mission comes from, so the refusal can say
/// where to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineSource {
    /// `validation.commands` in `.github/navin.yml`.
    Config,
    /// The verification of one step of the plan.
    Step(String),
}

/// `line` split as the runner will run it (no shell) and checked against `root`.
pub fn check_line<F: Files + ?Sized>(line: &str, root: &F) -> Result<Vec<String>, LineProblem> {
    let argv = shlex::split(line).ok_or_else(|| LineProblem::Unparsable {
        line: line.to_owned(),
    })?;
    Ok(prepare(&argv, root)?)
}

/// Every command line a new mission records (the configured validation commands, then
/// each step's), checked against the tree it will run on: the first that can never run,
/// with where it comes from. The CLI and the App both refuse the mission with it.
pub fn check_init<F: Files + ?Sized>(
    init: &InitArgs,
    root: &F,
) -> Result<(), (LineSource, LineProblem)> {
    let configured = init
        .commands
        .iter()
        .flat_map(|c| [&c.test, &c.lint, &c.verify])
        .flatten()
        .map(|line| (LineSource::Config, line));
    let steps = init.steps.iter().flat_map(|step| {
        step.commands
            .iter()
            .map(|line| (LineSource::Step(step.id.clone()), line))
    });
    for (source, line) in configured.chain(steps) {
        check_line(line, root).map_err(|problem| (source, problem))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tmp");
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        dir
    }

    #[test]
    fn an_empty_argument_or_a_missing_directory_is_refused_with_its_reason() {
        let t = tree(&[("api/go.mod", "module x\n")]);
        let empty = vec!["go".into(), "-C".into(), String::new(), "test".into()];
        let err = prepare(&empty, t.path()).expect_err("empty");
        assert!(
            matches!(err, CommandProblem::EmptyArgument { position: 2, .. }),
            "{err}"
        );
        let err = prepare(&argv("go -C web test ./..."), t.path()).expect_err("no dir");
        assert!(err.to_string().contains("\"web\""), "{err}");
        assert_eq!(
            prepare(&argv("go -C api test ./..."), t.path()).expect("api exists"),
            argv("go -C api test ./...")
        );
    }

    #[test]
    fn an_npm_workspace_must_exist_by_directory_or_package_name() {
        let none = tree(&[("package.json", "{\"name\": \"app\"}")]);
        let err = prepare(&argv("npm test --workspace api"), none.path()).expect_err("none");
        assert!(matches!(err, CommandProblem::NoWorkspaces { .. }), "{err}");
        let some = tree(&[
            ("package.json", "{\"workspaces\": [\"packages/*\"]}"),
            ("packages/api/package.json", "{\"name\": \"@acme/api\"}"),
        ]);
        for ok in [
            "npm test --workspace packages/api",
            "npm test -w @acme/api",
            "npm test --workspace=@acme/api",
        ] {
            assert!(prepare(&argv(ok), some.path()).is_ok(), "{ok}");
        }
        let err = prepare(&argv("npm test -w web"), some.path()).expect_err("no web");
        assert!(
            matches!(err, CommandProblem::NoSuchWorkspace { .. }),
            "{err}"
        );
    }

    #[test]
    fn formatters_and_linters_that_fix_run_in_check_mode() {
        let t = tree(&[]);
        let cases = [
            ("ruff check .", "ruff check --no-fix ."),
            ("ruff check --fix .", "ruff check --no-fix ."),
            ("ruff format .", "ruff format --check ."),
            ("black src", "black --check src"),
            ("isort .", "isort --check-only ."),
            ("cargo fmt --all", "cargo fmt --all --check"),
            (
                "cargo fmt --all -- --config x",
                "cargo fmt --all --check -- --config x",
            ),
            ("prettier --write .", "prettier --check ."),
            ("eslint --fix src", "eslint src"),
            ("ruff check --no-fix .", "ruff check --no-fix ."),
            ("cargo fmt --check", "cargo fmt --check"),
            ("pytest -q", "pytest -q"),
        ];
        for (given, wanted) in cases {
            assert_eq!(
                prepare(&argv(given), t.path()).expect(given),
                argv(wanted),
                "{given}"
            );
        }
        for refused in ["gofmt -w .", "cargo clippy --fix"] {
            let err = prepare(&argv(refused), t.path()).expect_err(refused);
            assert!(matches!(err, CommandProblem::Rewrites { .. }), "{err}");
        }
    }
}
