//! Turning the map and the ranking into a typed `Plan`: proposed changes, stages, next steps and the hand-off contract.

use std::collections::BTreeSet;

use navin_ledger::plan::{FileChange, HandoffBudgets, HandoffContract, Operation, Plan, Stage};

use crate::compose::changes::{self, in_request_words};
use crate::compose::chosen::{Chosen, Inputs};
use crate::compose::questions;
use crate::compose::risks;
use crate::compose::sections;
use crate::compose::stages;
use crate::detect::commands::RepoCommandKind;
use crate::detect::imports::Graph;
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::lang;
use crate::rank::intent::{self, Intent};
use crate::rank::RankedFile;
use crate::request::Request;
use crate::text;
use crate::PlannerOptions;

/// The read-only persona statement (docs/plan.md), plus where the plan came from.
const PERSONA: &str =
    "Operating as a Read-Only Software Architect. No file writes, dependency installs, \
migrations, service mutations, git mutations, or destructive commands were performed.";

const MAX_TEST_COMMANDS: usize = 3;
const MAX_CHECK_COMMANDS: usize = 4;
/// Impact Isolation names this many files in total (changes plus files to review).
const IMPACT_FILES: usize = 10;

pub fn build_plan(
    scanned: &Scanned,
    map: &RepoMap,
    graph: &Graph,
    ranked: &[RankedFile],
    request: &Request,
    opts: &PlannerOptions,
) -> Plan {
    let intent = intent::analyze(request, map);
    let chosen = changes::choose_changes(&Inputs {
        scanned,
        map,
        graph,
        ranked,
        request,
        intent: &intent,
        opts,
    });
    let mut changes: Vec<FileChange> = chosen.iter().map(|c| c.change.clone()).collect();
    if request.kind() == crate::request::Kind::Fix {
        tests_first(&mut changes);
    }
    let change_paths: BTreeSet<&str> = changes.iter().map(|c| c.path.as_str()).collect();
    let review: Vec<&RankedFile> = ranked
        .iter()
        .filter(|r| !change_paths.contains(r.path.as_str()))
        .take(IMPACT_FILES.saturating_sub(changes.len()).max(3))
        .collect();
    // Root commands come first; a handful is enough to verify a change.
    let mut tests = map.commands_of(RepoCommandKind::Test);
    tests.truncate(MAX_TEST_COMMANDS);
    let checks: Vec<String> = map
        .commands
        .iter()
        .filter(|c| {
            matches!(
                c.kind,
                RepoCommandKind::Lint | RepoCommandKind::Typecheck | RepoCommandKind::Format
            )
        })
        .map(|c| c.command.clone())
        .take(MAX_CHECK_COMMANDS)
        .collect();
    let stages = stages::build(
        scanned,
        map,
        graph,
        &chosen,
        request.kind() == crate::request::Kind::Fix,
    );
    let no_match = ranked.first().is_none_or(|r| r.lexical <= 0.0);

    let title = text::one_line(request.text(), 72);
    let modules: Vec<String> = touched_modules(map, &changes);
    let goal = {
        let edits = changes
            .iter()
            .filter(|c| c.operation == Operation::Edit)
            .count();
        let creates = changes
            .iter()
            .filter(|c| c.operation == Operation::Create)
            .count();
        let verify = tests
            .first()
            .map(|c| format!(" and verified with `{}`", c.command))
            .unwrap_or_default();
        format!(
            "The request is: \u{201c}{}\u{201d}. Navin proposes {} across {} ({} edit{}, {} new file{}){}. \
             Nothing is changed until the plan is approved and executed separately.",
            first_sentence(&text::one_line(request.text(), 160)),
            count(changes.len(), "file change"),
            if modules.is_empty() { "the repository root".to_string() } else { modules.join(", ") },
            edits,
            if edits == 1 { "" } else { "s" },
            creates,
            if creates == 1 { "" } else { "s" },
            verify
        )
    };

    let impact_isolation = impact_text(map, &chosen, &review, &intent, &request.words);
    let next_steps = next_steps(&changes, &stages, &tests, &checks, &intent);
    let questions = questions::questions(map, &changes, &intent, no_match, request);
    let scope: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    let mut verification: Vec<String> = tests.iter().map(|c| c.command.clone()).collect();
    verification.extend(checks.iter().cloned());
    if verification.is_empty() {
        verification.push("manual review of the diff (no test command detected)".to_string());
    }
    let mut criteria =
        vec!["Every change in Proposed Changes not marked optional is made, and nothing outside its files".to_string()];
    for t in &tests {
        criteria.push(format!("`{}` passes", t.command));
    }
    for c in &checks {
        criteria.push(format!("`{c}` is clean"));
    }
    if tests.is_empty() {
        criteria.push("A reviewer confirms the behaviour by hand".to_string());
    }
    let handoff = HandoffContract {
        objective: text::one_line(request.text(), 200),
        completion_criteria: criteria,
        budgets: HandoffBudgets::default(),
        allowed_tools: vec![
            "read_file".to_string(),
            "grep".to_string(),
            "glob".to_string(),
            "edit_file (scope only)".to_string(),
            "run_command (verification commands only)".to_string(),
        ],
        scope,
        verification,
    };

    Plan {
        title,
        persona: format!(
            "{PERSONA} Drafted by Navin's built-in planner from `{}`.",
            map.source
        ),
        goal,
        architecture: sections::architecture(map),
        capabilities: sections::capabilities(scanned, map, graph),
        data_flow: sections::data_flow(scanned, map, graph),
        target_state: sections::target_state(request, map, &chosen, &tests),
        impact_isolation,
        new_dependencies: intent
            .new_dependencies
            .iter()
            .map(|d| {
                let target = changes
                    .iter()
                    .find(|c| is_manifest(&c.path))
                    .map(|c| format!(" (declare in `{}`)", c.path))
                    .unwrap_or_default();
                format!("`{d}`: named in the request and not declared by any manifest{target}")
            })
            .collect(),
        risks: risks::risks(
            scanned,
            map,
            graph,
            &chosen,
            &intent,
            no_match,
            !stages.is_empty(),
        ),
        next_steps,
        questions,
        handoff: Some(handoff),
        stages,
        changes,
    }
}

/// A fix starts with the test that fails without it: each test proposed right after
/// the code it tests moves before that code.
fn tests_first(changes: &mut [FileChange]) {
    for i in 1..changes.len() {
        let code = |p: &str| {
            !lang::is_test_path(p) && lang::language_of(p).is_some_and(lang::is_code_language)
        };
        if lang::is_test_path(&changes[i].path) && code(&changes[i - 1].path) {
            changes.swap(i - 1, i);
        }
    }
}

/// The request's first sentence, so the Goal stays within 2–4 sentences
/// however long the request is.
fn first_sentence(s: &str) -> String {
    let cut = s
        .find(". ")
        .or_else(|| s.find("? "))
        .or_else(|| s.find("! "));
    match cut {
        Some(i) => s[..i].to_string(),
        None => s.trim_end_matches(['.', '!', '?']).to_string(),
    }
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn is_manifest(path: &str) -> bool {
    crate::detect::scan::is_manifest_name(lang::file_name(path))
}

fn touched_modules(map: &RepoMap, changes: &[FileChange]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in changes {
        let name = match map.module_of(&c.path) {
            Some(m) if !m.path.is_empty() => format!("`{}`", m.path),
            _ => match c.path.split_once('/') {
                Some((top, _)) => format!("`{top}`"),
                None => "the repository root".to_string(),
            },
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Picks the files to edit and create. Edits come from the ranking; a test
/// follows the project's convention; manifests and migrations join when the
/// request implies them.
fn impact_text(
    map: &RepoMap,
    chosen: &[Chosen],
    review: &[&RankedFile],
    intent: &Intent,
    words: &[String],
) -> String {
    let mut s = String::from("Expected to change:\n");
    for c in chosen {
        let op = match c.change.operation {
            Operation::Edit => "edit",
            Operation::Create => "create",
            Operation::Delete => "delete",
        };
        s.push_str(&format!("- `{}` ({op})\n", c.change.path));
    }
    if !review.is_empty() {
        s.push_str("\nRelated, to review (may need follow-up edits):\n");
        for r in review {
            let why = r
                .reasons
                .first()
                .map(|reason| in_request_words(reason, &r.matched, words))
                .unwrap_or_default();
            s.push_str(&format!("- `{}`: {why}\n", r.path));
        }
    }
    s.push_str("\nDeliberately untouched:\n");
    let touched: BTreeSet<String> = chosen
        .iter()
        .filter_map(|c| map.module_of(&c.change.path).map(|m| m.path.clone()))
        .collect();
    let untouched: Vec<String> = map
        .modules
        .iter()
        .filter(|m| !m.path.is_empty() && !touched.contains(&m.path))
        .map(|m| m.path.clone())
        .collect();
    if !untouched.is_empty() {
        let shown: Vec<String> = untouched.iter().take(8).map(|m| m.to_string()).collect();
        let more = untouched.len().saturating_sub(8);
        s.push_str(&format!(
            "- other modules: {}{}\n",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    let manifest_changed = chosen.iter().any(|c| is_manifest(&c.change.path));
    if !manifest_changed {
        s.push_str("- dependency manifests and lockfiles (no new dependencies)\n");
    }
    let ci_changed = chosen
        .iter()
        .any(|c| lang::ci_system(&c.change.path).is_some());
    if !ci_changed && !map.ci.is_empty() && !intent.touches_ci {
        s.push_str("- CI configuration\n");
    }
    if !intent.schema_change && !map.migration_dirs.is_empty() {
        s.push_str("- database schema and migrations\n");
    }
    s.push_str("- git history, branches and any deployed service state");
    s
}

fn next_steps(
    changes: &[FileChange],
    stages: &[Stage],
    tests: &[&crate::DetectedCommand],
    checks: &[String],
    intent: &Intent,
) -> Vec<String> {
    let mut out = vec![
        "Review the plan; answer or accept the defaults in Risks And Assumptions.".to_string(),
    ];
    if stages.is_empty() {
        let edits: Vec<String> = changes
            .iter()
            .filter(|c| c.operation != Operation::Create)
            .map(|c| format!("`{}`", c.path))
            .collect();
        if !edits.is_empty() {
            out.push(format!("Make the edits in {}.", edits.join(", ")));
        }
        for c in changes.iter().filter(|c| c.operation == Operation::Create) {
            out.push(format!("Create `{}`: {}", c.path, c.change));
        }
    } else {
        for (i, st) in stages.iter().enumerate() {
            out.push(format!(
                "Stage {}: {} ({}); then verify: {}.",
                i + 1,
                st.title,
                text::backticked(&st.files),
                st.verification
            ));
        }
    }
    if intent.schema_change && changes.iter().any(|c| lang::is_migration_path(&c.path)) {
        out.push(
            "Apply the migration to a disposable database and roll it back once before merging."
                .to_string(),
        );
    }
    if !intent.new_dependencies.is_empty() {
        out.push(
            "Check the new dependency's licence, maintenance and size before adding it."
                .to_string(),
        );
    }
    if tests.is_empty() {
        out.push("No test command was detected: write down how the change is checked by hand, or add a test runner first.".to_string());
    }
    for t in tests {
        out.push(format!("Run `{}` and confirm it passes.", t.command));
    }
    for c in checks {
        out.push(format!("Run `{c}` and confirm it is clean."));
    }
    out.push(
        "Confirm with `git diff --stat` that only the files in Proposed Changes changed."
            .to_string(),
    );
    out
}

/// Files the plan names: Proposed Changes, then Impact Isolation's
/// "Expected to change" and "Related" lists (not the untouched list).
pub fn planned_files(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in &plan.changes {
        if !out.contains(&c.path) {
            out.push(c.path.clone());
        }
    }
    let named = plan
        .impact_isolation
        .split("Deliberately untouched:")
        .next()
        .unwrap_or("");
    for line in named.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- `") else {
            continue;
        };
        if let Some((p, _)) = rest.split_once('`') {
            if !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}
