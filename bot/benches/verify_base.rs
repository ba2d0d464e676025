//! What running a step's command on its base costs `navin board verify`: the first verify of a base, and the cached ones after it, against a verify with no base run, measured in the same run.
//!
//! Run: `cargo bench -p navin-bot --bench verify_base`. Two projects: a generated Python
//! project of 1,000 pytest tests (one failing on the base already), and this repository
//! itself (a clone, `cargo test -p navin-runner --lib`, with a bench-owned target
//! directory so only the first run builds dependencies). Rows per project: the command
//! run directly; `board verify` of a step with no base (the baseline); the first verify
//! of a step after a change (head and base run); a verify after a further commit (the
//! base from its cache), alternating with the baseline on the same commit. The bad day is the first row on this
//! repository: a base built and tested from nothing. Target from the proof issue: the
//! cached base adds under 10% to a verify.
#![allow(
    clippy::unwrap_used,
    reason = "a bench that cannot set up should stop loudly"
)]

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ROUNDS: usize = 3;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

struct Navin<'a> {
    dir: &'a Path,
    keys: &'a Path,
    target: Option<&'a Path>,
}

impl Navin<'_> {
    fn command(&self, actor: &str, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_navin"));
        cmd.args(args)
            .current_dir(self.dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NAVIN_CONFIG_DIR", self.keys)
            .env("NAVIN_ACTOR", actor)
            .env("NAVIN_VERIFY_TIMEOUT", "3600");
        if let Some(target) = self.target {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        cmd
    }

    fn ok(&self, actor: &str, args: &[&str]) {
        let out = self.command(actor, args).output().unwrap();
        assert!(
            out.status.success(),
            "navin {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A mission with two test steps: S1, started by the agent on the current commit,
    /// and S2, never started (so verified with no base).
    fn mission(&self) {
        self.ok("human:bench", &["ledger", "init", "--goal", "bench"]);
        for step in ["S1", "S2"] {
            let add = [
                "board",
                "add",
                step,
                "--title",
                "work",
                "--validation",
                "test",
            ];
            self.ok("human:bench", &add);
        }
        self.ok("subagent:bench", &["board", "start", "S1"]);
    }

    /// Seconds one `board verify STEP` takes, and its summary line.
    fn verify(&self, step: &str) -> (f64, String) {
        let clock = Instant::now();
        let out = self
            .command("subagent:bench", &["--json", "board", "verify", step])
            .output()
            .unwrap();
        let secs = clock.elapsed().as_secs_f64();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "verify printed no JSON ({e}): {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let summary = report["summary"].as_str().unwrap_or_default().to_owned();
        (secs, summary)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

struct Rows {
    project: &'static str,
    rows: Vec<(&'static str, f64)>,
}

/// Measures one project whose checkout is `navin.dir`, whose mission runs `command`
/// (S1 started on the current commit, S2 never started, so it has no base). `change`
/// commits a further change each time it is called. The cached rows alternate with
/// verifies of S2 on the same commit, so both meet the same machine.
fn measure(
    project: &'static str,
    navin: &Navin<'_>,
    command: &[&str],
    rounds: usize,
    mut change: impl FnMut(usize),
) -> Rows {
    let dir = navin.dir;
    let mut rows = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..rounds {
        let clock = Instant::now();
        let mut cmd = Command::new(command[0]);
        cmd.args(&command[1..]).current_dir(dir);
        if let Some(target) = navin.target {
            cmd.env("CARGO_TARGET_DIR", target);
        }
        let _ = cmd.output().unwrap();
        direct.push(clock.elapsed().as_secs_f64());
    }
    rows.push(("the command run directly", median(direct)));
    // A change, then the first verify of S1's base: head and base both run.
    change(0);
    let _ = navin.verify("S2");
    let (first, said) = navin.verify("S1");
    assert!(said.contains("against base"), "the base ran: {said}");
    rows.push(("verify, first run of the base", first));
    let (mut alone, mut cached) = (Vec::new(), Vec::new());
    for i in 1..=rounds {
        change(i);
        let mut pair = [("S2", &mut alone), ("S1", &mut cached)];
        if i % 2 == 0 {
            pair.reverse();
        }
        for (step, into) in pair {
            let (secs, said) = navin.verify(step);
            if step == "S1" {
                assert!(said.contains("cached"), "the cache served: {said}");
            }
            into.push(secs);
        }
    }
    rows.insert(1, ("verify, no base run", median(alone)));
    rows.push(("verify, cached base", median(cached)));
    Rows { project, rows }
}

fn python_project(dir: &Path) {
    std::fs::write(dir.join(".gitignore"), "__pycache__/\n.pytest_cache/\n").unwrap();
    for f in 0..10 {
        let mut text = String::from("import time\n\n");
        for t in 0..100 {
            text.push_str(&format!(
                "\ndef test_case_{t:03}():\n    assert {t} + 1 > {t}\n"
            ));
        }
        if f == 0 {
            text.push_str("\ndef test_known_broken():\n    assert False, 'broken on the base'\n");
        }
        std::fs::write(dir.join(format!("test_mod_{f:02}.py")), text).unwrap();
    }
}

fn print(rows: &Rows) {
    println!("\n{}", rows.project);
    let alone = rows
        .rows
        .iter()
        .find(|(what, _)| what.starts_with("verify, no base"))
        .map(|(_, s)| *s)
        .unwrap_or(1.0);
    println!("{:<38} {:>9} {:>11}", "row", "seconds", "vs no base");
    for (what, secs) in &rows.rows {
        println!("{what:<38} {secs:>9.3} {:>10.2}x", secs / alone);
    }
}

fn main() {
    let keys = tempfile::tempdir().unwrap();

    // A Python project of 1,000 tests.
    let py = tempfile::tempdir().unwrap();
    let d = py.path();
    git(d, &["init", "-q"]);
    python_project(d);
    std::fs::create_dir_all(d.join(".github")).unwrap();
    std::fs::write(
        d.join(".github/navin.yml"),
        "validation:\n  commands:\n    test: pytest -q\n",
    )
    .unwrap();
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "a thousand tests"]);
    let navin = Navin {
        dir: d,
        keys: keys.path(),
        target: None,
    };
    navin.mission();
    let python = measure(
        "1,000 pytest tests",
        &navin,
        &["pytest", "-q", "-rA"],
        ROUNDS,
        |i| {
            std::fs::write(d.join(format!("change_{i}.txt")), "x\n").unwrap();
            git(d, &["add", "-A"]);
            git(d, &["commit", "-qm", "a change"]);
        },
    );
    print(&python);

    // This repository: a clone, its runner crate's unit tests.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let target = root.join("target").join("bench-verify-base");
    let clone = tempfile::tempdir().unwrap();
    let c = clone.path();
    let cloned = Command::new("git")
        .args(["clone", "-q", "--no-hardlinks"])
        .arg(root)
        .arg(c)
        .status()
        .unwrap();
    assert!(cloned.success());
    // The clone's own main is its default branch (its origin's config names no command).
    git(c, &["remote", "remove", "origin"]);
    std::fs::create_dir_all(c.join(".github")).unwrap();
    std::fs::write(
        c.join(".github/navin.yml"),
        "validation:\n  commands:\n    test: cargo test -q --offline -p navin-runner --lib\n",
    )
    .unwrap();
    git(c, &["add", "-A"]);
    git(c, &["commit", "-qm", "bench config"]);
    let navin = Navin {
        dir: c,
        keys: keys.path(),
        target: Some(&target),
    };
    navin.mission();
    let this = measure(
        "this repository (cargo test -p navin-runner --lib)",
        &navin,
        &[
            "cargo",
            "test",
            "-q",
            "--offline",
            "-p",
            "navin-runner",
            "--lib",
        ],
        1,
        |i| {
            std::fs::write(c.join(format!("change_{i}.txt")), "x\n").unwrap();
            git(c, &["add", "-A"]);
            git(c, &["commit", "-qm", "a change"]);
        },
    );
    print(&this);

    for rows in [&python, &this] {
        let get = |name: &str| {
            rows.rows
                .iter()
                .find(|(w, _)| w.starts_with(name))
                .map(|(_, s)| *s)
                .unwrap_or(f64::NAN)
        };
        let overhead = get("verify, cached") / get("verify, no base") - 1.0;
        println!(
            "{}: the cached base adds {:+.1}% to a verify (target < 10%): {}",
            rows.project,
            overhead * 100.0,
            if overhead < 0.10 { "met" } else { "MISSED" }
        );
    }
}
