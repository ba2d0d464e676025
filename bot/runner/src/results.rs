//! Reads a test run's output into the tests that passed and failed, whichever common runner printed it.
//!
//! A command's exit code says only that something failed; these names say what, so a
//! run on a pull request's head can be held against the same run on its base: a test
//! that was failing already is not the change's fault, and a test that starts passing
//! is evidence the change did what it meant to. Output that is not recognised gives
//! nothing at all, so a run that could not be read never looks green.

mod go;
mod js;
mod node;
mod python;
mod rust;

use std::collections::{BTreeMap, BTreeSet};

/// The test runner whose output a report was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Runner {
    Pytest,
    CargoTest,
    Nextest,
    GoTest,
    Jest,
    Vitest,
    /// `node --test`, with its TAP or its spec reporter.
    NodeTest,
    Mocha,
    /// Only a bare `N passed, N failed` line: counts, no names.
    Generic,
}

impl Runner {
    /// The name people call the runner by, for messages and records.
    pub fn name(self) -> &'static str {
        match self {
            Runner::Pytest => "pytest",
            Runner::CargoTest => "cargo test",
            Runner::Nextest => "cargo nextest",
            Runner::GoTest => "go test",
            Runner::Jest => "jest",
            Runner::Vitest => "vitest",
            Runner::NodeTest => "node --test",
            Runner::Mocha => "mocha",
            Runner::Generic => "generic",
        }
    }

    /// The runner [`Runner::name`] names.
    pub fn from_name(name: &str) -> Option<Self> {
        ALL_RUNNERS.into_iter().find(|r| r.name() == name)
    }
}

const ALL_RUNNERS: [Runner; 9] = [
    Runner::Pytest,
    Runner::CargoTest,
    Runner::Nextest,
    Runner::GoTest,
    Runner::Jest,
    Runner::Vitest,
    Runner::NodeTest,
    Runner::Mocha,
    Runner::Generic,
];

/// The tally a runner prints at the end; kept beside the names because without a
/// verbose flag most runners name only the failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

impl Counts {
    fn add(&mut self, other: Counts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.skipped += other.skipped;
    }
}

/// What one run's output says about its tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestReport {
    /// The runner that named the most tests, when several printed.
    pub runner: Runner,
    /// Never holds a test that is also in `failed`: a test reported both ways (one
    /// binary passes it, another fails it; it passes, then its teardown errors) failed.
    pub passed: BTreeSet<String>,
    /// Includes what failed without being a test: a pytest collection error, a Go
    /// package that did not build, a jest suite that failed to run.
    pub failed: BTreeSet<String>,
    /// Summed over every summary line (`cargo test` prints one per test binary).
    pub counts: Option<Counts>,
    /// The first failure's message block, at most [`FAILURE_BYTES`] bytes.
    pub first_failure: Option<String>,
}

/// How a head run's failures relate to its base's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Comparison {
    /// Failing on head and not on base: what the change broke.
    pub new_failures: BTreeSet<String>,
    /// Failing on both: not the change's doing.
    pub pre_existing: BTreeSet<String>,
    /// Named as passing on head, and failing on base or not seen passing there (a
    /// test the change added or repaired).
    pub fail_to_pass: BTreeSet<String>,
}

/// Test ids are clipped to this many characters: ids come from the tested code
/// (parametrised values, generated titles) and are recorded, so they are bounded.
pub const ID_CHARS: usize = 300;

/// The first failure's message is clipped to about this many bytes.
pub const FAILURE_BYTES: usize = 1500;

/// Reads `output` (stdout and stderr together, colour codes allowed) into the tests it
/// names. `None` when no runner's format is recognised.
pub fn parse(output: &str) -> Option<TestReport> {
    let text = strip_ansi(output);
    let lines: Vec<&str> = text.lines().map(visible).collect();
    let parsers: [Parser; 8] = [
        python::pytest,
        rust::libtest,
        rust::nextest,
        go::go_test,
        js::jest,
        js::vitest,
        node::node_test,
        node::mocha,
    ];
    let mut found: Vec<Found> = parsers.iter().filter_map(|p| p(&lines)).collect();
    // nextest shows each failing test's own libtest output, which is not a second run.
    if found.iter().any(|f| f.runner == Runner::Nextest) {
        found.retain(|f| f.runner != Runner::CargoTest);
    }
    if found.is_empty() {
        found.extend(generic(&lines));
    }
    merge(found)
}

/// Holds `head` against `base`, test by test.
pub fn compare(base: &TestReport, head: &TestReport) -> Comparison {
    Comparison {
        new_failures: head.failed.difference(&base.failed).cloned().collect(),
        pre_existing: head.failed.intersection(&base.failed).cloned().collect(),
        fail_to_pass: head
            .passed
            .iter()
            .filter(|t| base.failed.contains(*t) || !base.passed.contains(*t))
            .cloned()
            .collect(),
    }
}

/// The same command with the flag that makes its runner name every test, not only
/// the failures: `pytest` (also `python -m pytest`, `python3 -m pytest`) gets `-rA`,
/// `go test` gets `-v`, `jest` (also `npx jest`) gets `--verbose`. `None` when the
/// runner is not one of those, or the flag (or a machine-readable output flag) is
/// there already. The flag changes what the command prints, so a caller that runs
/// the result records that argv, not the one it was given.
pub fn listing_args(argv: &[String]) -> Option<Vec<String>> {
    let (at, runner) = runner_position(argv)?;
    let rest = &argv[at + 1..];
    let has = |pred: &dyn Fn(&str) -> bool| rest.iter().any(|a| pred(a));
    let flag = match runner {
        "pytest" | "py.test" => {
            let lists = |a: &str| {
                a.strip_prefix("-r")
                    .is_some_and(|chars| !a.starts_with("--") && chars.contains('A'))
            };
            let lists_apart = rest.windows(2).any(|w| w[0] == "-r" && w[1].contains('A'));
            if has(&lists) || lists_apart {
                return None;
            }
            "-rA"
        }
        "test" => {
            if has(&|a| matches!(a, "-v" | "-v=true" | "-test.v" | "-json" | "--json")) {
                return None;
            }
            "-v"
        }
        "jest" => {
            if has(&|a| a.starts_with("--verbose") || a == "--json") {
                return None;
            }
            "--verbose"
        }
        _ => return None,
    };
    let mut out = argv[..=at].to_vec();
    out.push(flag.to_owned());
    out.extend_from_slice(rest);
    Some(out)
}

/// Where the runner's own word is in `argv` (`test` for `go test`), and that word.
fn runner_position(argv: &[String]) -> Option<(usize, &str)> {
    let program = argv.first()?;
    let base = program.rsplit('/').next().unwrap_or(program);
    let word = |i: usize| argv.get(i).map(String::as_str);
    match base {
        "pytest" | "py.test" | "jest" => Some((0, base)),
        "go" if word(1) == Some("test") => Some((1, "test")),
        "npx" | "yarn" | "pnpm" | "bunx" => {
            // `npx --yes jest`: skip the launcher's own flags.
            let at = (1..argv.len()).find(|&i| !argv[i].starts_with('-'))?;
            let at = if word(at) == Some("exec") { at + 1 } else { at };
            (word(at) == Some("jest")).then_some((at, "jest"))
        }
        _ if is_python(base) => {
            (word(1) == Some("-m") && word(2) == Some("pytest")).then_some((2, "pytest"))
        }
        _ => None,
    }
}

fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// One runner's parser: its findings in the output's lines, if it recognised any.
type Parser = fn(&[&str]) -> Option<Found>;

/// What one runner's parser found, before the runners' findings are merged.
#[derive(Debug)]
pub(crate) struct Found {
    runner: Runner,
    passed: BTreeSet<String>,
    failed: BTreeSet<String>,
    counts: Option<Counts>,
    /// The line it starts on, so that the earliest of several runners' wins.
    first_failure: Option<(usize, String)>,
    /// The runner's own structure was seen even if it named no test (`go test`
    /// without `-v`, all packages `ok`).
    recognised: bool,
}

impl Found {
    fn new(runner: Runner) -> Self {
        Found {
            runner,
            passed: BTreeSet::new(),
            failed: BTreeSet::new(),
            counts: None,
            first_failure: None,
            recognised: false,
        }
    }

    fn pass(&mut self, id: &str) {
        self.passed.insert(clean_id(id));
    }

    fn fail(&mut self, id: &str) {
        self.failed.insert(clean_id(id));
    }

    fn add_counts(&mut self, counts: Counts) {
        self.counts.get_or_insert_with(Counts::default).add(counts);
    }

    /// Keeps the first failure block found, clipped.
    fn failure(&mut self, line: usize, block: &[&str]) {
        if self.first_failure.is_none() {
            if let Some(text) = clip_block(block) {
                self.first_failure = Some((line, text));
            }
        }
    }

    fn finish(self) -> Option<Found> {
        let any = self.recognised
            || !self.passed.is_empty()
            || !self.failed.is_empty()
            || self.counts.is_some();
        any.then_some(self)
    }
}

fn merge(found: Vec<Found>) -> Option<TestReport> {
    let runner = found
        .iter()
        .enumerate()
        .max_by_key(|(i, f)| (f.passed.len() + f.failed.len(), std::cmp::Reverse(*i)))?
        .1
        .runner;
    let mut report = TestReport {
        runner,
        passed: BTreeSet::new(),
        failed: BTreeSet::new(),
        counts: None,
        first_failure: None,
    };
    let mut first: Option<(usize, String)> = None;
    for f in found {
        report.passed.extend(f.passed);
        report.failed.extend(f.failed);
        if let Some(c) = f.counts {
            report.counts.get_or_insert_with(Counts::default).add(c);
        }
        if let Some((line, text)) = f.first_failure {
            if first.as_ref().is_none_or(|(l, _)| line < *l) {
                first = Some((line, text));
            }
        }
    }
    report.passed = &report.passed - &report.failed;
    report.first_failure = first.map(|(_, text)| text);
    Some(report)
}

/// A line that is only `N passed, N failed` (then maybe `, N skipped`), maybe after
/// one word and a colon: counts from a runner not known by name.
fn generic(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::Generic);
    for line in lines {
        let t = line.trim().trim_end_matches('.');
        let t = match t.split_once(':') {
            Some((word, rest)) if !word.is_empty() && word.chars().all(char::is_alphabetic) => {
                rest.trim()
            }
            _ => t,
        };
        let items = tally_items(t, ",");
        let words: Vec<&str> = items.iter().map(|(_, w)| *w).collect();
        if !matches!(
            words[..],
            ["passed", "failed"] | ["passed", "failed", "skipped"]
        ) {
            continue;
        }
        f.add_counts(Counts {
            passed: items[0].0,
            failed: items[1].0,
            skipped: items.get(2).map_or(0, |i| i.0),
        });
    }
    f.finish()
}

/// `3 passed, 1 failed (2 slow)` split at `sep` into (number, first word) pairs; empty
/// unless every part is a number and a word.
pub(crate) fn tally_items<'a>(text: &'a str, sep: &str) -> Vec<(u64, &'a str)> {
    let mut out = Vec::new();
    for part in text.split(sep) {
        let mut words = part.split_whitespace();
        let (Some(n), Some(word)) = (words.next(), words.next()) else {
            return Vec::new();
        };
        let Ok(n) = n.parse() else {
            return Vec::new();
        };
        out.push((n, word));
    }
    out
}

/// Makes a test id safe to record: control characters (a title may hold a newline or
/// an escape sequence) become `\u{..}`, surrounding space goes, and it is clipped to
/// [`ID_CHARS`] characters.
pub fn clean_id(id: &str) -> String {
    let mut out = String::new();
    let mut chars = 0;
    for c in id.trim().chars() {
        let piece = if c.is_control() {
            format!("\\u{{{:x}}}", u32::from(c))
        } else {
            c.to_string()
        };
        let n = piece.chars().count();
        if chars + n > ID_CHARS {
            out.pop();
            out.push('…');
            return out;
        }
        chars += n;
        out.push_str(&piece);
    }
    out
}

/// The block's lines joined, blank lines at either end dropped; when longer than
/// [`FAILURE_BYTES`], its start (where most runners name the test and the assertion)
/// and its end (where pytest puts the `E` lines) are kept around a `…` line.
pub(crate) fn clip_block(block: &[&str]) -> Option<String> {
    let start = block.iter().position(|l| !l.trim().is_empty())?;
    let end = block.iter().rposition(|l| !l.trim().is_empty())?;
    let text = block[start..=end].join("\n");
    if text.len() <= FAILURE_BYTES {
        return Some(text);
    }
    let head = floor_boundary(&text, FAILURE_BYTES * 2 / 3);
    let tail = ceil_boundary(&text, text.len() - (FAILURE_BYTES / 3 - 8));
    Some(format!("{}\n…\n{}", &text[..head], &text[tail..]))
}

pub(crate) fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

pub(crate) fn ceil_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// What a terminal shows of a line a progress display rewrote with `\r`.
fn visible(line: &str) -> &str {
    let line = line.trim_end_matches('\r');
    line.rsplit('\r').next().unwrap_or(line)
}

/// `text` without ANSI escape sequences: runners colour their output when they think
/// a terminal is watching (`FORCE_COLOR`, `--color=always`).
fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\x1b') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            // CSI: parameters, then one final byte in @..~.
            Some('[') => {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC (hyperlinks): up to BEL or ESC \.
            Some(']') => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {
                chars.next();
            }
        }
    }
    out.into()
}

/// The leading whitespace's width and the rest of `line`.
pub(crate) fn indented(line: &str) -> (usize, &str) {
    let rest = line.trim_start();
    (line.len() - rest.len(), rest)
}

/// Final outcomes by id, for runners that may report one test more than once (retries).
pub(crate) type Outcomes = BTreeMap<String, bool>;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_js;
