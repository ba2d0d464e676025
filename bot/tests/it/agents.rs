//! Coding agents on a local checkout: `navin board verify`, `navin digest` and `navin mcp`,
//! through the real binary, real git in temp dirs, and the official MCP Python SDK.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use std::io::Write as _;

const AGENT: &str = "subagent:codex";

pub(crate) fn navin_as(dir: &Path, actor: &str, args: &[&str], stdin: &str) -> Output {
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

pub(crate) fn ok_as(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin_as(dir, actor, args, "");
    assert!(
        out.status.success(),
        "navin {args:?} as {actor} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

pub(crate) fn refused_as(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin_as(dir, actor, args, "");
    assert_eq!(
        out.status.code(),
        Some(1),
        "navin {args:?} as {actor} should be refused: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).expect("utf8")
}

/// `git ARGS` in `dir` with a clean config and a fixed identity; its stdout. A failure
/// fails the test with git's own message.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
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
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A checkout with one commit and a mission: S1 (validation test), S2 after S1.
pub(crate) fn checkout(config: Option<&str>) -> tempfile::TempDir {
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
pub(crate) fn started(config: Option<&str>) -> tempfile::TempDir {
    let dir = checkout(config);
    ok_as(dir.path(), AGENT, &["board", "start", "S1"]);
    dir
}

pub(crate) fn status_of(dir: &Path, step: &str) -> String {
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
    // The next brief carries the red run: the command, how it ended, its output.
    let brief = ok_as(d, AGENT, &["board", "brief", "S1"]);
    assert!(
        brief.contains("### Last recorded run")
            && brief.contains("`git no-such-command` exited 1")
            && brief.contains("no-such-command"),
        "{brief}"
    );
}

#[test]
fn verify_without_any_command_says_where_to_configure_one() {
    let dir = started(None);
    let out = navin_as(dir.path(), AGENT, &["board", "verify", "S1"], "");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("validation.commands.test"), "{err}");
    let out = navin_as(dir.path(), AGENT, &["board", "verify", "S9"], "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown step \"S9\""));
}

/// Processes whose whole command line is `line` (a regex), or `None` without pgrep.
fn pgrep(line: &str) -> Option<Vec<String>> {
    let out = Command::new("pgrep")
        .args(["-x", "-f", line])
        .output()
        .ok()?;
    matches!(out.status.code(), Some(0 | 1)).then(|| {
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    })
}

/// Waits up to 5 s for no process to run `line`; the survivors, if any (none without pgrep).
fn survivors(line: &str) -> Vec<String> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let left = pgrep(line).unwrap_or_default();
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `sh -c 'sleep M & sleep M'` (a child and a grandchild), with a duration no other
/// process uses, and the command line of those sleeps.
fn two_sleeps(tag: u32) -> (String, String) {
    let sleep = format!("sleep 31.{}{tag}", std::process::id());
    (format!("{sleep} & {sleep}"), sleep)
}

#[test]
fn a_verify_run_past_its_timeout_is_killed_with_everything_it_started_and_recorded_red() {
    let dir = started(Some("validation:\n  commands:\n    test: git --version\n"));
    let d = dir.path();
    let (script, sleep) = two_sleeps(1);
    let clock = Instant::now();
    let err = refused_as(
        d,
        "human:maintainer",
        &[
            "board",
            "verify",
            "S1",
            "--timeout",
            "1",
            "--",
            "sh",
            "-c",
            &script,
        ],
    );
    let took = clock.elapsed();
    assert!(took < Duration::from_secs(15), "verify took {took:?}");
    assert!(
        err.contains("timed out after 1 s")
            && err.contains("red test_run")
            && err.contains("--timeout SECS")
            && err.contains("NAVIN_VERIFY_TIMEOUT"),
        "{err}"
    );
    assert_eq!(status_of(d, "S1"), "in_progress");
    let show: serde_json::Value =
        serde_json::from_str(&ok_as(d, AGENT, &["--json", "ledger", "show"])).expect("json");
    let last = &show["mission"]["progress"]["last_evidence"];
    assert_eq!(last["kind"], "test_run", "{last}");
    assert_eq!(last["ok"], false, "{last}");
    assert!(
        last["summary"]
            .as_str()
            .is_some_and(|s| s.contains("timed out after 1 s")),
        "{last}"
    );
    assert!(last["run"]["exit_code"].is_null(), "{last}");
    assert_eq!(last["run"]["source"], "given");
    assert_eq!(
        last["run"]["command"],
        serde_json::json!(["sh", "-c", script])
    );
    let s1 = show
        .pointer("/board/tasks")
        .and_then(|t| t.as_array())
        .and_then(|t| t.iter().find(|t| t["id"] == "S1"))
        .cloned()
        .expect("S1 on the board");
    assert!(
        s1["evidence"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["ok"] == false && e["run"].is_object())),
        "the red run is on the step: {s1}"
    );
    let left = survivors(&sleep);
    assert!(
        left.is_empty(),
        "{sleep} survived the timeout: pids {left:?}"
    );
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("navin board verify"), "{err}");
}

#[test]
fn the_verify_timeout_comes_from_the_environment_shows_in_json_and_is_never_0() {
    let dir = started(None);
    let d = dir.path();
    let run = |timeout: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_navin"))
            .args(args)
            .current_dir(d)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NAVIN_ACTOR", "human:maintainer")
            .env("NAVIN_VERIFY_TIMEOUT", timeout)
            .stdin(Stdio::null())
            .output()
            .expect("navin runs")
    };
    let (script, sleep) = two_sleeps(2);
    let out = run(
        "1",
        &["--json", "board", "verify", "S1", "--", "sh", "-c", &script],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["timed_out"], true, "{json}");
    assert_eq!(json["ok"], false, "{json}");
    assert!(json["exit_code"].is_null(), "{json}");
    assert!(survivors(&sleep).is_empty(), "{sleep} survived");
    // A run that ends in time says so too.
    let out = run(
        "5",
        &["--json", "board", "verify", "S1", "--", "git", "--version"],
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(json["timed_out"], false, "{json}");
    assert_eq!(json["exit_code"], 0, "{json}");
    // 0 is refused before anything runs, from the flag and from the environment.
    for (env, flag) in [("5", Some("0")), ("0", None)] {
        let mut args = vec!["board", "verify", "S1"];
        args.extend(flag.map(|f| ["--timeout", f]).into_iter().flatten());
        args.extend(["--", "git", "--version"]);
        let out = run(env, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("--timeout") && err.contains("0 is not in 1.."),
            "{err}"
        );
    }
}

#[test]
fn interrupting_verify_stops_the_command_and_everything_it_started() {
    let dir = started(None);
    let d = dir.path();
    if pgrep("no-such-process-line").is_none() {
        eprintln!("pgrep is missing: skipped");
        return;
    }
    let (script, sleep) = two_sleeps(3);
    let before = status_of(d, "S1");
    let child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args([
            "board",
            "verify",
            "S1",
            "--timeout",
            "60",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(d)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NAVIN_ACTOR", "human:maintainer")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("navin runs");
    let until = Instant::now() + Duration::from_secs(10);
    while pgrep(&sleep).unwrap_or_default().len() < 2 {
        assert!(Instant::now() < until, "the sleeps never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let clock = Instant::now();
    let out = child.wait_with_output().expect("navin ends");
    assert!(
        clock.elapsed() < Duration::from_secs(10),
        "{:?}",
        clock.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = survivors(&sleep);
    assert!(
        left.is_empty(),
        "{sleep} survived the interrupt: pids {left:?}"
    );
    let show: serde_json::Value =
        serde_json::from_str(&ok_as(d, AGENT, &["--json", "ledger", "show"])).expect("json");
    assert!(
        show["mission"]["progress"]["last_evidence"].is_null(),
        "nothing is recorded: {show}"
    );
    assert_eq!(status_of(d, "S1"), before);
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
        "`navin/S1-write-it`",
        "    Mission v4 [running]",
        // A mission made in a checkout is worked there: a commit, proven by verify.
        "committed in this checkout",
        "`navin board verify S1` records a green run",
        "ask with `ask_user`",
    ] {
        assert!(brief.contains(part), "brief lacks {part:?}:\n{brief}");
    }
    for github in [
        "pull request",
        "Navin-Step",
        "https://github.com",
        "this issue",
    ] {
        assert!(
            !brief.contains(github),
            "a local brief speaks of {github:?}:\n{brief}"
        );
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
    // The step's command comes from the default branch's config: an agent runs no other.
    let dir = checkout(Some("validation:\n  commands:\n    test: git --version\n"));
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

/// The evidence on `step` as the ledger holds it: (kind, ok, the command run).
fn runs_of(dir: &Path, step: &str) -> Vec<(String, bool, String)> {
    let show: serde_json::Value = serde_json::from_str(&ok_as(
        dir,
        "human:maintainer",
        &["--json", "ledger", "show"],
    ))
    .expect("json");
    let tasks = show["board"]["tasks"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let task = tasks
        .iter()
        .find(|t| t["id"] == step)
        .unwrap_or_else(|| panic!("no step {step}"));
    task["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["run"].is_object())
        .map(|e| {
            let argv: Vec<&str> = e["run"]["command"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str())
                .collect();
            (
                e["kind"].as_str().unwrap_or_default().to_owned(),
                e["ok"].as_bool().unwrap_or_default(),
                argv.join(" "),
            )
        })
        .collect()
}

#[test]
fn verify_runs_every_command_of_the_step_in_order_and_a_red_one_keeps_it_open() {
    let dir = checkout(None);
    let d = dir.path();
    ok_as(
        d,
        "human:maintainer",
        &[
            "board",
            "add",
            "S3",
            "--title",
            "both",
            "--validation",
            "test",
            "--command",
            "test -f first.ok",
            "--command",
            "test -f second.ok",
        ],
    );
    ok_as(d, AGENT, &["board", "start", "S3"]);

    // Neither file: the first command fails and the second is not run.
    let err = refused_as(d, AGENT, &["board", "verify", "S3"]);
    assert!(err.contains("test -f first.ok"), "{err}");
    assert_eq!(
        runs_of(d, "S3"),
        [("test_run".into(), false, "test -f first.ok".into())]
    );

    // The first passes, the second fails: both are recorded, and the red one is the
    // newest for this commit, so the step stays open.
    std::fs::write(d.join("first.ok"), "").expect("write");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "first"]);
    let err = refused_as(d, AGENT, &["board", "verify", "S3"]);
    assert!(err.contains("test -f second.ok"), "{err}");
    let runs = runs_of(d, "S3");
    assert_eq!(
        runs[1..],
        [
            ("test_run".into(), true, "test -f first.ok".into()),
            ("test_run".into(), false, "test -f second.ok".into()),
        ]
    );
    let err = refused_as(d, AGENT, &["board", "done", "S3"]);
    assert!(
        err.contains("newest test_run") && err.contains("failed"),
        "{err}"
    );

    std::fs::write(d.join("second.ok"), "").expect("write");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "second"]);
    let out = ok_as(d, AGENT, &["--json", "board", "verify", "S3"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(2), "{v}");
    ok_as(d, AGENT, &["board", "done", "S3"]);
    assert_eq!(status_of(d, "S3"), "done");
}

#[test]
fn a_failed_attempt_ends_on_the_ledger_and_the_next_brief_says_what_went_wrong() {
    let dir = started(None);
    let d = dir.path();
    ok_as(
        d,
        AGENT,
        &[
            "board",
            "fail",
            "S1",
            "--reason",
            "the fixture server never starts",
        ],
    );
    let show: serde_json::Value =
        serde_json::from_str(&ok_as(d, "human:maintainer", &["--json", "ledger", "show"]))
            .expect("json");
    let attempt = show
        .pointer("/board/tasks/0/attempts/0")
        .cloned()
        .expect("S1 has its first attempt");
    assert_eq!(attempt["agent"], AGENT);
    assert_eq!(attempt["outcome"], "failed");
    assert_eq!(attempt["note"], "the fixture server never starts");
    ok_as(d, "human:maintainer", &["board", "retry", "S1"]);
    let brief = ok_as(d, AGENT, &["board", "brief", "S1"]);
    assert!(brief.contains("This is attempt 2"), "{brief}");
    assert!(brief.contains("the fixture server never starts"), "{brief}");
}

#[test]
fn an_agent_that_rewrites_the_config_on_its_branch_still_runs_the_default_branchs_command() {
    // On the default branch the step's command fails: the work is not done.
    let dir = started(Some(
        "validation:\n  commands:\n    test: git no-such-command\n",
    ));
    let d = dir.path();
    git(d, &["checkout", "-q", "-b", "agent-work"]);
    std::fs::write(
        d.join(".github/navin.yml"),
        "validation:\n  commands:\n    test: \"true\"\n",
    )
    .expect("write");
    git(d, &["commit", "-qam", "make the check pass"]);
    let err = refused_as(d, AGENT, &["board", "verify", "S1"]);
    assert!(err.contains("red test_run"), "{err}");
    let runs = runs_of(d, "S1");
    assert_eq!(
        runs.iter().map(|(_, _, c)| c.as_str()).collect::<Vec<_>>(),
        ["git no-such-command"],
        "the branch's command never ran"
    );
    let err = refused_as(d, AGENT, &["board", "verify", "S1", "--", "true"]);
    assert!(err.contains("not ones of its choosing"), "{err}");
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("S1"), "{err}");
    assert_eq!(status_of(d, "S1"), "in_progress");
}

#[test]
fn with_no_command_anywhere_a_persons_own_command_is_recorded_and_closes_nothing() {
    let dir = started(None);
    let d = dir.path();
    let out = ok_as(
        d,
        "human:maintainer",
        &["board", "verify", "S1", "--", "true"],
    );
    assert!(out.contains("proves nothing"), "{out}");
    let err = refused_as(d, "human:maintainer", &["board", "done", "S1"]);
    assert!(err.contains("proves nothing"), "{err}");
    assert_eq!(status_of(d, "S1"), "in_progress");
}
