//! Every third-party action the shipped workflows and composite actions use is held to the
//! `action.yml` of the very commit they pin (vendored under `tests/fixtures/actions/`): no
//! input it does not declare, every input it requires, and the preconditions its docs
//! state for a workflow Navin dispatches as a bot.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_yaml_ng::Value;

use crate::harness::workspace;

/// The shipped files that use actions: the examples, this repository's workflows and the
/// two composite actions.
fn shipped() -> Vec<PathBuf> {
    let root = workspace();
    let mut files = vec![root.join("action.yml"), root.join("action/action.yml")];
    for dir in ["action/examples", ".github/workflows"] {
        for entry in std::fs::read_dir(root.join(dir)).expect("dir") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "yml" || e == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// One `uses:` of a third-party action: where, what, with which inputs, in which job.
struct Use {
    place: String,
    action: String,
    pin: String,
    with: BTreeSet<String>,
    job: Value,
    on: Value,
}

fn uses_in(name: &str, doc: &Value) -> Vec<Use> {
    let mut out = Vec::new();
    let mut steps = |job: &Value, job_name: &str, list: &Value| {
        for step in list.as_sequence().into_iter().flatten() {
            let Some(uses) = step["uses"].as_str() else {
                continue;
            };
            // Local actions and the placeholder for Navin's own release are not third-party.
            if uses.starts_with("./") || uses.starts_with("OWNER/REPO") {
                continue;
            }
            let (action, pin) = uses.split_once('@').unwrap_or((uses, ""));
            let with = step["with"]
                .as_mapping()
                .map(|m| {
                    m.keys()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            out.push(Use {
                place: format!("{name}: {job_name}"),
                action: action.to_owned(),
                pin: pin.to_owned(),
                with,
                job: job.clone(),
                on: doc["on"].clone(),
            });
        }
    };
    if let Some(jobs) = doc["jobs"].as_mapping() {
        for (job_name, job) in jobs {
            let job_name = job_name.as_str().unwrap_or_default();
            steps(job, job_name, &job["steps"]);
        }
    }
    steps(&Value::Null, "runs", &doc["runs"]["steps"]);
    out
}

/// What is wrong with one use, measured against the vendored metadata.
fn problems(u: &Use) -> Vec<String> {
    let mut out = Vec::new();
    if u.pin.len() != 40 || !u.pin.chars().all(|c| c.is_ascii_hexdigit()) {
        out.push(format!(
            "{}: {}@{} is not pinned to a full commit SHA",
            u.place, u.action, u.pin
        ));
        return out;
    }
    let path = workspace()
        .join("tests/fixtures/actions")
        .join(&u.action)
        .join(&u.pin)
        .join("action.yml");
    let Ok(text) = std::fs::read_to_string(&path) else {
        out.push(format!(
            "{}: no vendored action.yml for {}@{} (copy it to {})",
            u.place,
            u.action,
            u.pin,
            path.display()
        ));
        return out;
    };
    let meta: Value = serde_yaml_ng::from_str(&text).expect("the vendored action.yml parses");
    let inputs = meta["inputs"].as_mapping().cloned().unwrap_or_default();
    for key in &u.with {
        if !inputs.contains_key(key.as_str()) {
            out.push(format!(
                "{}: {} declares no input `{key}`",
                u.place, u.action
            ));
        }
    }
    for (name, spec) in &inputs {
        let name = name.as_str().unwrap_or_default();
        let required = spec["required"].as_bool().unwrap_or(false);
        if required && spec["default"].is_null() && !u.with.contains(name) {
            out.push(format!(
                "{}: {} requires the input `{name}`",
                u.place, u.action
            ));
        }
    }
    let dispatched =
        u.on.get("workflow_dispatch").is_some() || u.on.as_str() == Some("workflow_dispatch");
    match u.action.as_str() {
        // Agent mode checks the actor is human unless it is listed in `allowed_bots`,
        // and without `github_token` it asks for its App's token over OIDC.
        "anthropics/claude-code-action" => {
            if dispatched && !u.with.contains("allowed_bots") {
                out.push(format!("{}: claude-code-action refuses a run a bot dispatched unless `allowed_bots` lists it", u.place));
            }
            let oidc = u.job["permissions"]["id-token"].as_str() == Some("write");
            if !u.with.contains("github_token") && !oidc {
                out.push(format!(
                    "{}: claude-code-action needs `github_token` (or `id-token: write`)",
                    u.place
                ));
            }
        }
        // A run whose actor has no write access is refused unless bots are allowed.
        "openai/codex-action"
            if dispatched
                && !u.with.contains("allow-bots")
                && !u.with.contains("allow-bot-users") =>
        {
            out.push(format!("{}: codex-action refuses a run a bot dispatched unless `allow-bots` or `allow-bot-users` allows it", u.place));
        }
        _ => {}
    }
    out
}

fn all_uses() -> Vec<Use> {
    shipped()
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).expect("workflow");
            let doc: Value = serde_yaml_ng::from_str(&text).expect("yaml");
            let name = path
                .strip_prefix(workspace())
                .unwrap_or(path)
                .display()
                .to_string();
            uses_in(&name, &doc)
        })
        .collect()
}

#[test]
fn every_third_party_action_is_used_as_its_pinned_action_yml_declares() {
    let uses = all_uses();
    let actions: BTreeSet<&str> = uses.iter().map(|u| u.action.as_str()).collect();
    for wanted in [
        "actions/checkout",
        "anthropics/claude-code-action",
        "openai/codex-action",
        "actions/upload-artifact",
        "actions/cache/restore",
    ] {
        assert!(actions.contains(wanted), "{wanted} is used: {actions:?}");
    }
    let found: Vec<String> = uses.iter().flat_map(problems).collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn an_undeclared_input_a_missing_pin_or_a_bot_dispatch_without_allowance_is_caught() {
    let workflow = r#"
on:
  workflow_dispatch: {}
jobs:
  agent:
    permissions: {contents: read}
    steps:
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1
        with: {fetch-depth: 0, depth: 1}
      - uses: anthropics/claude-code-action@24dcd50c0568f0fc9e9211213a4fd2d9eb15c4e0
        with: {prompt: hi}
      - uses: openai/codex-action@v1
"#;
    let doc: Value = serde_yaml_ng::from_str(workflow).expect("yaml");
    let found: Vec<String> = uses_in("test.yml", &doc)
        .iter()
        .flat_map(problems)
        .collect();
    let text = found.join("\n");
    assert!(text.contains("declares no input `depth`"), "{text}");
    assert!(text.contains("`allowed_bots`"), "{text}");
    assert!(text.contains("needs `github_token`"), "{text}");
    assert!(
        text.contains("openai/codex-action@v1 is not pinned"),
        "{text}"
    );
    assert!(
        !text.contains("fetch-depth"),
        "a declared input passes: {text}"
    );
}

#[test]
fn the_examples_turn_on_the_agent_loop_and_the_seal() {
    let examples = workspace().join("action/examples");
    let event: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(examples.join("navin.yml")).expect("navin.yml"),
    )
    .expect("yaml");
    assert!(
        event["on"]["schedule"]
            .as_sequence()
            .is_some_and(|s| !s.is_empty()),
        "the event workflow runs Navin's clock on a schedule"
    );
    let job = &event["jobs"]["event"];
    assert_eq!(
        job["permissions"]["actions"].as_str(),
        Some("write"),
        "the event job may dispatch the agent workflow"
    );
    // Every use of Navin's own action passes the ledger key, so no job writes unsealed.
    for entry in std::fs::read_dir(&examples).expect("examples") {
        let path = entry.expect("entry").path();
        let doc: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path).expect("read")).expect("yaml");
        for (name, job) in doc["jobs"].as_mapping().into_iter().flatten() {
            for step in job["steps"].as_sequence().into_iter().flatten() {
                if !step["uses"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("OWNER/REPO"))
                {
                    continue;
                }
                assert_eq!(
                    step["with"]["ledger-key"].as_str(),
                    Some("${{ secrets.NAVIN_LEDGER_KEY }}"),
                    "{}: job {name:?} passes the ledger key",
                    path.display()
                );
            }
        }
    }
}
