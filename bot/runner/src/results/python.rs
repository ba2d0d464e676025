//! pytest: its `-v` lines, its short test summary (`-rA`, `-ra`) and its final tally.

use super::{clip_block, tally_items, Counts, Found, Runner};

const OUTCOMES: [&str; 6] = ["PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS"];

pub(crate) fn pytest(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::Pytest);
    let mut summary_failure = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some((id, outcome)) = verbose_line(line).or_else(|| xdist_line(line)) {
            record(&mut f, id, outcome);
        } else if let Some((outcome, id)) = summary_line(line) {
            record(&mut f, id, outcome);
            if matches!(outcome, "FAILED" | "ERROR") && summary_failure.is_none() {
                summary_failure = Some(i);
            }
        } else if let Some(counts) = tally(line) {
            f.add_counts(counts);
        } else if is_banner(line, "test session starts") {
            f.recognised = true;
        }
    }
    if let Some((at, block)) = failures_section(lines) {
        f.failure(at, &block);
    } else if let Some(i) = summary_failure {
        // `--tb=no` or `-q` without tracebacks: the summary line's message is all there is.
        f.failure(i, &lines[i..=i]);
    }
    f.finish()
}

fn record(f: &mut Found, id: &str, outcome: &str) {
    match outcome {
        "PASSED" | "XPASS" => f.pass(id),
        "FAILED" | "ERROR" => f.fail(id),
        _ => {}
    }
}

/// `tests/test_x.py::test_a PASSED                 [ 25%]`
fn verbose_line(line: &str) -> Option<(&str, &str)> {
    let mut t = line.trim_end();
    if t.ends_with("%]") {
        t = t[..t.rfind('[')?].trim_end();
    }
    let (id, outcome) = t.rsplit_once(' ')?;
    let outcome = OUTCOMES.iter().find(|o| **o == outcome)?;
    let id = id.trim_end();
    let (file, _) = id.split_once("::")?;
    (file.ends_with(".py") && !file.contains(char::is_whitespace)).then_some((id, outcome))
}

/// pytest-xdist: `[gw0] [ 25%] PASSED tests/test_x.py::test_a`
fn xdist_line(line: &str) -> Option<(&str, &str)> {
    let mut t = line.trim_start().strip_prefix("[gw")?;
    while let Some(rest) = t.split_once(']').map(|(_, r)| r.trim_start()) {
        t = rest;
        if !t.starts_with('[') {
            break;
        }
    }
    let (outcome, id) = t.split_once(' ')?;
    let outcome = OUTCOMES.iter().find(|o| **o == outcome)?;
    id.contains(".py::").then_some((id.trim(), outcome))
}

/// `FAILED tests/test_x.py::test_b - AssertionError: ...`, `ERROR tests/test_y.py`
fn summary_line(line: &str) -> Option<(&str, &str)> {
    let (outcome, rest) = line.split_once(' ')?;
    let outcome = OUTCOMES.iter().find(|o| **o == outcome)?;
    let id = rest.split(" - ").next()?.trim();
    let file = id.split("::").next()?;
    (file.ends_with(".py") && !file.contains(char::is_whitespace)).then_some((outcome, id))
}

/// `==== 1 failed, 3 passed, 1 skipped in 0.12s ====` (`-q` drops the `=`).
fn tally(line: &str) -> Option<Counts> {
    let t = line.trim().trim_matches('=').trim();
    let (items, time) = t.rsplit_once(" in ")?;
    if !time.starts_with(|c: char| c.is_ascii_digit()) || !time.contains('s') {
        return None;
    }
    if items == "no tests ran" {
        return Some(Counts::default());
    }
    let items = tally_items(items, ",");
    let mut counts = Counts::default();
    let mut outcome = false;
    for (n, word) in &items {
        match *word {
            "passed" | "xpassed" => counts.passed += n,
            "failed" | "error" | "errors" => counts.failed += n,
            "skipped" | "xfailed" => counts.skipped += n,
            "deselected" | "warning" | "warnings" | "rerun" | "reruns" => continue,
            _ => return None,
        }
        outcome = true;
    }
    outcome.then_some(counts)
}

/// `===== FAILURES =====` and the like.
fn is_banner(line: &str, title: &str) -> bool {
    let t = line.trim();
    t.starts_with("===") && t.trim_matches('=').trim() == title
}

/// The first test's section after `== FAILURES ==` (or `== ERRORS ==`, printed
/// first): its `____ test_b ____` header down to the next header or banner.
fn failures_section<'a>(lines: &[&'a str]) -> Option<(usize, Vec<&'a str>)> {
    let banner = lines
        .iter()
        .position(|l| is_banner(l, "FAILURES") || is_banner(l, "ERRORS"))?;
    let start = banner
        + 1
        + lines[banner + 1..]
            .iter()
            .position(|l| l.starts_with("___"))?;
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with("___") || l.starts_with("==="))
        .map_or(lines.len(), |n| start + 1 + n);
    let block = lines[start..end].to_vec();
    clip_block(&block).map(|_| (start, block))
}
