//! The built-in planner on a checkout with history: files changed together with the best candidate join the plan's review list, and a checkout without history (or with history off) plans as before.

mod support;

use std::path::Path;

use navin_planner::{plan_repository, LocalSource, PlannerOptions};

/// Writes `files` into the checkout and commits everything (a new repository first).
fn commit(dir: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("dir");
        std::fs::write(&p, text).expect("write");
    }
    support::commit_all(dir);
}

/// `src/export.rs` and `src/widths.rs` changed together three times; nothing in
/// `widths.rs` shares a word with the request.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    commit(
        dir.path(),
        &[
            ("Cargo.toml", "[package]\nname = \"t\"\n"),
            (
                "src/lib.rs",
                "pub mod export;\npub mod widths;\npub mod list;\n",
            ),
            (
                "src/export.rs",
                "/// Export every entry.\npub fn export_csv() {}\n",
            ),
            ("src/widths.rs", "pub fn columns() -> usize { 3 }\n"),
            ("src/list.rs", "pub fn list() {}\n"),
        ],
    );
    for i in 0..3 {
        commit(
            dir.path(),
            &[
                (
                    "src/export.rs",
                    &format!("/// Export every entry.\npub fn export_csv() {{ let _ = {i}; }}\n"),
                ),
                (
                    "src/widths.rs",
                    &format!("pub fn columns() -> usize {{ {i} }}\n"),
                ),
            ],
        );
    }
    dir
}

#[test]
fn a_file_that_always_changes_with_the_best_candidate_joins_the_plan_from_history() {
    let dir = checkout();
    let source = LocalSource::new(dir.path()).expect("source");
    let request = "add a json export";
    let out = plan_repository(&source, request, &PlannerOptions::default()).expect("plan");
    let rank = |out: &navin_planner::PlannerOutput, path: &str| {
        out.ranked.iter().position(|r| r.path == path)
    };
    assert_eq!(rank(&out, "src/export.rs"), Some(0), "{:?}", out.ranked);
    // `widths.rs` only shares an importer with `export.rs`, like `list.rs`; history
    // lifts it above `list.rs` and says why.
    assert!(
        rank(&out, "src/widths.rs") < rank(&out, "src/list.rs"),
        "{:?}",
        out.ranked
    );
    let widths = &out.ranked[rank(&out, "src/widths.rs").expect("ranked")];
    assert!(
        widths
            .reasons
            .iter()
            .any(|r| r.contains("changed with `src/export.rs` in 3 of its 3 recent commits")),
        "{:?}",
        widths.reasons
    );

    // History off: the same checkout and request, and nothing lifts it.
    let off = PlannerOptions {
        history_depth: 0,
        ..PlannerOptions::default()
    };
    let out = plan_repository(&source, request, &off).expect("plan");
    assert!(
        rank(&out, "src/widths.rs") > rank(&out, "src/list.rs"),
        "{:?}",
        out.ranked
    );
}
