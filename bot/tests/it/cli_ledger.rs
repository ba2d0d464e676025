//! The `navin ledger`/`navin board` CLI as a user runs it: real binary, real git in temp dirs.

use std::path::Path;
use std::process::{Command, Output};

/// The CLI's own config directory (the key files) for the repository at `dir`: inside
/// its temporary directory, so it goes with it, never the user's real one.
fn config_dir(dir: &Path) -> std::path::PathBuf {
    dir.join(".git").join("test-home-config")
}

fn navin(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_navin"))
        .args(args)
        .current_dir(dir)
        .env("NAVIN_CONFIG_DIR", config_dir(dir))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NAVIN_ACTOR", "human:tester")
        .output()
        .expect("navin runs")
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = navin(dir, args);
    assert!(
        out.status.success(),
        "navin {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf8")
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    git(dir.path(), &["init", "-q"]);
    dir
}

#[test]
fn walkthrough_from_init_to_done_with_the_evidence_gate() {
    let dir = scratch();
    let d = dir.path();
    ok(
        d,
        &[
            "ledger",
            "init",
            "--goal",
            "Add dark mode",
            "--constraint",
            "no new dependencies",
        ],
    );
    ok(
        d,
        &[
            "board",
            "add",
            "S1",
            "--title",
            "theme tokens",
            "--validation",
            "test",
        ],
    );
    ok(
        d,
        &[
            "board",
            "add",
            "S2",
            "--title",
            "toggle",
            "--depends-on",
            "S1",
        ],
    );
    let next: serde_json::Value =
        serde_json::from_str(&ok(d, &["--json", "board", "next"])).expect("json array");
    assert_eq!(next.as_array().map(|a| a.len()), Some(1));
    assert_eq!(next[0]["id"], "S1");

    let refused = navin(d, &["board", "done", "S1", "--evidence", "I ran the tests"]);
    assert_eq!(refused.status.code(), Some(1), "a rule refusal exits 1");
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains("S1") && msg.contains("prose"),
        "names the step and the rule: {msg}"
    );

    // CI evidence typed by hand without the run it came from proves nothing.
    let evidence = d.join("ev.json");
    std::fs::write(
        &evidence,
        r#"{"kind":"check_run","ok":true,"summary":"ci/test passed"}"#,
    )
    .expect("write");
    let forged = navin(
        d,
        &[
            "board",
            "done",
            "S1",
            "--evidence-json",
            evidence.to_str().expect("utf8"),
        ],
    );
    assert_eq!(forged.status.code(), Some(1), "a rule refusal exits 1");
    let msg = String::from_utf8_lossy(&forged.stderr);
    assert!(
        msg.contains("must name its run") && msg.contains("app_id"),
        "{msg}"
    );
    std::fs::write(&evidence, r#"{"kind":"check_run","ok":true,"summary":"ci/test passed","check_run_id":42,"app_id":15368,"head_sha":"abc123","conclusion":"success"}"#)
        .expect("write");
    let out = ok(
        d,
        &[
            "board",
            "done",
            "S1",
            "--evidence-json",
            evidence.to_str().expect("utf8"),
        ],
    );
    assert!(out.contains("now ready: S2"), "{out}");

    let shown: serde_json::Value =
        serde_json::from_str(&ok(d, &["--json", "ledger", "show"])).expect("json");
    assert_eq!(shown["mission"]["steps"][0]["status"], "done");
    assert_eq!(
        shown["board"]["tasks"][0]["evidence"][0]["check_run_id"],
        42
    );
    assert_eq!(
        shown["mission"]["history"].as_array().map(|h| h.len()),
        Some(4)
    );

    // Plain git reads the same thing.
    let raw = git(d, &["show", "navin/ledger:.navin/board/board.json"]);
    assert!(raw.contains("\"ci/test passed\""));
    let log = git(d, &["log", "--format=%s", "navin/ledger"]);
    assert_eq!(log.lines().next(), Some("navin: done v4 by human:tester"));
}

#[test]
fn usage_errors_and_unreadable_ledgers_exit_2() {
    let dir = scratch();
    let d = dir.path();
    assert_eq!(navin(d, &["board", "add"]).status.code(), Some(2));
    assert_eq!(
        navin(
            d,
            &[
                "board",
                "add",
                "S1",
                "--title",
                "x",
                "--validation",
                "fuzzy"
            ]
        )
        .status
        .code(),
        Some(2)
    );
    let not_git = tempfile::tempdir().expect("tmp");
    let out = navin(not_git.path(), &["ledger", "show"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not in a git repository"));

    ok(d, &["ledger", "init", "--goal", "g"]);
    // Corrupt mission.json by hand on the ledger branch.
    let work = tempfile::tempdir().expect("tmp");
    git(
        work.path(),
        &[
            "clone",
            "-q",
            "--branch",
            "navin/ledger",
            d.to_str().expect("utf8"),
            "c",
        ],
    );
    let c = work.path().join("c");
    std::fs::write(c.join(".navin/board/mission.json"), "{ not json").expect("write");
    git(
        &c,
        &[
            "-c",
            "user.name=x",
            "-c",
            "user.email=x@x",
            "commit",
            "-qam",
            "oops",
        ],
    );
    git(&c, &["push", "-q", "origin", "navin/ledger"]);
    let out = navin(d, &["board", "add", "S1", "--title", "x"]);
    assert_eq!(out.status.code(), Some(2));
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains(".navin/board/mission.json"),
        "names the file: {msg}"
    );
    assert_eq!(
        git(d, &["show", "navin/ledger:.navin/board/mission.json"]),
        "{ not json",
        "left untouched"
    );
}

#[test]
fn init_refuses_a_live_mission_unless_replace() {
    let dir = scratch();
    let d = dir.path();
    ok(d, &["ledger", "init", "--goal", "first"]);
    let out = navin(d, &["ledger", "init", "--goal", "second"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--replace"));
    ok(d, &["ledger", "init", "--goal", "second", "--replace"]);
}

#[test]
fn four_concurrent_processes_times_fifty_writes_lose_nothing() {
    let dir = scratch();
    let d = dir.path().to_path_buf();
    ok(&d, &["ledger", "init", "--goal", "race"]);
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let d = d.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let id = format!("W{w}-{i}");
                    ok(&d, &["board", "add", &id, "--title", "parallel step"]);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let shown: serde_json::Value =
        serde_json::from_str(&ok(&d, &["--json", "ledger", "show"])).expect("json");
    assert_eq!(
        shown["board"]["tasks"].as_array().map(|t| t.len()),
        Some(200),
        "every write present"
    );
    assert_eq!(shown["mission"]["version"], 201);
    let commits = git(&d, &["rev-list", "--count", "navin/ledger"]);
    assert_eq!(commits.trim(), "201", "one commit per write, none lost");
}

#[test]
fn remote_writes_fetch_first_and_push_after() {
    let root = tempfile::tempdir().expect("tmp");
    let r = root.path();
    git(r, &["init", "-q", "--bare", "remote.git"]);
    for name in ["a", "b"] {
        git(r, &["init", "-q", name]);
        git(
            &r.join(name),
            &[
                "remote",
                "add",
                "origin",
                r.join("remote.git").to_str().expect("utf8"),
            ],
        );
    }
    ok(
        &r.join("a"),
        &["--remote", "origin", "ledger", "init", "--goal", "shared"],
    );
    ok(
        &r.join("b"),
        &[
            "--remote", "origin", "board", "add", "S1", "--title", "from b",
        ],
    );
    ok(
        &r.join("a"),
        &[
            "--remote",
            "origin",
            "board",
            "add",
            "S2",
            "--title",
            "from a",
            "--depends-on",
            "S1",
        ],
    );
    let board = git(
        &r.join("remote.git"),
        &["show", "navin/ledger:.navin/board/board.json"],
    );
    assert!(
        board.contains("from a") && board.contains("from b"),
        "{board}"
    );
}

/// A `git reset` of the ledger branch between two `navin` runs is refused by the next
/// run, naming the rewrite, and nothing is written on top of the rewound tip.
#[test]
fn a_ledger_branch_rewound_between_two_runs_is_refused_by_the_next() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q"]);
    ok(d, &["ledger", "init", "--goal", "Ship it"]);
    for n in 0..4 {
        ok(
            d,
            &[
                "ledger",
                "update",
                "--add-fact",
                &format!("fact {n}"),
                "--reason",
                "note",
            ],
        );
    }
    let tip = git(d, &["rev-parse", "navin/ledger"]);
    git(
        d,
        &["update-ref", "refs/heads/navin/ledger", "navin/ledger~3"],
    );
    let refused = navin(
        d,
        &["ledger", "update", "--add-fact", "late", "--reason", "note"],
    );
    assert_eq!(
        refused.status.code(),
        Some(2),
        "an unwritable ledger exits 2"
    );
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(msg.contains("rewritten"), "{msg}");
    assert_ne!(git(d, &["rev-parse", "navin/ledger"]), tip, "still rewound");
    assert_eq!(
        git(d, &["rev-list", "--count", "navin/ledger"]).trim(),
        "2",
        "nothing written on top of the rewound tip"
    );
}

/// Defect 7 of the hardening review: a consistent hand edit of both ledger files that
/// marks a `test` step done, committed by someone other than Navin, is refused on read
/// and nothing is built on it; a foreign commit that proves nothing is read as usual.
#[test]
fn a_hand_committed_done_of_a_gated_step_is_refused_and_not_built_upon() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    git(d, &["init", "-q"]);
    ok(d, &["ledger", "init", "--goal", "Ship it"]);
    ok(
        d,
        &[
            "board",
            "add",
            "S1",
            "--title",
            "Tests",
            "--validation",
            "test",
        ],
    );
    ok(d, &["board", "add", "S2", "--title", "Notes"]);
    let edit = |files: &dyn Fn(&mut serde_json::Value, &mut serde_json::Value),
                who: &str,
                message: &str| {
        crate::agents_change::hand_edit(d, who, message, files);
    };
    // Harmless: a step retitled by hand.
    edit(
        &|_, b| b["tasks"][0]["title"] = "First, said better".into(),
        "carol",
        "hand edit",
    );
    assert!(ok(d, &["ledger", "show"]).contains("Ship it"));
    // The commits are sealed with a key kept outside the repository, in the user's
    // config directory, readable by its owner alone; `.git/config` holds only the id.
    let id = git(d, &["config", "--local", "navin.repositoryid"]);
    let key_file = config_dir(d).join("keys").join(id.trim());
    let key = std::fs::read_to_string(&key_file).expect("the key file");
    assert_eq!(key.trim().len(), 64, "a generated key: {key}");
    let no_key = Command::new("git")
        .args(["config", "--local", "navin.ledgerkey"])
        .current_dir(d)
        .output()
        .expect("git");
    assert!(!no_key.status.success(), "no key in .git/config");
    // A commit dressed as Navin's (its committer name and trailers) relaxes S1's
    // validation; then a forged done, both files consistent each time.
    edit(
        &|m, b| {
            b["tasks"][0]["validation"] = "none".into();
            m["steps"][0]["validation"] = "none".into();
        },
        "Navin",
        "navin: update v5 by human:tester\n\nNavin-Operation: update\n",
    );
    let relaxed = git(d, &["rev-parse", "navin/ledger"]);
    edit(
        &|m, b| {
            b["tasks"][0]["status"] = "done".into();
            m["steps"][0]["status"] = "done".into();
        },
        "mallory",
        "hand edit",
    );
    let tip = git(d, &["rev-parse", "navin/ledger"]);
    let refused = navin(d, &["ledger", "show"]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a ledger that is not built upon exits 2"
    );
    let msg = String::from_utf8_lossy(&refused.stderr);
    assert!(
        msg.contains(&format!(
            "the ledger commit {} by Navin was not made by Navin (it carries no valid Navin seal) and changes S1's validation",
            relaxed.trim()
        )),
        "{msg}"
    );
    let write = navin(d, &["board", "start", "S2"]);
    assert_eq!(write.status.code(), Some(2));
    assert_eq!(
        git(d, &["rev-parse", "navin/ledger"]),
        tip,
        "nothing written on top"
    );
}

#[test]
fn a_step_that_names_an_open_question_pauses_the_mission_until_a_person_answers_it() {
    let dir = scratch();
    let d = dir.path();
    ok(d, &["ledger", "init", "--goal", "Localise the app"]);
    ok(
        d,
        &[
            "board",
            "add",
            "S1",
            "--title",
            "pick the locale for src/i18n.rs",
        ],
    );
    ok(
        d,
        &[
            "ledger",
            "update",
            "--add-missing-info",
            "Which locale should src/i18n.rs default to?",
            "--reason",
            "unknown",
        ],
    );
    let held = navin(d, &["board", "start", "S1"]);
    assert_eq!(held.status.code(), Some(1));
    let err = String::from_utf8_lossy(&held.stderr);
    assert!(err.contains("S1 waits on open questions"), "{err}");
    assert!(err.contains("1. Which locale"), "{err}");
    assert!(err.contains("navin ledger answer"), "{err}");
    let show = ok(d, &["ledger", "show", "--json"]);
    let mission: serde_json::Value = serde_json::from_str(&show).expect("json");
    assert_eq!(mission["mission"]["status"], "paused", "{show}");
    assert_eq!(mission["mission"]["pause_reason"], "human", "{show}");
    assert_eq!(mission["board"]["tasks"][0]["status"], "planned");

    // A wrong number names the open questions and changes nothing.
    let wrong = navin(d, &["ledger", "answer", "2", "fr-FR"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("1. Which locale"));

    let answered = ok(d, &["ledger", "answer", "1", "en-GB"]);
    assert!(answered.contains("resumed"), "{answered}");
    let show = ok(d, &["ledger", "show", "--json"]);
    let mission: serde_json::Value = serde_json::from_str(&show).expect("json");
    assert_eq!(mission["mission"]["status"], "running", "{show}");
    assert!(
        mission["mission"]["facts"][0]
            .as_str()
            .is_some_and(|f| f.ends_with("→ en-GB")),
        "{show}"
    );
    ok(d, &["board", "start", "S1"]);
}

#[test]
fn the_local_actor_is_the_user_running_navin_unless_actor_says_otherwise() {
    let dir = scratch();
    let d = dir.path();
    let run = |args: &[&str], user: &str, actor: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_navin"));
        cmd.args(args)
            .current_dir(d)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("NAVIN_ACTOR")
            .env_remove("USERNAME")
            .env("USER", user);
        if let Some(a) = actor {
            cmd.env("NAVIN_ACTOR", a);
        }
        let out = cmd.output().expect("navin runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["ledger", "init", "--goal", "Ship it"], "maria", None);
    run(
        &[
            "ledger",
            "update",
            "--add-fact",
            "uses UTC",
            "--reason",
            "checked",
        ],
        "maria",
        Some("human:lead"),
    );
    run(
        &["ledger", "pause", "--reason", "lunch"],
        "not a login!",
        None,
    );
    let history: serde_json::Value =
        serde_json::from_str(&ok(d, &["--json", "ledger", "history"])).expect("json");
    let actors: Vec<String> = history
        .as_array()
        .expect("entries")
        .iter()
        .rev()
        .map(|e| {
            let body = e["body"].as_str().unwrap_or_default();
            body.lines()
                .find_map(|l| l.strip_prefix("Navin-Actor: "))
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        actors,
        ["human:maria", "human:lead", "human:local"],
        "{history}"
    );
}
