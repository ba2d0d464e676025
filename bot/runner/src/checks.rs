//! Checks a validation command before it runs: arguments that cannot be right, and tools that would rewrite the tree they are meant to judge.
//!
//! A command that can never pass (`go -C "" test ./...`, `npm test --workspace api` in
//! a project without workspaces) would keep its step red for a reason no change can fix;
//! it is refused with the reason instead. A formatter or linter that fixes what it finds
//! (`ruff check` under `fix = true`, `black .`, `cargo fmt`, `prettier --write`) would
//! rewrite the checkout and be recorded green; it is run in its check mode, or refused
//! when it has none.

use std::path::Path;

/// Why a command cannot be run as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandProblem {
    #[error("`{command}` has an empty argument (at position {position}): a variable that was not set? Write the argument out")]
    EmptyArgument { command: String, position: usize },
    #[error("`{command}` names the directory {dir:?}, which the checkout does not have")]
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

/// `argv` as it should run in the checkout at `root`: the same command, or its check
/// mode when it would rewrite files; an error when it can never be right.
pub fn prepare(argv: &[String], root: &Path) -> Result<Vec<String>, CommandProblem> {
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
            if !root.join(dir).is_dir() {
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

fn check_workspace(command: &str, name: &str, root: &Path) -> Result<(), CommandProblem> {
    let manifest: Option<serde_json::Value> = std::fs::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let patterns: Vec<String> = manifest
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
    let dirs: Vec<std::path::PathBuf> = patterns
        .iter()
        .flat_map(|p| {
            let p = p.trim_end_matches('/');
            match p.strip_suffix("/*") {
                Some(parent) => std::fs::read_dir(root.join(parent))
                    .map(|r| r.flatten().map(|e| e.path()).collect::<Vec<_>>())
                    .unwrap_or_default(),
                None => vec![root.join(p)],
            }
        })
        .filter(|d| d.join("package.json").is_file())
        .collect();
    let named = |d: &std::path::PathBuf| {
        d.strip_prefix(root).is_ok_and(|rel| rel == Path::new(name))
            || std::fs::read_to_string(d.join("package.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .is_some_and(|m| m["name"] == name)
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
