//! Coding agents on a local checkout: `navin board verify`, `navin digest` and `navin mcp`,
//! through the real binary, real git in temp dirs, and the official MCP Python SDK.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use std::io::Write as _;

const AGENT: &str = "subagent:codex";

fn navin_as(dir: &Path, actor: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NAVIN_ACTOR", actor)
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
        .expect("write stdin");
    child.wait_with_output().expect("navin ends")
}

fn ok_as(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin_as(dir, actor, args, "");
    assert!(
        out.status.success(),
        "navin {args:?} as {actor} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn refused_as(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin_as(dir, actor, args, "");
    assert_eq!(
        out.status.code(),
        Some(1),
        "navin {args:?} as {actor} should be refused: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).expect("utf8")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A checkout with one commit and a mission: S1 (validation test), S2 after S1.
fn checkout(config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q"]);
    std::fs::write(d.join("README.md"), "hello\n").expect("write");
    if let Some(yaml) = config {
        std::fs::create_dir_all(d.join(".github")).expect("mkdir");
        std::fs::write(d.join(".github/navin.yml"), yaml).expect("write config");
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "init"]);
    ok_as(
        d,
        "human:maintainer",
        &["ledger", "init", "--goal", "Ship the parser"],
    );
    ok_as(
        d,
        "human:maintainer",
        &[
            "board",
            "add",
            "S1",
            "--title",
            "write it",
            "--validation",
            "test",
        ],
    );
    ok_as(
        d,
        "human:maintainer",
        &[
            "board",
            "add",
            "S2",
            "--title",
            "doc it",
            "--depends-on",
            "S1",
        ],
    );
    dir
}

/// [`checkout`] with S1 started by the agent.
fn started(config: Option<&str>) -> tempfile::TempDir {
    let dir = checkout(config);
    ok_as(dir.path(), AGENT, &["board", "start", "S1"]);
    dir
}

fn status_of(dir: &Path, step: &str) -> String {
    let show: serde_json::Value = serde_json::from_str(&ok_as(
        dir,
        "human:maintainer",
        &["--json", "ledger", "show"],
    ))
    .expect("json");
    let tasks = show
        .pointer("/board/tasks")
        .and_then(|t| t.as_array())
        .cloned()
        .unwrap_or_default();
    tasks
        .iter()
        .find(|t| t["id"] == step)
        .map(|t| t["status"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_else(|| panic!("no step {step} in {show}"))
}

#[test]
fn an_agent_closes_a_test_step_only_with_a_green_verify_run_for_the_clean_head() {
    let dir = started(Some("validation:\n  commands:\n    test: git --version\n"));
    let d = dir.path();
    // Typed evidence, prose, and a bare done are all refused, and change nothing.
    let typed = navin_as(
        d,
        AGENT,
        &["board", "done", "S1", "--evidence-json", "-"],
        r#"{"kind":"check_run","ok":true,"summary":"ci green"}"#,
    );
    assert_eq!(typed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&typed.stderr).contains("cannot hand in evidence"));
    let err = refused_as(
        d,
        AGENT,
        &["board", "done", "S1", "--evidence", "I ran the tests"],
    );
    assert!(err.contains("cannot hand in evidence"), "{err}");
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("navin board verify"), "{err}");
    // The agent may not choose its own command when one is configured.
    let err = refused_as(d, AGENT, &["board", "verify", "S1", "--", "true"]);
    assert!(err.contains("git --version"), "{err}");
    assert_eq!(status_of(d, "S1"), "in_progress");

    let out = ok_as(d, AGENT, &["board", "verify", "S1"]);
    assert!(
        out.contains("test_run passed") && out.contains("git version"),
        "{out}"
    );
    // Uncommitted changes: the run no longer proves this tree.
    std::fs::write(d.join("README.md"), "edited\n").expect("write");
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("clean tree"), "{err}");
    // Committed: the run is for the previous commit.
    git(d, &["commit", "-qam", "edit"]);
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("checkout is at"), "{err}");
    ok_as(d, AGENT, &["board", "verify", "S1"]);
    ok_as(d, AGENT, &["board", "done", "S1"]);
    assert_eq!(status_of(d, "S1"), "done");

    let show: serde_json::Value =
        serde_json::from_str(&ok_as(d, AGENT, &["--json", "ledger", "show"])).expect("json");
    let run = &show["mission"]["progress"]["last_evidence"]["run"];
    assert_eq!(run["command"], serde_json::json!(["git", "--version"]));
    assert_eq!(run["source"], "config");
    assert_eq!(run["exit_code"], 0);
    assert_eq!(run["dirty"], false);
    assert_eq!(run["output_sha256"].as_str().map(str::len), Some(64));
}

#[test]
fn a_red_verify_run_is_recorded_and_exits_1() {
    let dir = started(Some("validation:\n  commands:\n    test: git --version\n"));
    let d = dir.path();
    // A human may run another command; a failing one is recorded red.
    let err = refused_as(
        d,
        "human:maintainer",
        &["board", "verify", "S1", "--", "git", "no-such-command"],
    );
    assert!(
        err.contains("validation failed") && err.contains("red test_run"),
        "{err}"
    );
    let show: serde_json::Value =
        serde_json::from_str(&ok_as(d, AGENT, &["--json", "ledger", "show"])).expect("json");
    let last = &show["mission"]["progress"]["last_evidence"];
    assert_eq!(last["ok"], false);
    assert_eq!(last["run"]["source"], "given");
    assert_ne!(last["run"]["exit_code"], 0);
    assert!(last["run"]["output_tail"]
        .as_str()
        .unwrap_or_default()
        .contains("no-such-command"));
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("navin board verify"), "{err}");
}

#[test]
fn verify_without_any_command_says_where_to_configure_one() {
    let dir = started(None);
    let out = navin_as(dir.path(), AGENT, &["board", "verify", "S1"], "");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("validation.commands.test"), "{err}");
    let out = navin_as(dir.path(), AGENT, &["board", "verify", "S9"], "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown step \"S9\""));
}

#[test]
fn digest_and_brief_read_the_ledger_and_the_digest_leads_with_a_pause() {
    let dir = started(None);
    let d = dir.path();
    let text = ok_as(d, AGENT, &["digest"]);
    assert!(
        text.starts_with("Mission v4 [running]: Ship the parser"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok_as(d, AGENT, &["--json", "digest"])).expect("json");
    assert_eq!(json["text"].as_str().map(|t| format!("{t}\n")), Some(text));
    assert_eq!(json["current_step"], "S1");
    let brief = ok_as(d, AGENT, &["board", "brief", "S1"]);
    for part in [
        "### Role",
        "### Done when",
        "### Do not",
        "### Validation",
        "Navin-Step: S1",
        "`navin/S1-write-it`",
        "    Mission v4 [running]",
    ] {
        assert!(brief.contains(part), "brief lacks {part:?}:\n{brief}");
    }
    ok_as(
        d,
        "human:maintainer",
        &["ledger", "pause", "--reason", "review"],
    );
    let paused = ok_as(d, AGENT, &["digest"]);
    assert!(
        paused.starts_with("PAUSED (human): wait for a human"),
        "{paused}"
    );
    let err = refused_as(d, AGENT, &["ledger", "resume"]);
    assert!(err.contains("only a human may resume"), "{err}");
}

/// The Python with the official MCP SDK that `.ci/mcp-sdk` installs.
fn mcp_python() -> PathBuf {
    if let Some(p) = std::env::var_os("NAVIN_MCP_PYTHON") {
        return PathBuf::from(p);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    cache.join("navin-ci/mcp-venv/bin/python")
}

#[test]
fn mcp_server_conforms_for_the_official_python_sdk() {
    let python = mcp_python();
    assert!(
        python.exists(),
        "{} not found: run `.ci/mcp-sdk` to install the MCP Python SDK (or set NAVIN_MCP_PYTHON)",
        python.display()
    );
    let dir = checkout(None);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/conformance.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_navin"))
        .arg(dir.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("NAVIN_ACTOR")
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("conformance: all checks passed"),
        "conformance failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
