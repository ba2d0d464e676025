//! The parsers held to output as the real runners print it.

use super::*;

pub(super) fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

pub(super) fn parsed(output: &str) -> TestReport {
    parse(output).expect("the output is recognised")
}

const PYTEST_RA: &str = r#"============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0
rootdir: /home/u/proj
collected 4 items

tests/test_x.py .F.s                                                     [100%]

=================================== FAILURES ===================================
____________________________________ test_b ____________________________________

    def test_b():
>       assert add(1, 1) == 3
E       assert 2 == 3
E        +  where 2 = add(1, 1)

tests/test_x.py:8: AssertionError
____________________________________ test_d ____________________________________

    def test_d():
>       raise ValueError("boom")
E       ValueError: boom

tests/test_x.py:14: ValueError
=========================== short test summary info ============================
PASSED tests/test_x.py::test_a
PASSED tests/test_x.py::test_c
SKIPPED [1] tests/test_x.py:11: not on linux
FAILED tests/test_x.py::test_b - assert 2 == 3
FAILED tests/test_x.py::test_d - ValueError: boom
==================== 2 failed, 2 passed, 1 skipped in 0.12s ====================
"#;

#[test]
fn pytest_ra_names_passes_and_failures_and_counts_the_summary() {
    let r = parsed(PYTEST_RA);
    assert_eq!(r.runner, Runner::Pytest);
    assert_eq!(
        r.passed,
        set(&["tests/test_x.py::test_a", "tests/test_x.py::test_c"])
    );
    assert_eq!(
        r.failed,
        set(&["tests/test_x.py::test_b", "tests/test_x.py::test_d"])
    );
    assert_eq!(
        r.counts,
        Some(Counts {
            passed: 2,
            failed: 2,
            skipped: 1
        })
    );
}

#[test]
fn pytest_first_failure_is_the_first_block_under_failures() {
    let first = parsed(PYTEST_RA).first_failure.expect("a failure block");
    assert!(
        first.starts_with("____") && first.contains("test_b"),
        "{first}"
    );
    assert!(first.contains("E       assert 2 == 3"), "{first}");
    assert!(
        !first.contains("test_d") && !first.contains("boom"),
        "{first}"
    );
}

#[test]
fn pytest_verbose_lines_and_parametrised_ids() {
    let out = "\
tests/test_x.py::test_a PASSED                                           [ 25%]
tests/test_x.py::test_p[1-one] PASSED                                    [ 50%]
tests/test_x.py::test_p[2 two] FAILED                                    [ 75%]
tests/test_x.py::test_s SKIPPED (no db)                                  [100%]

=========================== short test summary info ============================
FAILED tests/test_x.py::test_p[2 two] - assert 'two' == 'deux'
========================= 1 failed, 2 passed, 1 skipped in 0.05s =========================
";
    let r = parsed(out);
    assert_eq!(
        r.passed,
        set(&["tests/test_x.py::test_a", "tests/test_x.py::test_p[1-one]"])
    );
    assert_eq!(r.failed, set(&["tests/test_x.py::test_p[2 two]"]));
    // No tracebacks were printed: the summary line is the message.
    assert_eq!(
        r.first_failure.as_deref(),
        Some("FAILED tests/test_x.py::test_p[2 two] - assert 'two' == 'deux'")
    );
}

#[test]
fn pytest_collection_error_counts_as_a_failure_of_its_file() {
    let out = "\
==================================== ERRORS ====================================
_______________________ ERROR collecting tests/test_y.py _______________________
ImportError while importing test module '/home/u/proj/tests/test_y.py'.
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/test_y.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.08s ===============================
";
    let r = parsed(out);
    assert_eq!(r.failed, set(&["tests/test_y.py"]));
    assert_eq!(r.counts.map(|c| c.failed), Some(1));
    assert!(r.first_failure.expect("block").contains("No module named"));
}

const CARGO_TWO_BINARIES: &str = "\
   Compiling calc v0.1.0 (/home/u/calc)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.02s
     Running unittests src/lib.rs (target/debug/deps/calc-0f1e2d3c4b5a6978)

running 3 tests
test ops::tests::adds ... ok
test ops::tests::subtracts ... FAILED
test ops::tests::slow ... ignored, needs a network

failures:

---- ops::tests::subtracts stdout ----

thread 'ops::tests::subtracts' panicked at src/ops.rs:21:9:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    ops::tests::subtracts

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/cli.rs (target/debug/deps/cli-8a7b6c5d4e3f2a1b)

running 2 tests
test parses_flags ... ok
test ops::tests::adds ... ok

test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `--lib`
";

#[test]
fn cargo_test_over_two_binaries_names_each_test_once_and_sums_the_counts() {
    let r = parsed(CARGO_TWO_BINARIES);
    assert_eq!(r.runner, Runner::CargoTest);
    assert_eq!(r.passed, set(&["ops::tests::adds", "parses_flags"]));
    assert_eq!(r.failed, set(&["ops::tests::subtracts"]));
    assert_eq!(
        r.counts,
        Some(Counts {
            passed: 3,
            failed: 1,
            skipped: 1
        })
    );
    let first = r.first_failure.expect("a failure block");
    assert!(
        first.starts_with("---- ops::tests::subtracts stdout ----"),
        "{first}"
    );
    assert!(
        first.contains("right: 2") && !first.contains("failures:"),
        "{first}"
    );
}

#[test]
fn cargo_test_should_panic_and_doc_tests_keep_their_paths() {
    let out = "\
running 2 tests
test tests::rejects_zero - should panic ... FAILED
test src/lib.rs - add (line 5) ... ok

failures:

---- tests::rejects_zero stdout ----
note: test did not panic as expected

failures:
    tests::rejects_zero

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
    let r = parsed(out);
    assert_eq!(r.failed, set(&["tests::rejects_zero"]));
    assert_eq!(r.passed, set(&["src/lib.rs - add (line 5)"]));
}

const NEXTEST: &str = "\
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.05s
────────────
 Nextest run ID 4c1a2b3c-0000-4000-8000-000000000000 with nextest profile: default
    Starting 3 tests across 2 binaries (1 test skipped)
        PASS [   0.004s] calc::bin/calc cli::parses_flags
        FAIL [   0.005s] calc ops::tests::subtracts
──── STDOUT:             calc ops::tests::subtracts

running 1 test
test ops::tests::subtracts ... FAILED

failures:

failures:
    ops::tests::subtracts

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.00s

──── STDERR:             calc ops::tests::subtracts
thread 'ops::tests::subtracts' panicked at src/ops.rs:21:9:
assertion `left == right` failed
  left: 1
 right: 2

        PASS [   0.006s] calc ops::tests::adds
────────────
     Summary [   0.012s] 3 tests run: 2 passed, 1 failed, 1 skipped
        FAIL [   0.005s] calc ops::tests::subtracts
error: test run failed
";

#[test]
fn nextest_ids_are_binary_and_test_and_its_embedded_libtest_output_is_not_a_second_run() {
    let r = parsed(NEXTEST);
    assert_eq!(r.runner, Runner::Nextest);
    assert_eq!(
        r.passed,
        set(&["calc::bin/calc cli::parses_flags", "calc ops::tests::adds"])
    );
    assert_eq!(r.failed, set(&["calc ops::tests::subtracts"]));
    assert_eq!(
        r.counts,
        Some(Counts {
            passed: 2,
            failed: 1,
            skipped: 1
        })
    );
    let first = r.first_failure.expect("a failure block");
    assert!(
        first.starts_with("FAIL [   0.005s] calc ops::tests::subtracts")
            || first.contains("FAIL [   0.005s]")
    );
    assert!(
        first.contains("right: 2") && !first.contains("ops::tests::adds"),
        "{first}"
    );
}

#[test]
fn nextest_retried_test_that_passes_in_the_end_passed() {
    let out = "\
    Starting 1 test across 1 binary
   TRY 1 FAIL [   0.003s] calc net::flaky
  RETRY 2/2 [         ] calc net::flaky
   TRY 2 PASS [   0.002s] calc net::flaky
     Summary [   0.006s] 1 test run: 1 passed (1 flaky), 0 skipped
";
    let r = parsed(out);
    assert_eq!(r.passed, set(&["calc net::flaky"]));
    assert!(r.failed.is_empty());
}

const GO_VERBOSE: &str = "=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
=== RUN   TestSub/case_1
    calc_test.go:21: Sub(2, 1) = 3, want 1
=== RUN   TestSub/case_2
--- FAIL: TestSub (0.00s)
    --- FAIL: TestSub/case_1 (0.00s)
    --- PASS: TestSub/case_2 (0.00s)
FAIL
FAIL\texample.com/calc\t0.004s
=== RUN   TestParse
--- PASS: TestParse (0.00s)
PASS
ok  \texample.com/calc/parse\t0.003s
FAIL
";

#[test]
fn go_test_verbose_names_tests_and_subtests_under_their_package() {
    let r = parsed(GO_VERBOSE);
    assert_eq!(r.runner, Runner::GoTest);
    assert_eq!(
        r.passed,
        set(&[
            "example.com/calc.TestAdd",
            "example.com/calc.TestSub/case_2",
            "example.com/calc/parse.TestParse",
        ])
    );
    assert_eq!(
        r.failed,
        set(&[
            "example.com/calc.TestSub",
            "example.com/calc.TestSub/case_1"
        ])
    );
    assert_eq!(r.counts, None);
    let first = r.first_failure.expect("a failure block");
    assert!(first.contains("Sub(2, 1) = 3, want 1"), "{first}");
    assert!(first.contains("--- FAIL: TestSub/case_1"), "{first}");
}

#[test]
fn go_test_without_v_names_only_failures_and_packages_that_did_not_build() {
    let out = "--- FAIL: TestSub (0.00s)
    calc_test.go:21: Sub(2, 1) = 3, want 1
FAIL
FAIL\texample.com/calc\t0.004s
ok  \texample.com/calc/parse\t(cached)
# example.com/calc/fmt [example.com/calc/fmt.test]
fmt/fmt_test.go:9:2: undefined: Format
FAIL\texample.com/calc/fmt [build failed]
?   \texample.com/calc/cmd\t[no test files]
FAIL
";
    let r = parsed(out);
    assert!(r.passed.is_empty());
    assert_eq!(
        r.failed,
        set(&["example.com/calc.TestSub", "example.com/calc/fmt"])
    );
    assert_eq!(
        r.first_failure.as_deref(),
        Some("--- FAIL: TestSub (0.00s)\n    calc_test.go:21: Sub(2, 1) = 3, want 1")
    );
}

#[test]
fn go_test_all_ok_is_recognised_with_nothing_failed() {
    let r = parsed("ok  \texample.com/calc\t0.004s\nok  \texample.com/calc/parse\t(cached)\n");
    assert_eq!(r.runner, Runner::GoTest);
    assert!(r.failed.is_empty() && r.passed.is_empty());
}

#[test]
fn generic_summary_line_gives_counts_only() {
    let r = parsed("running the suite\nResults: 12 passed, 2 failed, 1 skipped\n");
    assert_eq!(r.runner, Runner::Generic);
    assert!(r.passed.is_empty() && r.failed.is_empty());
    assert_eq!(
        r.counts,
        Some(Counts {
            passed: 12,
            failed: 2,
            skipped: 1
        })
    );
    assert_eq!(
        parsed("3 passed, 0 failed").counts.map(|c| c.passed),
        Some(3)
    );
}

#[test]
fn unrecognised_output_is_none_never_green() {
    assert_eq!(parse(""), None);
    assert_eq!(parse("Segmentation fault (core dumped)\n"), None);
    assert_eq!(parse("make: *** [Makefile:12: test] Error 2\n"), None);
    assert_eq!(
        parse("error[E0425]: cannot find value `x` in this scope\n --> src/lib.rs:3:5\n"),
        None
    );
    assert_eq!(
        parse("Everything looks ok 2 me\nall good: 5 passed\n"),
        None
    );
}

#[test]
fn coloured_output_parses_like_plain() {
    let out = "\x1b[1m\x1b[31mFAILED\x1b[0m tests/test_x.py::\x1b[1mtest_b\x1b[0m - assert 2 == 3\n\
               \x1b[31m==== \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m3 passed\x1b[0m\x1b[31m in 0.12s\x1b[0m\x1b[31m ====\x1b[0m\n";
    let r = parsed(out);
    assert_eq!(r.failed, set(&["tests/test_x.py::test_b"]));
    assert_eq!(r.counts.map(|c| (c.passed, c.failed)), Some((3, 1)));
}

#[test]
fn odd_test_ids_are_escaped_and_clipped() {
    assert_eq!(clean_id("a\u{7}b\tc"), "a\\u{7}b\\u{9}c");
    let long = "x".repeat(1000);
    let clipped = clean_id(&long);
    assert_eq!(clipped.chars().count(), ID_CHARS);
    assert!(clipped.ends_with('…'));
    let out = format!(
        "test tests::{} ... FAILED\ntest tests::bell\u{7}ing ... ok\n",
        "y".repeat(500)
    );
    let r = parsed(&out);
    assert!(r.failed.iter().all(|id| id.chars().count() <= ID_CHARS));
    assert_eq!(r.passed, set(&["tests::bell\\u{7}ing"]));
}

#[test]
fn a_test_both_passed_and_failed_counts_as_failed() {
    let out = "tests/test_db.py::test_q PASSED\ntests/test_db.py::test_q ERROR\n";
    let r = parsed(out);
    assert!(r.passed.is_empty());
    assert_eq!(r.failed, set(&["tests/test_db.py::test_q"]));
}

#[test]
fn long_failure_blocks_are_clipped_keeping_both_ends() {
    let mut out = String::from("---- t stdout ----\nthread 't' panicked at src/lib.rs:1:1:\n");
    for i in 0..500 {
        out.push_str(&format!("noise line {i}\n"));
    }
    out.push_str("the last words\n\nfailures:\n    t\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n");
    let first = parsed(&out).first_failure.expect("block");
    assert!(first.len() <= FAILURE_BYTES + 8, "{}", first.len());
    assert!(
        first.contains("panicked at") && first.ends_with("the last words"),
        "{first}"
    );
}

fn report(passed: &[&str], failed: &[&str]) -> TestReport {
    TestReport {
        runner: Runner::Pytest,
        passed: set(passed),
        failed: set(failed),
        counts: None,
        first_failure: None,
    }
}

#[test]
fn compare_separates_new_failures_from_pre_existing_and_finds_fixes() {
    let base = report(&["a", "b"], &["c", "d"]);
    let head = report(&["a", "c", "new"], &["b", "d", "e"]);
    let cmp = compare(&base, &head);
    assert_eq!(cmp.new_failures, set(&["b", "e"]));
    assert_eq!(cmp.pre_existing, set(&["d"]));
    assert_eq!(cmp.fail_to_pass, set(&["c", "new"]));
}

#[test]
fn compare_does_not_count_a_test_merely_absent_from_head_failures_as_fixed() {
    // Without -rA, head named no passes: nothing is known to have started passing.
    let base = report(&[], &["c"]);
    let head = report(&[], &[]);
    assert!(compare(&base, &head).fail_to_pass.is_empty());
}

fn argv(words: &str) -> Vec<String> {
    words.split_whitespace().map(str::to_owned).collect()
}

#[test]
fn listing_args_adds_the_flag_that_names_every_test() {
    assert_eq!(
        listing_args(&argv("pytest -q tests")),
        Some(argv("pytest -rA -q tests"))
    );
    assert_eq!(
        listing_args(&argv("python3 -m pytest -x")),
        Some(argv("python3 -m pytest -rA -x"))
    );
    assert_eq!(
        listing_args(&argv("python -m pytest")),
        Some(argv("python -m pytest -rA"))
    );
    assert_eq!(
        listing_args(&argv("go test ./... -run TestSub")),
        Some(argv("go test -v ./... -run TestSub"))
    );
    assert_eq!(
        listing_args(&argv("npx jest src -- --ci")),
        Some(argv("npx jest --verbose src -- --ci"))
    );
    assert_eq!(listing_args(&argv("jest")), Some(argv("jest --verbose")));
    assert_eq!(
        listing_args(&argv("/usr/local/bin/pytest")),
        Some(argv("/usr/local/bin/pytest -rA"))
    );
}

#[test]
fn listing_args_is_none_when_the_flag_is_there_or_the_runner_lists_anyway() {
    for line in [
        "pytest -rA",
        "pytest -rfEA tests",
        "python -m pytest -r A",
        "go test -v ./...",
        "go test -json ./...",
        "npx jest --verbose",
        "jest --verbose=false",
        "cargo test",
        "cargo nextest run",
        "npx vitest run",
        "node --test",
        "npx mocha",
        "python -m unittest",
        "go build ./...",
        "npx eslint .",
    ] {
        assert_eq!(listing_args(&argv(line)), None, "{line}");
    }
    assert_eq!(listing_args(&[]), None);
}
