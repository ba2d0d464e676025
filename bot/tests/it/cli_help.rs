//! What a newcomer reads: `navin --help` and each command's help, through the binary.

use std::process::{Command, Output};

fn navin(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NAVIN_ACTOR", "human:tester")
        .output()
        .expect("navin runs")
}

fn stdout_of(dir: &std::path::Path, args: &[&str]) -> String {
    let out = navin(dir, args);
    assert!(
        out.status.success(),
        "navin {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let status = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(status.success());
    dir
}

#[test]
fn serve_help_lists_no_ledger_options() {
    let dir = tempfile::tempdir().expect("tmp");
    let help = stdout_of(dir.path(), &["serve", "--help"]);
    for flag in ["--repo", "--actor", "--branch", "--remote", "--json"] {
        assert!(!help.contains(flag), "{flag} in serve --help:\n{help}");
    }
    assert!(help.contains("NAVIN_API_URL"), "{help}");
    assert!(help.contains("Example:"), "{help}");
}

#[test]
fn top_level_help_describes_navin_and_shows_examples() {
    let dir = tempfile::tempdir().expect("tmp");
    let help = stdout_of(dir.path(), &["--help"]);
    let first = help.lines().next().unwrap_or_default();
    assert!(first.starts_with("Plan coding work"), "{help}");
    assert!(help.contains("Examples:"), "{help}");
    assert!(help.contains("--repo"), "{help}");
    let board_add = stdout_of(dir.path(), &["board", "add", "--help"]);
    assert!(board_add.contains("--depends-on"), "{board_add}");
    assert!(board_add.contains("navin board add S1"), "{board_add}");
}

#[test]
fn ledger_options_work_before_and_after_the_command() {
    let dir = scratch();
    let repo = dir.path().to_str().expect("utf8 path");
    let elsewhere = tempfile::tempdir().expect("tmp");
    let e = elsewhere.path();
    stdout_of(e, &["--repo", repo, "ledger", "init", "--goal", "Ship it"]);
    stdout_of(e, &["board", "add", "S1", "--title", "one", "--repo", repo]);
    let before = stdout_of(e, &["--repo", repo, "--json", "board", "next"]);
    let after = stdout_of(e, &["board", "next", "--repo", repo, "--json"]);
    assert_eq!(before, after);
    assert!(before.contains("\"S1\""), "{before}");
}

#[test]
fn ledger_rollback_restores_an_older_version() {
    let dir = scratch();
    let d = dir.path();
    stdout_of(d, &["ledger", "init", "--goal", "first goal"]);
    stdout_of(
        d,
        &["ledger", "update", "--goal", "second goal", "--reason", "r"],
    );
    stdout_of(d, &["ledger", "rollback", "1"]);
    let shown = stdout_of(d, &["ledger", "show"]);
    assert!(shown.contains("first goal"), "{shown}");
    assert!(!shown.contains("second goal"), "{shown}");
}
