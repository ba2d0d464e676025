//! Plans that name the change: new files where the conventions put them, steps titled by what changes, a fix that starts with its test.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use navin_ledger::plan::{convert, Operation};

use super::tests_support::*;
use crate::*;

fn creates(out: &PlannerOutput) -> Vec<&str> {
    out.plan
        .changes
        .iter()
        .filter(|c| c.operation == Operation::Create)
        .map(|c| c.path.as_str())
        .collect()
}

/// A small Rust CLI: a `todo` module with one file per subcommand, inline tests.
const RUST_CLI: &[(&str, &str)] = &[
    ("Cargo.toml", "[package]\nname = \"todo\"\nversion = \"0.1.0\"\n"),
    ("src/main.rs", "mod todo;\nfn main() { todo::list::run(); }\n"),
    ("src/todo/mod.rs", "pub mod add;\npub mod export;\npub mod list;\npub mod store;\n"),
    ("src/todo/add.rs", "pub fn run(text: &str) { super::store::save(text); }\n"),
    ("src/todo/list.rs", "pub fn run() { for t in super::store::load() { println!(\"{t}\"); } }\n"),
    (
        "src/todo/export.rs",
        "/// Export every todo, as text or CSV.\npub fn run(csv: bool) { let _ = csv; }\n",
    ),
    (
        "src/todo/store.rs",
        "/// Parse a timestamp from a store line.\npub fn parse_timestamp(s: &str) -> Option<u64> { s.parse().ok() }\npub fn load() -> Vec<String> { Vec::new() }\npub fn save(_t: &str) {}\n#[cfg(test)]\nmod tests {\n    fn timestamp() -> u64 { 83 }\n    #[test]\n    fn parses() { assert_eq!(super::parse_timestamp(\"5\"), Some(timestamp() - 78)); }\n}\n",
    ),
    ("README.md", "# todo\n\nA todo list CLI.\n\n## Usage\n\n    todo export --csv\n"),
    ("CHANGELOG.md", "# Changelog\n\n## Unreleased\n"),
];

#[test]
fn the_readmes_first_request_creates_contributing_md_at_the_root_and_links_it_from_the_readme() {
    let out = plan_of(RUST_CLI, "add a CONTRIBUTING.md");
    let c = change(&out, "CONTRIBUTING.md").expect("CONTRIBUTING.md is proposed");
    assert_eq!(c.operation, Operation::Create);
    assert!(c.change.contains("`cargo test`"), "{}", c.change);
    assert_eq!(creates(&out), ["CONTRIBUTING.md"]);
    let readme = change(&out, "README.md").expect("the README links it");
    assert!(
        readme.change.contains("Link `CONTRIBUTING.md`"),
        "{}",
        readme.change
    );
    // Matching only `md` in a path is no reason to edit the changelog.
    assert!(
        change(&out, "CHANGELOG.md").is_none(),
        "{:?}",
        out.plan.changes
    );
}

#[test]
fn a_new_rust_module_with_a_type_and_tests_is_created_beside_its_siblings_and_declared() {
    let out = plan_of(
        RUST_CLI,
        "Add a new priority module with a `Priority` type and tests",
    );
    let m = change(&out, "src/todo/priority.rs").expect("the module file");
    assert_eq!(m.operation, Operation::Create);
    assert!(m.change.contains("`Priority`"), "{}", m.change);
    // Inline unit tests are the project's convention: they live in the module.
    assert!(m.change.contains("#[cfg(test)]"), "{}", m.change);
    let reg = change(&out, "src/todo/mod.rs").expect("the module is declared");
    assert_eq!(reg.operation, Operation::Edit);
    assert!(reg.change.contains("`priority`"), "{}", reg.change);
    // Not a new dependency, and not a reason to edit every file saying "tests".
    assert!(
        out.plan.new_dependencies.is_empty(),
        "{:?}",
        out.plan.new_dependencies
    );
    assert!(
        change(&out, "Cargo.toml").is_none(),
        "{:?}",
        out.plan.changes
    );
    assert!(
        change(&out, "src/todo/store.rs").is_none(),
        "{:?}",
        out.plan.changes
    );
}

#[test]
fn a_new_python_module_class_and_test_file_land_in_the_package_and_its_tests_directory() {
    let out = plan_of(
        &[
            ("pyproject.toml", "[project]\nname = \"todo\"\n"),
            (
                "todo/__init__.py",
                "from .add import add\nfrom .export import export\nfrom .store import load\n",
            ),
            ("todo/add.py", "def add(text):\n    pass\n"),
            ("todo/export.py", "def export(csv=False):\n    pass\n"),
            ("todo/store.py", "def load():\n    return []\n"),
            (
                "tests/test_export.py",
                "from todo.export import export\n\ndef test_export():\n    export()\n",
            ),
        ],
        "add a priority module with a Priority class and a test file",
    );
    assert_eq!(
        creates(&out),
        ["todo/priority.py", "tests/test_priority.py"],
        "{:?}",
        out.plan.changes
    );
    assert!(change(&out, "todo/priority.py")
        .unwrap()
        .change
        .contains("`Priority`"));
    let reg = change(&out, "todo/__init__.py").expect("the package exports it");
    assert_eq!(reg.operation, Operation::Edit);
}

#[test]
fn a_file_named_with_its_path_is_created_there_and_a_code_file_is_declared() {
    let out = plan_of(RUST_CLI, "create src/todo/import.rs for importing CSV");
    let c = change(&out, "src/todo/import.rs").expect("the named file");
    assert_eq!(c.operation, Operation::Create);
    let reg = change(&out, "src/todo/mod.rs").expect("declared in mod.rs");
    assert!(reg.change.contains("`import`"), "{}", reg.change);
}

#[test]
fn a_request_that_extends_existing_code_creates_nothing() {
    for request in [
        "add --format json to todo export",
        "add a test for parse_timestamp",
        "fix typo in README.md",
        "add a section on export to the README.md",
        "add a store module",
    ] {
        let out = plan_of(RUST_CLI, request);
        assert!(
            creates(&out).is_empty(),
            "{request}: {:?}",
            out.plan.changes
        );
    }
}

#[test]
fn a_source_change_line_never_names_a_test_helper() {
    let out = plan_of(RUST_CLI, "fix timestamp parsing of store lines");
    let store = change(&out, "src/todo/store.rs").expect("the parser's file");
    assert!(
        store.change.contains("`parse_timestamp`"),
        "{}",
        store.change
    );
    assert!(
        !store.change.contains("`timestamp` (fn"),
        "{}",
        store.change
    );
    assert!(!store.change.contains("`tests`"), "{}", store.change);
}

/// A repository of `n` packages in `lang`, each with a source file and its test,
/// and a request touching all of them, so the plan is staged.
fn staged(lang: &str) -> (Vec<(String, String)>, &'static str) {
    let mut files: Vec<(String, String)> = vec![("README.md".into(), "# app\n".into())];
    for m in ["billing", "invoice", "ledger"] {
        match lang {
            "rust" => {
                files.push((
                    format!("{m}/Cargo.toml"),
                    format!("[package]\nname = \"{m}\"\n"),
                ));
                files.push((
                    format!("{m}/src/lib.rs"),
                    format!("/// Rounds {m} amounts to cents.\npub fn round_amount(x: f64) -> f64 {{ x }}\n"),
                ));
                files.push((
                    format!("{m}/tests/{m}.rs"),
                    format!(
                        "use {m}::round_amount;\n#[test]\nfn rounds() {{ round_amount(1.0); }}\n"
                    ),
                ));
            }
            "python" => {
                files.push((format!("{m}/__init__.py"), String::new()));
                files.push((
                    format!("{m}/rounding.py"),
                    "def round_amount(x):\n    \"\"\"Round amounts to cents.\"\"\"\n    return x\n"
                        .into(),
                ));
                files.push((
                    format!("{m}/tests/test_rounding.py"),
                    format!("from {m}.rounding import round_amount\n\ndef test_round():\n    round_amount(1)\n"),
                ));
            }
            _ => {
                files.push((format!("{m}/go.mod"), format!("module example.com/{m}\n")));
                files.push((
                    format!("{m}/rounding.go"),
                    format!("package {m}\n\n// RoundAmount rounds amounts to cents.\nfunc RoundAmount(x float64) float64 {{ return x }}\n"),
                ));
                files.push((
                    format!("{m}/rounding_test.go"),
                    format!("package {m}\n\nimport \"testing\"\n\nfunc TestRound(t *testing.T) {{ RoundAmount(1) }}\n"),
                ));
            }
        }
    }
    let request = match lang {
        "go" => "Fix RoundAmount rounding half cents down in billing, invoice and ledger",
        _ => "Fix round_amount rounding half cents down in billing, invoice and ledger",
    };
    (files, request)
}

#[test]
fn stage_steps_are_titled_by_what_changes_and_a_fix_stage_starts_with_its_failing_test() {
    for lang in ["rust", "python", "go"] {
        let (files, request) = staged(lang);
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, c)| (p.as_str(), c.as_str()))
            .collect();
        let out = plan_of(&refs, request);
        assert!(out.plan.stages.len() >= 2, "{lang}: {:#?}", out.plan);
        let steps = convert::plan_steps(&out.plan);
        for (stage, step) in out.plan.stages.iter().zip(&steps) {
            assert!(
                !stage.title.starts_with("Changes in"),
                "{lang}: {}",
                stage.title
            );
            assert!(
                stage.title.contains("round_amount") || stage.title.contains("RoundAmount"),
                "{lang}: the title names the definition: {}",
                stage.title
            );
            assert!(!stage.title.contains("line "), "{lang}: {}", stage.title);
            // A source change and its test are one step, the test first.
            let code = stage
                .files
                .iter()
                .position(|f| !lang::is_test_path(f) && !f.ends_with(".md"));
            let test = stage.files.iter().position(|f| lang::is_test_path(f));
            if let (Some(code), Some(test)) = (code, test) {
                assert!(test < code, "{lang}: {:?}", stage.files);
            }
            // The step's brief names, per file, the change.
            let description = step.description.as_deref().unwrap_or_default();
            for f in &stage.files {
                assert!(
                    description.contains(&format!("`{f}`: ")),
                    "{lang}: {description}"
                );
            }
        }
        // Each test is in the stage of the code it tests.
        for stage in &out.plan.stages {
            for t in stage.files.iter().filter(|f| lang::is_test_path(f)) {
                let package = t.split('/').next().unwrap_or_default();
                assert!(
                    stage
                        .files
                        .iter()
                        .any(|f| !lang::is_test_path(f) && f.starts_with(&format!("{package}/"))),
                    "{lang}: {:?}",
                    out.plan.stages
                );
            }
        }
    }
}

#[test]
fn docs_follow_the_code_they_describe_in_the_same_stage() {
    let (mut files, _) = staged("rust");
    files.push((
        "docs/rounding.md".into(),
        "# Rounding\n\n`round_amount` rounds amounts to cents.\n".into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    let out = plan_of(
        &refs,
        "Add a --half-even option to round_amount in billing, invoice and ledger",
    );
    for stage in &out.plan.stages {
        let docs: Vec<usize> = (0..stage.files.len())
            .filter(|&i| stage.files[i].ends_with(".md"))
            .collect();
        let code: Vec<usize> = (0..stage.files.len())
            .filter(|&i| stage.files[i].ends_with(".rs") && !lang::is_test_path(&stage.files[i]))
            .collect();
        if let (Some(d), Some(c)) = (docs.first(), code.last()) {
            assert!(d > c, "{:?}", stage.files);
        }
        assert!(
            docs.is_empty() || !code.is_empty(),
            "a docs-only stage: {:?}",
            out.plan.stages
        );
    }
}

#[test]
fn the_plan_separates_files_that_must_change_from_files_that_may_and_asks_about_the_unsure_ones() {
    let out = plan_of(
        RUST_CLI,
        "fix parse_timestamp rejecting timestamps with a timezone",
    );
    let store = change(&out, "src/todo/store.rs").expect("the parser");
    assert!(!store.optional, "the file the fix lands in must change");
    let optional: Vec<&str> = out
        .plan
        .changes
        .iter()
        .filter(|c| c.optional)
        .map(|c| c.path.as_str())
        .collect();
    assert!(
        optional.contains(&"src/todo/mod.rs"),
        "{:?}",
        out.plan.changes
    );
    let asked = out
        .plan
        .questions
        .iter()
        .any(|q| q.question.contains("`src/todo/mod.rs`") && q.question.contains("optional"));
    assert!(asked, "{:?}", out.plan.questions);
    // The mission's step: everything in scope, only the must set required.
    let steps = convert::plan_steps(&out.plan);
    let step = &steps[0];
    assert!(step.scope.iter().any(|f| f == "src/todo/mod.rs"));
    assert!(step.required.iter().any(|f| f == "src/todo/store.rs"));
    assert!(!step.required.iter().any(|f| f == "src/todo/mod.rs"));
    let criteria = &out.plan.handoff.as_ref().unwrap().completion_criteria;
    assert!(criteria[0].contains("not marked optional"), "{criteria:?}");
    // A page that documents the edited code may change; the code must.
    // A clap CLI whose README documents its `export --csv` option.
    let mut files: Vec<(&str, &str)> = RUST_CLI
        .iter()
        .filter(|(p, _)| !matches!(*p, "README.md" | "src/main.rs"))
        .copied()
        .collect();
    files.push((
        "src/main.rs",
        "mod todo;\nuse clap::{Parser, Subcommand};\n#[derive(Parser)]\nstruct Cli { #[command(subcommand)] cmd: Cmd }\n#[derive(Subcommand)]\nenum Cmd { List, Add { text: String }, Export { #[arg(long)] csv: bool } }\nfn main() {}\n",
    ));
    files.push((
        "README.md",
        "# todo\n\nA todo list CLI.\n\n## Usage\n\n    todo add \"milk\"\n    todo export --csv\n",
    ));
    let out = plan_of(&files, "add --format json to todo export");
    let readme = change(&out, "README.md").expect("the page documenting export");
    assert!(readme.optional, "{readme:?}");
    assert!(!change(&out, "src/todo/export.rs").unwrap().optional);
}

#[test]
fn a_caller_found_through_the_imports_names_the_definitions_that_use_the_changed_one() {
    let out = plan_of(
        &[
            ("Cargo.toml", "[package]\nname = \"t\"\n"),
            ("src/lib.rs", "pub mod report;\npub mod store;\n"),
            (
                "src/store.rs",
                "/// Reads a timestamp; the timezone offset is ignored.\npub fn parse_ts(s: &str) -> u64 {\n    // offset: none yet\n    s.len() as u64\n}\n",
            ),
            (
                "src/report.rs",
                "use crate::store;\n\npub fn title() -> &'static str { \"Daily\" }\n\npub fn daily(line: &str) -> u64 {\n    store::parse_ts(line)\n}\n",
            ),
        ],
        "fix timezone offset handling",
    );
    let store = change(&out, "src/store.rs").expect("the parser");
    assert!(
        store.change.contains("`parse_ts` (fn, line 2)"),
        "{}",
        store.change
    );
    let report = change(&out, "src/report.rs").expect("its caller");
    assert!(
        report.change.contains("`daily` (fn, line 5)") && report.change.contains("`parse_ts`"),
        "{}",
        report.change
    );
    assert!(!report.change.contains("`title`"), "{}", report.change);
    assert!(report.optional, "a caller may change");
}

#[test]
fn a_request_naming_a_path_outside_the_repository_creates_nothing_and_still_validates() {
    for request in [
        "add /etc/navin.md",
        "create ../escape.rs",
        "add C:\\notes.md",
    ] {
        let out = plan_of(RUST_CLI, request);
        assert!(
            creates(&out).is_empty(),
            "{request}: {:?}",
            out.plan.changes
        );
        navin_ledger::plan::PlanDocument::from_plan(&out.plan)
            .unwrap_or_else(|e| panic!("{request}: {e}"));
    }
}
