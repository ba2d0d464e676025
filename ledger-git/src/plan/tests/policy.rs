//! Operation classes, auto-accept decisions and require_plan_for.

use super::fixture::sample_plan;
use crate::plan::policy::*;
use crate::plan::*;
use std::collections::BTreeSet;

fn change(path: &str, operation: Operation) -> FileChange {
    FileChange {
        path: path.to_owned(),
        operation,
        change: "c".to_owned(),
        rationale: "r".to_owned(),
        optional: false,
    }
}

/// A valid plan whose only changes are `changes`.
fn plan_with(changes: Vec<FileChange>, dependencies: Vec<&str>) -> Plan {
    let mut plan = sample_plan();
    plan.changes = changes;
    plan.stages.clear();
    plan.new_dependencies = dependencies.into_iter().map(str::to_owned).collect();
    plan
}

fn doc(plan: &Plan) -> PlanDocument {
    PlanDocument::from_plan(plan).expect("valid plan")
}

fn classes(list: &[OperationClass]) -> BTreeSet<OperationClass> {
    list.iter().copied().collect()
}

/// The most permissive config possible: everything safe, nothing required, no threshold.
fn reckless() -> AutoAcceptConfig {
    AutoAcceptConfig {
        after_n_safe_operations: 0,
        safe_operation_classes: vec![
            OperationClass::ReadOnlyToolUse,
            OperationClass::InWorkspaceFileEdit,
            OperationClass::DependencyAdd,
            OperationClass::SchemaMigration,
            OperationClass::DestructiveToolUse,
        ],
        require_approval_for: vec![],
    }
}

#[test]
fn classifies_each_kind_of_change() {
    use OperationClass::*;
    let edit = plan_with(vec![change("src/a.rs", Operation::Edit)], vec![]);
    assert_eq!(
        policy::classify_plan(&edit),
        classes(&[InWorkspaceFileEdit])
    );
    let delete = plan_with(vec![change("src/a.rs", Operation::Delete)], vec![]);
    assert_eq!(
        policy::classify_plan(&delete),
        classes(&[DestructiveToolUse])
    );
    let manifest = plan_with(vec![change("web/package.json", Operation::Edit)], vec![]);
    assert_eq!(
        policy::classify_plan(&manifest),
        classes(&[InWorkspaceFileEdit, DependencyAdd])
    );
    let declared = plan_with(
        vec![change("src/a.rs", Operation::Edit)],
        vec!["serde_yaml"],
    );
    assert!(policy::classify_plan(&declared).contains(&DependencyAdd));
    let migration = plan_with(
        vec![change("db/migrations/0002_users.rs", Operation::Create)],
        vec![],
    );
    assert!(policy::classify_plan(&migration).contains(&SchemaMigration));
    let sql = plan_with(vec![change("schema/users.SQL", Operation::Edit)], vec![]);
    assert!(policy::classify_plan(&sql).contains(&SchemaMigration));
    let nothing = plan_with(vec![], vec![]);
    assert_eq!(policy::classify_plan(&nothing), classes(&[ReadOnlyToolUse]));
    let two = plan_with(
        vec![
            change("src/a.rs", Operation::Edit),
            change("src/b.rs", Operation::Create),
        ],
        vec![],
    );
    assert_eq!(
        policy::classify_plan(&two),
        classes(&[InWorkspaceFileEdit, MultiFileChange])
    );
}

#[test]
fn a_multi_file_plan_needs_a_person_only_when_the_config_says_so() {
    let two = plan_with(
        vec![
            change("src/a.rs", Operation::Edit),
            change("src/b.rs", Operation::Edit),
        ],
        vec![],
    );
    let two = doc(&two);
    let mut config = AutoAcceptConfig {
        after_n_safe_operations: 1,
        ..AutoAcceptConfig::default()
    };
    let decision = policy::decide_auto_accept(&two, &config, 5);
    assert!(
        decision.auto_accept,
        "breadth alone is not unsafe: {decision:?}"
    );
    config
        .require_approval_for
        .push(OperationClass::MultiFileChange);
    let decision = policy::decide_auto_accept(&two, &config, 5);
    assert!(!decision.auto_accept);
    assert_eq!(
        decision.reason.to_string(),
        "the configuration requires approval for multi-file-change"
    );
    let one = plan_with(vec![change("src/a.rs", Operation::Edit)], vec![]);
    assert!(policy::decide_auto_accept(&doc(&one), &config, 5).auto_accept);
}

#[test]
fn recognises_manifests_and_migrations_but_not_lookalikes() {
    for path in [
        "Cargo.toml",
        "crates/x/Cargo.lock",
        "requirements-dev.txt",
        "go.sum",
        "app/App.csproj",
    ] {
        assert!(policy::is_dependency_manifest(path), "{path}");
    }
    for path in ["src/cargo.rs", "docs/package.md", "requirements.md"] {
        assert!(!policy::is_dependency_manifest(path), "{path}");
    }
    for path in [
        "migrations/001_init.sql",
        "db/migrate/20240101_add.rb",
        "prisma/schema.prisma",
        "alembic/versions/x.py",
    ] {
        assert!(policy::is_schema_migration(path), "{path}");
    }
    for path in ["src/migrations.rs", "docs/schema.md", "sql"] {
        assert!(!policy::is_schema_migration(path), "{path}");
    }
}

#[test]
fn never_auto_accepts_a_delete_a_dependency_add_or_a_migration_whatever_the_config() {
    let risky = [
        plan_with(vec![change("src/old.rs", Operation::Delete)], vec![]),
        plan_with(vec![change("Cargo.toml", Operation::Edit)], vec![]),
        plan_with(vec![change("src/a.rs", Operation::Edit)], vec!["left-pad"]),
        plan_with(
            vec![change("migrations/002.sql", Operation::Create)],
            vec![],
        ),
    ];
    for plan in &risky {
        for config in [reckless(), AutoAcceptConfig::default()] {
            let decision = decide_auto_accept(&doc(plan), &config, u32::MAX);
            assert!(!decision.auto_accept, "{:?}", plan.changes);
            assert!(matches!(
                decision.reason,
                AutoAcceptReason::AlwaysNeedsApproval { .. }
            ));
        }
    }
    let d = decide_auto_accept(&doc(&risky[0]), &reckless(), 100);
    assert_eq!(
        d.reason.to_string(),
        "the plan contains destructive-tool-use; plans that delete files, add dependencies or migrate a schema always need a person's approval"
    );
}

#[test]
fn auto_accepts_safe_plans_only_after_n_safe_operations() {
    let plan = plan_with(vec![change("src/a.rs", Operation::Edit)], vec![]);
    let config = AutoAcceptConfig::default();
    let before = decide_auto_accept(&doc(&plan), &config, 9);
    assert!(!before.auto_accept);
    assert_eq!(
        before.reason,
        AutoAcceptReason::TooFewSafeOperations {
            seen: 9,
            needed: 10
        }
    );
    let after = decide_auto_accept(&doc(&plan), &config, 10);
    assert!(after.auto_accept);
    assert_eq!(
        after.reason,
        AutoAcceptReason::Accepted {
            seen: 10,
            needed: 10
        }
    );
    assert_eq!(
        after.classes,
        classes(&[OperationClass::InWorkspaceFileEdit])
    );
}

#[test]
fn config_can_require_approval_or_leave_a_class_unsafe() {
    let plan = plan_with(vec![change("src/a.rs", Operation::Edit)], vec![]);
    let mut config = reckless();
    config.require_approval_for = vec![OperationClass::InWorkspaceFileEdit];
    let d = decide_auto_accept(&doc(&plan), &config, 0);
    assert!(matches!(
        d.reason,
        AutoAcceptReason::ConfigRequiresApproval { .. }
    ));
    let mut config = reckless();
    config.safe_operation_classes = vec![OperationClass::ReadOnlyToolUse];
    let d = decide_auto_accept(&doc(&plan), &config, 0);
    assert_eq!(
        d.reason,
        AutoAcceptReason::NotSafe {
            classes: vec![OperationClass::InWorkspaceFileEdit]
        }
    );
}

#[test]
fn counts_safe_operations_per_change() {
    let plan = plan_with(
        vec![
            change("src/a.rs", Operation::Edit),
            change("src/b.rs", Operation::Create),
            change("src/c.rs", Operation::Delete),
            change("Cargo.toml", Operation::Edit),
        ],
        vec![],
    );
    assert_eq!(safe_operations_in(&plan, &AutoAcceptConfig::default()), 2);
}

#[test]
fn auto_accept_config_reads_the_seed_names_and_rejects_unknown_ones() {
    let config: AutoAcceptConfig = serde_json::from_value(serde_json::json!({
        "after_n_safe_operations": 10,
        "safe_operation_classes": ["read-only-tool-use", "in-workspace-file-edit"],
        "require_approval_for": ["destructive-tool-use", "dependency-add", "schema-migration"]
    }))
    .expect("seed config");
    assert_eq!(config, AutoAcceptConfig::default());
    let unknown_class = serde_json::from_value::<AutoAcceptConfig>(serde_json::json!({
        "safe_operation_classes": ["network-use"]
    }));
    assert!(unknown_class.is_err());
    let unknown_key = serde_json::from_value::<AutoAcceptConfig>(serde_json::json!({"after_n": 3}));
    assert!(unknown_key.is_err());
    let partial: AutoAcceptConfig =
        serde_json::from_value(serde_json::json!({"after_n_safe_operations": 2}))
            .expect("defaults fill in");
    assert_eq!(
        partial.require_approval_for,
        AutoAcceptConfig::default().require_approval_for
    );
}

fn file(path: &str, status: FileStatus) -> ChangedFile {
    ChangedFile {
        path: path.to_owned(),
        status,
        previous_path: None,
        additions: 0,
        deletions: 0,
    }
}

#[test]
fn require_plan_for_detects_multi_file_dependency_and_migration_changes() {
    use PlanTrigger::*;
    let one = [file("src/a.rs", FileStatus::Modified)];
    assert!(classify_changed_files(&one).is_empty());
    let two = [
        file("src/a.rs", FileStatus::Modified),
        file("src/b.rs", FileStatus::Added),
    ];
    assert_eq!(
        classify_changed_files(&two),
        [MultiFileChange].into_iter().collect()
    );
    let unchanged = [
        file("src/a.rs", FileStatus::Modified),
        file("src/b.rs", FileStatus::Unchanged),
    ];
    assert!(classify_changed_files(&unchanged).is_empty());
    let manifest = [file("package.json", FileStatus::Modified)];
    assert_eq!(
        classify_changed_files(&manifest),
        [DependencyAdd].into_iter().collect()
    );
    let dropped = [file("package-lock.json", FileStatus::Removed)];
    assert!(classify_changed_files(&dropped).is_empty());
    let renamed = [ChangedFile {
        path: "db/archive/001.txt".to_owned(),
        status: FileStatus::Renamed,
        previous_path: Some("db/migrations/001.txt".to_owned()),
        additions: 0,
        deletions: 0,
    }];
    assert_eq!(
        classify_changed_files(&renamed),
        [SchemaMigration].into_iter().collect()
    );
}

#[test]
fn plan_is_required_only_for_configured_triggers() {
    let files = [
        file("src/a.rs", FileStatus::Modified),
        file("Cargo.toml", FileStatus::Modified),
    ];
    let none = plan_requirement(&files, &[PlanTrigger::SchemaMigration]);
    assert!(!none.is_required());
    assert_eq!(none.detected.len(), 2);
    let some = plan_requirement(
        &files,
        &[PlanTrigger::DependencyAdd, PlanTrigger::SchemaMigration],
    );
    assert!(some.is_required());
    assert_eq!(some.triggered, vec![PlanTrigger::DependencyAdd]);
    assert_eq!(
        some.reason(),
        "a plan is required: this change is a dependency-add"
    );
}

#[test]
fn changed_files_read_from_github_pull_request_files() {
    let files: Vec<ChangedFile> = serde_json::from_value(serde_json::json!([
        {"sha": "abc", "filename": "src/new.rs", "status": "renamed", "previous_filename": "src/old.rs", "additions": 1},
        {"filename": "README.md", "status": "modified"}
    ]))
    .expect("GitHub shape");
    assert_eq!(files[0].previous_path.as_deref(), Some("src/old.rs"));
    assert_eq!(files[1].status, FileStatus::Modified);
    let triggers: Vec<PlanTrigger> = serde_json::from_value(serde_json::json!([
        "multi-file-change",
        "dependency-add",
        "schema-migration"
    ]))
    .expect("seed names");
    assert_eq!(triggers.len(), 3);
}
