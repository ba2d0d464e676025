//! Refusals a user reads: each names what is missing and what to do, never an empty value.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn navin(dir: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NAVIN_ACTOR", "human:tester")
        .env_remove("NAVIN_LEDGER_BRANCH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("navin runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("stdin written");
    child.wait_with_output().expect("navin exits")
}

/// A scratch repository with a mission and one planned step S1.
fn board() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(git.success());
    for args in [
        &["ledger", "init", "--goal", "Ship it"][..],
        &[
            "board",
            "add",
            "S1",
            "--title",
            "one",
            "--validation",
            "manual",
        ][..],
    ] {
        let out = navin(dir.path(), args, "");
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    dir
}

/// The one error line and the exit code.
fn refusal(dir: &Path, args: &[&str], stdin: &str) -> (String, Option<i32>) {
    let out = navin(dir, args, stdin);
    assert!(!out.status.success(), "{args:?} was accepted");
    (
        String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        out.status.code(),
    )
}

#[test]
fn progress_on_a_planned_step_says_to_start_it_first() {
    let dir = board();
    let (msg, code) = refusal(dir.path(), &["board", "progress", "S1"], "");
    assert_eq!(code, Some(1));
    assert_eq!(
        msg,
        "navin: S1 is planned, so it cannot take progress reports; start it first: `navin board start S1`"
    );
}

#[test]
fn an_empty_step_id_is_reported_as_missing() {
    let dir = board();
    let (msg, code) = refusal(dir.path(), &["board", "progress", ""], "");
    assert_eq!(code, Some(1));
    assert!(msg.contains("no step id given"), "{msg}");
    assert!(!msg.contains("\"\""), "{msg}");
}

#[test]
fn failed_evidence_without_a_summary_says_so() {
    let dir = board();
    let out = navin(dir.path(), &["board", "start", "S1"], "");
    assert!(out.status.success(), "{out:?}");
    let (msg, code) = refusal(
        dir.path(),
        &["board", "done", "S1", "--evidence-json", "-"],
        r#"{"kind":"prose","ok":false,"summary":""}"#,
    );
    assert_eq!(code, Some(1));
    assert!(msg.contains("this one failed: with no summary"), "{msg}");
    assert!(!msg.contains("\"\""), "{msg}");
}

#[test]
fn an_empty_remote_or_branch_is_named_not_passed_to_git() {
    let dir = board();
    let (msg, code) = refusal(dir.path(), &["--remote", "", "board", "next"], "");
    assert_eq!(code, Some(2));
    assert!(msg.contains("the remote name is empty"), "{msg}");
    let (msg, code) = refusal(dir.path(), &["board", "next", "--branch="], "");
    assert_eq!(code, Some(2));
    assert!(msg.contains("the ledger branch name is empty"), "{msg}");
}

#[test]
fn an_empty_plan_id_is_reported_as_missing() {
    let dir = board();
    for verb in ["show", "approve"] {
        let (msg, code) = refusal(dir.path(), &["plan", verb, ""], "");
        assert_eq!(code, Some(2), "{verb}");
        assert_eq!(
            msg,
            "navin: no plan id given: `navin plan list` shows the saved plans and their ids"
        );
    }
    let (msg, _) = refusal(dir.path(), &["mission", "start", "--from-plan", ""], "");
    assert!(msg.contains("no plan id given"), "{msg}");
}
