//! The config parser against real files: every key, every error, the documented example.

use super::*;

#[test]
fn empty_or_comment_only_file_means_all_defaults() {
    assert_eq!(parse_repo_config("").unwrap(), RepoConfig::default());
    assert_eq!(
        parse_repo_config("# nothing yet\n").unwrap(),
        RepoConfig::default()
    );
}

#[test]
fn defaults_match_the_documented_values() {
    let c = RepoConfig::default();
    assert_eq!(c.ledger_branch, "navin/ledger");
    assert!(!c.approval.allow_author_approval);
    assert!(!c.approval.require_codeowners);
    assert_eq!(c.evidence.trusted_apps, BTreeSet::from([15368]));
    assert_eq!(c.auto_accept.after_n_safe_operations, None);
    assert_eq!(
        (
            c.budgets.max_retries,
            c.budgets.max_replans,
            c.budgets.max_stalls
        ),
        (3, 5, 3)
    );
    assert_eq!(c.evidence.min_ci_time, Duration::ZERO);
}

#[test]
fn full_file_is_read() {
    let text = r"
ledger_branch: ops/navin-ledger
require_plan_for: [multi-file-change, dependency-add, schema-migration]
auto_accept:
  after_n_safe_operations: 10
  safe_operation_classes: [read-only-tool-use, in-workspace-file-edit]
  require_approval_for: [multi-file-change]
approval:
  allow_author_approval: true
  required_approvals: 2
  require_codeowners: true
evidence:
  trusted_apps: [15368, 99]
  required_checks:
    test: [ci / test]
    lint: [ci / clippy]
    verify: []
  min_ci_time: 5m
dispatch:
  issues: true
  workflow: agent.yml
budgets:
  max_retries: 4
  max_tokens: 100000
";
    let c = parse_repo_config(text).unwrap();
    assert_eq!(c.ledger_branch, "ops/navin-ledger");
    assert!(c.require_plan_for.contains(&ChangeClass::SchemaMigration));
    assert_eq!(c.auto_accept.after_n_safe_operations, Some(10));
    assert!(c.auto_accept.needs_human(ChangeClass::MultiFileChange));
    assert!(c.auto_accept.needs_human(ChangeClass::FileDelete));
    assert_eq!(c.approval.required_approvals, 2);
    assert!(c.approval.require_codeowners);
    assert_eq!(c.evidence.required_checks.test, ["ci / test"]);
    assert_eq!(c.evidence.min_ci_time, Duration::from_secs(300));
    assert!(c.dispatch.issues);
    assert_eq!(c.dispatch.workflow.as_deref(), Some("agent.yml"));
    assert_eq!(c.dispatch.label(), "navin-step");
    assert_eq!(c.budgets.max_retries, 4);
    assert_eq!(c.budgets.max_replans, 5, "unset fields keep their default");
}

#[test]
fn dispatch_agent_defaults_from_the_workflow_and_opens_issues_when_set() {
    let plain = parse_repo_config("dispatch:\n  workflow: agent.yml\n").unwrap();
    assert_eq!(plain.dispatch.agent(), AgentKind::Workflow);
    assert!(
        !plain.dispatch.opens_issues(),
        "issues stay off unless asked"
    );
    let copilot = parse_repo_config("dispatch:\n  agent: copilot\n").unwrap();
    assert_eq!(copilot.dispatch.agent(), AgentKind::Copilot);
    assert!(copilot.dispatch.opens_issues());
    let none = parse_repo_config("dispatch:\n  agent: none\n").unwrap();
    assert!(!none.dispatch.opens_issues());
    let err = parse_repo_config("dispatch:\n  agent: workflow\n").unwrap_err();
    assert_eq!(err.key.as_deref(), Some("dispatch.agent"));
    assert!(err.message.contains("dispatch.workflow"), "{err}");
    let err = parse_repo_config("dispatch:\n  agent: devin\n").unwrap_err();
    assert!(err.message.contains("copilot"), "names the choices: {err}");
}

#[test]
fn models_route_cruise_to_dev_and_missions_to_deep() {
    use navin_ledger::model::MissionMode;
    let c = parse_repo_config("models:\n  plan: p\n  dev: d\n  deep: x\n").unwrap();
    assert_eq!(c.models.for_mode(MissionMode::Cruise), Some("d"));
    assert_eq!(c.models.for_mode(MissionMode::Staged), Some("x"));
    assert_eq!(
        RepoConfig::default().models.for_mode(MissionMode::Cruise),
        None
    );
    let err = parse_repo_config("models:\n  dev: \"\"\n").unwrap_err();
    assert_eq!(err.key.as_deref(), Some("models.dev"));
}

#[test]
fn allow_on_closed_takes_command_names_and_names_an_unknown_one() {
    let c = parse_repo_config("allow_on_closed: [mission close, /pause]\n").unwrap();
    assert!(c.allow_on_closed.contains("mission close"));
    let err = parse_repo_config("allow_on_closed: [mission stop]\n").unwrap_err();
    assert_eq!(err.key.as_deref(), Some("allow_on_closed"));
    assert!(err.message.contains("mission stop"), "{err}");
}

#[test]
fn unknown_key_is_reported_with_line_column_and_key() {
    let text = "ledger_branch: navin/ledger\nevidence:\n  trusted_app: [1]\n";
    let err = parse_repo_config(text).unwrap_err();
    assert_eq!(err.line, Some(3));
    assert_eq!(err.column, Some(3));
    assert!(err.message.contains("trusted_app"), "{err}");
    assert_eq!(err.key.as_deref(), Some("evidence.trusted_app"));
    let shown = err.to_string();
    assert!(shown.contains("line 3 column 3"), "{shown}");
}

#[test]
fn wrong_type_names_the_full_key_path() {
    let text = "budgets:\n  max_retries: lots\n";
    let err = parse_repo_config(text).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("budgets.max_retries"));
    assert_eq!(err.line, Some(2));
}

#[test]
fn broken_file_applies_nothing_even_when_earlier_keys_were_valid() {
    // A valid ledger branch precedes the error: the caller gets only the error,
    // never a config carrying the new branch.
    let text = "ledger_branch: elsewhere\nbudgets:\n  max_stalls: -1\n";
    let result = parse_repo_config(text);
    assert!(result.is_err());
}

#[test]
fn unsafe_class_cannot_be_declared_safe() {
    let text = "auto_accept:\n  safe_operation_classes: [dependency-add]\n";
    let err = parse_repo_config(text).unwrap_err();
    assert_eq!(
        err.key.as_deref(),
        Some("auto_accept.safe_operation_classes")
    );
    assert!(err.message.contains("dependency-add"));
}

#[test]
fn unknown_change_class_is_rejected() {
    let err = parse_repo_config("require_plan_for: [everything]\n").unwrap_err();
    assert!(err
        .key
        .as_deref()
        .unwrap_or("")
        .starts_with("require_plan_for"));
    assert!(err.message.contains("everything"));
}

#[test]
fn durations_accept_seconds_and_units() {
    assert_eq!(duration::parse("90").unwrap(), Duration::from_secs(90));
    assert_eq!(duration::parse("1h30m").unwrap(), Duration::from_secs(5400));
    assert!(duration::parse("5 minutes").is_err());
    assert!(duration::parse("5x").is_err());
    let err = parse_repo_config("evidence:\n  min_ci_time: soon\n").unwrap_err();
    assert_eq!(err.key.as_deref(), Some("evidence.min_ci_time"));
}

#[test]
fn the_example_in_the_config_reference_is_a_valid_config() {
    let doc = include_str!("../../../../docs/config.md");
    let start = doc
        .find("```yaml\n")
        .expect("docs/config.md has a yaml example")
        + 8;
    let end = start + doc[start..].find("```").expect("the example ends");
    let config = parse_repo_config(&doc[start..end]).expect("the documented example parses");
    assert_eq!(config.evidence.done_on, DoneOn::Merged);
    assert_eq!(config.approval.required_approvals, 2);
    assert_eq!(config.stages, StagesPolicy::Pause);
    assert_eq!(
        config.questions.default_after,
        Some(Duration::from_secs(48 * 3600))
    );
}

#[test]
fn stages_and_question_defaults_become_plan_knobs() {
    let c = parse_repo_config(
        "stages: run-all
questions:
  default_after: 90m
",
    )
    .unwrap();
    let knobs = c.plan_knobs();
    assert_eq!(knobs.stages, navin_ledger::model::StagePolicy::RunAll);
    assert_eq!(
        knobs.default_after,
        Some((chrono::Duration::minutes(90), "90m".to_owned()))
    );
    let plain = RepoConfig::default().plan_knobs();
    assert_eq!(plain.stages, navin_ledger::model::StagePolicy::Pause);
    assert_eq!(plain.default_after, None);
    let bad = parse_repo_config(
        "stages: sometimes
",
    )
    .unwrap_err();
    assert_eq!(bad.key.as_deref(), Some("stages"), "{bad:?}");
    let bad = parse_repo_config(
        "questions:
  default_after: soon
",
    )
    .unwrap_err();
    assert!(bad.message.contains("not a duration"), "{bad:?}");
}

#[test]
fn an_error_shown_for_a_named_file_says_where_once() {
    let err = parse_repo_config("evidence:\n  trusted_app: [1]\n").unwrap_err();
    let shown = err.in_file("ci/navin.yml");
    assert!(
        shown.starts_with(
            "ci/navin.yml line 2 column 3: key `evidence.trusted_app`: unknown field `trusted_app`"
        ),
        "{shown}"
    );
    let err = parse_repo_config("approval:\n  required_approvals: 0\n").unwrap_err();
    assert_eq!(
        err.in_file("-"),
        "-: key `approval.required_approvals`: must be at least 1"
    );
}

#[test]
fn a_file_too_large_or_too_deeply_nested_is_refused_before_parsing_naming_the_limit() {
    let big = format!(
        "ledger_branch: navin/ledger\n{}",
        "# padding\n".repeat(7_000)
    );
    let err = parse_repo_config(&big).unwrap_err();
    assert!(err.message.contains("at most 64 KiB"), "{}", err.message);

    // 20,000 nested brackets took the YAML parser 4 s; the bound answers at once.
    let brackets = format!(
        "ledger_branch: x\nextra: {}{}\n",
        "[".repeat(20_000),
        "]".repeat(20_000)
    );
    let err = parse_repo_config(&brackets).unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(
        err.message.contains("deeper than 32 levels"),
        "{}",
        err.message
    );

    let mut stairs = String::from("ledger_branch: x\nextra:\n");
    for i in 0..40 {
        stairs.push_str(&format!("{}k{i}:\n", " ".repeat(2 * (i + 1))));
    }
    let err = parse_repo_config(&stairs).unwrap_err();
    assert!(
        err.message.contains("deeper than 32 levels"),
        "{}",
        err.message
    );

    // Brackets and hashes inside quotes or comments do not count.
    let fine = "ledger_branch: navin/ledger # {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\nevidence:\n  required_checks:\n    test: [ci/test, \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ x\"]\n";
    parse_repo_config(fine).expect("a real config with brackets in strings and comments");
}
