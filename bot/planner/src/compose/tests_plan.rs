//! Plan construction tests: plan-format rules, tests beside code, dependencies, migrations, risks, stages, determinism.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use std::collections::BTreeSet;

use navin_ledger::plan::{Operation, Plan};

use super::tests_support::*;
use crate::*;

/// The plan format's rules (docs/plan.md), as the validator will check them.
fn assert_seed_rules(plan: &Plan) {
    assert!(!plan.title.trim().is_empty() && !plan.title.contains('\n'));
    assert!(
        plan.persona.contains("No file writes"),
        "persona: {}",
        plan.persona
    );
    for s in [
        &plan.goal,
        &plan.architecture,
        &plan.capabilities,
        &plan.data_flow,
        &plan.target_state,
        &plan.impact_isolation,
    ] {
        assert!(!s.trim().is_empty());
    }
    assert!(
        (3..=5).contains(&plan.risks.len()),
        "risks: {:?}",
        plan.risks
    );
    for q in &plan.questions {
        assert!(
            !q.default.trim().is_empty(),
            "question without default: {}",
            q.question
        );
    }
    let mut seen = BTreeSet::new();
    for c in &plan.changes {
        assert!(
            !c.path.starts_with('/') && !c.path.contains("..") && !c.path.contains('\\'),
            "{}",
            c.path
        );
        assert!(seen.insert(c.path.clone()), "duplicate path {}", c.path);
        assert!(!c.change.is_empty() && !c.rationale.is_empty());
    }
    for st in &plan.stages {
        for f in &st.files {
            assert!(seen.contains(f), "stage file {f} not in changes");
        }
        assert!(!st.verification.is_empty());
    }
    let h = plan.handoff.as_ref().expect("handoff drafted");
    assert_eq!(
        (
            h.budgets.max_retries,
            h.budgets.max_replans,
            h.budgets.max_stalls
        ),
        (3, 5, 3)
    );
    assert_eq!(
        h.scope,
        plan.changes
            .iter()
            .map(|c| c.path.clone())
            .collect::<Vec<_>>()
    );
    assert!(!h.verification.is_empty());
}

pub(crate) fn go_repo() -> Vec<(&'static str, &'static str)> {
    vec![
        ("go.mod", "module example.com/kv\n\ngo 1.22\n"),
        (
            "cmd/kv/main.go",
            "package main\n\nimport \"example.com/kv/store\"\n\nfunc main() { store.Open() }\n",
        ),
        (
            "store/store.go",
            "package store\n\n// Open opens the store.\nfunc Open() {}\n\nfunc Compact() {}\n",
        ),
        (
            "store/store_test.go",
            "package store\n\nfunc TestOpen(t *testing.T) {}\n",
        ),
        ("store/snapshot.go", "package store\n\nfunc Snapshot() {}\n"),
        ("README.md", "# kv\n"),
    ]
}

#[test]
fn plan_for_a_small_change_satisfies_the_seed_rules_and_uses_detected_commands() {
    let out = plan_of(&go_repo(), "Add a snapshot expiry to the store");
    let plan = &out.plan;
    assert_seed_rules(plan);
    assert!(plan
        .changes
        .iter()
        .any(|c| c.path == "store/snapshot.go" && c.operation == Operation::Edit));
    let h = plan.handoff.as_ref().unwrap();
    assert!(h.verification.contains(&"go test ./...".to_string()));
    assert!(plan
        .next_steps
        .iter()
        .any(|s| s.contains("`go test ./...`")));
    assert!(plan.stages.is_empty(), "small change is not staged");
    assert!(plan.new_dependencies.is_empty());
    assert!(plan.architecture.contains("go.mod"));
    assert!(plan.data_flow.contains("cmd/kv/main.go"));
}

#[test]
fn rationale_says_why_each_ranked_file_was_chosen() {
    let out = plan_of(&go_repo(), "compact the store more often");
    let first = &out.plan.changes[0];
    assert_eq!(first.path, "store/store.go");
    assert!(
        first.rationale.starts_with("Ranked #1"),
        "{}",
        first.rationale
    );
    assert!(first.rationale.contains("compact"), "{}", first.rationale);
}

#[test]
fn python_test_goes_into_the_nearest_existing_test_file_not_a_new_one() {
    let out = plan_of(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"p\"\n[tool.pytest.ini_options]\n",
            ),
            ("p/__init__.py", ""),
            ("p/parser.py", "def parse_header(): pass\n"),
            ("tests/test_other.py", "def test_x(): pass\n"),
        ],
        "parse header continuation lines",
    );
    assert_seed_rules(&out.plan);
    assert!(out
        .plan
        .changes
        .iter()
        .any(|c| c.path == "tests/test_other.py" && c.operation == Operation::Edit));
    assert!(!out
        .plan
        .changes
        .iter()
        .any(|c| c.operation == Operation::Create));
}

#[test]
fn request_naming_a_new_library_flags_the_manifest_and_lockfile() {
    let out = plan_of(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"cli\"\n[dependencies]\nclap = \"4\"\n",
            ),
            ("Cargo.lock", "version = 3\n"),
            ("src/main.rs", "mod output;\nfn main() {}\n"),
            ("src/output.rs", "pub fn print_table() {}\n"),
        ],
        "Use the comfy-table crate to print output tables",
    );
    let plan = &out.plan;
    assert_seed_rules(plan);
    assert!(
        plan.new_dependencies
            .iter()
            .any(|d| d.contains("comfy-table")),
        "{:?}",
        plan.new_dependencies
    );
    assert!(plan.changes.iter().any(|c| c.path == "Cargo.toml"));
    assert!(plan.changes.iter().any(|c| c.path == "Cargo.lock"));
    assert!(
        plan.risks.iter().any(|r| r.starts_with("Dependencies")),
        "{:?}",
        plan.risks
    );
    assert!(plan
        .questions
        .iter()
        .any(|q| q.question.contains("comfy-table")));
}

#[test]
fn dependency_bump_edits_the_declaring_manifest_first() {
    let out = plan_of(
        &[
            (
                "package.json",
                r#"{"name":"w","dependencies":{"lodash":"4.17.20"},"scripts":{"test":"jest"}}"#,
            ),
            ("package-lock.json", "{}"),
            ("src/util.js", "const _ = require('lodash');\n"),
        ],
        "build(deps): bump lodash from 4.17.20 to 4.17.21",
    );
    let paths: Vec<&str> = out.plan.changes.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(&paths[..2], &["package.json", "package-lock.json"]);
    assert!(
        out.plan.new_dependencies.is_empty(),
        "lodash is already declared"
    );
}

#[test]
fn schema_request_creates_the_next_numbered_migration() {
    let out = plan_of(
        &[
            ("migrations/0001_init.sql", "create table users(id int);\n"),
            (
                "migrations/0002_orders.sql",
                "create table orders(id int);\n",
            ),
            (
                "src/models/user.ts",
                "export interface User { id: number }\n",
            ),
            (
                "package.json",
                r#"{"name":"db","dependencies":{"prisma":"5"}}"#,
            ),
        ],
        "add an email column to users",
    );
    let plan = &out.plan;
    assert_seed_rules(plan);
    let m = plan
        .changes
        .iter()
        .find(|c| c.path.starts_with("migrations/0003_"))
        .expect("new migration");
    assert_eq!(m.operation, Operation::Create);
    assert!(m.path.ends_with(".sql"));
    assert!(
        plan.risks.iter().any(|r| r.starts_with("Schema change")),
        "{:?}",
        plan.risks
    );
}

#[test]
fn auth_paths_raise_a_security_risk() {
    let out = plan_of(
        &[
            ("src/auth/token.rs", "pub fn verify_token() {}\n"),
            ("src/lib.rs", "pub mod auth;\n"),
        ],
        "accept tokens with clock skew",
    );
    assert_seed_rules(&out.plan);
    assert!(
        out.plan.risks.iter().any(|r| r.starts_with("Security")),
        "{:?}",
        out.plan.risks
    );
}

#[test]
fn widely_imported_module_raises_a_blast_radius_risk() {
    let mut files: Vec<(String, String)> =
        vec![("src/util/clock.py".into(), "def now_utc(): pass\n".into())];
    for i in 0..6 {
        files.push((
            format!("src/feature{i}.py"),
            "from src.util.clock import now_utc\n".into(),
        ));
    }
    let src = MemorySource::from_files("t", files);
    let out = plan_repository(&src, "clock now_utc timezone", &PlannerOptions::default()).unwrap();
    assert!(
        out.plan
            .risks
            .iter()
            .any(|r| r.starts_with("Wide blast radius")),
        "{:?}",
        out.plan.risks
    );
}

#[test]
fn large_change_across_modules_is_staged_with_verification() {
    let mut files: Vec<(String, String)> = vec![(
        "Cargo.toml".into(),
        "[workspace]\nmembers = [\"a\", \"b\", \"c\"]\n".into(),
    )];
    for m in ["a", "b", "c"] {
        files.push((
            format!("{m}/Cargo.toml"),
            format!("[package]\nname = \"{m}\"\n"),
        ));
        files.push((format!("{m}/src/lib.rs"), "pub mod telemetry;\n".into()));
        files.push((
            format!("{m}/src/telemetry.rs"),
            "pub fn emit_telemetry_event() {}\n".into(),
        ));
    }
    let src = MemorySource::from_files("t", files);
    let out = plan_repository(&src, "rename telemetry events", &PlannerOptions::default()).unwrap();
    let plan = &out.plan;
    assert_seed_rules(plan);
    assert!(plan.stages.len() >= 2, "stages: {:?}", plan.stages);
    assert!(
        plan.stages
            .iter()
            .any(|s| s.verification.contains("cargo test -p")),
        "{:?}",
        plan.stages
    );
    assert!(plan.next_steps.iter().any(|s| s.starts_with("Stage 1")));
}

#[test]
fn request_matching_nothing_still_gives_a_valid_plan_that_says_so() {
    let out = plan_of(&go_repo(), "zzqx wibble");
    let plan = &out.plan;
    assert_seed_rules(plan);
    assert!(plan
        .questions
        .iter()
        .any(|q| q.question.contains("which module")));
    assert!(plan.risks.iter().any(|r| r.starts_with("Location guess")));
}

#[test]
fn repository_without_tests_asks_about_verification() {
    let out = plan_of(
        &[
            ("index.html", "<h1>hi</h1>\n"),
            ("app.js", "function greet() {}\n"),
        ],
        "greet by name",
    );
    let plan = &out.plan;
    assert_seed_rules(plan);
    assert!(plan.risks.iter().any(|r| r.starts_with("No test command")));
    assert!(plan
        .questions
        .iter()
        .any(|q| q.question.contains("test convention")));
}

#[test]
fn same_input_gives_an_identical_plan() {
    let a = plan_of(&go_repo(), "Add a snapshot expiry to the store");
    let b = plan_of(&go_repo(), "Add a snapshot expiry to the store");
    assert_eq!(a.plan, b.plan);
    assert_eq!(
        serde_json::to_string(&a.map).unwrap(),
        serde_json::to_string(&b.map).unwrap()
    );
    assert_eq!(a.ranked, b.ranked);
}

#[test]
fn planned_files_lists_changes_then_related_files_without_untouched_ones() {
    let out = plan_of(&go_repo(), "Add a snapshot expiry to the store");
    let files = out.planned_files();
    let changes: Vec<String> = out.plan.changes.iter().map(|c| c.path.clone()).collect();
    assert_eq!(&files[..changes.len()], &changes[..]);
    let unique: BTreeSet<&String> = files.iter().collect();
    assert_eq!(unique.len(), files.len());
}

#[test]
fn empty_request_is_refused() {
    let src = MemorySource::from_files("t", [("a.rs", "fn a() {}")]);
    let err = plan_repository(&src, "  \n", &PlannerOptions::default()).unwrap_err();
    assert!(matches!(err, PlannerError::EmptyRequest));
}

#[test]
fn goal_stays_within_four_sentences_for_a_long_request() {
    let out = plan_of(
        &go_repo(),
        "Snapshots grow forever. Add an expiry. Make it configurable. Log what expired. Document it.",
    );
    let goal = &out.plan.goal;
    let sentences = goal.matches(". ").count() + usize::from(goal.ends_with('.'));
    assert!(
        (2..=4).contains(&sentences),
        "goal has {sentences} sentences: {goal}"
    );
}

#[test]
fn a_request_naming_a_cli_command_edits_the_file_that_declares_it_and_names_what_changes() {
    let files = [
        ("Cargo.toml", "[package]\nname = \"navin\"\nversion = \"0.1.0\"\n"),
        (
            "src/cli/mod.rs",
            "#[derive(clap::Subcommand)]\npub enum LedgerCommand {\n    /// The full history.\n    History {\n        #[arg(long, default_value_t = 50)]\n        limit: usize,\n    },\n    Show,\n}\n",
        ),
        (
            "src/ledger/store.rs",
            "//! The ledger store: history of every ledger change, since the first.\npub fn ledger_history(since: u64) -> Vec<u64> { vec![since] }\npub fn ledger_lock() {}\n",
        ),
        ("src/main.rs", "mod cli;\nmod ledger;\nfn main() {}\n"),
    ];
    let out = plan_of(&files, "add a --since option to navin ledger history");
    let plan = &out.plan;
    assert_seed_rules(plan);
    let first = &plan.changes[0];
    assert_eq!(first.path, "src/cli/mod.rs", "{:#?}", plan.changes);
    assert!(
        first.change.contains("`history` (command, line 4)"),
        "{}",
        first.change
    );
    assert!(
        first.rationale.contains("declares `history`"),
        "{}",
        first.rationale
    );
    assert!(!first.rationale.contains("score"), "{}", first.rationale);
    // A clear request asks none of the old boilerplate questions.
    assert!(
        plan.questions
            .iter()
            .all(|q| !q.question.contains("backward compatible")
                && !q.question.contains("stay within the files")),
        "{:?}",
        plan.questions
    );
}

fn crate_with_msrv() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "Cargo.toml",
            "[package]\nname = \"serde_json\"\nversion = \"1.0.149\"\nrust-version = \"1.56\"\n",
        ),
        (
            "src/lib.rs",
            "#![doc(html_root_url = \"https://docs.rs/serde_json/1.0.149\")]\n//! The compiler needs Rust 1.56.\npub mod de;\n",
        ),
        ("src/de.rs", "//! Minimum work per byte the compiler can inline.\npub fn from_str() {}\n"),
        ("README.md", "# Serde JSON\n\nThe required compiler is listed in Cargo.toml.\n"),
        (
            ".github/workflows/ci.yml",
            "jobs:\n  test:\n    strategy:\n      matrix:\n        rust: [beta, 1.56.0]\n",
        ),
    ]
}

#[test]
fn a_release_bumps_the_manifest_and_every_source_file_spelling_the_version() {
    for request in ["Release 1.0.150", "1.0.150", "Bump version to 1.0.150"] {
        let out = plan_of(&crate_with_msrv(), request);
        let paths: Vec<&str> = out.plan.changes.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths[..2],
            ["Cargo.toml", "src/lib.rs"],
            "{request}: {paths:?}"
        );
    }
}

#[test]
fn raising_the_minimum_compiler_edits_the_declared_floor_and_the_ci_matrix_first() {
    let out = plan_of(&crate_with_msrv(), "Raise required compiler to Rust 1.71");
    let first: Vec<&str> = out
        .plan
        .changes
        .iter()
        .take(2)
        .map(|c| c.path.as_str())
        .collect();
    assert_eq!(first, ["Cargo.toml", ".github/workflows/ci.yml"]);
    assert!(
        out.plan.changes[0].change.contains("Rust floor"),
        "{}",
        out.plan.changes[0].change
    );
}
