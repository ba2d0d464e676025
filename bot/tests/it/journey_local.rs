//! The local journey for one person, no GitHub: plan, approve your own plan (the one
//! setting the README names, no `--actor`), start the mission, and an agent works the
//! step over MCP: a change that breaks a passing test fails `board verify` and cannot be
//! closed, `board_fail` and `board_retry` give it another attempt whose brief carries
//! the red run, and the right change verifies green and `board_done` closes the step.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::mcp_support::McpClient;

fn navin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("USER", "alice")
        .env_remove("NAVIN_ACTOR")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Alice")
        .env("GIT_AUTHOR_EMAIL", "alice@example.invalid")
        .env("GIT_COMMITTER_NAME", "Alice")
        .env("GIT_COMMITTER_EMAIL", "alice@example.invalid")
        .output()
        .expect("navin runs")
}

fn ok(out: &Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.invalid")
        .env("GIT_COMMITTER_NAME", "Agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.invalid")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn one_person_plans_approves_and_an_agent_finishes_the_step_over_mcp_through_a_failed_attempt() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join(".github")).expect("dir");
    std::fs::write(dir.join("calc.py"), "def add(a, b):\n    return a + b\n").expect("write");
    std::fs::write(
        dir.join("test_calc.py"),
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("pyproject.toml"),
        "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\".\"]\n",
    )
    .expect("write");
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "calc"]);

    // Plan, and the author's own approval is refused until the README's one setting.
    ok(&navin(
        dir,
        &[
            "plan",
            "--save",
            "add a subtract function to calc.py with its test in test_calc.py",
        ],
    ));
    let list: Value =
        serde_json::from_str(&ok(&navin(dir, &["--json", "plan", "list"]))).expect("json");
    let id = list[0]["id"].as_str().expect("a plan id").to_owned();
    let refused = navin(dir, &["plan", "approve", &id]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(
        said.contains("allow_author_approval") && !said.contains("--actor"),
        "{said}"
    );
    std::fs::write(
        dir.join(".github/navin.yml"),
        "approval: {allow_author_approval: true}\n",
    )
    .expect("config");
    git(dir, &["add", ".github"]);
    git(dir, &["commit", "-qm", "working alone"]);
    ok(&navin(dir, &["plan", "approve", &id]));
    ok(&navin(dir, &["mission", "start", "--from-plan", &id]));
    let next: Value =
        serde_json::from_str(&ok(&navin(dir, &["--json", "board", "next"]))).expect("json");
    let step = next[0]["id"].as_str().expect("a ready step").to_owned();
    assert_eq!(next[0]["validation"], "test", "{next}");

    // The agent, over MCP: starts the step, and its change breaks `add`.
    let actor = format!("subagent:{step}");
    let mut mcp = McpClient::start(
        dir,
        &["--mode", "agent", "--actor", &actor],
        &[],
        "journey-agent",
    );
    let started = mcp.call_tool("board_start", json!({"step": step}));
    assert_ne!(started["isError"], true, "{started}");
    let subtract = "\n\ndef subtract(a, b):\n    return a - b\n";
    let test =
        "\n\ndef test_subtract():\n    from calc import subtract\n    assert subtract(5, 3) == 2\n";
    std::fs::write(
        dir.join("calc.py"),
        format!("def add(a, b):\n    return a - b{subtract}"),
    )
    .expect("edit");
    let tests = std::fs::read_to_string(dir.join("test_calc.py")).expect("read");
    std::fs::write(dir.join("test_calc.py"), format!("{tests}{test}")).expect("edit");
    git(dir, &["commit", "-qam", "subtract"]);
    let red = navin(dir, &["board", "verify", &step]);
    assert_eq!(
        red.status.code(),
        Some(1),
        "the broken add fails pytest: {red:?}"
    );
    let refused = mcp.call_tool("board_done", json!({"step": step}));
    assert_eq!(
        refused["isError"], true,
        "a red step cannot be closed: {refused}"
    );
    let failed = mcp.call_tool(
        "board_fail",
        json!({"step": step, "reason": "test_add fails", "op_id": "turn-1"}),
    );
    assert_ne!(failed["isError"], true, "{failed}");

    // A retry, not a replan; the next brief carries the red run.
    let retried = mcp.call_tool("board_retry", json!({"step": step}));
    assert_ne!(retried["isError"], true, "{retried}");
    let brief = text_of(&mcp.call_tool("board_brief", json!({"step": step})));
    assert!(
        brief.contains("pytest") && brief.contains("test_calc.py::test_add"),
        "the red run is in the brief:\n{brief}"
    );
    assert!(
        !brief.contains("pull request"),
        "a local brief speaks of the checkout:\n{brief}"
    );

    // The agent takes attempt 2; the right change verifies green, and board_done
    // closes the step on that run.
    let again = mcp.call_tool("board_start", json!({"step": step}));
    assert_ne!(again["isError"], true, "{again}");
    std::fs::write(
        dir.join("calc.py"),
        format!("def add(a, b):\n    return a + b{subtract}"),
    )
    .expect("edit");
    git(dir, &["commit", "-qam", "fix add for real"]);
    ok(&navin(dir, &["board", "verify", &step]));
    let done = mcp.call_tool("board_done", json!({"step": step}));
    assert_ne!(done["isError"], true, "{done}");
    let show: Value =
        serde_json::from_str(&ok(&navin(dir, &["--json", "ledger", "show"]))).expect("json");
    let task = show["board"]["tasks"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["id"] == step.as_str()))
        .cloned()
        .unwrap_or_else(|| panic!("{show}"));
    assert_eq!(task["status"], "done", "{task}");
    assert_eq!(task["attempts"].as_array().map(Vec::len), Some(2), "{task}");
    assert_eq!(
        show["mission"]["progress"]["replan_count"], 0,
        "no replan was spent: {show}"
    );
}
