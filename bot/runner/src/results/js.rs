//! jest (its `PASS`/`FAIL` file lines, `✓`/`✕` titles under their `describe`s, `●` failure headers) and vitest.

use super::{indented, tally_items, Counts, Found, Runner};

/// Test titles nested under `describe` titles, by indentation.
#[derive(Default)]
struct Nesting(Vec<(usize, String)>);

impl Nesting {
    /// The titles enclosing a line indented `indent`.
    fn enclosing(&mut self, indent: usize) -> impl Iterator<Item = &str> {
        self.0.retain(|(i, _)| *i < indent);
        self.0.iter().map(|(_, t)| t.as_str())
    }

    fn open(&mut self, indent: usize, title: &str) {
        self.0.retain(|(i, _)| *i < indent);
        self.0.push((indent, title.to_owned()));
    }
}

/// `(3 ms)` or `(1.2 s)` at the end of a title: the time it took, not its name.
fn without_time(title: &str) -> &str {
    let Some((name, time)) = title.rsplit_once(" (") else {
        return title;
    };
    let time = time.trim_end_matches(')');
    let unit = time.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    let numeric = time.len() > unit.len();
    if numeric && matches!(unit.trim(), "ms" | "s") {
        name
    } else {
        title
    }
}

/// `PASS src/a.test.js` (` PASS  src/a.test.js` once colours are stripped), maybe
/// with `(5.2 s)` after a slow file: the file.
fn jest_file(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t
        .strip_prefix("PASS ")
        .or_else(|| t.strip_prefix("FAIL "))?;
    // Jest writes a file at its root directory as `./a.test.js` and one below it as
    // `src/a.test.js`; the id is the path either way.
    let path = without_time(rest.trim());
    let path = path.strip_prefix("./").unwrap_or(path);
    let looks_like_path =
        !path.contains(char::is_whitespace) && !path.starts_with('[') && path.contains('.');
    looks_like_path.then_some(path)
}

pub(crate) fn jest(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::Jest);
    let mut file: Option<&str> = None;
    let mut nesting = Nesting::default();
    let mut in_list = false;
    for (i, line) in lines.iter().enumerate() {
        let (indent, t) = indented(line);
        if let Some(path) = jest_file(line) {
            f.recognised = true;
            file = Some(path);
            nesting = Nesting::default();
            in_list = true;
        } else if let Some(title) = t.strip_prefix("● ") {
            // `● Console`: what the tests logged, printed before their list.
            let Some(file) = file.filter(|_| title.trim() != "Console") else {
                continue;
            };
            in_list = false;
            if title.trim() == "Test suite failed to run" {
                f.fail(file);
            } else {
                f.fail(&format!("{file} › {}", title.trim()));
            }
            let end = lines[i + 1..]
                .iter()
                .position(|l| {
                    let (n, rest) = indented(l);
                    !rest.is_empty() && (n <= indent || rest.starts_with('●'))
                })
                .map_or(lines.len(), |n| i + 1 + n);
            f.failure(i, &lines[i..end]);
        } else if let Some(items) = t.strip_prefix("Tests:") {
            let items = tally_items(items, ",");
            if items.iter().any(|(_, w)| *w == "total") {
                f.add_counts(tally(items));
            }
            in_list = false;
        } else if let (true, Some(file)) = (in_list, file) {
            if t.is_empty() {
                nesting = Nesting::default();
                continue;
            }
            let mut chars = t.chars();
            let outcome = match chars.next() {
                Some('✓' | '√') => Some(true),
                Some('✕' | '×') => Some(false),
                Some('○' | '✎') => None,
                _ => {
                    if indent >= 2 {
                        nesting.open(indent, t);
                    }
                    continue;
                }
            };
            let title = without_time(chars.as_str().trim());
            let mut id = file.to_owned();
            for outer in nesting.enclosing(indent) {
                id.push_str(" › ");
                id.push_str(outer);
            }
            id.push_str(" › ");
            id.push_str(title);
            match outcome {
                Some(true) => f.pass(&id),
                Some(false) => f.fail(&id),
                None => {}
            }
        }
    }
    f.finish()
}

/// A test file's name as vitest prints it.
fn is_test_file(s: &str) -> bool {
    const EXTENSIONS: [&str; 9] = [
        ".ts", ".js", ".tsx", ".jsx", ".mts", ".mjs", ".cts", ".cjs", ".vue",
    ];
    !s.contains(char::is_whitespace) && EXTENSIONS.iter().any(|e| s.ends_with(e))
}

/// A vitest title without its time (` 12ms`, ` 1.20s`) after it.
fn without_vitest_time(title: &str) -> &str {
    match title.rsplit_once(' ') {
        Some((name, time))
            if time.starts_with(|c: char| c.is_ascii_digit())
                && (time.ends_with("ms") || time.ends_with('s'))
                && time
                    .trim_end_matches(['m', 's'])
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.') =>
        {
            name.trim_end()
        }
        _ => title,
    }
}

pub(crate) fn vitest(lines: &[&str]) -> Option<Found> {
    let mut f = Found::new(Runner::Vitest);
    let mut file: Option<&str> = None;
    for (i, line) in lines.iter().enumerate() {
        let (indent, t) = indented(line);
        if let Some(name) = t.strip_prefix("FAIL ") {
            let name = name.trim();
            let id = if name.contains(" > ") {
                name
            } else if let Some((path, _)) = name.split_once(" [") {
                // ` FAIL  src/b.test.ts [ src/b.test.ts ]`: the file failed to load.
                path.trim()
            } else {
                continue;
            };
            if !is_test_file(id.split(" > ").next().unwrap_or(id)) {
                continue;
            }
            f.fail(id);
            let end = lines[i + 1..]
                .iter()
                .position(|l| {
                    let t = l.trim_start();
                    t.starts_with('⎯') || t.starts_with("FAIL ")
                })
                .map_or(lines.len(), |n| i + 1 + n);
            f.failure(i, &lines[i..end]);
            continue;
        }
        if let Some(items) = t.strip_prefix("Tests ") {
            let items = items.trim();
            if let Some((items, _total)) = items.rsplit_once(" (").filter(|_| items.ends_with(')'))
            {
                f.add_counts(tally(tally_items(items, "|")));
            }
            continue;
        }
        if t.starts_with("Test Files ") {
            f.recognised = true;
            continue;
        }
        let mut chars = t.chars();
        let outcome = match chars.next() {
            Some('✓' | '√') => Some(true),
            Some('×' | '✗') => Some(false),
            Some('↓') => None,
            Some('❯') => {
                // ` ❯ src/b.test.ts (2 tests | 1 failed) 7ms`: the file the lines
                // under it belong to.
                let rest = chars.as_str().trim();
                if let Some((path, _)) = rest.split_once(" (").filter(|(p, _)| is_test_file(p)) {
                    file = Some(path);
                }
                continue;
            }
            _ => continue,
        };
        let rest = chars.as_str().trim();
        let first = rest.split(" > ").next().unwrap_or(rest);
        if let Some((path, _)) = rest.split_once(" (").filter(|(p, _)| is_test_file(p)) {
            // ` ✓ src/a.test.ts (3 tests) 5ms`: a file's line, not a test's.
            file = Some(path);
            continue;
        }
        let title = without_vitest_time(rest);
        let id = if is_test_file(first) && rest.contains(" > ") {
            title.to_owned()
        } else if let (Some(file), true) = (file, indent > 1) {
            format!("{file} > {title}")
        } else {
            continue;
        };
        match outcome {
            Some(true) => f.pass(&id),
            Some(false) => f.fail(&id),
            None => {}
        }
    }
    f.finish()
}

/// Jest's `Tests:` and vitest's `Tests` lines count in the same words.
fn tally(items: Vec<(u64, &str)>) -> Counts {
    let mut counts = Counts::default();
    for (n, word) in items {
        match word {
            "passed" => counts.passed += n,
            "failed" => counts.failed += n,
            "skipped" | "todo" => counts.skipped += n,
            _ => {}
        }
    }
    counts
}
