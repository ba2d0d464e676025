//! Long property campaigns, ignored by default: the command grammar and the repository config parser on arbitrary and near-miss input.
//!
//! Run: `NAVIN_CAMPAIGN_CASES=20000 cargo test --release -p navin-engine -- --ignored campaign`.
//! A failing case's seed is persisted beside this file (`campaign.proptest-regressions`,
//! committed) and tried first by every later run.

use proptest::prelude::*;

use crate::command::{new_commands, parse_comment};
use crate::config::parse_repo_config;

/// Cases per property: `NAVIN_CAMPAIGN_CASES`, else 10,000.
fn config() -> ProptestConfig {
    let cases = std::env::var("NAVIN_CAMPAIGN_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(10_000);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// Lines close to the grammar: every command name, flags, quotes, step ids, fences.
fn near_command_line() -> impl Strategy<Value = String> {
    let names = crate::command::CommandKind::ALL
        .iter()
        .map(|k| k.spec().name.to_owned())
        .collect::<Vec<_>>();
    (
        prop::sample::select(names),
        "( |--after|--validation|--acceptance|--replace|--|\"|S[0-9]{1,3}|v[0-9]{1,4}|[a-z]{1,6}|,|`|\n){0,12}",
        "[ >*-]{0,3}",
    )
        .prop_map(|(name, rest, lead)| format!("{lead}/{name}{rest}"))
}

/// Keys and values close to `.github/navin.yml`: real keys at random depths, odd scalars.
fn near_config() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        Just("ledger_branch"),
        Just("evidence"),
        Just("required_checks"),
        Just("test"),
        Just("min_ci_time"),
        Just("done_on"),
        Just("dispatch"),
        Just("labels"),
        Just("budgets"),
        Just("max_retries"),
        Just("max_cost_usd"),
        Just("stages"),
        Just("questions"),
        Just("default_after"),
        Just("limits"),
        Just("models"),
        Just("unknown"),
    ];
    let value = prop_oneof![
        Just("".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
        Just("~".to_owned()),
        Just("48h".to_owned()),
        Just("-1".to_owned()),
        Just("1e309".to_owned()),
        Just("[a, [b]]".to_owned()),
        Just("*anchor".to_owned()),
        Just("&anchor x".to_owned()),
        "[a-z0-9 :.\\-\"']{0,12}",
    ];
    prop::collection::vec((0usize..4, key, value), 0..12).prop_map(|lines| {
        lines
            .into_iter()
            .map(|(depth, key, value)| format!("{}{key}: {value}", "  ".repeat(depth)))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_the_command_grammar_never_panics_on_arbitrary_text(body in any::<String>()) {
        for p in parse_comment(&body) {
            prop_assert!(body[p.offset..].starts_with('/'));
        }
    }

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_near_miss_commands_parse_or_are_refused_with_a_sentence(
        lines in prop::collection::vec(near_command_line(), 1..8),
    ) {
        let body = lines.join("\n");
        for p in parse_comment(&body) {
            if let Err(e) = &p.result {
                // Every refusal is a sentence a person can act on.
                prop_assert!(!e.to_string().trim().is_empty());
            }
        }
        let _ = new_commands(&body, &body);
    }

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_the_config_parser_never_panics_and_explains_every_refusal(
        text in prop_oneof![near_config(), any::<String>()],
    ) {
        if let Err(e) = parse_repo_config(&text) {
            prop_assert!(!e.message.trim().is_empty(), "{e:?}");
        }
    }
}
