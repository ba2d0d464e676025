//! The checked-in schema against the types, the documented examples and the parser: a
//! file the schema passes must parse, and a file the parser refuses for its shape must
//! fail the schema too. Run with NAVIN_BLESS=1 to regenerate the schema file.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::super::parse_repo_config;
use super::schema_json;

fn workspace_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&super::schema().to_value()).unwrap()
}

/// The YAML as an editor's language server sees it: plain JSON values.
fn as_json(yaml: &str) -> serde_json::Value {
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).unwrap();
    serde_json::to_value(value).unwrap()
}

fn schema_errors(validator: &jsonschema::Validator, yaml: &str) -> Vec<String> {
    validator
        .iter_errors(&as_json(yaml))
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Every ```yaml block of docs/config.md: on that page each is a `.github/navin.yml`.
fn documented_examples() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(workspace_file("docs/config.md")).unwrap();
    let mut examples = Vec::new();
    let mut rest = doc.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + 8..];
        let end = body
            .find("```")
            .expect("a yaml block in docs/config.md ends");
        let line = doc[..doc.len() - rest.len() + start].lines().count() + 1;
        examples.push((
            format!("docs/config.md line {line}"),
            body[..end].to_owned(),
        ));
        rest = &body[end + 3..];
    }
    examples
}

#[test]
fn schema_file_matches_the_config_types() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/navin.schema.json");
    let generated = schema_json();
    if std::env::var_os("NAVIN_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} drifted from the config types; regenerate with `NAVIN_BLESS=1 cargo test -p navin-domain schema_file` (or `navin config schema > bot/domain/schema/navin.schema.json`) and review the diff",
        path.display()
    );
}

#[test]
fn documented_examples_pass_the_schema_and_the_parser() {
    let validator = validator();
    let mut examples = documented_examples();
    assert!(
        examples.len() >= 2,
        "docs/config.md lost its examples: {examples:?}"
    );
    let own = workspace_file(".github/navin.yml");
    if let Ok(text) = std::fs::read_to_string(&own) {
        examples.push((".github/navin.yml".to_owned(), text));
    }
    for (place, text) in examples {
        let errors = schema_errors(&validator, &text);
        assert!(errors.is_empty(), "{place} fails the schema: {errors:?}");
        if let Err(e) = parse_repo_config(&text) {
            panic!("{place} passes the schema but the parser refuses it: {e}");
        }
    }
}

#[test]
fn the_schema_refuses_what_the_parser_refuses() {
    let validator = validator();
    for (why, text) in [
        (
            "unknown key",
            "ledger_branch: navin/ledger\ntrusted_apps: [1]\n",
        ),
        ("nested unknown key", "evidence:\n  trusted_app: [1]\n"),
        ("text for a number", "budgets:\n  max_retries: lots\n"),
        ("negative number", "budgets:\n  max_stalls: -1\n"),
        ("list for a section", "approval: [1]\n"),
        ("unknown choice", "stages: sometimes\n"),
        ("unknown change class", "require_plan_for: [everything]\n"),
        ("duration in words", "evidence:\n  min_ci_time: 5 minutes\n"),
        (
            "duration with an unknown unit",
            "planner:\n  max_time: 5d\n",
        ),
        ("null duration", "questions:\n  default_after: ~\n"),
        ("zero approvals", "approval:\n  required_approvals: 0\n"),
        ("zero threshold", "plan_mode:\n  auto_threshold: 0\n"),
        ("no trusted app", "evidence:\n  trusted_apps: []\n"),
        ("one planner turn", "planner:\n  max_turns: 1\n"),
        ("empty model name", "models:\n  plan: ''\n"),
        ("a list, not a mapping", "- ledger_branch\n"),
    ] {
        assert!(
            parse_repo_config(text).is_err(),
            "{why}: the parser takes {text:?}"
        );
        assert!(
            !schema_errors(&validator, text).is_empty(),
            "{why}: the schema takes {text:?}, which the parser refuses"
        );
    }
}

#[test]
fn the_schema_takes_what_the_parser_takes() {
    let validator = validator();
    for (why, text) in [
        ("empty file", ""),
        ("comments only", "# nothing yet\n"),
        ("duration in seconds", "evidence:\n  min_ci_time: 90\n"),
        ("duration with units", "evidence:\n  min_ci_time: 1h30m\n"),
        ("quoted seconds", "questions:\n  default_after: '3600'\n"),
        (
            "a class listed twice",
            "require_plan_for: [multi-file-change, multi-file-change]\n",
        ),
        (
            "null optional number",
            "auto_accept:\n  after_n_safe_operations: ~\n",
        ),
        ("null agent", "dispatch:\n  agent: ~\n"),
        ("whole number for a cost", "budgets:\n  max_cost_usd: 25\n"),
        ("slash before a command", "allow_on_closed: [/pause]\n"),
        // YAML reads these as numbers and booleans; the parser takes them as text.
        ("number as a branch", "ledger_branch: 2024\n"),
        (
            "number and boolean as labels",
            "dispatch:\n  labels: [true, 7]\n",
        ),
        ("number as a model", "models:\n  plan: 4\n"),
        // What is left when every key under a section or list is commented out. The
        // parser takes only this empty form; an explicit `~` is refused, which JSON
        // cannot tell apart, so there the schema is the looser of the two.
        (
            "a section emptied by comments",
            "approval:\n#  required_approvals: 2\n",
        ),
        (
            "a list left empty",
            "require_plan_for:\ndispatch:\n  labels:\n",
        ),
    ] {
        if let Err(e) = parse_repo_config(text) {
            panic!("{why}: the parser refuses {text:?}: {e}");
        }
        let errors = schema_errors(&validator, text);
        assert!(
            errors.is_empty(),
            "{why}: the schema refuses {text:?}: {errors:?}"
        );
    }
}

#[test]
fn schema_keeps_the_defaults_and_the_descriptions() {
    let schema = super::schema().to_value();
    let planner = &schema["$defs"]["PlannerConfig"]["properties"];
    assert_eq!(planner["max_time"]["default"], "5m");
    assert_eq!(planner["max_turns"]["default"], 16);
    let evidence = &schema["$defs"]["Evidence"]["properties"];
    assert_eq!(
        evidence["trusted_apps"]["default"],
        serde_json::json!([15368])
    );
    assert_eq!(evidence["min_ci_time"]["default"], "0s");
    assert_eq!(
        schema["properties"]["ledger_branch"]["default"],
        "navin/ledger"
    );
    assert_eq!(schema["additionalProperties"], false);
    let described = schema["properties"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, p)| p["description"].as_str().is_none_or(str::is_empty))
        .map(|(k, _)| k.clone())
        .collect::<Vec<_>>();
    assert!(
        described.is_empty(),
        "keys without a description: {described:?}"
    );
}

proptest! {
    /// The duration pattern is a second copy of the duration grammar; random spellings
    /// keep the two in step.
    #[test]
    fn schema_and_parser_agree_on_durations(text in "[0-9smhd +]{0,8}") {
        let yaml = format!("evidence:\n  min_ci_time: {}\n", serde_json::to_string(&text).unwrap());
        let parsed = parse_repo_config(&yaml).is_ok();
        let valid = validator().is_valid(&as_json(&yaml));
        prop_assert_eq!(parsed, valid, "{:?}", text);
    }
}
