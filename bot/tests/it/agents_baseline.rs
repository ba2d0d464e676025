//! `board verify` holds the head against the step's base: the real `navin` binary running real pytest, cargo, go and jest on real git in temp dirs.
//!
//! pytest, go and jest must be on PATH, as `.ci/run` installs them (`.ci/jest` for jest).

use std::path::Path;

use serde_json::Value;

use crate::agents::{checkout, git, navin_as, ok_as, refused_as, status_of};

const AGENT: &str = "subagent:codex";

fn require(program: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()));
    assert!(
        found,
        "`{program}` is not on PATH: install it as .ci/run does (apt-get install golang-go python3-pytest; jest from .ci/jest)"
    );
}

fn write(d: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let path = d.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

fn commit(d: &Path, files: &[(&str, &str)], message: &str) {
    write(d, files);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", message]);
}

/// A checkout whose test command is `command`, with `files` committed, and S1 started
/// by the agent on that commit (its base).
fn project(command: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let config = format!("validation:\n  commands:\n    test: {command}\n");
    let dir = checkout(Some(&config));
    let d = dir.path();
    commit(d, files, "the project as the step finds it");
    ok_as(d, AGENT, &["board", "start", "S1"]);
    dir
}

/// `navin --json board verify S1` as the agent: whether it passed, and its report.
fn verify(d: &Path) -> (bool, Value) {
    let out = navin_as(d, AGENT, &["--json", "board", "verify", "S1"], "");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "verify printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.success(), report)
}

/// The base run held against the newest recorded run of S1, from the ledger itself.
fn recorded_baseline(d: &Path) -> Value {
    let show: Value =
        serde_json::from_str(&ok_as(d, "human:maintainer", &["--json", "ledger", "show"]))
            .expect("json");
    let tasks = show.pointer("/board/tasks").and_then(Value::as_array);
    let s1 = tasks
        .and_then(|t| t.iter().find(|t| t["id"] == "S1"))
        .expect("S1 on the board");
    let evidence = s1["evidence"].as_array().expect("evidence");
    evidence
        .last()
        .and_then(|e| e.pointer("/run/baseline"))
        .cloned()
        .unwrap_or_else(|| panic!("the newest run has no base run: {evidence:?}"))
}

fn ids(v: &Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

const PY_IGNORE: (&str, &str) = (".gitignore", "__pycache__/\n.pytest_cache/\n");
const PY_TESTS: &str = "from calc import parse\n\n\ndef test_adds():\n    assert 1 + 1 == 2\n\n\ndef test_known_broken():\n    assert False, 'broken before the step'\n\n\ndef test_parses():\n    assert parse('2') == 2\n";

fn python_project() -> tempfile::TempDir {
    require("pytest");
    project(
        "pytest -q",
        &[
            PY_IGNORE,
            ("calc.py", "def parse(s):\n    raise NotImplementedError\n"),
            ("test_calc.py", PY_TESTS),
        ],
    )
}

#[test]
fn a_failure_already_on_the_base_is_reported_and_the_repaired_test_is_recorded_by_id() {
    let dir = python_project();
    let d = dir.path();
    commit(
        d,
        &[("calc.py", "def parse(s):\n    return int(s)\n")],
        "parse numbers",
    );
    // pytest exits 1 (test_known_broken still fails), yet the step's change broke nothing.
    let (ok, report) = verify(d);
    assert!(ok, "only a pre-existing failure: green: {report}");
    let base = recorded_baseline(d);
    assert_eq!(base["runner"], "pytest");
    assert_eq!(ids(&base, "fail_to_pass"), ["test_calc.py::test_parses"]);
    assert_eq!(
        ids(&base, "pre_existing"),
        ["test_calc.py::test_known_broken"]
    );
    assert!(ids(&base, "new_failures").is_empty(), "{base}");
    let summary = report["runs"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("failing on the base already"), "{summary}");
    ok_as(d, AGENT, &["board", "done", "S1"]);
    assert_eq!(status_of(d, "S1"), "done");
}

#[test]
fn a_regression_is_refused_naming_the_test_and_the_base_run_is_cached_and_unforgeable() {
    let dir = python_project();
    let d = dir.path();
    commit(
        d,
        &[
            ("calc.py", "def parse(s):\n    return int(s)\n"),
            (
                "test_calc.py",
                &PY_TESTS.replace("1 + 1 == 2", "1 + 1 == 3"),
            ),
        ],
        "parse numbers, and break adding",
    );
    let (ok, report) = verify(d);
    assert!(!ok, "a new failure is red: {report}");
    let base = recorded_baseline(d);
    assert_eq!(ids(&base, "new_failures"), ["test_calc.py::test_adds"]);
    assert_eq!(
        base["cached"],
        Value::Null,
        "the first base run ran: {base}"
    );
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains("test_calc.py::test_adds"), "{err}");
    assert_eq!(status_of(d, "S1"), "in_progress");

    // Fixed on a new commit: the base's result comes from the cache.
    commit(d, &[("test_calc.py", PY_TESTS)], "adding works again");
    let (ok, _) = verify(d);
    assert!(ok);
    assert_eq!(recorded_baseline(d)["cached"], true);

    // The agent breaks adding again and plants a cached base that "failed" it already:
    // the entry fails its MAC, so the base runs for real and the regression shows.
    commit(
        d,
        &[(
            "test_calc.py",
            &PY_TESTS.replace("1 + 1 == 2", "1 + 1 == 3"),
        )],
        "break adding again",
    );
    let cache = d.join(".git/navin/base-runs");
    for entry in std::fs::read_dir(&cache).expect("a cache").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("read");
        let forged = text.replace("\"failed\":[", "\"failed\":[\"test_calc.py::test_adds\",");
        assert_ne!(forged, text, "the entry lists the base's failures");
        std::fs::write(entry.path(), forged).expect("write");
    }
    let (ok, report) = verify(d);
    assert!(!ok, "a forged cache entry excuses nothing: {report}");
    let base = recorded_baseline(d);
    assert_eq!(base["cached"], Value::Null);
    assert_eq!(ids(&base, "new_failures"), ["test_calc.py::test_adds"]);
}

#[test]
fn output_no_runner_names_falls_back_to_exit_codes_and_says_so() {
    let dir = project(
        "sh check.sh",
        &[("check.sh", "echo 300 errors on a clean checkout\nexit 1\n")],
    );
    let d = dir.path();
    commit(d, &[("src.txt", "the change\n")], "a change");
    // Red on the base and on the head: unread output never counts as green.
    let (ok, report) = verify(d);
    assert!(!ok, "{report}");
    let summary = report["runs"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains("exits 1 on the base too"), "{summary}");
    assert!(
        summary.contains("could not be read test by test"),
        "{summary}"
    );
    assert_eq!(recorded_baseline(d)["runner"], Value::Null);
}

#[test]
fn a_left_over_base_tree_from_a_killed_verify_is_swept() {
    let dir = project("sh check.sh", &[("check.sh", "exit 0\n")]);
    let d = dir.path();
    commit(d, &[("src.txt", "the change\n")], "a change");
    let (ok, report) = verify(d);
    assert!(ok);
    let trees = Path::new(report["base_trees"].as_str().expect("where base trees go"));
    assert_eq!(count(trees), 0, "the base tree is removed after the run");
    // A verify killed mid-run leaves its tree under a pid no process has.
    let stale = trees.join("999999999-0-abc");
    std::fs::create_dir_all(stale.join("deep")).expect("mkdir");
    commit(d, &[("src.txt", "another change\n")], "another change");
    let (ok, _) = verify(d);
    assert!(ok);
    assert!(!stale.exists(), "swept");
}

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|r| r.count()).unwrap_or(0)
}

#[test]
fn cargo_tests_the_change_repaired_are_recorded_by_id() {
    let lib = |body: &str| {
        format!("pub fn parse(s: &str) -> i64 {{\n    {body}\n}}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn parses() {{\n        assert_eq!(super::parse(\"2\"), 2);\n    }}\n\n    #[test]\n    fn adds() {{\n        assert_eq!(1 + 1, 2);\n    }}\n}}\n")
    };
    let dir = project(
        "cargo test --offline",
        &[
            (".gitignore", "target/\nCargo.lock\n"),
            (
                "Cargo.toml",
                "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            ("src/lib.rs", &lib("let _ = s;\n    0")),
        ],
    );
    let d = dir.path();
    commit(
        d,
        &[("src/lib.rs", &lib("s.parse().unwrap_or(0)"))],
        "parse numbers",
    );
    let (ok, report) = verify(d);
    assert!(ok, "{report}");
    let base = recorded_baseline(d);
    assert_eq!(base["runner"], "cargo test");
    assert_eq!(ids(&base, "fail_to_pass"), ["tests::parses"]);
}

#[test]
fn go_tests_the_change_repaired_are_recorded_by_id() {
    require("go");
    let code = |body: &str| format!("package calc\n\nfunc Parse(s string) int {{\n\t{body}\n}}\n");
    let dir = project(
        "go test ./...",
        &[
            ("go.mod", "module example.com/calc\n\ngo 1.19\n"),
            ("calc.go", &code("return 0")),
            (
                "calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestParse(t *testing.T) {\n\tif Parse(\"2\") != 2 {\n\t\tt.Fatal(\"want 2\")\n\t}\n}\n\nfunc TestAdds(t *testing.T) {\n\tif 1+1 != 2 {\n\t\tt.Fatal(\"math\")\n\t}\n}\n",
            ),
        ],
    );
    let d = dir.path();
    commit(
        d,
        &[(
            "calc.go",
            "package calc\n\nimport \"strconv\"\n\nfunc Parse(s string) int {\n\tn, _ := strconv.Atoi(s)\n\treturn n\n}\n",
        )],
        "parse numbers",
    );
    let (ok, report) = verify(d);
    assert!(ok, "{report}");
    let base = recorded_baseline(d);
    assert_eq!(base["runner"], "go test");
    assert_eq!(ids(&base, "fail_to_pass"), ["example.com/calc.TestParse"]);
}

#[test]
fn jest_tests_the_change_repaired_are_recorded_by_id() {
    require("jest");
    let dir = project(
        "jest",
        &[
            (".gitignore", "node_modules/\n"),
            ("package.json", "{\"name\": \"calc\", \"private\": true}\n"),
            ("calc.js", "exports.parse = () => 0;\n"),
            (
                "calc.test.js",
                "const { parse } = require('./calc');\n\ndescribe('parse', () => {\n  test('reads numbers', () => {\n    expect(parse('2')).toBe(2);\n  });\n  test('adds', () => {\n    expect(1 + 1).toBe(2);\n  });\n});\n",
            ),
        ],
    );
    let d = dir.path();
    commit(
        d,
        &[("calc.js", "exports.parse = (s) => Number(s);\n")],
        "parse numbers",
    );
    let (ok, report) = verify(d);
    assert!(ok, "{report}");
    let base = recorded_baseline(d);
    assert_eq!(base["runner"], "jest");
    assert_eq!(
        ids(&base, "fail_to_pass"),
        ["calc.test.js › parse › reads numbers"]
    );
}

#[test]
fn a_formatter_runs_in_check_mode_and_leaves_the_tree_as_it_was() {
    let messy = "pub fn parse(  s:&str)->i64{ s.len() as i64 }\n";
    let config = "validation:\n  commands:\n    lint: cargo fmt\n";
    let dir = checkout(Some(config));
    let d = dir.path();
    ok_as(
        d,
        "human:maintainer",
        &[
            "board",
            "add",
            "L1",
            "--title",
            "tidy",
            "--validation",
            "lint",
        ],
    );
    commit(
        d,
        &[
            (".gitignore", "target/\nCargo.lock\n"),
            (
                "Cargo.toml",
                "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            ("src/lib.rs", messy),
        ],
        "messy code",
    );
    let out = navin_as(d, AGENT, &["--json", "board", "verify", "L1"], "");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(!out.status.success(), "unformatted code is red: {report}");
    assert_eq!(
        report["runs"][0]["command"], "cargo fmt --check",
        "run in check mode"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("src/lib.rs")).expect("read"),
        messy,
        "nothing was rewritten"
    );
}

#[test]
fn a_command_that_can_never_run_is_refused_when_the_mission_is_made_and_at_verify() {
    let broken = "validation:\n  commands:\n    test: go -C web test ./...\n";
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q"]);
    write(
        d,
        &[(".github/navin.yml", broken), ("go.mod", "module x\n")],
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "init"]);
    let err = refused_as(d, "human:maintainer", &["ledger", "init", "--goal", "Ship"]);
    assert!(
        err.contains("\"web\"") && err.contains("does not have"),
        "{err}"
    );
    // A step's own command is checked when it is added.
    let dir = checkout(None);
    let d = dir.path();
    let err = refused_as(
        d,
        "human:maintainer",
        &[
            "board",
            "add",
            "S3",
            "--title",
            "api",
            "--validation",
            "test",
            "--command",
            "npm test --workspace api",
        ],
    );
    assert!(err.contains("declares no workspaces"), "{err}");
}
