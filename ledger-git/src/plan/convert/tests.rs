//! Turning approved plans into missions: steps, their commands, scope and knowledge.

use super::*;
use crate::plan::{FileChange, HandoffBudgets, HandoffContract, Stage};

fn change(path: &str, operation: FileOp) -> FileChange {
    FileChange {
        path: path.to_owned(),
        operation,
        change: "Do it.".to_owned(),
        rationale: "Because.".to_owned(),
        optional: false,
    }
}

fn plan(stages: Vec<Stage>, verification: Vec<String>) -> Plan {
    Plan {
        title: "t".into(),
        persona: "p".into(),
        goal: "g".into(),
        architecture: "a".into(),
        capabilities: "c".into(),
        data_flow: "d".into(),
        target_state: "t".into(),
        impact_isolation: "i".into(),
        changes: vec![
            change("src/a.rs", FileOp::Edit),
            change("src/b.rs", FileOp::Create),
        ],
        new_dependencies: vec![],
        risks: vec![],
        next_steps: vec![],
        questions: vec![],
        handoff: Some(HandoffContract {
            objective: "o".into(),
            completion_criteria: vec![],
            budgets: HandoffBudgets::default(),
            allowed_tools: vec![],
            scope: vec![],
            verification,
        }),
        stages,
    }
}

#[test]
fn a_small_plan_is_one_step_proven_by_ci_when_commands_verify() {
    let steps = plan_steps(&plan(vec![], vec!["cargo test".into()]));
    let got: Vec<(&str, &str, Validation, Option<&str>)> = steps
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.title.as_str(),
                s.validation,
                s.acceptance.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [(
            "C1",
            "o",
            Validation::Test,
            Some("CI runs green: cargo test")
        )]
    );
    let description = steps[0].description.as_deref().unwrap_or_default();
    assert!(description.contains("Edit `src/a.rs`"), "{description}");
    assert!(description.contains("Create `src/b.rs`"), "{description}");
    let mut nothing = plan(vec![], vec![]);
    nothing.changes.clear();
    assert!(plan_steps(&nothing).is_empty(), "no change, no step");
    let unverified = plan_steps(&plan(vec![], vec![]));
    assert_eq!(unverified.len(), 1);
    assert_eq!(unverified[0].validation, Validation::None);
    assert!(unverified[0].acceptance.is_none());
}

#[test]
fn prose_verification_makes_a_manual_step_that_says_what_a_person_checks() {
    let steps = plan_steps(&plan(vec![], vec!["existing tests pass".into()]));
    assert_eq!(steps[0].validation, Validation::Manual);
    assert!(steps[0].commands.is_empty(), "{:?}", steps[0].commands);
    assert_eq!(
        steps[0].acceptance.as_deref(),
        Some("A person checks: existing tests pass")
    );
    let stage = Stage {
        title: "Parser".into(),
        files: vec!["src/parse.py".into()],
        verification: "`pytest tests/test_parse.py` passes".into(),
    };
    let staged = plan_steps(&plan(
        vec![stage],
        vec!["manual review of the diff (no test command detected)".into()],
    ));
    assert_eq!(staged[0].validation, Validation::Test);
    assert_eq!(staged[0].commands, ["pytest tests/test_parse.py"]);
}

#[test]
fn a_large_plan_is_one_step_per_module_with_each_test_beside_its_source() {
    let mut p = plan(vec![], vec!["`go test ./...`".into()]);
    p.changes = [
        "internal/store/store.go",
        "internal/store/store_test.go",
        "cmd/app/main.go",
        "internal/api/api.go",
        "tests/api/api_test.go",
        "README.md",
        "docs/usage.md",
    ]
    .iter()
    .map(|path| change(path, FileOp::Edit))
    .collect();
    let steps = plan_steps(&p);
    let groups: Vec<(&str, Vec<&str>)> = steps
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.depends_on.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            ("C1", vec![]),
            ("C2", vec!["C1"]),
            ("C3", vec!["C2"]),
            ("C4", vec!["C3"]),
            ("C5", vec!["C4"])
        ]
    );
    let described = |i: usize| steps[i].description.clone().unwrap_or_default();
    assert!(described(0).contains("store_test.go"), "{}", described(0));
    // A module step is titled by what changes in its code, not by its folder.
    assert_eq!(steps[0].title, "Do it in `store.go`");
    assert!(
        described(2).contains("tests/api/api_test.go"),
        "{}",
        described(2)
    );
    assert!(steps.iter().all(|s| s.commands == ["go test ./..."]));
    // A source change and its test make a step that must show the test going green.
    let paired: Vec<&str> = steps
        .iter()
        .filter(|s| s.fail_to_pass)
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(paired, ["C1", "C3"], "store and api with their tests");
}

#[test]
fn plan_stages_become_a_chain_of_steps() {
    let stage = |title: &str, verification: &str| Stage {
        title: title.to_owned(),
        files: vec!["src/a.rs".to_owned()],
        verification: verification.to_owned(),
    };
    let steps = plan_steps(&plan(
        vec![stage("Parser", "cargo test -p parser"), stage("Docs", "")],
        vec![],
    ));
    assert_eq!(steps[0].id, "S1");
    assert!(steps[0].depends_on.is_empty());
    assert_eq!(steps[0].validation, Validation::Test);
    assert_eq!(steps[1].depends_on, ["S1"]);
    assert_eq!(steps[1].validation, Validation::None);
}

#[test]
fn every_verification_command_is_carried_into_the_steps_in_order() {
    let steps = plan_steps(&plan(
        vec![],
        vec!["cargo test".into(), " cargo clippy ".into(), "".into()],
    ));
    assert_eq!(steps[0].commands, ["cargo test", "cargo clippy"]);
    let stage = Stage {
        title: "Parser".into(),
        files: vec![],
        verification: "cargo test -p parser".into(),
    };
    let staged = plan_steps(&plan(vec![stage], vec!["cargo test".into()]));
    assert_eq!(staged[0].commands, ["cargo test -p parser", "cargo test"]);
}

#[test]
fn the_goal_is_the_handoff_objective_else_the_plans_goal() {
    let mut p = plan(vec![], vec![]);
    assert_eq!(plan_goal(&p), "o");
    p.handoff.as_mut().unwrap().objective = "  ".into();
    assert_eq!(plan_goal(&p), "g");
    p.handoff = None;
    assert_eq!(plan_goal(&p), "g");
}

#[test]
fn answered_questions_and_defaults_are_facts_and_the_rest_is_missing_info() {
    use crate::plan::Question;
    let mut p = plan(vec![], vec![]);
    let q = |question: &str, default: &str, answer: Option<&str>| Question {
        question: question.into(),
        default: default.into(),
        answer: answer.map(str::to_owned),
    };
    p.questions = vec![
        q("Which locale first?", "en", Some("fr")),
        q("Keep the old flag?", "Yes", None),
        q("Who signs off?", "", Some("  ")),
    ];
    let now = chrono::Utc::now();
    let k = plan_knowledge(&p, None, now);
    assert_eq!(
        k.facts,
        [
            "Which locale first? → fr",
            "Keep the old flag? → Yes (default)"
        ]
    );
    assert_eq!(k.missing, ["Who signs off?"]);
    assert!(k.pending.is_empty());
    let wait = (chrono::Duration::hours(48), "48h".to_owned());
    let k = plan_knowledge(&p, Some(&wait), now);
    assert_eq!(k.facts, ["Which locale first? → fr"]);
    assert_eq!(k.missing, ["Keep the old flag?", "Who signs off?"]);
    assert_eq!(k.pending.len(), 1);
    assert_eq!(k.pending[0].question, "Keep the old flag?");
    assert_eq!(k.pending[0].default, "Yes");
    assert_eq!(k.pending[0].due_at, now + chrono::Duration::hours(48));
}

#[test]
fn deletes_new_dependencies_and_migrations_are_destructive_steps() {
    let mut p = plan(vec![], vec![]);
    p.changes[1].operation = FileOp::Delete;
    p.changes.push(FileChange {
        path: "Cargo.toml".into(),
        operation: FileOp::Edit,
        change: "add serde".into(),
        rationale: "r".into(),
        optional: false,
    });
    p.changes.push(FileChange {
        path: "db/migrations/001_add.sql".into(),
        operation: FileOp::Create,
        change: "c".into(),
        rationale: "r".into(),
        optional: false,
    });
    let why = |p: &Plan| -> Vec<Option<String>> {
        plan_steps(p).into_iter().map(|s| s.destructive).collect()
    };
    // Four files are one step, destructive for each reason its files give.
    assert_eq!(
        why(&p),
        [Some("deletes src/b.rs, runs a migration".to_owned())]
    );
    p.new_dependencies = vec!["serde 1".into()];
    let with_dependencies = why(&p)[0].clone().unwrap_or_default();
    assert!(
        with_dependencies.contains("adds dependencies in Cargo.toml"),
        "{with_dependencies}"
    );
    p.stages = vec![Stage {
        title: "Migrate read paths".into(),
        files: vec!["src/a.rs".into()],
        verification: String::new(),
    }];
    assert_eq!(why(&p)[0].as_deref(), Some("runs a migration"));
}

#[test]
fn stage_steps_carry_their_stage_number_and_cruise_drops_it() {
    let stage = |t: &str| Stage {
        title: t.into(),
        files: vec![],
        verification: String::new(),
    };
    let p = plan(vec![stage("a"), stage("b")], vec![]);
    let stages: Vec<Option<u32>> = plan_steps(&p).iter().map(|s| s.stage).collect();
    assert_eq!(stages, [Some(1), Some(2)]);
    let init = plan_init(
        &p,
        MissionMode::Cruise,
        &Knobs::default(),
        chrono::Utc::now(),
    );
    assert!(init
        .steps
        .iter()
        .all(|s| s.stage.is_none() && s.depends_on.is_empty()));
}

#[test]
fn cruise_drops_every_dependency() {
    let stage = |t: &str| Stage {
        title: t.into(),
        files: vec![],
        verification: String::new(),
    };
    let steps = single_stage(plan_steps(&plan(vec![stage("a"), stage("b")], vec![])));
    assert!(steps.iter().all(|s| s.depends_on.is_empty()));
}

#[test]
fn the_contracts_terms_become_constraints_acceptance_and_a_tighter_budget() {
    let mut p = plan(vec![], vec!["cargo test".into()]);
    if let Some(h) = p.handoff.as_mut() {
        h.completion_criteria = vec!["`cargo test` passes".into(), " ".into()];
        h.allowed_tools = vec!["read_file".into(), "edit_file".into()];
        h.scope = vec!["src/a.rs".into(), "src/b.rs".into()];
        h.budgets.max_retries = 1;
        h.budgets.max_stalls = 9;
    }
    let init = plan_init(
        &p,
        MissionMode::Staged,
        &Knobs::default(),
        chrono::Utc::now(),
    );
    assert_eq!(init.acceptance_criteria, ["`cargo test` passes"]);
    assert_eq!(
        init.constraints,
        [
            "Allowed tools: read_file, edit_file",
            "Scope: only src/a.rs, src/b.rs; anything else needs a replan"
        ]
    );
    let budget = plan_budget(&p, crate::model::Budget::default());
    assert_eq!(budget.max_retries, 1, "the plan tightens");
    assert_eq!(budget.max_stalls, 3, "but never loosens");
    p.handoff = None;
    assert_eq!(plan_contract(&p), (vec![], vec![]));
}

#[test]
fn a_step_title_is_the_change_line_without_its_asides_naming_the_file() {
    assert_eq!(
        change_title(
            "Extend `History` (command, line 4) with `--since` (it is the binary entry point). Keep the rest.",
            "src/cli.rs"
        ),
        "Extend `History` with `--since` in `cli.rs`"
    );
    assert_eq!(
        change_title(
            "Write `CONTRIBUTING.md`: how to propose a change.",
            "CONTRIBUTING.md"
        ),
        "Write `CONTRIBUTING.md`: how to propose a change"
    );
    assert_eq!(change_title("  ", "a.rs"), "");
}

#[test]
fn a_step_requires_the_files_the_plan_says_must_change_and_scopes_the_optional_ones_too() {
    let mut p = plan(vec![], vec!["`cargo test`".into()]);
    p.changes = vec![
        change("src/parse.rs", FileOp::Edit),
        FileChange {
            optional: true,
            ..change("src/caller.rs", FileOp::Edit)
        },
        FileChange {
            optional: true,
            ..change("README.md", FileOp::Edit)
        },
    ];
    let steps = plan_steps(&p);
    assert_eq!(steps.len(), 1);
    assert_eq!(
        steps[0].scope,
        ["src/parse.rs", "src/caller.rs", "README.md"]
    );
    assert_eq!(steps[0].required, ["src/parse.rs"]);
    // Stages carry the same split.
    p.stages = vec![Stage {
        title: "Parse dates".into(),
        files: vec!["src/parse.rs".into(), "README.md".into()],
        verification: "`cargo test`".into(),
    }];
    let steps = plan_steps(&p);
    assert_eq!(steps[0].required, ["src/parse.rs"]);
}
