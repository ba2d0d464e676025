//! Every `sh` block in README.md, action/README.md and docs/*.md runs here as written
//! (`<!-- doc-test: run -->` before it), or says why it cannot (`<!-- doc-test: skip:
//! why -->`); a block with neither fails the test, so a new block is never left unchecked.
//!
//! A runnable file's blocks run in order in one bash process, as a reader would type
//! them (a `cd` or `export` carries on), with this build's `navin` on PATH. Every command
//! must succeed, except one whose comment says `(exit N)` or `exit N:`, which must exit
//! N (on its line, or on the comment-only line after it). In a transcript (`$ cmd`
//! followed by its output), each output line must appear in what the command printed;
//! `…` ends a line's part that must match.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone, PartialEq)]
enum Annotation {
    Run,
    Skip(String),
    Missing,
}

#[derive(Debug)]
struct Block {
    place: String,
    annotation: Annotation,
    lines: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("action/README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn blocks(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).expect("document");
    let lines: Vec<&str> = text.lines().collect();
    let name = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```sh" {
            i += 1;
            continue;
        }
        let mut j = i;
        let annotation = loop {
            if j == 0 {
                break Annotation::Missing;
            }
            j -= 1;
            let l = lines[j].trim();
            if l.is_empty() {
                continue;
            }
            match l
                .strip_prefix("<!-- doc-test:")
                .and_then(|r| r.strip_suffix("-->"))
            {
                Some(r) if r.trim() == "run" => break Annotation::Run,
                Some(r) => match r.trim().strip_prefix("skip:") {
                    Some(why) if !why.trim().is_empty() => {
                        break Annotation::Skip(why.trim().to_owned())
                    }
                    _ => break Annotation::Missing,
                },
                None => break Annotation::Missing,
            }
        };
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end].trim() != "```" {
            end += 1;
        }
        out.push(Block {
            place: format!("{name}:{}", i + 1),
            annotation,
            lines: lines[start..end].iter().map(|l| (*l).to_owned()).collect(),
        });
        i = end + 1;
    }
    out
}

/// One command of a block: where, what, the exit it must give, what it must print.
#[derive(Debug)]
struct Step {
    place: String,
    command: String,
    exit: i32,
    expect: Vec<String>,
}

/// The `N` of `(exit N)` or `exit N:` in a comment.
fn expected_exit(comment: &str) -> Option<i32> {
    let at = comment.find("exit ")?;
    let digits: String = comment[at + 5..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The part of `line` before a ` #` comment (outside quotes), and the comment.
fn split_comment(line: &str) -> (&str, &str) {
    let (mut single, mut double) = (false, false);
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (i == 0 || bytes[i - 1] == b' ') => {
                return (&line[..i], &line[i..]);
            }
            _ => {}
        }
    }
    (line, "")
}

fn steps(block: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut pending = String::new();
    let mut transcript = false;
    for (n, raw) in block.lines.iter().enumerate() {
        let place = format!("{} line {}", block.place, n + 1);
        // A transcript's output runs to the next `$` line, or to a blank line followed
        // by a command (output lines after a blank one are shown as printed).
        if transcript && !raw.starts_with("$ ") {
            if raw.trim().is_empty() {
                let next = block.lines[n + 1..].iter().find(|l| !l.trim().is_empty());
                if next.is_none_or(|l| l.starts_with("$ ")) || is_command_after_blank(next) {
                    transcript = false;
                }
                continue;
            }
            if let Some(last) = out.last_mut() {
                last.expect.push(raw.trim().to_owned());
            }
            continue;
        }
        transcript = false;
        let line = raw.strip_prefix("$ ").map_or(raw.as_str(), |l| {
            transcript = true;
            l
        });
        let (code, comment) = split_comment(line);
        if code.trim().is_empty() {
            if let (Some(exit), Some(last)) = (expected_exit(comment), out.last_mut()) {
                last.exit = exit;
            }
            continue;
        }
        if let Some(cont) = code.trim_end().strip_suffix('\\') {
            pending.push_str(cont);
            pending.push(' ');
            continue;
        }
        pending.push_str(code);
        out.push(Step {
            place,
            command: std::mem::take(&mut pending).trim().to_owned(),
            exit: expected_exit(comment).unwrap_or(0),
            expect: Vec::new(),
        });
    }
    out
}

/// After a blank line in a transcript's output: whether the next line is a command
/// (`printf …`, `cd …`), not more output. Output the docs show after a blank line is a
/// commit message body or trailers: `Navin-…:` lines and sentences.
fn is_command_after_blank(next: Option<&String>) -> bool {
    let Some(line) = next else { return true };
    let first = line.split_whitespace().next().unwrap_or_default();
    ["cd", "printf", "echo", "git", "navin", "export", "mkdir"].contains(&first)
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A bash script that runs every step in this shell, checking its exit and output.
fn script(steps: &[Step]) -> String {
    let mut s = String::from("set -u\nout=\"$(mktemp)\"\n");
    for step in steps {
        s.push_str(&format!(
            "{{ {}\n}} >\"$out\" 2>&1 </dev/null\nrc=$?\n",
            step.command
        ));
        s.push_str(&format!(
            "if [ \"$rc\" != {} ]; then echo {}; echo \"--- exit $rc, wanted {}:\"; cat \"$out\"; exit 90; fi\n",
            step.exit,
            quote(&format!("FAILED {}: {}", step.place, step.command)),
            step.exit
        ));
        for want in &step.expect {
            let part = want.split('…').next().unwrap_or_default().trim_end();
            s.push_str(&format!(
                "if ! grep -qF -- {} \"$out\"; then echo {}; cat \"$out\"; exit 91; fi\n",
                quote(part),
                quote(&format!("MISSING {}: {want}", step.place))
            ));
        }
    }
    s
}

#[test]
fn every_sh_block_in_the_readme_and_docs_runs_as_written_or_says_why_not() {
    let bin = tempfile::tempdir().expect("bin dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_navin"), bin.path().join("navin"))
        .expect("link navin");
    let mut problems = Vec::new();
    let mut ran = 0;
    for doc in documents() {
        let all = blocks(&doc);
        for b in all.iter().filter(|b| b.annotation == Annotation::Missing) {
            problems.push(format!(
                "{}: an sh block without `<!-- doc-test: run -->` or `<!-- doc-test: skip: why -->`",
                b.place
            ));
        }
        let runnable: Vec<Step> = all
            .iter()
            .filter(|b| b.annotation == Annotation::Run)
            .flat_map(steps)
            .collect();
        if runnable.is_empty() {
            continue;
        }
        ran += runnable.len();
        let home = tempfile::tempdir().expect("home");
        let path = format!(
            "{}:{}",
            bin.path().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let result = Command::new("bash")
            .arg("-c")
            .arg(script(&runnable))
            .env_clear()
            .env("PATH", path)
            .env("HOME", home.path())
            .env("USER", "alice")
            .env("TMPDIR", home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Alice")
            .env("GIT_AUTHOR_EMAIL", "alice@example.invalid")
            .env("GIT_COMMITTER_NAME", "Alice")
            .env("GIT_COMMITTER_EMAIL", "alice@example.invalid")
            .current_dir(home.path())
            .output()
            .expect("bash");
        if !result.status.success() {
            problems.push(format!(
                "{}{}",
                String::from_utf8_lossy(&result.stdout),
                String::from_utf8_lossy(&result.stderr)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(ran >= 15, "only {ran} documented commands ran");
}

#[test]
fn a_block_s_steps_carry_continuations_expected_exits_and_transcript_output() {
    let block = Block {
        place: "x.md:1".into(),
        annotation: Annotation::Run,
        lines: [
            "navin board done S1      # exit 1: refused",
            "echo '{\"a\":\"#b\"}' \\",
            "  | navin board done S1 --evidence-json -",
            "                         # refused: it must name its run (exit 1)",
            "$ git show x | head -2",
            "{",
            "  \"schema_version\": 1,…",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect(),
    };
    let s = steps(&block);
    assert_eq!(s.len(), 3, "{s:?}");
    assert_eq!((s[0].exit, s[1].exit, s[2].exit), (1, 1, 0));
    assert_eq!(
        s[1].command,
        "echo '{\"a\":\"#b\"}'    | navin board done S1 --evidence-json -"
    );
    assert_eq!(s[2].expect, ["{", "\"schema_version\": 1,…"]);
}
