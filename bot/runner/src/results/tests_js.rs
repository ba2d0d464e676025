//! The JavaScript runners' output read into tests: jest, vitest, node's test runner and mocha.

use super::tests::{parsed, set};
use super::*;

const JEST: &str = "\
> calc@1.0.0 test
> jest --verbose

PASS src/a.test.js
  Math
    ✓ adds numbers (3 ms)
    ✓ multiplies (1 ms)
FAIL src/b.test.js
  Math
    ✕ subtracts (4 ms)
    nested
      ✓ divides (1 ms)
    ○ skipped rounds
  ✓ top level (1 ms)

  ● Math › subtracts

    expect(received).toBe(expected) // Object.is equality

    Expected: 2
    Received: 1

      3 | describe('Math', () => {
      4 |   test('subtracts', () => {
    > 5 |     expect(2 - 1).toBe(2);
        |                   ^
      6 |   });

      at Object.toBe (src/b.test.js:5:19)

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 1 skipped, 4 passed, 6 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.
";

#[test]
fn jest_ids_are_file_describes_and_title() {
    let r = parsed(JEST);
    assert_eq!(r.runner, Runner::Jest);
    assert_eq!(
        r.passed,
        set(&[
            "src/a.test.js › Math › adds numbers",
            "src/a.test.js › Math › multiplies",
            "src/b.test.js › Math › nested › divides",
            "src/b.test.js › top level",
        ])
    );
    assert_eq!(r.failed, set(&["src/b.test.js › Math › subtracts"]));
    assert_eq!(
        r.counts,
        Some(Counts {
            passed: 4,
            failed: 1,
            skipped: 1
        })
    );
    let first = r.first_failure.expect("a failure block");
    assert!(first.starts_with("  ● Math › subtracts"), "{first}");
    assert!(
        first.contains("Received: 1") && first.contains("src/b.test.js:5:19"),
        "{first}"
    );
    assert!(!first.contains("Test Suites"), "{first}");
}

#[test]
fn jest_without_verbose_still_names_failures_from_their_headers() {
    let out = " PASS  src/a.test.js
 FAIL  src/b.test.js
  ● Math › subtracts

    expect(received).toBe(expected) // Object.is equality

  ● Test suite failed to run

    Cannot find module './missing' from 'src/b.test.js'

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 3 passed, 4 total
";
    let r = parsed(out);
    assert!(r.passed.is_empty());
    assert_eq!(
        r.failed,
        set(&["src/b.test.js", "src/b.test.js › Math › subtracts"])
    );
}

const VITEST_VERBOSE: &str = "
 RUN  v1.6.0 /home/u/calc

 ✓ src/a.test.ts > math > adds 1ms
 ✓ src/a.test.ts > math > multiplies 0ms
 × src/b.test.ts > math > subs 3ms
   → expected 1 to be 2 // Object.is equality
 ✓ src/b.test.ts > math > divides
 ↓ src/b.test.ts > math > rounds

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/b.test.ts > math > subs
AssertionError: expected 1 to be 2 // Object.is equality

- Expected
+ Received

- 2
+ 1

 ❯ src/b.test.ts:9:21
      7|   it('subs', () => {
      8|     expect(1).toBe(1)
      9|     expect(2 - 1).toBe(2)
       |                     ^
     10|   })

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 3 passed | 1 skipped (5)
   Start at  12:00:00
   Duration  312ms (transform 21ms, setup 0ms, collect 30ms, tests 12ms, environment 0ms, prepare 81ms)
";

#[test]
fn vitest_verbose_names_tests_by_file_and_suite_path() {
    let r = parsed(VITEST_VERBOSE);
    assert_eq!(r.runner, Runner::Vitest);
    assert_eq!(
        r.passed,
        set(&[
            "src/a.test.ts > math > adds",
            "src/a.test.ts > math > multiplies",
            "src/b.test.ts > math > divides",
        ])
    );
    assert_eq!(r.failed, set(&["src/b.test.ts > math > subs"]));
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
        first.starts_with(" FAIL  src/b.test.ts > math > subs"),
        "{first}"
    );
    assert!(
        first.contains("expected 1 to be 2") && !first.contains("Test Files"),
        "{first}"
    );
}

#[test]
fn vitest_default_reporter_names_failures_under_their_file() {
    let out = "
 ✓ src/a.test.ts (2 tests) 3ms
 ❯ src/b.test.ts (3 tests | 1 failed) 7ms
   × math > subs 3ms
     → expected 1 to be 2 // Object.is equality

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 4 passed (5)
";
    let r = parsed(out);
    assert_eq!(r.failed, set(&["src/b.test.ts > math > subs"]));
    assert_eq!(r.counts.map(|c| (c.passed, c.failed)), Some((4, 1)));
}

const NODE_TAP: &str = "TAP version 13
# Subtest: Math
    # Subtest: adds
    ok 1 - adds
      ---
      duration_ms: 0.41
      ...
    # Subtest: subtracts
    not ok 2 - subtracts
      ---
      duration_ms: 0.93
      location: '/home/u/calc/test/math.test.js:9:3'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly equal:

        1 !== 2

      code: 'ERR_ASSERTION'
      ...
    1..2
not ok 1 - Math
  ---
  duration_ms: 2.1
  type: 'suite'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  ...
# Subtest: top level
ok 2 - top level
  ---
  duration_ms: 0.3
  ...
# Subtest: later
ok 3 - later # SKIP
1..3
# tests 4
# suites 1
# pass 2
# fail 1
# cancelled 0
# skipped 1
# todo 0
# duration_ms 61.2
";

#[test]
fn node_test_tap_names_subtests_under_their_suite_and_not_the_suite_itself() {
    let r = parsed(NODE_TAP);
    assert_eq!(r.runner, Runner::NodeTest);
    assert_eq!(r.passed, set(&["Math > adds", "top level"]));
    assert_eq!(r.failed, set(&["Math > subtracts"]));
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
        first.contains("not ok 2 - subtracts") && first.contains("1 !== 2"),
        "{first}"
    );
    assert!(!first.contains("subtestsFailed"), "{first}");
}

const NODE_SPEC: &str = "▶ Math
  ✔ adds (0.412ms)
  ✖ subtracts (0.931ms)
    AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

    1 !== 2

        at TestContext.<anonymous> (file:///home/u/calc/test/math.test.js:10:12)
        at Test.runInAsyncScope (node:async_hooks:206:9) {
      generatedMessage: true,
      code: 'ERR_ASSERTION',
    }

▶ Math (2.1ms)
✔ top level (0.3ms)
ℹ tests 3
ℹ suites 1
ℹ pass 2
ℹ fail 1
ℹ cancelled 0
ℹ skipped 0
ℹ todo 0
ℹ duration_ms 58.3

✖ failing tests:

test at test/math.test.js:9:3
✖ subtracts (0.931ms)
  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
";

#[test]
fn node_test_spec_reporter_names_tests_and_ignores_the_repeated_failure_list() {
    let r = parsed(NODE_SPEC);
    assert_eq!(r.runner, Runner::NodeTest);
    assert_eq!(r.passed, set(&["Math > adds", "top level"]));
    assert_eq!(r.failed, set(&["Math > subtracts"]));
    assert_eq!(r.counts.map(|c| (c.passed, c.failed)), Some((2, 1)));
    let first = r.first_failure.expect("a failure block");
    assert!(
        first.starts_with("  ✖ subtracts") && first.contains("1 !== 2"),
        "{first}"
    );
    assert!(!first.contains("top level"), "{first}");
}

const MOCHA: &str = "
> calc@1.0.0 test
> mocha



  Math
    ✓ adds
    1) subtracts
    ✓ multiplies (112ms)
    - rounds
  Parse
    ✓ reads numbers


  3 passing (130ms)
  1 pending
  1 failing

  1) Math
       subtracts:

      AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

1 !== 2

      + expected - actual

      -1
      +2

      at Context.<anonymous> (test/math.test.js:9:12)
      at process.processImmediate (node:internal/timers:478:21)



";

#[test]
fn mocha_names_tests_under_their_suites_and_keeps_the_numbered_failure() {
    let r = parsed(MOCHA);
    assert_eq!(r.runner, Runner::Mocha);
    assert_eq!(
        r.passed,
        set(&["Math > adds", "Math > multiplies", "Parse > reads numbers"])
    );
    assert_eq!(r.failed, set(&["Math > subtracts"]));
    assert_eq!(
        r.counts,
        Some(Counts {
            passed: 3,
            failed: 1,
            skipped: 1
        })
    );
    let first = r.first_failure.expect("a failure block");
    assert!(first.starts_with("  1) Math\n       subtracts:"), "{first}");
    assert!(first.contains("test/math.test.js:9:12"), "{first}");
}

#[test]
fn jest_console_output_before_the_list_does_not_hide_its_tests() {
    let out = "PASS src/log.test.js
  ● Console

    console.log
      loading fixtures

      at Object.log (src/log.test.js:2:9)

  Loader
    ✓ loads (2 ms)

Tests:       1 passed, 1 total
";
    let r = parsed(out);
    assert_eq!(r.passed, set(&["src/log.test.js › Loader › loads"]));
    assert!(r.failed.is_empty() && r.first_failure.is_none());
}

#[test]
fn a_word_like_pending_alone_is_not_mocha() {
    assert_eq!(parse("uploading\n  2 pending\n  1 failing\n"), None);
}
