//! The exact markdown the renderer writes for a full plan.

use super::fixture::{sample_plan, sample_text};
use crate::plan::*;

const EXPECTED: &str = r#"# Plan: Add a YAML config loader

## System Persona

Operating as a Read-Only Software Architect. No file writes, dependency installs, migrations, service mutations, git mutations, or destructive commands were performed.

## Goal

Load `.navin/config.yaml` at start-up. Unknown keys are rejected with the key's name.

## Repository Architecture

One Rust workspace:

- `bot/` serves webhooks.
- `ledger-git/` holds the domain.

## Functional Capabilities

Parses commands, writes plans, keeps the ledger.

## Data Flow

Webhook -> queue -> engine -> ledger branch.

```text
## not a heading
# nor this
```

## Target State

A `Config` struct read once and passed to handlers.

## Impact Isolation

Only `bot/src/config.rs` and its tests change; the ledger is untouched.

## Proposed Changes

### File: bot/src/config.rs

- **Operation:** edit
- **Change:** Add a YAML loader with deny_unknown_fields.
- **Rationale:** Typos in config must fail loudly.

### File: bot/Cargo.toml

- **Operation:** edit
- **Change:** Add serde_yaml.
- **Rationale:** Needed by the loader.

### File: bot/src/legacy_config.rs

- **Operation:** delete
- **Change:** Remove the old INI reader.
- **Rationale:** Replaced by the YAML loader.

## New dependencies

- serde_yaml 0.9 (YAML parsing)

## Risks

- Existing INI configs stop loading.
- YAML anchors allow very large documents.
- Error messages might leak secret values.

## Actionable Next Steps

1. [ ] Write the loader and its unit tests.
2. [ ] Run `cargo test -p navin-bot config`.

## Risks And Assumptions

<!-- To answer a question, write after "Answer:". An empty answer keeps the default. -->

1. Should INI files still be read for one release?
   - **Default:** No; INI support is removed now.
   - **Answer:**
2. Where does the config live?
   - **Default:** .navin/config.yaml
   - **Answer:** Also accept .github/navin.yaml

## Optional Goal Handoff Contract

- **Objective:** Config is read from YAML and typos are rejected.
- **Completion criteria:**
  - Loader tests pass.
- **Budgets:**
  - max_retries: 3
  - max_replans: 5
  - max_stalls: 3
- **Allowed tools:**
  - read_file
  - edit_file
- **Scope:**
  - bot/src/config.rs
- **Verification commands:**
  - `cargo test -p navin-bot config`

## Stages

### Stage 1: Loader

- File: bot/src/config.rs
- File: bot/Cargo.toml
- Verification: cargo test -p navin-bot config passes

### Stage 2: Remove INI

- File: bot/src/legacy_config.rs
- Verification: the workspace builds
"#;

#[test]
fn renders_full_plan_in_the_seed_format() {
    assert_eq!(render(&sample_plan()), EXPECTED);
}

#[test]
fn rendering_twice_is_byte_identical() {
    assert_eq!(sample_text(), sample_text());
}

#[test]
fn reads_back_the_rendered_full_plan() {
    assert_eq!(parse(EXPECTED), Ok(sample_plan()));
}

#[test]
fn renders_empty_lists_and_absent_contract_as_none() {
    let mut plan = sample_plan();
    plan.changes.clear();
    plan.stages.clear();
    plan.new_dependencies.clear();
    plan.questions.clear();
    plan.handoff = None;
    let text = render(&plan);
    for section in [
        "## Proposed Changes\n\nNone.\n",
        "## New dependencies\n\nNone.\n",
        "## Risks And Assumptions\n\nNone.\n",
        "## Optional Goal Handoff Contract\n\nNone.\n",
    ] {
        assert!(text.contains(section), "missing {section:?} in\n{text}");
    }
    assert!(!text.contains("## Stages"));
    assert!(text.ends_with("## Optional Goal Handoff Contract\n\nNone.\n"));
    assert_eq!(parse(&text), Ok(plan));
}

#[test]
fn renders_empty_contract_lists_inline() {
    let mut plan = sample_plan();
    if let Some(contract) = plan.handoff.as_mut() {
        contract.allowed_tools.clear();
        contract.scope.clear();
    }
    let text = render(&plan);
    assert!(text.contains("- **Allowed tools:** None.\n- **Scope:** None.\n"));
    assert_eq!(parse(&text), Ok(plan));
}
