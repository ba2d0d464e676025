//! A complete, valid plan used across the tests.

use crate::plan::*;

pub(crate) fn sample_plan() -> Plan {
    Plan {
        title: "Add a YAML config loader".to_owned(),
        persona: READ_ONLY_PERSONA.to_owned(),
        goal: "Load `.navin/config.yaml` at start-up. Unknown keys are rejected with the key's name."
            .to_owned(),
        architecture: "One Rust workspace:\n\n- `bot/` serves webhooks.\n- `ledger-git/` holds the domain."
            .to_owned(),
        capabilities: "Parses commands, writes plans, keeps the ledger.".to_owned(),
        data_flow: "Webhook -> queue -> engine -> ledger branch.\n\n```text\n## not a heading\n# nor this\n```"
            .to_owned(),
        target_state: "A `Config` struct read once and passed to handlers.".to_owned(),
        impact_isolation: "Only `bot/src/config.rs` and its tests change; the ledger is untouched."
            .to_owned(),
        changes: vec![
            FileChange {
                path: "bot/src/config.rs".to_owned(),
                operation: Operation::Edit,
                change: "Add a YAML loader with deny_unknown_fields.".to_owned(),
                rationale: "Typos in config must fail loudly.".to_owned(), optional: false,
            },
            FileChange {
                path: "bot/Cargo.toml".to_owned(),
                operation: Operation::Edit,
                change: "Add serde_yaml.".to_owned(),
                rationale: "Needed by the loader.".to_owned(), optional: false,
            },
            FileChange {
                path: "bot/src/legacy_config.rs".to_owned(),
                operation: Operation::Delete,
                change: "Remove the old INI reader.".to_owned(),
                rationale: "Replaced by the YAML loader.".to_owned(), optional: false,
            },
        ],
        new_dependencies: vec!["serde_yaml 0.9 (YAML parsing)".to_owned()],
        risks: vec![
            "Existing INI configs stop loading.".to_owned(),
            "YAML anchors allow very large documents.".to_owned(),
            "Error messages might leak secret values.".to_owned(),
        ],
        next_steps: vec![
            "Write the loader and its unit tests.".to_owned(),
            "Run `cargo test -p navin-bot config`.".to_owned(),
        ],
        questions: vec![
            Question {
                question: "Should INI files still be read for one release?".to_owned(),
                default: "No; INI support is removed now.".to_owned(),
                answer: None,
            },
            Question {
                question: "Where does the config live?".to_owned(),
                default: ".navin/config.yaml".to_owned(),
                answer: Some("Also accept .github/navin.yaml".to_owned()),
            },
        ],
        handoff: Some(HandoffContract {
            objective: "Config is read from YAML and typos are rejected.".to_owned(),
            completion_criteria: vec!["Loader tests pass.".to_owned()],
            budgets: HandoffBudgets::default(),
            allowed_tools: vec!["read_file".to_owned(), "edit_file".to_owned()],
            scope: vec!["bot/src/config.rs".to_owned()],
            verification: vec!["cargo test -p navin-bot config".to_owned()],
        }),
        stages: vec![
            Stage {
                title: "Loader".to_owned(),
                files: vec!["bot/src/config.rs".to_owned(), "bot/Cargo.toml".to_owned()],
                verification: "cargo test -p navin-bot config passes".to_owned(),
            },
            Stage {
                title: "Remove INI".to_owned(),
                files: vec!["bot/src/legacy_config.rs".to_owned()],
                verification: "the workspace builds".to_owned(),
            },
        ],
    }
}

/// The sample plan rendered, for tests that edit text.
pub(crate) fn sample_text() -> String {
    render(&sample_plan())
}
