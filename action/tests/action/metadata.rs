//! The Action's metadata and workflows as files: the root `action.yml` (the Marketplace
//! listing) against `action/action.yml`, the release workflow's assets, and the `if:` guard
//! of the comment-triggered examples, evaluated the way GitHub evaluates it.

use std::path::{Path, PathBuf};

use navin_domain::command::{is_bot_author, parse_comment};
use serde_json::{json, Value};
use serde_yaml_ng::Value as Yaml;

use crate::harness::workspace;

fn yaml(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The steps with the one key that must differ removed, and that key's values. Every
/// script step names the action's directory; steps that use another action (the build
/// cache) have no script.
fn steps_without_action_dir(action: &Yaml) -> (Yaml, Vec<String>) {
    let mut steps = action["runs"]["steps"].clone();
    let mut dirs = Vec::new();
    for step in steps.as_sequence_mut().expect("steps") {
        if step.get("uses").is_some() {
            continue;
        }
        let env = step
            .get_mut("env")
            .and_then(Yaml::as_mapping_mut)
            .expect("every script step has env");
        let dir = env.remove("NAVIN_ACTION_DIR").expect("NAVIN_ACTION_DIR");
        dirs.push(dir.as_str().expect("string").to_owned());
    }
    (steps, dirs)
}

#[test]
fn root_action_yml_has_exactly_the_inputs_outputs_and_steps_of_action_yml() {
    let root = yaml(&workspace().join("action.yml"));
    let action = yaml(&workspace().join("action/action.yml"));
    for key in [
        "name",
        "description",
        "author",
        "branding",
        "inputs",
        "outputs",
    ] {
        assert!(!action[key].is_null(), "action/action.yml has no {key}");
        assert_eq!(
            root[key], action[key],
            "`{key}` differs between the two action.yml"
        );
    }
    assert_eq!(root["runs"]["using"], Yaml::from("composite"));
    let (root_steps, root_dirs) = steps_without_action_dir(&root);
    let (steps, dirs) = steps_without_action_dir(&action);
    assert_eq!(root_steps, steps, "the two action.yml run different steps");
    assert!(
        dirs.iter().all(|d| d == "${{ github.action_path }}"),
        "{dirs:?}"
    );
    assert!(
        root_dirs
            .iter()
            .all(|d| d == "${{ github.action_path }}/action"),
        "{root_dirs:?}"
    );
    // The scripts the steps run are there, next to action/action.yml.
    for step in steps.as_sequence().expect("steps") {
        let Some(run) = step["run"].as_str() else {
            let uses = step["uses"]
                .as_str()
                .expect("a step runs a script or uses an action");
            assert!(
                uses.split_once('@').is_some_and(|(_, sha)| sha.len() >= 40),
                "{uses} is not pinned to a commit"
            );
            continue;
        };
        let script = run
            .split_whitespace()
            .find_map(|w| w.strip_prefix("\"$dir/"))
            .and_then(|w| w.strip_suffix('"'))
            .unwrap_or_else(|| panic!("no \"$dir/<script>\" in {run}"));
        assert!(
            workspace().join("action").join(script).is_file(),
            "action/{script} is missing"
        );
    }
}

#[test]
fn release_workflow_strips_the_binaries_and_publishes_a_sha256_per_asset() {
    let release = yaml(&workspace().join(".github/workflows/release.yml"));
    let steps = release["jobs"]["build"]["steps"]
        .as_sequence()
        .expect("build steps");
    let named = |name: &str| {
        steps
            .iter()
            .find(|s| s["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no step {name}"))
    };
    let build = named("Build");
    assert_eq!(
        build["env"]["CARGO_PROFILE_RELEASE_STRIP"].as_str(),
        Some("symbols")
    );
    assert!(build["run"]
        .as_str()
        .expect("run")
        .contains("--release --locked"));
    let package = named("Package")["run"].as_str().expect("run");
    assert!(package.contains("target/$TARGET/release"), "{package}");
    assert!(package.contains("dist/$asset.sha256"), "{package}");
    let publish = release["jobs"]["publish"]["steps"]
        .as_sequence()
        .expect("publish steps");
    assert!(publish.iter().any(|s| s["run"]
        .as_str()
        .is_some_and(|r| r.contains("sha256sum --check"))));
}

/// Evaluates a job's `if:` (with or without `${{ }}`) against a `github` context, with
/// the test workflow runner's evaluator (GitHub's rules: case-insensitive comparison, no
/// escapes but `''` in string literals).
fn eval_if(condition: &str, github: &Value) -> bool {
    struct Github<'a>(&'a Value);
    impl navin_e2e::workflow::expr::Context for Github<'_> {
        fn lookup(&self, name: &str) -> Value {
            if name == "github" {
                self.0.clone()
            } else {
                Value::Null
            }
        }
        fn status(&self, function: &str) -> bool {
            function != "failure" && function != "cancelled"
        }
    }
    navin_e2e::workflow::expr::condition(condition, &Github(github))
        .unwrap_or_else(|e| panic!("{e}"))
}

// ---- The examples' guard ------------------------------------------------------------------

const REPOSITORY: &str = "octo-org/hello";

fn comment(body: &str, login: &str, kind: &str) -> Value {
    json!({
        "event_name": "issue_comment",
        "repository": REPOSITORY,
        "event": {
            "action": "created",
            "comment": { "body": body, "user": { "login": login, "type": kind } },
            "issue": { "number": 3 },
        },
    })
}

fn by_person(body: &str) -> Value {
    comment(body, "mona", "User")
}

fn pull_request(event_name: &str, head_repo: &str) -> Value {
    json!({
        "event_name": event_name,
        "repository": REPOSITORY,
        "event": { "pull_request": { "number": 4, "head": { "repo": { "full_name": head_repo } } } },
    })
}

/// Every example with an `issue_comment` trigger, and the `if:` of each of its jobs that
/// does not wait on another (a job that `needs` one is skipped with it).
fn comment_guards() -> Vec<(String, String)> {
    let mut guards = Vec::new();
    let dir = workspace().join("action/examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    for path in files {
        let doc = yaml(&path);
        // serde_yaml reads YAML 1.2: the `on` key stays a string.
        let on = &doc["on"];
        let triggered = match on {
            Yaml::String(s) => s == "issue_comment",
            Yaml::Sequence(s) => s.iter().any(|t| t.as_str() == Some("issue_comment")),
            Yaml::Mapping(m) => m.contains_key("issue_comment"),
            _ => false,
        };
        if !triggered {
            continue;
        }
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        for (id, job) in doc["jobs"].as_mapping().expect("jobs") {
            if !job["needs"].is_null() {
                continue;
            }
            let condition = job["if"].as_str().unwrap_or_else(|| {
                panic!("{name}: job {id:?} has no if: and would start a runner for every comment")
            });
            guards.push((
                format!("{name}: job {}", id.as_str().unwrap_or("?")),
                condition.to_owned(),
            ));
        }
    }
    assert!(
        !guards.is_empty(),
        "no example is triggered by issue_comment"
    );
    guards
}

/// Comment bodies around the edges of what the parser reads as a command line.
fn sample_bodies() -> Vec<String> {
    let mut bodies: Vec<String> = [
        "/plan add a --since option",
        "/approve",
        "/Approve",
        "/APPROVE",
        "/aprove",
        "/usr/bin/env is not a command",
        "/",
        "LGTM, thanks!",
        "see a/b and https://example.com/plan",
        "please run /plan later",
        "`/plan` is how you ask",
        "> /approve\nquoted, not a command",
        "```\n/plan in a code block\n```",
        "    /plan indented four spaces is code",
        "\t/plan after a tab",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for prefix in ["", " ", "  ", "   ", "    "] {
        for before in [
            "",
            "Looks good.\n",
            "Looks good.\r\n",
            "Two\n\nparagraphs\n",
        ] {
            for command in ["/approve", "/mission ship it", "/status", "/stauts"] {
                bodies.push(format!("{before}{prefix}{command}\nthanks"));
            }
        }
    }
    bodies
}

#[test]
fn comment_examples_start_a_runner_for_every_comment_navin_reads_a_command_in() {
    for (job, condition) in comment_guards() {
        let mut started_for_commands = 0;
        for body in sample_bodies() {
            let commands = parse_comment(&body);
            let runs = eval_if(&condition, &by_person(&body));
            assert!(
                runs || commands.is_empty(),
                "{job}: skips {body:?}, which holds {commands:?}"
            );
            started_for_commands += usize::from(runs && !commands.is_empty());
        }
        assert!(started_for_commands > 50, "{job}: {started_for_commands}");
    }
}

#[test]
fn comment_examples_start_no_runner_for_comments_without_a_command_line() {
    for (job, condition) in comment_guards() {
        for body in [
            "LGTM, thanks!",
            "see a/b and https://example.com/plan",
            "please run /plan later",
            "`/plan` is how you ask",
            "Ship it.\n\nThen /approve the plan.",
            "\t/plan after a tab",
            "",
        ] {
            assert!(parse_comment(body).is_empty(), "{body:?} holds a command");
            assert!(
                !eval_if(&condition, &by_person(body)),
                "{job}: starts a runner for {body:?}"
            );
        }
    }
}

#[test]
fn comment_examples_skip_comments_by_bots_as_the_engine_ignores_them() {
    for (job, condition) in comment_guards() {
        for (login, kind) in [
            ("github-actions[bot]", "Bot"),
            ("renovate[bot]", "Bot"),
            ("some-app", "bot"),
            ("legacy[bot]", "User"),
        ] {
            assert!(
                is_bot_author(login, kind, ""),
                "the engine reads {login} as a person"
            );
            assert!(
                !eval_if(&condition, &comment("/approve", login, kind)),
                "{job}: starts a runner for {login} ({kind})"
            );
        }
        assert!(!is_bot_author("mona", "User", ""));
        assert!(
            eval_if(&condition, &comment("/approve", "mona", "User")),
            "{job}"
        );
    }
}

#[test]
fn comment_examples_still_run_for_their_pull_request_events() {
    for (job, condition) in comment_guards() {
        for event in ["pull_request", "pull_request_review"] {
            assert!(
                eval_if(&condition, &pull_request(event, REPOSITORY)),
                "{job}: skips {event}"
            );
            assert!(
                !eval_if(&condition, &pull_request(event, "fork-owner/hello")),
                "{job}: runs {event} from a fork with a read-only token"
            );
        }
    }
}

#[test]
fn expression_evaluator_reads_github_literals_and_functions_as_github_does() {
    let github = json!({ "event": { "comment": { "body": "Hi\n/Plan x" } } });
    // No escapes in string literals: '\n' is a backslash and an n.
    assert!(!eval_if(
        r"contains(github.event.comment.body, '\n/')",
        &github
    ));
    assert!(eval_if(
        r#"contains(github.event.comment.body, fromJSON('"\n/plan"'))"#,
        &github
    ));
    assert!(eval_if(
        "startsWith('Hello', 'hE') && endsWith('a[BOT]', '[bot]')",
        &github
    ));
    assert!(eval_if(
        "'Bot' == 'bot' && !('a' != 'A') && 'it''s' == 'IT''S'",
        &github
    ));
    assert!(!eval_if(
        "github.event.missing.deeper == 'x' || null",
        &github
    ));
}
