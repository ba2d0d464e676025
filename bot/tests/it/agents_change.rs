//! A step needs its change, and nobody can forge one: the real `navin` and `navin mcp` binaries on real git in temp dirs.

use std::path::Path;

use serde_json::{json, Value};

use crate::agents::{checkout, git, navin_as, ok_as, refused_as, started, status_of};
use crate::mcp_support::McpClient;

const AGENT: &str = "subagent:codex";
const GREEN: &str = "validation:\n  commands:\n    test: git --version\n";

/// Commits a change to `src/parse.rs` (the step's work).
fn commit_work(d: &Path) {
    std::fs::create_dir_all(d.join("src")).expect("mkdir");
    std::fs::write(d.join("src/parse.rs"), "pub fn parse() {}\n").expect("write");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-qm", "parse dates"]);
}

#[test]
fn a_step_verified_on_the_tree_it_was_handed_is_refused_until_its_change_is_committed() {
    let dir = started(Some(GREEN));
    let d = dir.path();
    // The suite is green on the untouched tree, and that proves nothing about S1.
    ok_as(d, AGENT, &["board", "verify", "S1"]);
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(
        err.contains("nothing changed between the step's base"),
        "{err}"
    );
    assert_eq!(status_of(d, "S1"), "in_progress");
    // The work, committed and verified on its own commit, closes it.
    commit_work(d);
    ok_as(d, AGENT, &["board", "verify", "S1"]);
    ok_as(d, AGENT, &["board", "done", "S1"]);
    assert_eq!(status_of(d, "S1"), "done");
}

#[test]
fn a_step_whose_base_was_force_pushed_away_is_refused_naming_the_commit() {
    let dir = checkout(Some(GREEN));
    let d = dir.path();
    // Started on a commit that is then rewritten away.
    commit_work(d);
    ok_as(d, AGENT, &["board", "start", "S1"]);
    let base = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
    git(
        d,
        &["commit", "-q", "--amend", "-m", "parse dates, reworded"],
    );
    git(d, &["reflog", "expire", "--expire=now", "--all"]);
    git(d, &["gc", "-q", "--prune=now"]);
    ok_as(d, AGENT, &["board", "verify", "S1"]);
    let err = refused_as(d, AGENT, &["board", "done", "S1"]);
    assert!(err.contains(&base), "names the missing base: {err}");
    assert!(err.contains("does not have"), "{err}");
    assert_eq!(status_of(d, "S1"), "in_progress");
}

#[test]
fn board_done_over_mcp_refuses_a_step_with_no_change_and_closes_it_after_the_work() {
    let dir = checkout(Some(GREEN));
    let d = dir.path();
    let repo = d.to_str().expect("utf8");
    let mut mcp = McpClient::start(
        d,
        &["--mode", "agent", "--repo", repo],
        &[("NAVIN_ACTOR", AGENT)],
        "change",
    );
    let started = mcp.call_tool("board_start", json!({ "step": "S1" }));
    assert_ne!(started["isError"], true, "{started}");
    ok_as(d, AGENT, &["board", "verify", "S1"]);
    let refused = mcp.call_tool("board_done", json!({ "step": "S1" }));
    assert_eq!(refused["isError"], true, "{refused}");
    let code = refused
        .pointer("/structuredContent/error/code")
        .and_then(Value::as_str);
    assert_eq!(code, Some("no_change"), "{refused}");
    commit_work(d);
    ok_as(d, AGENT, &["board", "verify", "S1"]);
    let done = mcp.call_tool("board_done", json!({ "step": "S1" }));
    assert_ne!(done["isError"], true, "{done}");
    assert_eq!(status_of(d, "S1"), "done");
    mcp.kill();
}

/// Edits the ledger's two files at the branch tip through a worktree and commits them as
/// `who` with `message`: what anyone with push access can do.
pub(crate) fn hand_edit(d: &Path, who: &str, message: &str, edit: impl Fn(&mut Value, &mut Value)) {
    let tree = d.join(".git").join("hand-edit");
    git(
        d,
        &[
            "worktree",
            "add",
            "-q",
            tree.to_str().expect("utf8"),
            "navin/ledger",
        ],
    );
    let path = |name: &str| tree.join(".navin/board").join(name);
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path(name)).expect("read")).expect("json")
    };
    let (mut mission, mut board) = (read("mission.json"), read("board.json"));
    edit(&mut mission, &mut board);
    for (name, value) in [("mission.json", &mission), ("board.json", &board)] {
        let text = serde_json::to_string_pretty(value).expect("json") + "\n";
        std::fs::write(path(name), text).expect("write");
    }
    // Committed as `who` (the helper `git` commits as a fixed test identity).
    let committed = std::process::Command::new("git")
        .args(["commit", "-qam", message])
        .current_dir(&tree)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", who)
        .env("GIT_AUTHOR_EMAIL", "x@example.com")
        .env("GIT_COMMITTER_NAME", who)
        .env("GIT_COMMITTER_EMAIL", "x@example.com")
        .status()
        .expect("git commit");
    assert!(committed.success(), "git commit as {who}");
    git(
        d,
        &[
            "worktree",
            "remove",
            "--force",
            tree.to_str().expect("utf8"),
        ],
    );
}

/// Puts `n` empty commits on `branch` of the repository at `dir` (a checkout or a bare
/// repository), on top of `under`, made as git makes them (fast-import).
pub(crate) fn bury(dir: &Path, branch: &str, under: &str, n: usize) {
    let mut script = String::new();
    for i in 0..n {
        script.push_str(&format!(
            "commit refs/heads/{branch}\ncommitter m <m@example.com> {} +0000\ndata 6\nchore\n",
            1_700_000_000 + i
        ));
        if i == 0 {
            script.push_str(&format!("from {under}\n"));
        }
        script.push('\n');
    }
    let mut child = std::process::Command::new("git")
        .args(["fast-import", "--quiet", "--force"])
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git fast-import");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), script.as_bytes())
        .expect("write");
    // fast-import's commits carry the parent's tree when they name no files.
    drop(child.stdin.take());
    assert!(child.wait().expect("fast-import").success());
    let count = git(dir, &["rev-list", "--count", &format!("{under}..{branch}")]);
    assert_eq!(count.trim(), n.to_string());
}

#[test]
fn a_forged_done_under_a_thousand_empty_commits_is_refused_and_not_built_upon() {
    let dir = started(Some(GREEN));
    let d = dir.path();
    hand_edit(d, "mallory", "tweak", |m, b| {
        b["tasks"][0]["status"] = "done".into();
        m["steps"][0]["status"] = "done".into();
    });
    let forged = git(d, &["rev-parse", "navin/ledger"]).trim().to_owned();
    bury(d, "navin/ledger", &forged, 1000);
    let shown = navin_as(d, "human:maintainer", &["ledger", "show"], "");
    assert_eq!(shown.status.code(), Some(2), "refused, not read");
    let err = String::from_utf8_lossy(&shown.stderr);
    assert!(
        err.contains(&forged) && err.contains("marks S1 done"),
        "{err}"
    );
    let tip = git(d, &["rev-parse", "navin/ledger"]);
    let note = navin_as(
        d,
        "human:maintainer",
        &["ledger", "update", "--add-fact", "x", "--reason", "y"],
        "",
    );
    assert!(!note.status.success(), "nothing is written on top");
    assert_eq!(git(d, &["rev-parse", "navin/ledger"]), tip);
}

#[test]
fn an_unsealed_raise_of_the_missions_budget_is_refused() {
    let dir = started(Some(GREEN));
    let d = dir.path();
    hand_edit(d, "mallory", "tweak", |m, _| {
        m["progress"]["budget"]["max_retries"] = 50.into();
    });
    let shown = navin_as(d, "human:maintainer", &["ledger", "show"], "");
    assert_eq!(shown.status.code(), Some(2));
    let err = String::from_utf8_lossy(&shown.stderr);
    assert!(err.contains("changes the mission's budget"), "{err}");
}

#[test]
fn an_agent_that_relaxes_the_config_on_the_default_branch_itself_still_runs_the_missions_command() {
    // The mission was made while the default branch's command failed.
    let dir = started(Some(
        "validation:\n  commands:\n    test: git no-such-command\n",
    ));
    let d = dir.path();
    // The agent commits a command that always passes to the local default branch (the
    // branch `navin board verify` used to read), and points a fake origin/HEAD at it.
    std::fs::write(
        d.join(".github/navin.yml"),
        "validation:\n  commands:\n    test: \"true\"\n",
    )
    .expect("write");
    commit_work(d);
    let head = git(d, &["rev-parse", "HEAD"]).trim().to_owned();
    git(d, &["update-ref", "refs/remotes/origin/main", &head]);
    git(
        d,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    let err = refused_as(d, AGENT, &["board", "verify", "S1"]);
    assert!(err.contains("red test_run"), "{err}");
    let show: Value =
        serde_json::from_str(&ok_as(d, "human:maintainer", &["--json", "ledger", "show"]))
            .expect("json");
    let run = &show["board"]["tasks"][0]["evidence"][0]["run"];
    assert_eq!(run["command"], json!(["git", "no-such-command"]), "{run}");
    assert_eq!(status_of(d, "S1"), "in_progress");
}

/// `navin ARGS` in `dir` for `repository` under the shared `key`, as a person running
/// two repositories (or the App serving a fork and its parent) would.
fn navin_for(dir: &Path, repository: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NAVIN_ACTOR", "human:maintainer")
        .env("NAVIN_LEDGER_KEY", "k".repeat(40))
        .env("NAVIN_REPOSITORY", repository)
        .output()
        .expect("navin runs")
}

#[test]
fn a_commit_sealed_for_another_repository_under_the_same_key_is_refused() {
    let parent = tempfile::tempdir().expect("tmp");
    let p = parent.path();
    git(p, &["init", "-q"]);
    std::fs::write(p.join("README.md"), "hello\n").expect("write");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-qm", "init"]);
    // The parent's ledger, sealed for it.
    let init = navin_for(p, "local:parent", &["ledger", "init", "--goal", "Ship"]);
    assert!(
        init.status.success(),
        "{}",
        String::from_utf8_lossy(&init.stderr)
    );
    // A fork shares that history; a write Navin seals there is for the fork.
    let fork = tempfile::tempdir().expect("tmp");
    let f = fork.path();
    git(f, &["clone", "-q", &p.display().to_string(), "."]);
    git(f, &["branch", "navin/ledger", "origin/navin/ledger"]);
    let fact = navin_for(
        f,
        "local:fork",
        &[
            "ledger",
            "update",
            "--add-fact",
            "the fork's fact",
            "--reason",
            "fork work",
        ],
    );
    assert!(
        fact.status.success(),
        "{}",
        String::from_utf8_lossy(&fact.stderr)
    );
    let replayed = git(f, &["rev-parse", "navin/ledger"]).trim().to_owned();
    // The fork's sealed commit, fast-forwarded onto the parent's ledger branch.
    git(
        p,
        &[
            "fetch",
            "-q",
            &f.display().to_string(),
            "navin/ledger:navin/ledger",
        ],
    );
    let shown = navin_for(p, "local:parent", &["ledger", "show"]);
    assert_eq!(shown.status.code(), Some(2), "refused, not read");
    let err = String::from_utf8_lossy(&shown.stderr);
    assert!(err.contains(&replayed), "names the replayed commit: {err}");
    // In the fork, where it was sealed, it reads.
    assert!(navin_for(f, "local:fork", &["ledger", "show"])
        .status
        .success());
}
