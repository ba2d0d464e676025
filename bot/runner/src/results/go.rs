//! `go test`, with or without `-v`: the `--- PASS:`/`--- FAIL:` lines and each package's `ok`/`FAIL` line.

use super::{indented, Found, Runner};

pub(crate) fn go_test(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::GoTest);
    // A package's test lines come before its `ok`/`FAIL` line, which names it.
    let mut pending: Vec<(String, bool)> = Vec::new();
    let mut first_fail = None;
    for (i, line) in lines.iter().enumerate() {
        let (_, t) = indented(line);
        if let Some((name, ok)) = result_line(t) {
            if !ok && first_fail.is_none() {
                first_fail = Some((i, name));
            }
            pending.push((name.to_owned(), ok));
        } else if let Some((passed, package)) = package_line(line) {
            f.recognised = true;
            if !passed && !pending.iter().any(|(_, ok)| !ok) {
                // Did not build, or crashed before any test ended: the package failed.
                f.fail(package);
            }
            for (name, ok) in pending.drain(..) {
                record(&mut f, &format!("{package}.{name}"), ok);
            }
        }
    }
    for (name, ok) in pending {
        record(&mut f, &name, ok);
    }
    if let Some((at, name)) = first_fail {
        // With -v a test's log lines come between its `=== RUN` and its `--- FAIL`;
        // without, indented after the `--- FAIL`.
        let start = lines[..at]
            .iter()
            .rposition(|l| l.trim_start().strip_prefix("=== RUN").map(str::trim) == Some(name))
            .map_or(at, |r| r + 1);
        let end = lines[at + 1..]
            .iter()
            .position(|l| !(l.starts_with(' ') || l.starts_with('\t')))
            .map_or(lines.len(), |n| at + 1 + n);
        f.failure(start, &lines[start..end]);
    }
    f.finish()
}

fn record(f: &mut Found, id: &str, ok: bool) {
    if ok {
        f.pass(id);
    } else {
        f.fail(id);
    }
}

/// `--- FAIL: TestB/case_1 (0.00s)`: the test's name, and whether it passed; `None`
/// for `--- SKIP:` too.
fn result_line(t: &str) -> Option<(&str, bool)> {
    let (rest, ok) = if let Some(rest) = t.strip_prefix("--- PASS: ") {
        (rest, true)
    } else {
        (t.strip_prefix("--- FAIL: ")?, false)
    };
    let (name, time) = rest.rsplit_once(" (")?;
    time.ends_with("s)").then_some((name.trim(), ok))
}

/// `ok  <tab>example.com/pkg<tab>0.01s`, `FAIL<tab>example.com/pkg [build failed]`: whether the
/// package passed, and its import path.
fn package_line(line: &str) -> Option<(bool, &str)> {
    let mut words = line.split_whitespace();
    let passed = match words.next()? {
        "ok" => true,
        "FAIL" => false,
        _ => return None,
    };
    let package = words.next()?;
    let what = words.next()?;
    let timed = what.ends_with('s') && what.starts_with(|c: char| c.is_ascii_digit());
    (timed || what == "(cached)" || what.starts_with('[')).then_some((passed, package))
}
