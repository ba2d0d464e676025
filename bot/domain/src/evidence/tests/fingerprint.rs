//! Failure fingerprints from check runs: GitHub's `check_run` object (the webhook
//! example from @octokit/webhooks-examples) with the `output` a test-report step writes
//! for cargo test, pytest and jest failures. Two runs of the same failure on different
//! heads share a fingerprint; another failing test or another check does not.

use crate::evidence::fingerprint::{fingerprint, normalize};
use crate::evidence::{CheckObservation, CheckRunPayload};

const CHECK_RUN_COMPLETED: &str =
    include_str!("../../../../../tests/fixtures/webhooks/check_run.completed.json");

/// The example check run, failed, named `name`, with `summary` and `text` as its output.
fn failed_run(name: &str, summary: &str, text: &str) -> CheckObservation {
    let mut v: serde_json::Value = serde_json::from_str(CHECK_RUN_COMPLETED).expect("JSON");
    let run = &mut v["check_run"];
    run["name"] = name.into();
    run["conclusion"] = "failure".into();
    run["output"]["title"] = format!("{name} failed").into();
    run["output"]["summary"] = summary.into();
    run["output"]["text"] = text.into();
    let payload: CheckRunPayload = serde_json::from_value(run.clone()).expect("a check run");
    CheckObservation::from_check_run(&payload)
}

fn fp(runs: &[CheckObservation]) -> String {
    let failed: Vec<(String, String)> = runs
        .iter()
        .map(|r| (r.name.clone(), r.output.clone()))
        .collect();
    fingerprint(&failed).expect("something failed")
}

const CARGO_A: &str = "running 12 tests
test parser::tests::parses_empty ... ok
test parser::tests::rejects_tabs ... FAILED

failures:

---- parser::tests::rejects_tabs stdout ----
thread 'parser::tests::rejects_tabs' panicked at src/parser.rs:88:9:
assertion `left == right` failed
  left: 3
 right: 4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

failures:
    parser::tests::rejects_tabs

test result: FAILED. 11 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.42s
error: test failed, to rerun pass `-p parser --lib`
Error: Process completed with exit code 101. (9f2c1e7d5b3a at /tmp/.tmpA1b2C3/target)";

const CARGO_B: &str = "running 13 tests
test parser::tests::parses_empty ... ok
test parser::tests::rejects_tabs ... FAILED

failures:

---- parser::tests::rejects_tabs stdout ----
thread 'parser::tests::rejects_tabs' panicked at src/parser.rs:91:9:
assertion `left == right` failed
  left: 3
 right: 4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

failures:
    parser::tests::rejects_tabs

test result: FAILED. 12 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.07s
error: test failed, to rerun pass `-p parser --lib`
Error: Process completed with exit code 101. (04be77aa0c1f at /tmp/.tmpZ9y8X7/target)";

const PYTEST_A: &str =
    "============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.2.1, pluggy-1.5.0
rootdir: /home/runner/work/app/app
collected 57 items

tests/test_api.py ....F..                                                [ 12%]

=================================== FAILURES ===================================
_______________________________ test_create_user _______________________________
tmp_path = PosixPath('/tmp/pytest-of-runner/pytest-0/test_create_user0')

    def test_create_user(tmp_path):
>       assert create_user(tmp_path / \"db\").id == 1
E       AssertionError: assert 2 == 1

tests/test_api.py:41: AssertionError
=========================== short test summary info ============================
FAILED tests/test_api.py::test_create_user - AssertionError: assert 2 == 1
========================= 1 failed, 56 passed in 3.21s =========================";

const PYTEST_B: &str =
    "============================= test session starts ==============================
platform linux -- Python 3.12.4, pytest-8.2.2, pluggy-1.5.0
rootdir: /home/runner/work/app/app
collected 58 items

tests/test_api.py ....F...                                               [ 13%]

=================================== FAILURES ===================================
_______________________________ test_create_user _______________________________
tmp_path = PosixPath('/tmp/pytest-of-runner/pytest-3/test_create_user0')

    def test_create_user(tmp_path):
>       assert create_user(tmp_path / \"db\").id == 1
E       AssertionError: assert 2 == 1

tests/test_api.py:44: AssertionError
=========================== short test summary info ============================
FAILED tests/test_api.py::test_create_user - AssertionError: assert 2 == 1
========================= 1 failed, 57 passed in 2.87 seconds ==================";

const JEST_A: &str = "FAIL src/cart.test.ts (5.123 s)
  ● cart › applies the discount

    expect(received).toBe(expected) // Object.is equality

    Expected: 90
    Received: 100

      12 |   const cart = new Cart([{ price: 100 }]);
      13 |   cart.discount(10);
    > 14 |   expect(cart.total()).toBe(90);
         |                        ^
      15 | });

      at Object.<anonymous> (src/cart.test.ts:14:24)

Test Suites: 1 failed, 8 passed, 9 total
Tests:       1 failed, 41 passed, 42 total
Time:        7.84 s
Ran all test suites.";

const JEST_B: &str = "FAIL src/cart.test.ts (4.002 s)
  ● cart › applies the discount

    expect(received).toBe(expected) // Object.is equality

    Expected: 90
    Received: 100

      13 |   const cart = new Cart([{ price: 100 }]);
      14 |   cart.discount(10);
    > 15 |   expect(cart.total()).toBe(90);
         |                        ^
      16 | });

      at Object.<anonymous> (src/cart.test.ts:15:24)

Test Suites: 1 failed, 9 passed, 10 total
Tests:       1 failed, 44 passed, 45 total
Time:        6.1 s
Ran all test suites.";

#[test]
fn the_same_failure_on_another_head_has_the_same_fingerprint() {
    for (tool, a, b) in [
        ("cargo test", CARGO_A, CARGO_B),
        ("pytest", PYTEST_A, PYTEST_B),
        ("jest", JEST_A, JEST_B),
    ] {
        let first = fp(&[failed_run("ci/test", "1 failed", a)]);
        let second = fp(&[failed_run("ci/test", "1 failed", b)]);
        assert_eq!(
            first, second,
            "{tool}: counts, durations, lines, SHAs and temp dirs differ"
        );
        assert!(first.starts_with("fp:") && first.len() == 19, "{first}");
    }
}

#[test]
fn another_failing_test_or_check_has_another_fingerprint() {
    let tabs = fp(&[failed_run("ci/test", "1 failed", CARGO_A)]);
    let spaces = fp(&[failed_run(
        "ci/test",
        "1 failed",
        &CARGO_A.replace("rejects_tabs", "rejects_spaces"),
    )]);
    assert_ne!(tabs, spaces, "another test failed");
    let lint = fp(&[failed_run("ci/lint", "1 failed", CARGO_A)]);
    assert_ne!(tabs, lint, "another check failed");
    let jest = fp(&[failed_run("ci/test", "1 failed", JEST_A)]);
    let python = fp(&[failed_run("ci/test", "1 failed", PYTEST_A)]);
    assert_ne!(jest, python);
}

#[test]
fn the_order_of_the_failed_checks_does_not_matter() {
    let a = failed_run("ci/test", "", JEST_A);
    let b = failed_run("ci/lint", "", "src/cart.ts:3:1 error no-unused-vars");
    assert_eq!(fp(&[a.clone(), b.clone()]), fp(&[b, a]));
}

#[test]
fn normalization_replaces_what_varies_between_runs() {
    for (input, want) in [
        ("finished in 0.42s", "finished in <dur>"),
        ("Time:        7.84 s", "Time: <dur>"),
        ("in 3 minutes", "in <dur>"),
        ("head 9f2c1e7d5b3a0f11 failed", "head <sha> failed"),
        ("/tmp/.tmpA1b2C3/target/debug", "<tmp>"),
        (
            "C:\\Users\\runneradmin\\AppData\\Local\\Temp\\xyz\\a.txt",
            "<tmp>",
        ),
        ("/home/runner/work/_temp/7c0e.sh: line 2", "<tmp>: line #"),
        ("src/parser.rs:88:9", "src/parser.rs:#:#"),
        ("2026-12-02T01:02:03Z", "#-#-#T#:#:#Z"),
        ("  many   spaces\n\tand lines ", "many spaces and lines"),
        ("==== 1 failed ====", "= # failed ="),
    ] {
        assert_eq!(normalize(input), want, "{input:?}");
    }
}

#[test]
fn nothing_failed_has_no_fingerprint() {
    assert_eq!(fingerprint(&[]), None);
}

/// GitHub's own example of `GET /repos/{o}/{r}/check-runs/{id}/annotations`
/// (@octokit/openapi 23.0.2, `checks/list-annotations`), in the fixture the fake serves.
const OPENAPI_EXAMPLES: &str =
    include_str!("../../../../../tests/fixtures/openapi/response-examples.json");

fn annotations(items: &[(&str, u64, &str, &str)]) -> Vec<crate::evidence::annotation::Annotation> {
    let examples: serde_json::Value = serde_json::from_str(OPENAPI_EXAMPLES).expect("JSON");
    let template = examples["examples"]["checks/list-annotations"][0].clone();
    items
        .iter()
        .map(|(path, line, title, message)| {
            let mut a = template.clone();
            a["path"] = (*path).into();
            a["start_line"] = (*line).into();
            a["end_line"] = (*line).into();
            a["title"] = (*title).into();
            a["message"] = (*message).into();
            serde_json::from_value(a).expect("an annotation")
        })
        .collect()
}

/// A red run whose failure is only in its annotations (a reporter that writes a bare
/// summary), as the engine assembles it: output, then one line per annotation.
fn annotated(name: &str, items: &[(&str, u64, &str, &str)]) -> CheckObservation {
    let mut run = failed_run(name, "1 failed", "");
    for line in crate::evidence::annotation::annotation_lines(&annotations(items)) {
        run.output.push('\n');
        run.output.push_str(&line);
    }
    run
}

#[test]
fn the_example_annotation_reads_as_path_title_and_message() {
    let examples: serde_json::Value = serde_json::from_str(OPENAPI_EXAMPLES).expect("JSON");
    let list: Vec<crate::evidence::annotation::Annotation> =
        serde_json::from_value(examples["examples"]["checks/list-annotations"].clone())
            .expect("the example parses");
    assert_eq!(
        crate::evidence::annotation::annotation_lines(&list),
        ["README.md: Spell Checker: Check your spelling for 'banaas'."]
    );
}

/// One annotation: path, line, title (the test), message.
type Item = (&'static str, u64, &'static str, &'static str);
/// A reporter's check, its failure, the same failure again, and another failure.
type Case = (&'static str, [Item; 1], [Item; 1], [Item; 1]);

#[test]
fn annotations_tell_failures_apart_that_the_summary_does_not() {
    let table: [Case; 3] = [
        (
            "cargo test",
            [(
                "src/parser.rs",
                88,
                "parser::tests::rejects_tabs",
                "assertion `left == right` failed\n  left: 3\n right: 4",
            )],
            [(
                "src/parser.rs",
                91,
                "parser::tests::rejects_tabs",
                "assertion `left == right` failed\n  left: 5\n right: 6",
            )],
            [(
                "src/lexer.rs",
                12,
                "lexer::tests::keeps_newlines",
                "assertion failed: tokens.is_empty()",
            )],
        ),
        (
            "pytest",
            [(
                "tests/test_api.py",
                41,
                "test_create_user",
                "AssertionError: assert 500 == 201",
            )],
            [(
                "tests/test_api.py",
                44,
                "test_create_user",
                "AssertionError: assert 502 == 201",
            )],
            [(
                "tests/test_api.py",
                60,
                "test_delete_user",
                "KeyError: 'id'",
            )],
        ),
        (
            "jest",
            [(
                "src/cart.test.ts",
                17,
                "Cart › totals",
                "expect(received).toBe(expected)\n\nExpected: 30\nReceived: 29.99",
            )],
            [(
                "src/cart.test.ts",
                19,
                "Cart › totals",
                "expect(received).toBe(expected)\n\nExpected: 31\nReceived: 30.99",
            )],
            [(
                "src/cart.test.ts",
                40,
                "Cart › discounts",
                "TypeError: Cannot read properties of undefined (reading 'rate')",
            )],
        ),
    ];
    for (check, first, again, other) in table {
        let a = fp(&[annotated(check, &first)]);
        let b = fp(&[annotated(check, &again)]);
        let c = fp(&[annotated(check, &other)]);
        assert_eq!(
            a, b,
            "{check}: the same failure, moved and with other numbers"
        );
        assert_ne!(a, c, "{check}: another failing test");
        assert_ne!(
            fp(&[failed_run(check, "1 failed", "")]),
            c,
            "{check}: the annotations are part of the fingerprint"
        );
    }
}
