//! Pure plan policies: which operation classes a plan contains, whether it may be auto-accepted, and when a change needs a plan.

use super::document::PlanDocument;
use super::model::{FileChange, Operation, Plan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// The plan format's operation classes (docs/plan.md), spelled as in config (`in-workspace-file-edit`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum OperationClass {
    ReadOnlyToolUse,
    InWorkspaceFileEdit,
    DependencyAdd,
    SchemaMigration,
    DestructiveToolUse,
    /// The plan changes more than one file. It says how broad a plan is, not what an
    /// operation does, so it never makes a plan unsafe by itself: it matters only when
    /// `require_approval_for` lists it.
    MultiFileChange,
}

impl OperationClass {
    pub const fn name(self) -> &'static str {
        match self {
            OperationClass::ReadOnlyToolUse => "read-only-tool-use",
            OperationClass::InWorkspaceFileEdit => "in-workspace-file-edit",
            OperationClass::DependencyAdd => "dependency-add",
            OperationClass::SchemaMigration => "schema-migration",
            OperationClass::DestructiveToolUse => "destructive-tool-use",
            OperationClass::MultiFileChange => "multi-file-change",
        }
    }

    /// Deletes, dependency additions and schema migrations are hard to undo
    /// or reach beyond the repository, so no configuration can make a plan
    /// containing them auto-accepted.
    pub const fn always_needs_approval(self) -> bool {
        matches!(
            self,
            OperationClass::DependencyAdd
                | OperationClass::SchemaMigration
                | OperationClass::DestructiveToolUse
        )
    }
}

impl fmt::Display for OperationClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The auto-accept policy, as the repository's `auto_accept:` settings give it (the
/// engine maps them; see the policies section of the plan docs for the defaults).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AutoAcceptConfig {
    /// Auto-accept only once this many safe operations have been accepted before.
    pub after_n_safe_operations: u32,
    /// Classes a plan may contain and still be auto-accepted.
    pub safe_operation_classes: Vec<OperationClass>,
    /// Classes that always need a person. The three classes of
    /// [`OperationClass::always_needs_approval`] need one even when absent here.
    pub require_approval_for: Vec<OperationClass>,
}

impl Default for AutoAcceptConfig {
    fn default() -> Self {
        Self {
            after_n_safe_operations: 10,
            safe_operation_classes: vec![
                OperationClass::ReadOnlyToolUse,
                OperationClass::InWorkspaceFileEdit,
            ],
            require_approval_for: vec![
                OperationClass::DestructiveToolUse,
                OperationClass::DependencyAdd,
                OperationClass::SchemaMigration,
            ],
        }
    }
}

/// The classes one proposed file change falls into.
pub fn classify_change(change: &FileChange) -> BTreeSet<OperationClass> {
    let mut classes = BTreeSet::new();
    classes.insert(match change.operation {
        Operation::Delete => OperationClass::DestructiveToolUse,
        Operation::Edit | Operation::Create => OperationClass::InWorkspaceFileEdit,
    });
    if is_dependency_manifest(&change.path) {
        classes.insert(OperationClass::DependencyAdd);
    }
    if is_schema_migration(&change.path) {
        classes.insert(OperationClass::SchemaMigration);
    }
    classes
}

/// Every class the plan's execution would involve. A plan that changes no
/// file and adds no dependency is `read-only-tool-use`.
pub fn classify_plan(plan: &Plan) -> BTreeSet<OperationClass> {
    let mut classes: BTreeSet<OperationClass> =
        plan.changes.iter().flat_map(classify_change).collect();
    if !plan.new_dependencies.is_empty() {
        classes.insert(OperationClass::DependencyAdd);
    }
    let files: BTreeSet<&str> = plan.changes.iter().map(|c| c.path.as_str()).collect();
    if files.len() > 1 {
        classes.insert(OperationClass::MultiFileChange);
    }
    if classes.is_empty() {
        classes.insert(OperationClass::ReadOnlyToolUse);
    }
    classes
}

/// How many of the plan's proposed changes count as safe operations under
/// `config`, for the caller's running count once the plan is accepted.
pub fn safe_operations_in(plan: &Plan, config: &AutoAcceptConfig) -> u32 {
    let safe = |class: &OperationClass| {
        !class.always_needs_approval()
            && !config.require_approval_for.contains(class)
            && config.safe_operation_classes.contains(class)
    };
    let count = plan
        .changes
        .iter()
        .filter(|change| classify_change(change).iter().all(safe))
        .count();
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// The outcome and its reason, to log with the same fidelity as a manual approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoAcceptDecision {
    pub auto_accept: bool,
    pub classes: BTreeSet<OperationClass>,
    pub reason: AutoAcceptReason,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AutoAcceptReason {
    /// The plan deletes files, adds dependencies or migrates a schema.
    AlwaysNeedsApproval {
        classes: Vec<OperationClass>,
    },
    /// The config lists one of the plan's classes under `require_approval_for`.
    ConfigRequiresApproval {
        classes: Vec<OperationClass>,
    },
    /// One of the plan's classes is not in `safe_operation_classes`.
    NotSafe {
        classes: Vec<OperationClass>,
    },
    TooFewSafeOperations {
        seen: u32,
        needed: u32,
    },
    Accepted {
        seen: u32,
        needed: u32,
    },
}

impl fmt::Display for AutoAcceptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |classes: &[OperationClass]| {
            classes
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            AutoAcceptReason::AlwaysNeedsApproval { classes } => write!(
                f,
                "the plan contains {}; plans that delete files, add dependencies or migrate a schema always need a person's approval",
                names(classes)
            ),
            AutoAcceptReason::ConfigRequiresApproval { classes } => write!(
                f,
                "the configuration requires approval for {}",
                names(classes)
            ),
            AutoAcceptReason::NotSafe { classes } => write!(
                f,
                "{} is not listed in safe_operation_classes",
                names(classes)
            ),
            AutoAcceptReason::TooFewSafeOperations { seen, needed } => write!(
                f,
                "only {seen} of the {needed} safe operations needed before auto-accept have passed"
            ),
            AutoAcceptReason::Accepted { seen, needed } => write!(
                f,
                "auto-accepted: only safe operations, and {seen} safe operations have passed (threshold {needed})"
            ),
        }
    }
}

/// Decides whether a validated plan is auto-accepted. `safe_operations_seen`
/// is the caller's count of safe operations already accepted in this scope
/// (see [`safe_operations_in`]). Takes a [`PlanDocument`] so only validated
/// plans can be accepted.
pub fn decide_auto_accept(
    doc: &PlanDocument,
    config: &AutoAcceptConfig,
    safe_operations_seen: u32,
) -> AutoAcceptDecision {
    let classes = classify_plan(doc.plan());
    let reason = auto_accept_reason(&classes, config, safe_operations_seen);
    AutoAcceptDecision {
        auto_accept: matches!(reason, AutoAcceptReason::Accepted { .. }),
        classes,
        reason,
    }
}

fn auto_accept_reason(
    classes: &BTreeSet<OperationClass>,
    config: &AutoAcceptConfig,
    seen: u32,
) -> AutoAcceptReason {
    let pick = |keep: &dyn Fn(&OperationClass) -> bool| -> Vec<OperationClass> {
        classes.iter().copied().filter(|c| keep(c)).collect()
    };
    let always = pick(&|c| c.always_needs_approval());
    if !always.is_empty() {
        return AutoAcceptReason::AlwaysNeedsApproval { classes: always };
    }
    let required = pick(&|c| config.require_approval_for.contains(c));
    if !required.is_empty() {
        return AutoAcceptReason::ConfigRequiresApproval { classes: required };
    }
    let unsafe_ = pick(&|c| {
        *c != OperationClass::MultiFileChange && !config.safe_operation_classes.contains(c)
    });
    if !unsafe_.is_empty() {
        return AutoAcceptReason::NotSafe { classes: unsafe_ };
    }
    let needed = config.after_n_safe_operations;
    if seen < needed {
        return AutoAcceptReason::TooFewSafeOperations { seen, needed };
    }
    AutoAcceptReason::Accepted { seen, needed }
}

/// The kinds of change a repository can require a plan for (`require_plan_for`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum PlanTrigger {
    MultiFileChange,
    DependencyAdd,
    SchemaMigration,
}

impl PlanTrigger {
    pub const fn name(self) -> &'static str {
        match self {
            PlanTrigger::MultiFileChange => "multi-file-change",
            PlanTrigger::DependencyAdd => "dependency-add",
            PlanTrigger::SchemaMigration => "schema-migration",
        }
    }
}

impl fmt::Display for PlanTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A file's status in a pull request, as GitHub's PR files endpoint spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    Added,
    Modified,
    Removed,
    Renamed,
    Copied,
    Changed,
    Unchanged,
}

/// One changed file; deserializes straight from GitHub's PR files entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangedFile {
    #[serde(alias = "filename")]
    pub path: String,
    pub status: FileStatus,
    /// The old path of a renamed file.
    #[serde(
        default,
        alias = "previous_filename",
        skip_serializing_if = "Option::is_none"
    )]
    pub previous_path: Option<String>,
    /// Lines added and removed, as GitHub counts them (0 when not given).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub additions: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deletions: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The triggers a set of changed files sets off. Renames and copies count as
/// one file; a removed manifest is not a dependency addition, but a removed
/// migration is still a schema change.
pub fn classify_changed_files(files: &[ChangedFile]) -> BTreeSet<PlanTrigger> {
    let mut triggers = BTreeSet::new();
    let touched: Vec<&ChangedFile> = files
        .iter()
        .filter(|f| f.status != FileStatus::Unchanged)
        .collect();
    if touched.len() > 1 {
        triggers.insert(PlanTrigger::MultiFileChange);
    }
    for file in touched {
        if file.status != FileStatus::Removed && is_dependency_manifest(&file.path) {
            triggers.insert(PlanTrigger::DependencyAdd);
        }
        let paths = std::iter::once(&file.path).chain(file.previous_path.as_ref());
        if paths.into_iter().any(|p| is_schema_migration(p)) {
            triggers.insert(PlanTrigger::SchemaMigration);
        }
    }
    triggers
}

/// Whether a change needs a plan under the repository's `require_plan_for`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRequirement {
    /// Everything the change sets off, configured or not.
    pub detected: BTreeSet<PlanTrigger>,
    /// The detected triggers the configuration names.
    pub triggered: Vec<PlanTrigger>,
}

impl PlanRequirement {
    pub fn is_required(&self) -> bool {
        !self.triggered.is_empty()
    }

    /// Plain words for a check run summary.
    pub fn reason(&self) -> String {
        if self.triggered.is_empty() {
            return "no plan required: the change sets off none of require_plan_for".to_owned();
        }
        let names: Vec<&str> = self.triggered.iter().map(|t| t.name()).collect();
        format!("a plan is required: this change is a {}", names.join(", "))
    }
}

pub fn plan_requirement(
    files: &[ChangedFile],
    require_plan_for: &[PlanTrigger],
) -> PlanRequirement {
    let detected = classify_changed_files(files);
    let triggered = detected
        .iter()
        .copied()
        .filter(|t| require_plan_for.contains(t))
        .collect();
    PlanRequirement {
        detected,
        triggered,
    }
}

/// Manifests and lockfiles of common package managers: changing one can
/// bring in code from outside the repository.
pub fn is_dependency_manifest(path: &str) -> bool {
    let name = file_name(path).to_ascii_lowercase();
    const NAMES: &[&str] = &[
        "cargo.toml",
        "cargo.lock",
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "pnpm-workspace.yaml",
        "bun.lock",
        "bun.lockb",
        "deno.json",
        "deno.jsonc",
        "deno.lock",
        "go.mod",
        "go.sum",
        "go.work",
        "go.work.sum",
        "pyproject.toml",
        "poetry.lock",
        "pipfile",
        "pipfile.lock",
        "setup.py",
        "setup.cfg",
        "uv.lock",
        "pdm.lock",
        "environment.yml",
        "environment.yaml",
        "gemfile",
        "gemfile.lock",
        "composer.json",
        "composer.lock",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "gradle.lockfile",
        "libs.versions.toml",
        "packages.config",
        "directory.packages.props",
        "packages.lock.json",
        "mix.exs",
        "mix.lock",
        "pubspec.yaml",
        "pubspec.lock",
        "package.swift",
        "package.resolved",
        "podfile",
        "podfile.lock",
        "cartfile",
        "cartfile.resolved",
        "build.sbt",
        "project.clj",
        "deps.edn",
        "stack.yaml",
        "cabal.project",
        "flake.nix",
        "flake.lock",
        "vcpkg.json",
        "conanfile.txt",
        "conanfile.py",
        "rebar.config",
        "rebar.lock",
        "dune-project",
    ];
    const EXTENSIONS: &[&str] = &[
        "csproj", "fsproj", "vbproj", "gemspec", "cabal", "opam", "nimble",
    ];
    if NAMES.contains(&name.as_str()) {
        return true;
    }
    if name.starts_with("requirements") && name.ends_with(".txt") {
        return true;
    }
    let lower = path.to_ascii_lowercase();
    if lower.split('/').any(|part| part == "requirements") && name.ends_with(".txt") {
        return true;
    }
    extension(&name).is_some_and(|ext| EXTENSIONS.contains(&ext))
}

/// Migration folders, SQL files and schema definitions of common ORMs.
pub fn is_schema_migration(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let mut parts: Vec<&str> = lower.split('/').collect();
    let name = parts.pop().unwrap_or_default();
    const FOLDERS: &[&str] = &[
        "migrations",
        "migration",
        "migrate",
        "alembic",
        "flyway",
        "liquibase",
    ];
    if parts.iter().any(|p| FOLDERS.contains(p)) {
        return true;
    }
    if matches!(name, "schema.rb" | "structure.sql" | "schema.prisma") {
        return true;
    }
    extension(name).is_some_and(|ext| ext == "sql" || ext == "prisma")
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn extension(name: &str) -> Option<&str> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then_some(ext)
}
