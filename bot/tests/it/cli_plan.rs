//! `navin plan` as a user runs it: plans validate, nothing is written, validate/diff exit codes.

use std::path::Path;
use std::process::{Command, Output};

fn navin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("navin runs")
}

fn small_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    std::fs::create_dir_all(d.join("src")).expect("mkdir");
    std::fs::write(d.join("Cargo.toml"), "[package]\nname = \"greeter\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nclap = \"4\"\n").expect("write");
    std::fs::write(
        d.join("src/main.rs"),
        "mod greet;\nfn main() { println!(\"{}\", greet::hello(\"world\")); }\n",
    )
    .expect("write");
    std::fs::write(d.join("src/greet.rs"), "/// Builds a greeting.\npub fn hello(name: &str) -> String { format!(\"hello {name}\") }\n").expect("write");
    dir
}

/// The command and LLM planners plan a commit: commit the sample.
fn commit_all(dir: &Path) {
    let repo = git2::Repository::init(dir).expect("init");
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("write index");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("tree");
    let sig = git2::Signature::now("T", "t@example.com").expect("sig");
    repo.commit(Some("HEAD"), &sig, &sig, "sample", &tree, &[])
        .expect("commit");
}

fn listing(dir: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).expect("read dir") {
            let e = e.expect("entry");
            let meta = e.metadata().expect("meta");
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path().display().to_string(), meta.len()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn plan_prints_a_valid_plan_and_writes_nothing() {
    let repo = small_repo();
    let before = listing(repo.path());
    let out = navin(repo.path(), &["plan", "make the greeting configurable"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(
        text.starts_with("# Plan: make the greeting configurable"),
        "{text}"
    );
    assert!(
        text.contains("### File: src/greet.rs"),
        "the obviously relevant file is proposed: {text}"
    );
    assert_eq!(listing(repo.path()), before, "plan mode wrote nothing");

    let file = tempfile::NamedTempFile::new().expect("tmp");
    std::fs::write(file.path(), &text).expect("write");
    let v = navin(
        repo.path(),
        &["plan", "validate", file.path().to_str().expect("utf8")],
    );
    assert!(v.status.success(), "{}", String::from_utf8_lossy(&v.stderr));
}

#[test]
fn plan_json_carries_the_hash_markdown_and_repository_map() {
    let repo = small_repo();
    let out = navin(repo.path(), &["--json", "plan", "rename hello to greet"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["hash"].as_str().is_some_and(|h| h.starts_with("sha256:")));
    assert!(v["markdown"]
        .as_str()
        .is_some_and(|m| m.contains("## Proposed Changes")));
    assert_eq!(v["source"], "builtin");
    assert!(v["repository"]["files"]
        .as_array()
        .is_some_and(|f| !f.is_empty()));
}

#[test]
fn out_is_the_only_export() {
    let repo = small_repo();
    let target = tempfile::tempdir().expect("tmp");
    let path = target.path().join("plan.md");
    let out = navin(
        repo.path(),
        &["plan", "--out", path.to_str().expect("utf8"), "add logging"],
    );
    assert!(out.status.success());
    let written = std::fs::read_to_string(&path).expect("exported");
    assert!(written.starts_with("# Plan: add logging"));
}

#[test]
fn validate_names_the_first_problem_and_exits_1() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("bad.md");
    std::fs::write(
        &file,
        "# Plan: half a plan\n\n## System Persona\n\nRead-only.\n\n## Goal\n\nDo it.\n",
    )
    .expect("write");
    let out = navin(
        dir.path(),
        &["plan", "validate", file.to_str().expect("utf8")],
    );
    assert_eq!(out.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains("Repository Architecture"),
        "names the missing section: {msg}"
    );
}

#[test]
fn diff_shows_an_answered_question_and_an_added_file() {
    let repo = small_repo();
    let out = navin(repo.path(), &["plan", "make the greeting configurable"]);
    let original = String::from_utf8(out.stdout).expect("utf8");
    let edited = original.replacen("   - **Answer:**", "   - **Answer:** yes, via an environment variable", 1).replacen(
        "## New dependencies",
        "### File: src/config.rs\n\n- **Operation:** create\n- **Change:** Read the greeting from the environment.\n- **Rationale:** Keeps main small.\n\n## New dependencies",
        1,
    );
    let dir = tempfile::tempdir().expect("tmp");
    let (a, b) = (dir.path().join("a.md"), dir.path().join("b.md"));
    std::fs::write(&a, &original).expect("write");
    std::fs::write(&b, &edited).expect("write");
    let out = navin(
        dir.path(),
        &[
            "--json",
            "plan",
            "diff",
            a.to_str().expect("utf8"),
            b.to_str().expect("utf8"),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let text = d.to_string();
    assert!(text.contains("src/config.rs"), "file added: {text}");
    assert!(
        text.contains("environment variable"),
        "question answered: {text}"
    );
}

#[test]
fn command_planner_output_is_validated_before_it_is_shown() {
    let repo = small_repo();
    commit_all(repo.path());
    let good = navin(repo.path(), &["plan", "add logging"]);
    let dir = tempfile::tempdir().expect("tmp");
    let plan = dir.path().join("plan.md");
    std::fs::write(&plan, &good.stdout).expect("write");
    let script = dir.path().join("planner.sh");
    std::fs::write(&script, format!("#!/bin/sh\ncat '{}'\n", plan.display())).expect("write");
    let run = |cmd: &str| {
        Command::new(env!("CARGO_BIN_EXE_navin"))
            .args(["plan", "--planner", "command", "add logging"])
            .current_dir(repo.path())
            .env("NAVIN_PLAN_COMMAND", cmd)
            .output()
            .expect("navin runs")
    };
    let ok = run(&format!("sh {}", script.display()));
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(
        ok.stdout, good.stdout,
        "the command's plan, validated and normalised"
    );

    let bad = run("echo not a plan");
    assert_eq!(bad.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&bad.stderr);
    assert!(msg.contains("Plan"), "names what failed validation: {msg}");

    let missing = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(["plan", "--planner", "http", "x"])
        .current_dir(repo.path())
        .env_remove("NAVIN_LLM_BASE_URL")
        .output()
        .expect("navin runs");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("NAVIN_LLM_BASE_URL"));
}
