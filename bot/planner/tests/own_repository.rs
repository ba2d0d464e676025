//! The built-in planner on a real repository, this one: Navin's own workspace, planned as a user plans theirs.

use std::path::Path;

use navin_planner::{plan_repository, LocalSource, PlannerOptions};

/// The README's own first local request. The planner's source files quote it in
/// their tests; a plan for it must still name the CLI code, never those tests' files.
#[test]
fn the_readmes_request_on_this_repository_names_the_cli_and_never_the_planners_own_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let source = LocalSource::new(&root).expect("the workspace checkout");
    let out = plan_repository(
        &source,
        "add a --since option to navin ledger history",
        &PlannerOptions::default(),
    )
    .expect("a plan");
    let paths: Vec<&str> = out.plan.changes.iter().map(|c| c.path.as_str()).collect();
    assert!(
        paths.first().is_some_and(|p| p.starts_with("bot/src/cli/")),
        "{paths:?}"
    );
    assert!(
        !paths.iter().any(|p| p.starts_with("bot/planner/")),
        "{paths:?}"
    );
}
