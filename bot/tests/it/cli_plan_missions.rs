//! Missions built from real plans: the built-in planner plans a change in a Python, a Go
//! and a JavaScript project (and in this repository), a person approves it, and the
//! mission's steps carry commands the project can run, which `navin board verify` runs
//! green in the fixture; prose verification makes a manual step that says so.
//!
//! The Go and Python fixtures need `go` and `pytest` on PATH, as `.ci/run` installs them.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::agents::git;

const HUMAN: &str = "human:alice";
/// Another person: the one who saved a plan does not approve it.
const REVIEWER: &str = "human:maya";
const AGENT: &str = "subagent:coder";

fn navin(dir: &Path, actor: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("NAVIN_ACTOR", actor)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        // Go keeps its caches in the fixture's temp dir, not the runner's home.
        .env("GOCACHE", dir.join(".cache/go-build"))
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("navin runs")
}

fn ok(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin(dir, actor, args);
    assert!(
        out.status.success(),
        "navin {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn require(program: &str) {
    let found = Command::new(program).arg("--version").output().is_ok()
        || Command::new(program).arg("version").output().is_ok();
    assert!(
        found,
        "`{program}` is not on PATH: install it as .ci/run does (apt-get install golang-go python3-pytest)"
    );
}

/// A project from `files`, committed on `main` with `.cache/` ignored.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    for (path, text) in files.iter().chain(&[(".gitignore", ".cache/\n")]) {
        let path = d.join(path);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    git(d, &["init", "-q", "-b", "main"]);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "init"]);
    dir
}

/// Plans `request`, approves it and starts the mission; returns the board's steps.
fn mission_from_plan(d: &Path, request: &str) -> (String, Vec<Value>) {
    let saved: Value =
        serde_json::from_str(&ok(d, HUMAN, &["--json", "plan", "--save", request])).expect("json");
    let id = saved["id"].as_str().expect("plan id").to_owned();
    let markdown = saved["markdown"].as_str().unwrap_or_default().to_owned();
    ok(d, REVIEWER, &["plan", "approve", &id]);
    ok(d, HUMAN, &["mission", "start", "--from-plan", &id]);
    let ledger: Value =
        serde_json::from_str(&ok(d, HUMAN, &["--json", "ledger", "show"])).expect("json");
    let tasks = ledger["board"]["tasks"]
        .as_array()
        .expect("a board")
        .clone();
    (markdown, tasks)
}

fn commands(task: &Value) -> Vec<String> {
    task["commands"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Every command's program is one of `programs`, and none keeps Markdown code marks.
fn assert_runnable(tasks: &[Value], programs: &[&str]) {
    for task in tasks {
        for command in commands(task) {
            let program = command.split_whitespace().next().unwrap_or_default();
            assert!(
                programs.contains(&program) && !command.contains('`'),
                "{}: {command:?} is not a command of this project",
                task["id"]
            );
        }
    }
}

/// The agent's work lands as a commit (a step closes only on a change since its base),
/// and `navin board verify` runs the step's own commands green on it.
fn verify_green(d: &Path, step: &str) -> Value {
    std::fs::write(
        d.join("CHANGES.md"),
        format!("- {step}: the agent's change\n"),
    )
    .expect("write");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "the agent's change"]);
    let out: Value =
        serde_json::from_str(&ok(d, AGENT, &["--json", "board", "verify", step])).expect("json");
    assert_eq!(out["ok"], true, "{out}");
    out
}

#[test]
fn a_python_plan_becomes_one_step_whose_pytest_command_verify_runs_green() {
    require("pytest");
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"greet\"\nversion = \"0.1.0\"\n[project.optional-dependencies]\ntest = [\"pytest\"]\n",
        ),
        (
            "greet/__init__.py",
            "def greeting(name):\n    \"\"\"The greeting for name.\"\"\"\n    return f\"Hello, {name}!\"\n",
        ),
        (
            "tests/test_greet.py",
            "from greet import greeting\n\n\ndef test_greeting():\n    assert greeting(\"Ada\") == \"Hello, Ada!\"\n",
        ),
        ("conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"),
    ]);
    let d = dir.path();
    let (plan, tasks) = mission_from_plan(d, "make greeting accept a salutation argument");
    assert_eq!(tasks.len(), 1, "a small plan is one step: {plan}");
    assert_eq!(tasks[0]["id"], "C1");
    assert_eq!(tasks[0]["validation"], "test", "{}", tasks[0]);
    let cmds = commands(&tasks[0]);
    assert!(cmds.iter().any(|c| c.starts_with("pytest")), "{cmds:?}");
    assert_runnable(&tasks, &["pytest"]);
    // The plan pairs the change with its test, so the step needs a test going green.
    assert_eq!(tasks[0]["fail_to_pass"], true, "{}", tasks[0]);
    // The agent's work: the salutation, and the test that shows it.
    std::fs::write(
        d.join("greet/__init__.py"),
        "def greeting(name, salutation=\"Hello\"):\n    \"\"\"The greeting for name.\"\"\"\n    return f\"{salutation}, {name}!\"\n",
    )
    .expect("write");
    std::fs::write(
        d.join("tests/test_greet.py"),
        "from greet import greeting\n\n\ndef test_greeting():\n    assert greeting(\"Ada\") == \"Hello, Ada!\"\n\n\ndef test_salutation():\n    assert greeting(\"Ada\", \"Hi\") == \"Hi, Ada!\"\n",
    )
    .expect("write");
    let run = verify_green(d, "C1");
    assert_eq!(run["source"], "step", "{run}");
    let repaired = &run["runs"][0]["baseline"]["fail_to_pass"];
    assert_eq!(
        repaired,
        &serde_json::json!(["tests/test_greet.py::test_salutation"]),
        "{run}"
    );
    // The run proves the step: the agent closes it.
    ok(d, AGENT, &["board", "done", "C1"]);
}

#[test]
fn a_plan_verifies_with_the_command_the_repositorys_ci_workflow_runs() {
    require("pytest");
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"greet\"\nversion = \"0.1.0\"\n",
        ),
        (
            "greet/__init__.py",
            "def greeting(name):\n    \"\"\"The greeting for name.\"\"\"\n    return f\"Hello, {name}!\"\n",
        ),
        (
            "tests/test_greet.py",
            "from greet import greeting\n\n\ndef test_greeting():\n    assert greeting(\"Ada\") == \"Hello, Ada!\"\n",
        ),
        ("conftest.py", "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"),
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: pip install -e .\n      - run: pytest -q tests | tee pytest.log\n      - run: pytest -q tests\n",
        ),
    ]);
    let d = dir.path();
    let (plan, tasks) = mission_from_plan(d, "make greeting accept a salutation argument");
    let cmds: Vec<String> = tasks.iter().flat_map(commands).collect();
    assert!(
        cmds.iter().any(|c| c == "pytest -q tests"),
        "CI's own command, not one guessed from pyproject.toml: {cmds:?}\n{plan}"
    );
    let step = tasks[0]["id"].as_str().expect("a step id").to_owned();
    verify_green(d, &step);
}

#[test]
fn a_go_plan_becomes_one_step_whose_go_test_command_verify_runs_green() {
    require("go");
    let dir = project(&[
        ("go.mod", "module example.com/greet\n\ngo 1.19\n"),
        (
            "greet.go",
            "package greet\n\n// Greeting is the greeting for name.\nfunc Greeting(name string) string {\n\treturn \"Hello, \" + name + \"!\"\n}\n",
        ),
        (
            "greet_test.go",
            "package greet\n\nimport \"testing\"\n\nfunc TestGreeting(t *testing.T) {\n\tif Greeting(\"Ada\") != \"Hello, Ada!\" {\n\t\tt.Fatal(Greeting(\"Ada\"))\n\t}\n}\n",
        ),
    ]);
    let d = dir.path();
    let (plan, tasks) = mission_from_plan(d, "make Greeting accept a salutation argument");
    assert_eq!(tasks.len(), 1, "{plan}");
    let cmds = commands(&tasks[0]);
    assert!(cmds.contains(&"go test ./...".to_owned()), "{cmds:?}");
    assert_runnable(&tasks, &["go"]);
    verify_green(d, "C1");
}

#[test]
fn a_javascript_plan_becomes_one_step_whose_npm_test_verify_runs_green() {
    require("npm");
    let dir = project(&[
        (
            "package.json",
            r#"{"name":"greet","version":"1.0.0","main":"greet.js","scripts":{"test":"node --test"}}"#,
        ),
        (
            "greet.js",
            "/** The greeting for name. */\nfunction greeting(name) {\n  return `Hello, ${name}!`;\n}\nmodule.exports = { greeting };\n",
        ),
        (
            "test/greet.test.js",
            "const test = require('node:test');\nconst assert = require('node:assert');\nconst { greeting } = require('../greet');\n\ntest('greets', () => assert.strictEqual(greeting('Ada'), 'Hello, Ada!'));\n",
        ),
    ]);
    let d = dir.path();
    let (plan, tasks) = mission_from_plan(d, "make greeting accept a salutation argument");
    assert_eq!(tasks.len(), 1, "{plan}");
    let cmds = commands(&tasks[0]);
    assert!(cmds.contains(&"npm test".to_owned()), "{cmds:?}");
    assert_runnable(&tasks, &["npm", "npx"]);
    verify_green(d, "C1");
}

#[test]
fn a_project_with_no_test_command_gets_a_manual_step_that_says_what_a_person_checks() {
    let dir = project(&[(
        "README.md",
        "# Greeter\n\nSay hello.\n\n## Usage\n\nRun `greet NAME`.\n",
    )]);
    let d = dir.path();
    let (_, tasks) = mission_from_plan(d, "document the --loud option in the README usage");
    assert!(!tasks.is_empty());
    for task in &tasks {
        assert_eq!(task["validation"], "manual", "{task}");
        assert!(commands(task).is_empty(), "{task}");
        let acceptance = task["acceptance"].as_str().unwrap_or_default();
        assert!(acceptance.starts_with("A person checks:"), "{task}");
    }
    let out = navin(d, AGENT, &["board", "verify", "C1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("C1 is manual") && err.contains("nothing to run"),
        "{err}"
    );
}

#[test]
fn this_repositorys_readme_request_leads_with_the_cli_definition_implementation_and_test_and_names_cargo_commands(
) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root");
    let dir = tempfile::tempdir().expect("tmp");
    let clone = dir.path().join("navin");
    let out = Command::new("git")
        .args(["clone", "-q", "--local", "--no-hardlinks"])
        .arg(root)
        .arg(&clone)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git clone runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (plan, tasks) = mission_from_plan(&clone, "add a --since option to navin ledger history");
    // The README's example request: the CLI argument definition, the history
    // implementation and the test that runs `navin ledger history` come first.
    // (The checkout's history may order the second and third: the test changed with
    // the implementation more often than not.)
    let mut first: Vec<&str> = plan
        .lines()
        .filter_map(|l| l.strip_prefix("### File: "))
        .take(3)
        .collect();
    assert_eq!(first.first(), Some(&"bot/src/cli/args.rs"), "{plan}");
    first.sort_unstable();
    assert_eq!(
        first,
        [
            "bot/src/cli/args.rs",
            "bot/src/cli/show.rs",
            "bot/tests/it/cli_ledger.rs"
        ],
        "{plan}"
    );
    assert!(!tasks.is_empty(), "{plan}");
    assert_runnable(&tasks, &["cargo"]);
    for task in &tasks {
        assert!(!commands(task).is_empty(), "{task}");
        assert_eq!(task["validation"], "test", "{task}");
    }
}
