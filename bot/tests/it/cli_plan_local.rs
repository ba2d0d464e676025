//! The local plan loop through the `navin` binary: a saved plan lives on the ledger
//! branch, only people decide it, edits are binding, and an approved plan starts the
//! same mission `/mission` would.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::agents::git;

const HUMAN: &str = "human:alice";
/// Another person: the one who saved a plan does not approve it.
const REVIEWER: &str = "human:maya";
const AGENT: &str = "subagent:coder";

fn navin(dir: &Path, actor: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_navin"));
    cmd.args(args)
        .current_dir(dir)
        .env("NAVIN_ACTOR", actor)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("VISUAL")
        .env_remove("EDITOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("navin runs")
}

fn ok(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin(dir, actor, args, &[]);
    assert!(
        out.status.success(),
        "navin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

/// Runs a command that must be refused (exit 1); returns its message.
fn refused(dir: &Path, actor: &str, args: &[&str]) -> String {
    let out = navin(dir, actor, args, &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "navin {args:?} should be refused: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).expect("utf8")
}

/// A small Rust project, committed on `main`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    std::fs::create_dir_all(d.join("src")).expect("mkdir");
    std::fs::write(
        d.join("Cargo.toml"),
        "[package]\nname = \"greeter\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .expect("write");
    std::fs::write(
        d.join("src/main.rs"),
        "fn main() { println!(\"hello\"); }\n",
    )
    .expect("write");
    git(d, &["init", "-q", "-b", "main"]);
    git(d, &["add", "-A"]);
    git(
        d,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qm",
            "init",
        ],
    );
    dir
}

/// Saves a plan for `request`; returns its id and text.
fn save(d: &Path, request: &str) -> (String, String) {
    let out: Value =
        serde_json::from_str(&ok(d, HUMAN, &["--json", "plan", "--save", request])).expect("json");
    let id = out["id"]
        .as_str()
        .expect("a saved plan has an id")
        .to_owned();
    (id, out["markdown"].as_str().expect("markdown").to_owned())
}

fn ledger_tip(d: &Path) -> String {
    git(d, &["rev-parse", "navin/ledger"]).trim().to_owned()
}

fn record(d: &Path, id: &str) -> Value {
    let shown: Value =
        serde_json::from_str(&ok(d, HUMAN, &["--json", "plan", "show", id])).expect("json");
    shown["record"].clone()
}

fn mission(d: &Path) -> Value {
    serde_json::from_str(&ok(d, HUMAN, &["--json", "ledger", "show"])).expect("json")
}

fn step_ids(d: &Path) -> Vec<(String, Vec<String>)> {
    mission(d)["board"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap_or_default().to_owned(),
                t["depends_on"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_saved_plan_lives_on_the_ledger_branch_and_saving_it_again_writes_nothing() {
    let repo = project();
    let d = repo.path();
    let status_before = git(d, &["status", "--porcelain", "--ignored"]);
    let (id, text) = save(d, "make the greeting configurable");
    assert!(id.starts_with("local-"), "{id}");
    assert_eq!(
        git(d, &["status", "--porcelain", "--ignored"]),
        status_before,
        "saving a plan must not touch the working tree"
    );
    let stored = git(d, &["show", &format!("navin/ledger:.navin/plans/{id}.md")]);
    assert_eq!(
        stored, text,
        "the ledger branch holds the plan's canonical text"
    );
    assert_eq!(record(d, &id)["status"], "pending");
    assert_eq!(record(d, &id)["requested_by"], "alice");

    let tip = ledger_tip(d);
    let again = navin(
        d,
        HUMAN,
        &["plan", "--save", "make the greeting configurable"],
        &[],
    );
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains(&format!("already saved as plan {id}")),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(
        ledger_tip(d),
        tip,
        "the same plan saved twice is one commit"
    );

    let listed: Value =
        serde_json::from_str(&ok(d, HUMAN, &["--json", "plan", "list"])).expect("json");
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["status"], "pending");
}

#[test]
fn only_a_person_decides_a_plan_and_only_an_approved_plan_starts_a_mission() {
    let repo = project();
    let d = repo.path();
    let (id, _) = save(d, "make the greeting configurable");

    let err = refused(d, HUMAN, &["mission", "start", "--from-plan", &id]);
    assert!(
        err.contains("pending") && err.contains("navin plan approve"),
        "{err}"
    );
    let tip = ledger_tip(d);
    for verb in ["approve", "reject"] {
        let err = refused(d, AGENT, &["plan", verb, &id]);
        assert!(err.contains("only a person"), "{err}");
    }
    let err = refused(d, AGENT, &["plan", "edit", &id, "-"]);
    assert!(err.contains("only a person"), "{err}");
    let err = refused(d, HUMAN, &["plan", "approve", &id]);
    assert!(
        err.contains("alice asked for plan") && err.contains("approval.allow_author_approval"),
        "{err}"
    );
    assert!(
        !err.contains("--actor"),
        "never suggests acting as someone else: {err}"
    );
    assert_eq!(ledger_tip(d), tip, "refused decisions change nothing");

    ok(d, REVIEWER, &["plan", "approve", &id]);
    let err = refused(d, REVIEWER, &["plan", "approve", &id]);
    assert!(err.contains("already approved"), "{err}");
    ok(d, HUMAN, &["mission", "start", "--from-plan", &id]);

    let m = mission(d);
    assert_eq!(m["mission"]["goal"], "make the greeting configurable");
    assert_eq!(m["mission"]["origin"]["plan_id"], id.as_str());
    let facts: Vec<&str> = m["mission"]["facts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str())
        .collect();
    assert!(
        facts.iter().any(|f| f.ends_with("(default)")),
        "the plan's questions with defaults are facts: {facts:?}"
    );
    let steps = step_ids(d);
    assert_eq!(
        steps,
        [("C1".to_owned(), vec![])],
        "one step per proposed change"
    );
    let task = &m["board"]["tasks"][0];
    assert_eq!(task["validation"], "test");
    assert_eq!(
        task["commands"],
        serde_json::json!([
            "cargo test",
            "cargo clippy --all-targets -- -D warnings",
            "cargo fmt --all -- --check"
        ]),
        "every verification command of the plan is carried into the step"
    );
}

#[test]
fn the_person_who_saved_a_plan_approves_it_only_where_the_config_allows_authors() {
    let repo = project();
    let d = repo.path();
    std::fs::create_dir_all(d.join(".github")).expect("mkdir");
    std::fs::write(
        d.join(".github/navin.yml"),
        "approval:\n  allow_author_approval: true\n",
    )
    .expect("write");
    let (id, _) = save(d, "make the greeting configurable");
    ok(d, HUMAN, &["plan", "approve", &id]);
    let r = record(d, &id);
    assert_eq!(r["status"], "approved");
    assert_eq!(r["requested_by"], "alice");
    assert_eq!(r["approvals"][0]["approver"], "alice");
}

#[test]
fn a_rejected_plan_cannot_start_until_it_is_edited_and_approved_again() {
    let repo = project();
    let d = repo.path();
    let (id, text) = save(d, "make the greeting configurable");
    ok(d, REVIEWER, &["plan", "approve", &id]);
    ok(
        d,
        HUMAN,
        &[
            "plan",
            "reject",
            &id,
            "--feedback",
            "read it from the environment",
        ],
    );
    let r = record(d, &id);
    assert_eq!(r["status"], "rejected");
    assert_eq!(
        r["rejections"][0]["feedback"],
        "read it from the environment"
    );
    assert!(r["approvals"][0]["revoked_at"].is_string(), "{r}");
    let err = refused(d, HUMAN, &["mission", "start", "--from-plan", &id]);
    assert!(err.contains("rejected"), "{err}");
    let err = refused(d, REVIEWER, &["plan", "approve", &id]);
    assert!(err.contains("rejected"), "{err}");

    let edited = text.replace(
        "Reach the new behaviour from here; no file shares the request's words yet.",
        "Read the greeting from the GREETING variable.",
    );
    assert_ne!(edited, text, "the fixture edit applies");
    let aside = tempfile::tempdir().expect("tmp");
    let file = aside.path().join("edited-plan.md");
    std::fs::write(&file, &edited).expect("write");
    ok(
        d,
        HUMAN,
        &["plan", "edit", &id, file.to_str().expect("utf8 path")],
    );
    assert_eq!(record(d, &id)["status"], "pending");
    ok(d, REVIEWER, &["plan", "approve", &id]);
    ok(d, HUMAN, &["mission", "start", "--from-plan", &id]);
    assert_eq!(
        mission(d)["board"]["tasks"][0]["description"],
        "Read the greeting from the GREETING variable."
    );
}

#[test]
fn an_edit_goes_stale_on_approvals_and_binds_the_brief_and_the_steps() {
    let repo = project();
    let d = repo.path();
    let (id, text) = save(d, "make the greeting configurable");
    ok(d, REVIEWER, &["plan", "approve", &id]);

    // Edited in the person's editor: a script standing in for one.
    let aside = tempfile::tempdir().expect("tmp");
    let script = aside.path().join("edit.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nsed -i 's/Reach the new behaviour from here;[^.]*[.]/Take the greeting from --greeting./' \"$1\"\n",
    )
    .expect("write");
    let editor = format!("sh {}", script.display());
    let out = navin(d, HUMAN, &["plan", "edit", &id], &[("EDITOR", &editor)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let r = record(d, &id);
    assert_eq!(
        r["status"], "pending",
        "approvals of the old text no longer count"
    );
    assert_eq!(
        r["original"],
        text.as_str(),
        "the first text is kept as the diff's base"
    );
    assert_eq!(r["edits"][0]["by"], "alice");
    let shown = ok(d, HUMAN, &["plan", "show", &id]);
    assert!(shown.contains("approved an earlier text"), "{shown}");
    let err = refused(d, HUMAN, &["mission", "start", "--from-plan", &id]);
    assert!(err.contains("approved an earlier text"), "{err}");

    ok(d, REVIEWER, &["plan", "approve", &id]);
    ok(
        d,
        HUMAN,
        &["mission", "start", "--from-plan", &id, "--cruise"],
    );
    let m = mission(d);
    assert_eq!(m["mission"]["mode"], "cruise");
    assert_eq!(
        m["board"]["tasks"][0]["description"],
        "Take the greeting from --greeting."
    );
    let brief = ok(d, AGENT, &["board", "brief", "C1"]);
    assert!(brief.contains("### Plan edits (binding)"), "{brief}");
    assert!(
        brief.contains("Take the greeting from --greeting."),
        "{brief}"
    );
}

#[test]
fn an_invalid_edit_names_the_problem_and_changes_nothing() {
    let repo = project();
    let d = repo.path();
    let (id, text) = save(d, "make the greeting configurable");
    let tip = ledger_tip(d);
    let broken = text.replace("## Proposed Changes", "## Proposed Chnages");
    let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(["plan", "edit", &id, "-"])
        .current_dir(d)
        .env("NAVIN_ACTOR", HUMAN)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(broken.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not valid, so nothing changed"), "{err}");
    assert!(
        err.contains("Proposed Changes"),
        "the error names the section: {err}"
    );
    assert_eq!(ledger_tip(d), tip);

    let err = refused(d, HUMAN, &["plan", "show", "local-000000000000"]);
    assert!(err.contains("no plan \"local-000000000000\""), "{err}");
}

#[test]
fn a_plan_whose_text_no_longer_matches_its_record_is_reported_not_used() {
    let repo = project();
    let d = repo.path();
    let (id, text) = save(d, "make the greeting configurable");
    ok(d, REVIEWER, &["plan", "approve", &id]);
    // Someone rewrites the text on the ledger branch behind Navin's back.
    let tampered = text.replace("make the greeting configurable", "delete everything");
    let aside = tempfile::tempdir().expect("tmp");
    let wt = aside.path().join("ledger-wt");
    git(
        d,
        &[
            "worktree",
            "add",
            "-q",
            wt.to_str().expect("utf8"),
            "navin/ledger",
        ],
    );
    std::fs::write(wt.join(format!(".navin/plans/{id}.md")), tampered).expect("write");
    git(
        &wt,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-qam",
            "tamper",
        ],
    );
    let out = navin(d, HUMAN, &["mission", "start", "--from-plan", &id], &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("content hash") && err.contains(&format!("{id}.md")),
        "{err}"
    );
    let m = navin(d, HUMAN, &["ledger", "show"], &[]);
    assert!(
        !m.status.success(),
        "no mission was started from a tampered plan"
    );
}

#[test]
fn a_staged_plan_starts_stage_by_stage_and_continue_waits_for_the_stage() {
    let repo = project();
    let d = repo.path();
    let (id, text) = save(d, "make the greeting configurable");
    let files: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("### File: "))
        .collect();
    assert!(!files.is_empty(), "{text}");
    let mut staged = format!("{}\n\n## Stages", text.trim_end());
    for n in 1..=2 {
        staged.push_str(&format!(
            "\n\n### Stage {n}: Part {n}\n\n- File: {}\n- Verification: true",
            files[0]
        ));
    }
    let aside = tempfile::tempdir().expect("tmp");
    let file = aside.path().join("plan.md");
    std::fs::write(&file, format!("{staged}\n")).expect("write");
    ok(
        d,
        HUMAN,
        &["plan", "edit", &id, file.to_str().expect("utf8")],
    );
    ok(d, REVIEWER, &["plan", "approve", &id]);
    ok(d, HUMAN, &["mission", "start", "--from-plan", &id]);
    let m = mission(d);
    assert_eq!(m["mission"]["stage_gate"]["policy"], "pause");
    assert_eq!(m["mission"]["stage_gate"]["released"], 1);
    assert_eq!(m["board"]["tasks"][0]["stage"], 1);
    let digest = ok(d, AGENT, &["digest"]);
    assert!(digest.contains("Stage 1/2"), "{digest}");
    let tip = ledger_tip(d);
    let err = refused(d, HUMAN, &["mission", "continue"]);
    assert!(
        err.contains("stage 1 is not done yet: S1 still open"),
        "{err}"
    );
    assert_eq!(ledger_tip(d), tip, "a refused continue writes nothing");
}
