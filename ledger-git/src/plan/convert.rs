//! An approved plan as a mission: its goal, and its stages or proposed changes as steps.
//!
//! Every front end (`/mission` and `/cruise` on GitHub, `navin mission start --from-plan`
//! locally) converts through here, so a plan becomes the same board wherever it is
//! started.

use chrono::{DateTime, Utc};

use crate::model::{clip, MissionMode, PendingDefault, StagePolicy};
use crate::ops::{InitArgs, NewTask};
use crate::plan::commands::{self, Split, Toolchain};
use crate::plan::{Operation as FileOp, Plan};
use crate::Validation;

/// The repository's say in how a plan becomes a mission (`.github/navin.yml`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Knobs {
    /// `stages:`: whether a finished stage waits for `/continue`.
    pub stages: StagePolicy,
    /// `questions.default_after`: how long an unanswered question's default waits before
    /// it stands, with the wait as written (`48h`). `None`: defaults stand at once.
    pub default_after: Option<(chrono::Duration, String)>,
    /// The programs the repository's verification may run (its manifests, scripts and
    /// detected commands); `None`: the well-known ones ([`Toolchain::common`]).
    pub toolchain: Option<Toolchain>,
}

/// An approved plan as the mission to start: goal, steps, knowledge, stage policy and
/// pending defaults. The front end adds the origin, the budget and `replace`.
pub fn plan_init(plan: &Plan, mode: MissionMode, knobs: &Knobs, now: DateTime<Utc>) -> InitArgs {
    let steps = match &knobs.toolchain {
        Some(toolchain) => plan_steps_in(plan, toolchain),
        None => plan_steps(plan),
    };
    let steps = match mode {
        MissionMode::Cruise => single_stage(steps),
        MissionMode::Staged => steps,
    };
    let knowledge = plan_knowledge(plan, knobs.default_after.as_ref(), now);
    let (constraints, acceptance_criteria) = plan_contract(plan);
    InitArgs {
        goal: plan_goal(plan),
        constraints,
        acceptance_criteria,
        facts: knowledge.facts,
        missing_info: knowledge.missing,
        pending_defaults: knowledge.pending,
        steps,
        mode,
        stages: knobs.stages,
        ..InitArgs::default()
    }
}

/// The hand-off contract's terms as the mission's constraints (allowed tools, scope)
/// and acceptance criteria (completion criteria), so execution is held to what was
/// approved. A plan without a contract adds none.
/// The commit the plan was made on, when its record names one: where the work of the
/// mission's first steps starts.
pub fn plan_base(record: &crate::plan::record::PlanRecord) -> Option<String> {
    record
        .run
        .as_ref()
        .map(|r| r.commit.clone())
        .filter(|c| c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()))
}

pub fn plan_contract(plan: &Plan) -> (Vec<String>, Vec<String>) {
    let Some(h) = &plan.handoff else {
        return (Vec::new(), Vec::new());
    };
    let mut constraints = Vec::new();
    if !h.allowed_tools.is_empty() {
        constraints.push(clip(&format!(
            "Allowed tools: {}",
            h.allowed_tools.join(", ")
        )));
    }
    if !h.scope.is_empty() {
        constraints.push(clip(&format!(
            "Scope: only {}; anything else needs a replan",
            h.scope.join(", ")
        )));
    }
    let acceptance = h
        .completion_criteria
        .iter()
        .map(|c| clip(c.trim()))
        .filter(|c| !c.is_empty())
        .collect();
    (constraints, acceptance)
}

/// The mission's budget: the configured one, tightened by the contract's ceilings
/// (a plan may ask for fewer retries, replans or stalls, never for more).
pub fn plan_budget(plan: &Plan, configured: crate::model::Budget) -> crate::model::Budget {
    let Some(h) = &plan.handoff else {
        return configured;
    };
    crate::model::Budget {
        max_retries: configured.max_retries.min(h.budgets.max_retries),
        max_replans: configured.max_replans.min(h.budgets.max_replans),
        max_stalls: configured.max_stalls.min(h.budgets.max_stalls),
        ..configured
    }
}

/// What a plan's questions tell the mission (see [`plan_knowledge`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Knowledge {
    pub facts: Vec<String>,
    pub missing: Vec<String>,
    /// Questions in `missing` whose default stands after the wait.
    pub pending: Vec<PendingDefault>,
}

/// The mission's goal: the hand-off contract's objective (what execution is held to),
/// else the plan's goal.
pub fn plan_goal(plan: &Plan) -> String {
    plan.handoff
        .as_ref()
        .map(|h| h.objective.trim())
        .filter(|o| !o.is_empty())
        .map_or_else(|| plan.goal.clone(), str::to_owned)
}

/// The plan's questions as the mission's knowledge: an answered question is a fact
/// (`question → answer`); one with a default is a fact too (`… (default)`), unless
/// `default_after` gives people time to answer: then it is missing info whose default
/// stands at `now + wait`. One with neither is missing info a person must give
/// (`/answer`). In the plan's order.
pub fn plan_knowledge(
    plan: &Plan,
    default_after: Option<&(chrono::Duration, String)>,
    now: DateTime<Utc>,
) -> Knowledge {
    let mut k = Knowledge::default();
    for q in &plan.questions {
        let question = q.question.trim();
        let answer = q.answer.as_deref().map(str::trim).filter(|a| !a.is_empty());
        let default = Some(q.default.trim()).filter(|d| !d.is_empty());
        match (answer, default, default_after) {
            (Some(a), _, _) => k.facts.push(clip(&format!("{question} → {a}"))),
            (None, Some(d), Some((wait, after))) => {
                let question = clip(question);
                k.pending.push(PendingDefault {
                    question: question.clone(),
                    default: clip(d),
                    due_at: now + *wait,
                    after: after.clone(),
                });
                k.missing.push(question);
            }
            (None, Some(d), None) => k.facts.push(clip(&format!("{question} → {d} (default)"))),
            (None, None, _) => k.missing.push(clip(question)),
        }
    }
    k
}

/// The same steps as one stage: no step waits for another, so every one is ready (and
/// handed out) at once. What `/cruise` makes of a plan's stages.
pub fn single_stage(mut steps: Vec<NewTask>) -> Vec<NewTask> {
    for step in &mut steps {
        step.depends_on.clear();
        step.stage = None;
    }
    steps
}

/// Plans of at most this many proposed files (and no stages) are one step: one agent
/// PR, judged by CI as a whole, rather than a PR per file that must pass alone.
pub const ONE_STEP_FILES: usize = 6;

/// An approved plan as steps, with the well-known programs as the toolchain (see
/// [`plan_steps_in`]).
pub fn plan_steps(plan: &Plan) -> Vec<NewTask> {
    plan_steps_in(plan, &Toolchain::common())
}

/// An approved plan as steps. With stages: `S1…Sn`, each after the previous one.
/// Without: one step `C1` for a plan of up to [`ONE_STEP_FILES`] files, else one step
/// per package or module the files serve (tests with the code they test), each after
/// the previous one.
///
/// Verification is split into what runs and what is judged ([`commands::split`]): a
/// step with commands gets validation `test`, those commands (the stage's own first,
/// then the contract's) and an acceptance naming them; a step whose verification is
/// only prose is `manual`, its acceptance that prose; a step with neither closes by hand.
pub fn plan_steps_in(plan: &Plan, toolchain: &Toolchain) -> Vec<NewTask> {
    let overall: Vec<Split> = plan
        .handoff
        .as_ref()
        .map(|h| {
            h.verification
                .iter()
                .filter(|v| !v.trim().is_empty())
                .map(|v| commands::split(v, toolchain))
                .collect()
        })
        .unwrap_or_default();
    let chain = |i: usize, prefix: &str| {
        if i == 0 {
            Vec::new()
        } else {
            vec![format!("{prefix}{i}")]
        }
    };
    if !plan.stages.is_empty() {
        return plan
            .stages
            .iter()
            .enumerate()
            .map(|(i, stage)| {
                let own = commands::split(&stage.verification, toolchain);
                let (validation, acceptance, commands) =
                    verification(std::iter::once(&own).chain(&overall));
                NewTask {
                    id: format!("S{}", i + 1),
                    title: clip(&stage.title),
                    description: Some(describe_stage(
                        plan,
                        &stage.files,
                        stage.verification.trim(),
                    )),
                    depends_on: chain(i, "S"),
                    validation,
                    acceptance,
                    commands,
                    stage: Some(u32::try_from(i + 1).unwrap_or(u32::MAX)),
                    destructive: destructive(
                        plan,
                        stage.files.iter().map(String::as_str),
                        &stage.title,
                    ),
                    scope: stage.files.clone(),
                    required: required(plan, &stage.files),
                    fail_to_pass: validation == Validation::Test
                        && pairs_source_with_test(&stage.files),
                    ..NewTask::default()
                }
            })
            .collect();
    }
    let (validation, acceptance, commands) = verification(overall.iter());
    change_groups(&plan.changes)
        .into_iter()
        .enumerate()
        .map(|(i, group)| {
            let title = match group.as_slice() {
                [only] => format!("{} {}", verb(only.operation), only.path),
                _ if plan.changes.len() == group.len() => plan_goal(plan),
                [first, ..] => {
                    let lead = group
                        .iter()
                        .find(|c| !is_test_path(&c.path) && !is_doc(&c.path))
                        .unwrap_or(first);
                    match change_title(&lead.change, &lead.path) {
                        t if t.is_empty() => format!("Change {}", module_of(&first.path)),
                        t => t,
                    }
                }
                [] => String::new(),
            };
            let description = match group.as_slice() {
                [only] => only.change.trim().to_owned(),
                _ => group
                    .iter()
                    .map(|c| format!("{} `{}`: {}", verb(c.operation), c.path, c.change.trim()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            let scope: Vec<String> = group.iter().map(|c| c.path.clone()).collect();
            NewTask {
                id: format!("C{}", i + 1),
                title: clip(&title),
                description: Some(clip_long(&description)),
                depends_on: chain(i, "C"),
                validation,
                acceptance: acceptance.clone(),
                commands: commands.clone(),
                destructive: destructive(plan, group.iter().map(|c| c.path.as_str()), ""),
                required: required(plan, &scope),
                scope: scope.clone(),
                fail_to_pass: validation == Validation::Test && pairs_source_with_test(&scope),
                ..NewTask::default()
            }
        })
        .collect()
}

/// A step title from a plan's Change line for `path`: its first sentence, without
/// parenthesised asides (`` `load` (fn, line 3) `` reads `` `load` ``), naming the
/// file when the line does not. What changes, never the folder it is in.
pub fn change_title(change: &str, path: &str) -> String {
    let mut line = String::new();
    let mut rest = change.trim();
    while let Some(open) = rest.find(" (") {
        let close = rest[open..].find(')').map(|c| open + c);
        line.push_str(&rest[..open]);
        match close {
            // Line references and asides (`(it is the entry point)`) are for the brief.
            Some(c) => rest = &rest[c + 1..],
            _ => {
                line.push_str(" (");
                rest = &rest[open + 2..];
            }
        }
    }
    line.push_str(rest);
    let line = line.split(". ").next().unwrap_or_default();
    let line = line.trim().trim_end_matches('.');
    if line.is_empty() {
        return String::new();
    }
    let file = path.rsplit('/').next().unwrap_or(path);
    let title = if line.contains(file) {
        line.to_owned()
    } else {
        format!("{line} in `{file}`")
    };
    clip(&title)
}

/// The files of `files` the plan says must change: those its Proposed Changes name
/// without `Optional: yes`.
fn required(plan: &Plan, files: &[String]) -> Vec<String> {
    files
        .iter()
        .filter(|f| plan.changes.iter().any(|c| &c.path == *f && !c.optional))
        .cloned()
        .collect()
}

fn verb(op: FileOp) -> &'static str {
    match op {
        FileOp::Edit => "Edit",
        FileOp::Create => "Create",
        FileOp::Delete => "Delete",
    }
}

/// A step's validation, acceptance and commands from its verification texts, in order.
fn verification<'s>(
    splits: impl Iterator<Item = &'s Split>,
) -> (Validation, Option<String>, Vec<String>) {
    let mut commands: Vec<String> = Vec::new();
    let mut prose: Vec<&str> = Vec::new();
    for split in splits {
        for c in &split.commands {
            if !commands.contains(c) {
                commands.push(c.clone());
            }
        }
        prose.extend(split.prose.as_deref());
    }
    if !commands.is_empty() {
        let acceptance = clip(&format!("CI runs green: {}", commands.join("; ")));
        return (Validation::Test, Some(acceptance), commands);
    }
    if prose.is_empty() {
        return (Validation::None, None, commands);
    }
    let acceptance = clip(&format!("A person checks: {}", prose.join("; ")));
    (Validation::Manual, Some(acceptance), commands)
}

/// The proposed changes as the steps' file groups: all of them when few, else one
/// group per module (a test joins the module of the source it tests), in the order the
/// plan first names each module.
fn change_groups(changes: &[crate::plan::FileChange]) -> Vec<Vec<&crate::plan::FileChange>> {
    if changes.is_empty() {
        return Vec::new();
    }
    if changes.len() <= ONE_STEP_FILES {
        return vec![changes.iter().collect()];
    }
    let sources: Vec<(&str, String)> = changes
        .iter()
        .filter(|c| !is_test_path(&c.path))
        .map(|c| (c.path.as_str(), module_of(&c.path)))
        .collect();
    let mut order: Vec<String> = Vec::new();
    let mut groups: std::collections::BTreeMap<String, Vec<&crate::plan::FileChange>> =
        std::collections::BTreeMap::new();
    for change in changes {
        let module = if is_test_path(&change.path) {
            let stem = tested_stem(&change.path);
            sources
                .iter()
                .find(|(path, _)| file_stem(path) == stem)
                .map_or_else(|| module_of(&change.path), |(_, m)| m.clone())
        } else {
            module_of(&change.path)
        };
        if !order.contains(&module) {
            order.push(module.clone());
        }
        groups.entry(module).or_default().push(change);
    }
    order
        .into_iter()
        .filter_map(|m| groups.remove(&m))
        .collect()
}

/// The package or module a file serves: its directory, cut after a `src`, `lib`, `pkg`,
/// `internal` or `cmd` component's child, or after two levels.
fn module_of(path: &str) -> String {
    let dirs: Vec<&str> = path.split('/').collect();
    let dirs = &dirs[..dirs.len().saturating_sub(1)];
    let cut = dirs
        .iter()
        .position(|d| matches!(*d, "src" | "lib" | "pkg" | "internal" | "cmd"))
        .map_or(dirs.len().min(2), |i| (i + 2).min(dirs.len()));
    let module = dirs[..cut].join("/");
    if module.is_empty() {
        ".".to_owned()
    } else {
        module
    }
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

/// A test file's name without its test marks (`test_parse.py`, `parse_test.go`,
/// `parse.test.ts`, `parse.spec.js` → `parse`).
fn tested_stem(path: &str) -> &str {
    let stem = file_stem(path);
    let stem = stem.strip_prefix("test_").unwrap_or(stem);
    let stem = stem.strip_suffix("_test").unwrap_or(stem);
    stem.strip_suffix("_spec").unwrap_or(stem)
}

/// Whether `files` hold a test and something that is not one: a change and the test
/// that shows it, so the test should fail before the change and pass after it.
fn pairs_source_with_test(files: &[String]) -> bool {
    files.iter().any(|f| is_test_path(f)) && files.iter().any(|f| !is_test_path(f))
}

/// Prose a step's title never leads with: docs and changelogs follow the code.
fn is_doc(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".md", ".rst", ".adoc", ".txt"]
        .iter()
        .any(|e| lower.ends_with(e))
}

fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    lower
        .split('/')
        .any(|d| matches!(d, "tests" | "test" | "__tests__" | "spec"))
        || name.starts_with("test_")
        || name.contains("_test.")
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.contains("_spec.")
}

/// Manifests whose change under a plan with new dependencies adds them.
const MANIFESTS: [&str; 10] = [
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "requirements.txt",
    "go.mod",
    "Gemfile",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "composer.json",
];

/// Why a step touching `files` (or titled `title`) is destructive, seed-wise: it deletes
/// a file, adds a dependency, or migrates data. Navin checkpoints before it starts.
fn destructive<'a>(
    plan: &Plan,
    files: impl IntoIterator<Item = &'a str>,
    title: &str,
) -> Option<String> {
    let mut why: Vec<String> = Vec::new();
    let migration = |text: &str| text.to_ascii_lowercase().contains("migrat");
    let mut migrates = migration(title);
    for file in files {
        let op = plan
            .changes
            .iter()
            .find(|c| c.path == file)
            .map(|c| c.operation);
        if op == Some(FileOp::Delete) {
            why.push(format!("deletes {file}"));
        }
        let name = file.rsplit('/').next().unwrap_or(file);
        if !plan.new_dependencies.is_empty() && MANIFESTS.contains(&name) {
            why.push(format!("adds dependencies in {file}"));
        }
        migrates |= migration(file);
    }
    if migrates {
        why.push("runs a migration".to_owned());
    }
    (!why.is_empty()).then(|| clip(&why.join(", ")))
}

/// A stage step's description: per file, what the plan says changes there (so the
/// brief names the definition and the change), then how the stage is verified.
fn describe_stage(plan: &Plan, files: &[String], verification: &str) -> String {
    let mut lines: Vec<String> = files
        .iter()
        .map(|f| match plan.changes.iter().find(|c| &c.path == f) {
            Some(c) => format!("{} `{f}`: {}", verb(c.operation), c.change.trim()),
            None => format!("`{f}`"),
        })
        .collect();
    if !verification.is_empty() {
        lines.push(format!("Verification: {verification}"));
    }
    clip_long(&lines.join("\n"))
}

/// Longest step description kept: a step's changes, one line each.
pub const MAX_DESCRIPTION: usize = 4000;

/// `text` cut to [`MAX_DESCRIPTION`] characters, its lines kept.
fn clip_long(text: &str) -> String {
    match text.char_indices().nth(MAX_DESCRIPTION) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests;
