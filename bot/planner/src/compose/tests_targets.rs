//! Where related files land: tests beside the nearest existing test, new files by analogy, workspace-aware changelogs, manifests and imports.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use navin_ledger::plan::Operation;

use super::tests_support::*;
use crate::detect::{imports, scan};
use crate::*;

fn paths(out: &PlannerOutput) -> Vec<&str> {
    out.plan.changes.iter().map(|c| c.path.as_str()).collect()
}

#[test]
fn a_test_goes_into_the_existing_test_file_that_imports_the_module() {
    let out = plan_of(
        &[
            ("pyproject.toml", "[project]\nname = \"p\"\n"),
            ("p/__init__.py", ""),
            ("p/parser.py", "def parse_header(): pass\n"),
            ("p/render.py", "def render(): pass\n"),
            ("tests/test_other.py", "from p.render import render\n"),
            (
                "tests/test_headers.py",
                "from p.parser import parse_header\n\ndef test_x(): parse_header()\n",
            ),
        ],
        "parse header continuation lines",
    );
    let t = change(&out, "tests/test_headers.py").expect("the importing test is edited");
    assert_eq!(t.operation, Operation::Edit);
    assert!(t.rationale.contains("imports"), "{}", t.rationale);
    assert!(!paths(&out).iter().any(|p| p.contains("continuation")));
}

#[test]
fn a_rust_module_with_a_test_module_gets_its_cases_there_not_in_a_file_named_after_the_request() {
    let out = plan_of(
        &[
            ("Cargo.toml", "[package]\nname = \"web\"\n"),
            ("src/lib.rs", "pub mod routing;\n"),
            (
                "src/routing/mod.rs",
                "#[cfg(test)]\nmod tests;\npub struct Router;\nimpl Router {\n    pub fn route_layer(self) -> Self { self }\n}\n",
            ),
            ("src/routing/tests/mod.rs", "use super::*;\n#[test]\nfn t() {}\n"),
            ("tests/smoke.rs", "#[test]\nfn smoke() {}\n"),
        ],
        "Router::route_layer drops the fallback",
    );
    assert!(
        change(&out, "src/routing/tests/mod.rs").is_some_and(|c| c.operation == Operation::Edit),
        "{:?}",
        paths(&out)
    );
    assert!(!paths(&out).iter().any(|p| p.contains("fallback")));
}

#[test]
fn without_any_test_in_the_package_a_new_one_is_named_after_the_module() {
    let mut files = super::tests_plan::go_repo();
    files.retain(|(p, _)| *p != "store/store_test.go");
    files.push(("cmd/kv/main_test.go", "package main\n"));
    let out = plan_of(&files, "snapshot retention");
    let t = change(&out, "store/snapshot_test.go").expect("a new test named after snapshot.go");
    assert_eq!(t.operation, Operation::Create);
}

#[test]
fn a_go_change_edits_the_test_file_already_in_its_package() {
    let out = plan_of(&super::tests_plan::go_repo(), "snapshot retention");
    let t = change(&out, "store/store_test.go").expect("the package's test");
    assert_eq!(t.operation, Operation::Edit);
    assert!(change(&out, "store/snapshot_test.go").is_none());
}

fn formatter_repo() -> Vec<(&'static str, &'static str)> {
    vec![
        ("Cargo.toml", "[package]\nname = \"fmtr\"\n"),
        ("src/lib.rs", "pub mod formatters;\n"),
        (
            "src/formatters/mod.rs",
            "//! Output formatters.\nmod json;\nmod toml;\npub use json::Json;\npub use toml::Toml;\npub trait Formatter { fn format(&self) -> String; }\n",
        ),
        ("src/formatters/json.rs", "pub struct Json;\n"),
        ("src/formatters/toml.rs", "pub struct Toml;\n"),
    ]
}

#[test]
fn a_new_formatter_gets_a_sibling_file_and_its_registration() {
    let out = plan_of(&formatter_repo(), "add a `yaml` formatter");
    let new = change(&out, "src/formatters/yaml.rs").expect("sibling file");
    assert_eq!(new.operation, Operation::Create);
    assert!(new.rationale.contains("json.rs"), "{}", new.rationale);
    let reg = change(&out, "src/formatters/mod.rs").expect("registration");
    assert_eq!(reg.operation, Operation::Edit);
    assert!(reg.change.contains("yaml"), "{}", reg.change);
}

#[test]
fn a_new_item_follows_the_siblings_naming_and_the_package_index() {
    let out = plan_of(
        &[
            ("package.json", "{\"name\": \"srv\"}\n"),
            (
                "src/middleware/index.ts",
                "export { cors } from './cors-middleware';\nexport { gzip } from './gzip-middleware';\n",
            ),
            ("src/middleware/cors-middleware.ts", "export function cors() {}\n"),
            ("src/middleware/gzip-middleware.ts", "export function gzip() {}\n"),
        ],
        "new middleware `timeout`",
    );
    let new = change(&out, "src/middleware/timeout-middleware.ts").expect("sibling");
    assert_eq!(new.operation, Operation::Create);
    assert!(change(&out, "src/middleware/index.ts").is_some());
}

#[test]
fn a_re_added_item_of_a_prefixed_family_at_a_go_packages_root_gets_its_sibling_file() {
    // urfave/cli keeps one file per flag kind at the package root
    // (`flag_bool.go`, `flag_string.go`); "Re-add generic flag back" added
    // `flag_generic.go` beside them.
    let out = plan_of(
        &[
            ("go.mod", "module example.com/cli\n\ngo 1.22\n"),
            (
                "flag.go",
                "package cli\n\n// Flag is a flag.\ntype Flag interface {\n\tNames() []string\n}\n",
            ),
            (
                "flag_bool.go",
                "package cli\n\ntype BoolFlag = FlagBase[bool]\n",
            ),
            (
                "flag_string.go",
                "package cli\n\ntype StringFlag = FlagBase[string]\n",
            ),
            (
                "flag_int.go",
                "package cli\n\ntype IntFlag = FlagBase[int64]\n",
            ),
            (
                "command.go",
                "package cli\n\ntype Command struct{ Flags []Flag }\n",
            ),
        ],
        "Re-add generic flag back",
    );
    let first = &out.plan.changes[0];
    assert_eq!(first.path, "flag_generic.go", "{:?}", paths(&out));
    assert_eq!(first.operation, Operation::Create);
    assert!(
        first.rationale.contains("flag_bool.go"),
        "{}",
        first.rationale
    );
}

#[test]
fn a_new_item_of_a_suffixed_family_in_pascal_case_is_named_like_its_siblings() {
    let out = plan_of(
        &[
            ("package.json", "{\"name\": \"ui\"}\n"),
            (
                "src/components/ButtonView.ts",
                "export class ButtonView {}\n",
            ),
            ("src/components/ListView.ts", "export class ListView {}\n"),
            ("src/components/theme.ts", "export const theme = {};\n"),
        ],
        "add a table view",
    );
    let new = change(&out, "src/components/TableView.ts").expect("sibling");
    assert_eq!(new.operation, Operation::Create, "{:?}", paths(&out));
}

#[test]
fn a_new_type_spelled_in_the_request_gets_a_file_named_like_the_files_of_its_kind() {
    // axum's middleware directory: each file defines a type named after it
    // plus `Layer`; "add `ResponseAxumBodyLayer`" added `response_axum_body.rs`.
    let files = [
        ("Cargo.toml", "[package]\nname = \"axum\"\n"),
        ("src/lib.rs", "pub mod middleware;\n"),
        (
            "src/middleware/mod.rs",
            "mod from_fn;\nmod map_request;\nmod map_response;\npub use self::from_fn::{from_fn, FromFnLayer};\npub use self::map_request::MapRequestLayer;\npub use self::map_response::MapResponseLayer;\n",
        ),
        ("src/middleware/from_fn.rs", "pub struct FromFn;\npub struct FromFnLayer;\npub struct ResponseFuture;\npub fn from_fn() {}\n"),
        ("src/middleware/map_request.rs", "pub struct MapRequest;\npub struct MapRequestLayer;\n"),
        ("src/middleware/map_response.rs", "pub struct MapResponse;\npub struct MapResponseLayer;\n"),
    ];
    let out = plan_of(
        &files,
        "axum: add `ResponseAxumBodyLayer` for mapping response body to `axum::body::Body`",
    );
    let new = change(&out, "src/middleware/response_axum_body.rs").expect("sibling");
    assert_eq!(new.operation, Operation::Create, "{:?}", paths(&out));
    assert!(
        new.change.contains("`ResponseAxumBodyLayer`"),
        "{}",
        new.change
    );
    let reg = change(&out, "src/middleware/mod.rs").expect("registration");
    assert_eq!(reg.operation, Operation::Edit);
    // A type the repository already has creates nothing.
    let out = plan_of(&files, "axum: make `MapRequestLayer` clonable");
    assert!(
        !out.plan
            .changes
            .iter()
            .any(|c| c.operation == Operation::Create),
        "{:?}",
        paths(&out)
    );
}

#[test]
fn a_flag_an_existing_item_or_a_vague_request_creates_nothing() {
    for request in [
        "add a --since option to the formatters",
        "add a `json` formatter",
        "improve the formatters",
    ] {
        let out = plan_of(&formatter_repo(), request);
        assert!(
            !out.plan
                .changes
                .iter()
                .any(|c| c.operation == Operation::Create),
            "{request}: {:?}",
            paths(&out)
        );
    }
}

fn workspace() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"core\", \"web\"]\n[workspace.dependencies]\nserde = \"1\"\n",
        ),
        ("CHANGELOG.md", "# Changelog\n"),
        ("core/Cargo.toml", "[package]\nname = \"app-core\"\n[dependencies]\nserde = { workspace = true }\n"),
        ("core/CHANGELOG.md", "# Changelog\n"),
        (
            "core/src/lib.rs",
            "pub mod history;\npub use self::history::{History, history_since};\n",
        ),
        (
            "core/src/history.rs",
            "pub struct History;\n\n/// Entries after a point in time.\npub fn history_since(t: u64) -> u64 { t }\n",
        ),
        ("web/Cargo.toml", "[package]\nname = \"web\"\n[dependencies]\napp-core = { path = \"../core\" }\n"),
        (
            "web/src/main.rs",
            "use app_core::{\n    History,\n    history_since,\n};\nfn main() { history_since(0); }\n",
        ),
    ]
}

#[test]
fn the_changelog_entry_goes_to_the_changed_packages_own_changelog() {
    let out = plan_of(&workspace(), "fix history_since off by one");
    assert!(
        change(&out, "core/CHANGELOG.md").is_some(),
        "{:?}",
        paths(&out)
    );
    assert!(change(&out, "CHANGELOG.md").is_none());
}

#[test]
fn a_dependency_bump_edits_the_changed_packages_manifest_before_the_workspace_root() {
    let out = plan_of(
        &workspace(),
        "history_since: serialize History with serde dependency",
    );
    let manifests: Vec<&str> = paths(&out)
        .into_iter()
        .filter(|p| p.ends_with("Cargo.toml"))
        .collect();
    assert_eq!(
        manifests.first(),
        Some(&"core/Cargo.toml"),
        "{:?}",
        paths(&out)
    );
}

#[test]
fn multi_line_use_blocks_and_pub_use_reexports_link_to_the_defining_file() {
    let src = MemorySource::from_files(
        "t",
        workspace()
            .into_iter()
            .map(|(p, c)| (p.to_string(), c.to_string())),
    );
    let scanned = scan::scan(&src, &PlannerOptions::default()).unwrap();
    let graph = imports::build_graph(&scanned);
    let main = scanned.index_of("web/src/main.rs").unwrap();
    let history = scanned.index_of("core/src/history.rs").unwrap();
    assert!(
        graph.imports[main].contains(&history),
        "{:?}",
        graph.imports[main]
            .iter()
            .map(|&i| &scanned.files[i].path)
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_scope_naming_a_package_narrows_the_ranking_without_flooding_the_plan() {
    let mut files = vec![
        ("globset/Cargo.toml", "[package]\nname = \"globset\"\n"),
        (
            "globset/src/lib.rs",
            "pub mod escape;\npub mod parse;\npub mod matcher;\n",
        ),
        (
            "globset/src/escape.rs",
            "pub fn escape_glob(s: &str) -> String { s.into() }\n",
        ),
        ("globset/src/parse.rs", "pub fn parse() {}\n"),
        ("globset/src/matcher.rs", "pub fn matcher() {}\n"),
        ("globset/src/walk.rs", "pub fn walk() {}\n"),
        ("cli/Cargo.toml", "[package]\nname = \"cli\"\n"),
        (
            "cli/src/escape.rs",
            "pub fn escape_shell(s: &str) -> String { s.into() }\n",
        ),
    ];
    files.push(("cli/src/main.rs", "mod escape;\nfn main() {}\n"));
    let out = plan_of(&files, "globset: fix escape of brackets");
    let p = paths(&out);
    assert_eq!(p.first(), Some(&"globset/src/escape.rs"), "{p:?}");
    for unrelated in [
        "globset/src/parse.rs",
        "globset/src/matcher.rs",
        "globset/src/walk.rs",
    ] {
        assert!(!p.contains(&unrelated), "{p:?}");
    }
}

#[test]
fn target_state_and_risks_name_the_definitions_and_the_dependent_packages() {
    let out = plan_of(&workspace(), "fix history_since off by one");
    let plan = &out.plan;
    assert!(
        plan.target_state.contains("`history_since` (fn)")
            && plan.target_state.contains(" in `core/src/history.rs`"),
        "{}",
        plan.target_state
    );
    let api = plan
        .risks
        .iter()
        .find(|r| r.starts_with("Public API"))
        .expect("a public API risk");
    assert!(api.contains("`pub fn history_since`"), "{api}");
    assert!(api.contains("`app-core`") && api.contains("`web`"), "{api}");
    for text in plan
        .risks
        .iter()
        .chain([&plan.target_state, &plan.impact_isolation])
    {
        assert!(
            !text.contains('\u{d7}'),
            "a match count in plan text: {text}"
        );
    }
}

#[test]
fn a_member_crate_does_not_borrow_the_root_packages_tests() {
    let out = plan_of(
        &[
            (
                "Cargo.toml",
                "[package]\nname = \"rg\"\n[workspace]\nmembers = [\"crates/glob\"]\n",
            ),
            ("src/main.rs", "fn main() {}\n"),
            ("tests/regression.rs", "#[test]\nfn r() {}\n"),
            ("crates/glob/Cargo.toml", "[package]\nname = \"glob\"\n"),
            ("crates/glob/src/lib.rs", "pub mod escape;\n"),
            ("crates/glob/src/escape.rs", "pub fn escape_brackets() {}\n"),
        ],
        "escape brackets in patterns",
    );
    assert!(
        change(&out, "tests/regression.rs").is_none(),
        "{:?}",
        paths(&out)
    );
    let t = change(&out, "crates/glob/tests/escape.rs").expect("a new test named after the module");
    assert_eq!(t.operation, Operation::Create);
}

#[test]
fn a_test_file_with_cases_wins_over_a_helper_that_imports_the_module() {
    let out = plan_of(
        &[
            ("pyproject.toml", "[project]\nname = \"p\"\n"),
            ("p/__init__.py", ""),
            ("p/parser.py", "def parse_header(): pass\n"),
            ("tests/helpers.py", "from p import parser\n"),
            ("tests/test_parser.py", "def test_x(): pass\n"),
        ],
        "parse header continuation lines",
    );
    assert!(
        change(&out, "tests/test_parser.py").is_some(),
        "{:?}",
        paths(&out)
    );
    assert!(change(&out, "tests/helpers.py").is_none());
}

/// A workspace of two crates that each keep one module per concern.
fn checker_workspace() -> Vec<(&'static str, &'static str)> {
    vec![
        ("Cargo.toml", "[workspace]\nmembers = [\"checker\", \"cli\"]\n"),
        ("checker/Cargo.toml", "[package]\nname = \"checker\"\n"),
        (
            "checker/src/lib.rs",
            "mod check;\nmod config;\nmod diagnostics;\nmod parse;\nmod types;\npub use check::check_file;\n",
        ),
        ("checker/src/check.rs", "/// Checks one file.\npub fn check_file(path: &str) -> Vec<String> { Vec::new() }\n"),
        ("checker/src/config.rs", "pub struct Config { pub strict: bool }\n"),
        ("checker/src/diagnostics.rs", "pub struct Diagnostic;\n"),
        ("checker/src/parse.rs", "pub fn parse(text: &str) {}\n"),
        ("checker/src/types.rs", "pub enum Type { Int }\n"),
        ("cli/Cargo.toml", "[package]\nname = \"cli\"\n"),
        ("cli/src/main.rs", "mod args;\nmod output;\nmod run;\nmod watch;\nfn main() {}\n"),
        ("cli/src/args.rs", "pub struct Args { pub verbose: bool }\n"),
        ("cli/src/output.rs", "pub fn print() {}\n"),
        ("cli/src/run.rs", "pub fn run() { checker::check_file(\"x\"); }\n"),
        ("cli/src/watch.rs", "pub fn watch() {}\n"),
    ]
}

#[test]
fn a_new_concern_gets_its_own_module_in_the_crate_the_change_lands_in() {
    let out = plan_of(&checker_workspace(), "Add incremental checking");
    let p = paths(&out);
    assert_eq!(
        p[..2],
        ["checker/src/incremental.rs", "checker/src/lib.rs"],
        "{p:?}"
    );
    let new = change(&out, "checker/src/incremental.rs").unwrap();
    assert_eq!(new.operation, Operation::Create);
    assert!(new.change.contains("`incremental`"), "{}", new.change);
    assert!(
        !new.change.contains("Add incremental checking"),
        "{}",
        new.change
    );
    assert_eq!(
        change(&out, "checker/src/lib.rs").unwrap().operation,
        Operation::Edit
    );
}

#[test]
fn a_concern_the_code_already_spells_or_a_plain_edit_creates_no_module() {
    for request in [
        // `verbose` exists (cli/src/args.rs): the work goes into that code.
        "Add verbose checking",
        "Fix incremental checking",
        "Add a --strict option to checking",
    ] {
        let out = plan_of(&checker_workspace(), request);
        assert!(
            !out.plan
                .changes
                .iter()
                .any(|c| c.operation == Operation::Create && !c.path.contains("test")),
            "{request}: {:?}",
            paths(&out)
        );
    }
}
