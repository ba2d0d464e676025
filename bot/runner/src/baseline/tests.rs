//! Holding a head's run against its base's: which failures are new, which were there, what was repaired.

use super::*;

const PYTEST_BASE: &str = "\
PASSED t.py::test_adds
FAILED t.py::test_old - assert False
FAILED t.py::test_parses - NotImplementedError
========= 2 failed, 1 passed in 0.05s =========
";

fn base(output: &str, exit: i32) -> BaseOutcome {
    BaseOutcome {
        base: "b".repeat(40),
        exit_code: Some(exit),
        timed_out: false,
        output_sha256: String::new(),
        report: results::parse(output),
        cached: false,
    }
}

#[test]
fn failures_on_both_sides_are_pre_existing_and_a_repaired_test_is_fail_to_pass() {
    let head = results::parse(
        "PASSED t.py::test_adds\nPASSED t.py::test_parses\nFAILED t.py::test_old - assert False\n= 1 failed, 2 passed in 0.04s =\n",
    );
    let held = hold(head.as_ref(), &base(PYTEST_BASE, 1));
    assert_eq!(held.runner.as_deref(), Some("pytest"));
    assert_eq!(held.pre_existing, ["t.py::test_old"]);
    assert_eq!(held.fail_to_pass, ["t.py::test_parses"]);
    assert!(held.new_failures.is_empty());
    assert!(held.excuses(), "nothing new failed and the base was red");
    let said = describe(&held);
    assert!(
        said.contains("1 failing on the base already: t.py::test_old"),
        "{said}"
    );
    assert!(said.contains("1 fail-to-pass: t.py::test_parses"), "{said}");
}

#[test]
fn a_test_failing_only_on_the_head_is_new_and_excuses_nothing() {
    let head = results::parse(
        "FAILED t.py::test_adds - assert 2 == 3\nFAILED t.py::test_old - assert False\n= 2 failed in 0.04s =\n",
    );
    let held = hold(head.as_ref(), &base(PYTEST_BASE, 1));
    assert_eq!(held.new_failures, ["t.py::test_adds"]);
    assert!(!held.excuses());
    assert!(describe(&held).contains("1 new failure(s): t.py::test_adds"));
}

#[test]
fn counts_alone_a_different_runner_or_an_unread_side_fall_back_to_exit_codes() {
    let counts_only = "7 passed, 1 failed\n";
    let cargo = "test tests::adds ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
    let pytest_head = results::parse("FAILED t.py::test_old - x\n= 1 failed in 0.01s =\n");
    for (head, on_base) in [
        (results::parse(counts_only), base(counts_only, 1)),
        (results::parse(cargo), base(PYTEST_BASE, 1)),
        (None, base(PYTEST_BASE, 1)),
        (pytest_head, base("segfault\n", 139)),
    ] {
        let held = hold(head.as_ref(), &on_base);
        assert_eq!(held.runner, None, "{head:?}");
        assert!(!held.excuses());
        assert!(describe(&held).contains("could not be read test by test"));
    }
}

#[test]
fn a_green_base_excuses_no_red_head_even_with_the_same_failures_named() {
    // A base run that exited 0 while naming a failure (an allowed-failure marker, say)
    // does not make the head's failure of that test pre-existing enough to pass.
    let head = results::parse("FAILED t.py::test_old - x\n= 1 failed in 0.01s =\n");
    let held = hold(head.as_ref(), &base(PYTEST_BASE, 0));
    assert!(!held.excuses());
}

#[test]
fn ids_are_capped_so_a_base_with_thousands_of_failures_stays_small() {
    let many: String = (0..500)
        .map(|i| format!("FAILED t.py::test_{i:03} - x\n"))
        .collect::<String>()
        + "= 500 failed in 1.00s =\n";
    let held = hold(results::parse(&many).as_ref(), &base(&many, 1));
    assert_eq!(held.pre_existing.len(), MAX_IDS);
    assert!(held.excuses());
}

#[test]
fn jest_ids_drop_the_dot_slash_it_writes_before_a_root_file() {
    let out = "PASS ./calc.test.js\n  parse\n    ✓ reads numbers (2 ms)\n\nTests:       1 passed, 1 total\n";
    let r = results::parse(out).expect("jest output");
    assert_eq!(r.runner, Runner::Jest);
    assert!(
        r.passed.contains("calc.test.js › parse › reads numbers"),
        "{r:?}"
    );
}
