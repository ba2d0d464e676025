//! `cargo test` (libtest's own lines, one block per test binary) and `cargo nextest run`.

use super::{indented, tally_items, Counts, Found, Outcomes, Runner};

pub(crate) fn libtest(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::CargoTest);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some((id, outcome)) = line
            .strip_prefix("test ")
            .and_then(|rest| rest.rsplit_once(" ... "))
        {
            let id = id.strip_suffix(" - should panic").unwrap_or(id);
            match outcome.trim_end() {
                "ok" => f.pass(id),
                "FAILED" => f.fail(id),
                _ => {}
            }
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            if let Some(counts) = tally(rest) {
                f.add_counts(counts);
            }
        } else if line == "failures:" {
            // The second `failures:` lists the failed tests' names, four spaces in;
            // the first is followed by a blank line and the `---- x stdout ----` blocks.
            while let Some(name) = lines.get(i + 1).and_then(|l| l.strip_prefix("    ")) {
                if !name.trim().is_empty() {
                    f.fail(name);
                }
                i += 1;
            }
        } else if line.starts_with("---- ") && line.ends_with(" ----") {
            let end = lines[i + 1..]
                .iter()
                .position(|l| {
                    *l == "failures:" || l.starts_with("---- ") || l.starts_with("test result:")
                })
                .map_or(lines.len(), |n| i + 1 + n);
            f.failure(i, &lines[i..end]);
        }
        i += 1;
    }
    f.finish()
}

/// `ok. 2 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s`
fn tally(rest: &str) -> Option<Counts> {
    let (_, items) = rest.split_once(". ")?;
    let mut counts = Counts::default();
    let mut seen = false;
    for part in items.split("; ") {
        let [(n, word)] = tally_items(part, ";")[..] else {
            continue;
        };
        match word {
            "passed" => counts.passed = n,
            "failed" => counts.failed = n,
            "ignored" => counts.skipped = n,
            _ => continue,
        }
        seen = true;
    }
    seen.then_some(counts)
}

/// How nextest's status words end for a test; `None` for progress words (`START`,
/// `SLOW`, `RETRY`) that say nothing final.
fn nextest_outcome(status: &str) -> Option<Option<bool>> {
    let words: Vec<&str> = status.split_whitespace().collect();
    if words
        .iter()
        .any(|w| matches!(*w, "FAIL" | "TIMEOUT" | "ABORT" | "LEAK-FAIL") || w.starts_with("SIG"))
    {
        Some(Some(false))
    } else if words
        .iter()
        .any(|w| matches!(*w, "PASS" | "FLAKY" | "LEAK"))
    {
        Some(Some(true))
    } else if words.contains(&"SKIP") {
        Some(None)
    } else {
        None
    }
}

/// `        FAIL [   0.004s] my-crate tests::b` (newer versions add `(2/3) ` before
/// the id): the status words, and the id, which is the binary's id and the test's path.
fn status_line(line: &str) -> Option<(&str, &str)> {
    let (_, t) = indented(line);
    let (status, rest) = t.split_once(" [")?;
    if status.is_empty()
        || !status
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || " -/".contains(c))
    {
        return None;
    }
    let (time, id) = rest.split_once(']')?;
    let time = time.trim();
    if !(time.is_empty() || time.ends_with('s') && time.starts_with(|c: char| c.is_ascii_digit())) {
        return None;
    }
    let mut id = id.trim();
    if id.starts_with('(') {
        id = id.split_once(") ").map_or(id, |(_, rest)| rest.trim());
    }
    id.contains(' ').then_some((status, id))
}

pub(crate) fn nextest(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::Nextest);
    let mut outcomes = Outcomes::new();
    let mut first_fail = None;
    for (i, line) in lines.iter().enumerate() {
        if let Some((status, id)) = status_line(line) {
            f.recognised = true;
            match nextest_outcome(status) {
                Some(Some(ok)) => {
                    if !ok && first_fail.is_none() {
                        first_fail = Some(i);
                    }
                    outcomes.insert(id.to_owned(), ok);
                }
                Some(None) => {
                    outcomes.remove(id);
                }
                None => {}
            }
        } else if let Some((_, rest)) = line.trim_start().split_once("Summary [") {
            let items = rest.split_once("run: ").map_or("", |(_, items)| items);
            let mut counts = Counts::default();
            for part in items.split(", ") {
                let [(n, word)] = tally_items(part, ",")[..] else {
                    continue;
                };
                match word {
                    "passed" => counts.passed += n,
                    "failed" | "timed" | "exec" => counts.failed += n,
                    "skipped" => counts.skipped += n,
                    _ => {}
                }
            }
            f.add_counts(counts);
        }
    }
    for (id, ok) in &outcomes {
        if *ok {
            f.pass(id);
        } else {
            f.fail(id);
        }
    }
    if let Some(start) = first_fail {
        // The failing line, then its captured stdout and stderr, up to the next test.
        let end = lines[start + 1..]
            .iter()
            .position(|l| {
                status_line(l).is_some()
                    || l.trim_start().starts_with("Summary [")
                    || l.trim() == "------------"
            })
            .map_or(lines.len(), |n| start + 1 + n);
        f.failure(start, &lines[start..end]);
    }
    f.finish()
}
