//! `node --test` (its TAP and its spec reporter) and mocha's spec reporter.

use super::{indented, Counts, Found, Runner};

/// Titles of the suites (or parent tests) a line is nested in, by indentation.
#[derive(Default)]
struct Nesting(Vec<(usize, String)>);

impl Nesting {
    fn close(&mut self, indent: usize) {
        self.0.retain(|(i, _)| *i < indent);
    }

    fn open(&mut self, indent: usize, title: &str) {
        self.close(indent);
        self.0.push((indent, title.to_owned()));
    }

    /// `Suite > inner > title` for a test at `indent`.
    fn id(&mut self, indent: usize, title: &str) -> String {
        self.close(indent);
        let mut id = String::new();
        for (_, outer) in &self.0 {
            id.push_str(outer);
            id.push_str(" > ");
        }
        id.push_str(title);
        id
    }
}

/// `(1.2ms)` at the end of a spec reporter's line: the test's name before it.
fn before_duration(t: &str) -> Option<&str> {
    let t = t.trim_end();
    let t = t
        .strip_suffix("# SKIP")
        .or_else(|| t.strip_suffix("# TODO"))
        .unwrap_or(t)
        .trim_end();
    let (name, time) = t.rsplit_once(" (")?;
    let number = time.strip_suffix("ms)")?;
    (!number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.')).then_some(name)
}

/// `# SKIP` or `# TODO` after a test: neither passed nor failed.
fn directive(t: &str) -> bool {
    let upper = t.to_ascii_uppercase();
    upper.contains("# SKIP") || upper.contains("# TODO")
}

pub(crate) fn node_test(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::NodeTest);
    let mut tap_nesting = Nesting::default();
    let mut spec_nesting = Nesting::default();
    // Subtests seen under each open `# Subtest:`: a parent's own line is not a test.
    let mut parents: Vec<(usize, bool)> = Vec::new();
    let mut listing = true;
    for (i, line) in lines.iter().enumerate() {
        let (indent, t) = indented(line);
        if t.starts_with("TAP version") || is_plan(t) {
            f.recognised = true;
        } else if let Some(name) = t.strip_prefix("# Subtest: ") {
            tap_nesting.open(indent, name.trim());
            parents.retain(|(n, _)| *n < indent);
            for p in &mut parents {
                p.1 = true;
            }
            parents.push((indent, false));
        } else if let Some((ok, name)) = tap_result(t) {
            let was_parent = parents
                .iter()
                .any(|(n, children)| *n == indent && *children);
            parents.retain(|(n, _)| *n < indent);
            let id = tap_nesting.id(indent, name);
            if was_parent || directive(t) {
                continue;
            }
            if ok {
                f.pass(&id);
            } else {
                f.fail(&id);
                // The YAML block under it holds the error and the stack.
                let end = lines[i + 1..]
                    .iter()
                    .position(|l| l.trim() == "...")
                    .map_or(lines.len(), |n| i + 2 + n);
                f.failure(i, &lines[i..end]);
            }
        } else if let Some(rest) = t.strip_prefix("# ").filter(|_| indent == 0) {
            count(&mut f, rest);
        } else if let Some(rest) = t.strip_prefix("ℹ ") {
            count(&mut f, rest);
        } else if t == "✖ failing tests:" {
            // What follows repeats the failures without their suites.
            listing = false;
        } else if !listing {
            continue;
        } else if let Some(rest) = t.strip_prefix("▶ ") {
            match before_duration(rest) {
                Some(_) => spec_nesting.close(indent),
                None => spec_nesting.open(indent, rest.trim()),
            }
        } else if let Some((ok, rest)) = t
            .strip_prefix("✔ ")
            .map(|r| (true, r))
            .or_else(|| t.strip_prefix("✖ ").map(|r| (false, r)))
        {
            let Some(name) = before_duration(rest) else {
                continue;
            };
            f.recognised = true;
            let id = spec_nesting.id(indent, name.trim());
            if directive(rest) {
                continue;
            }
            if ok {
                f.pass(&id);
            } else {
                f.fail(&id);
                let end = lines[i + 1..]
                    .iter()
                    .position(|l| {
                        let (n, rest) = indented(l);
                        !rest.is_empty() && n <= indent
                    })
                    .map_or(lines.len(), |n| i + 1 + n);
                f.failure(i, &lines[i..end]);
            }
        }
    }
    f.finish()
}

/// `1..4`
fn is_plan(t: &str) -> bool {
    t.strip_prefix("1..")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// `ok 1 - adds`, `not ok 2 - subtracts # TODO`: passed, and the name.
fn tap_result(t: &str) -> Option<(bool, &str)> {
    let (ok, rest) = match t.strip_prefix("not ok ") {
        Some(rest) => (false, rest),
        None => (true, t.strip_prefix("ok ")?),
    };
    let (number, name) = rest.split_once(' ').unwrap_or((rest, ""));
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let name = name.trim_start();
    let name = name.strip_prefix("- ").unwrap_or(name);
    // A `#` not escaped as `\#` starts a directive.
    let cut = name
        .char_indices()
        .find(|&(i, c)| c == '#' && !name[..i].ends_with('\\'))
        .map_or(name.len(), |(i, _)| i);
    Some((ok, name[..cut].trim()))
}

/// `pass 3`, `fail 1`, `skipped 0` from TAP's `#` lines or the spec reporter's `ℹ`.
fn count(f: &mut Found, rest: &str) {
    let mut words = rest.split_whitespace();
    let (Some(word), Some(n), None) = (words.next(), words.next(), words.next()) else {
        return;
    };
    let Ok(n) = n.parse::<u64>() else { return };
    if !matches!(word, "pass" | "fail" | "skipped" | "skip" | "todo") {
        return;
    }
    let counts = f.counts.get_or_insert_with(Counts::default);
    match word {
        "pass" => counts.passed = n,
        "fail" => counts.failed = n,
        _ => counts.skipped += n,
    }
}

/// `  3 passing (5ms)`, `  1 failing`, `  2 pending`.
fn mocha_tally(t: &str) -> Option<(u64, &str)> {
    let mut words = t.split_whitespace();
    let n = words.next()?.parse().ok()?;
    let word = words.next()?;
    let rest: Vec<&str> = words.collect();
    let timed = match rest[..] {
        [] => true,
        [time] => time.starts_with('(') && time.ends_with(')'),
        _ => false,
    };
    (timed && matches!(word, "passing" | "failing" | "pending")).then_some((n, word))
}

pub(crate) fn mocha(lines: &[&str]) -> Option<Found> {
    // Mocha always prints `N passing`, first; `pending` or `failing` alone could be anything.
    let tallies = lines
        .iter()
        .position(|l| matches!(mocha_tally(l.trim()), Some((_, "passing"))))?;
    let mut f = Found::new(Runner::Mocha);
    let mut counts = Counts::default();
    for line in &lines[tallies..] {
        match mocha_tally(line.trim()) {
            Some((n, "passing")) => counts.passed = n,
            Some((n, "failing")) => counts.failed = n,
            Some((n, _)) => counts.skipped = n,
            None => break,
        }
    }
    f.add_counts(counts);
    let mut nesting = Nesting::default();
    for line in &lines[..tallies] {
        let (indent, t) = indented(line);
        // Unindented lines are the test's own console output or npm's banner.
        if t.is_empty() || indent < 2 {
            continue;
        }
        if let Some(title) = t.strip_prefix("✓ ").or_else(|| t.strip_prefix("√ ")) {
            let title = title.trim();
            let title = match title.rsplit_once(" (") {
                Some((name, time)) if time.ends_with("ms)") => name,
                _ => title,
            };
            let id = nesting.id(indent, title);
            f.pass(&id);
        } else if let Some(title) = numbered(t) {
            let id = nesting.id(indent, title);
            f.fail(&id);
        } else if t.starts_with("- ") {
            nesting.close(indent);
        } else {
            nesting.open(indent, t);
        }
    }
    // The failures, numbered as in the listing, after the tallies.
    let details = tallies
        + lines[tallies..]
            .iter()
            .position(|l| l.trim_start().starts_with("1) "))
            .unwrap_or(lines.len() - tallies);
    if details < lines.len() {
        let end = lines[details + 1..]
            .iter()
            .position(|l| numbered(l.trim_start()).is_some() && !l.starts_with("       "))
            .map_or(lines.len(), |n| details + 1 + n);
        f.failure(details, &lines[details..end]);
    }
    f.finish()
}

/// `1) subtracts`: the title after the failure's number.
fn numbered(t: &str) -> Option<&str> {
    let (n, title) = t.split_once(") ")?;
    (!n.is_empty() && n.chars().all(|c| c.is_ascii_digit())).then_some(title.trim())
}
