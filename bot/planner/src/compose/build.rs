//! Turning the map and the ranking into a typed `Plan`: proposed changes, stages, next steps and the hand-off contract.

use std::collections::BTreeSet;

use navin_ledger::plan::{FileChange, HandoffBudgets, HandoffContract, Operation, Plan, Stage};

use crate::compose::analogy;
use crate::compose::chosen::Chosen;
use crate::compose::questions;
use crate::compose::risks;
use crate::compose::sections;
use crate::compose::stages;
use crate::compose::targets::{changelog, lockfile_for, nearest_manifest, next_migration};
use crate::compose::test_place::test_place;
use crate::detect::commands::RepoCommandKind;
use crate::detect::imports::Graph;
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::lang;
use crate::rank::intent::{self, Intent};
use crate::rank::named;
use crate::rank::RankedFile;
use crate::text;
use crate::PlannerOptions;

/// The read-only persona statement (docs/plan.md), plus where the plan came from.
const PERSONA: &str =
    "Operating as a Read-Only Software Architect. No file writes, dependency installs, \
migrations, service mutations, git mutations, or destructive commands were performed.";

/// Files within this share of the best score are proposed for edit.
const EDIT_THRESHOLD: f64 = 0.35;
const MAX_TEST_COMMANDS: usize = 3;
const MAX_CHECK_COMMANDS: usize = 4;
/// Impact Isolation names this many files in total (changes plus files to review).
const IMPACT_FILES: usize = 10;

pub fn build_plan(
    scanned: &Scanned,
    map: &RepoMap,
    graph: &Graph,
    ranked: &[RankedFile],
    request: &str,
    opts: &PlannerOptions,
) -> Plan {
    let intent = intent::analyze(request, map);
    let chosen = choose_changes(scanned, map, graph, ranked, request, &intent, opts);
    let changes: Vec<FileChange> = chosen.iter().map(|c| c.change.clone()).collect();
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
    let stages = stages::build(scanned, map, graph, &chosen);
    let no_match = ranked.first().is_none_or(|r| r.lexical <= 0.0);

    let title = text::one_line(request, 72);
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
            first_sentence(&text::one_line(request, 160)),
            count(changes.len(), "file change"),
            if modules.is_empty() { "the repository root".to_string() } else { modules.join(", ") },
            edits,
            if edits == 1 { "" } else { "s" },
            creates,
            if creates == 1 { "" } else { "s" },
            verify
        )
    };

    let impact_isolation = impact_text(
        map,
        &chosen,
        &review,
        &intent,
        &named::request_words(request),
    );
    let next_steps = next_steps(&changes, &stages, &tests, &checks, &intent);
    let questions = questions::questions(map, &changes, &intent, no_match, request);
    let scope: Vec<String> = changes.iter().map(|c| c.path.clone()).collect();
    let mut verification: Vec<String> = tests.iter().map(|c| c.command.clone()).collect();
    verification.extend(checks.iter().cloned());
    if verification.is_empty() {
        verification.push("manual review of the diff (no test command detected)".to_string());
    }
    let mut criteria =
        vec!["Every change in Proposed Changes is made and nothing outside its scope".to_string()];
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
        objective: text::one_line(request, 200),
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

/// A ranking reason with each stemmed term in backticks shown as the request spells it.
fn in_request_words(reason: &str, stems: &[String], words: &[String]) -> String {
    // Counts (`×3`) are ranking evidence, not something a reader acts on.
    let mut out = reason
        .split(" \u{d7}")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                part.trim_start_matches(|c: char| c.is_ascii_digit())
            }
        })
        .collect::<String>();
    for stem in stems {
        let word = named::surface(words, stem);
        if word != stem {
            out = out.replace(&format!("`{stem}`"), &format!("`{word}`"));
        }
    }
    out
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
fn choose_changes(
    scanned: &Scanned,
    map: &RepoMap,
    graph: &Graph,
    ranked: &[RankedFile],
    request: &str,
    intent: &Intent,
    opts: &PlannerOptions,
) -> Vec<Chosen> {
    let mut out: Vec<Chosen> = Vec::new();
    let has = |out: &Vec<Chosen>, p: &str| out.iter().any(|c| c.change.path == p);
    let summary = text::one_line(request, 90);
    let words = named::request_words(request);
    let top = ranked.first().map(|r| r.score).unwrap_or(0.0);
    let mut edits = 0;
    let mut tests_added = 0;
    // A dependency bump rarely needs more than a few call-site edits.
    let max_edits = if intent.dependency_only {
        opts.max_edits.min(3)
    } else {
        opts.max_edits
    };
    for (i, r) in ranked.iter().enumerate() {
        if edits >= max_edits || r.score < top * EDIT_THRESHOLD || r.score <= 0.0 {
            break;
        }
        let is_test = lang::is_test_path(&r.path);
        if is_test && tests_added >= 2 {
            continue;
        }
        let role = file_role(map, &r.path);
        let source = scanned
            .index_of(&r.path)
            .and_then(|i| scanned.files[i].text.as_deref())
            .unwrap_or_default();
        let symbols = if is_test {
            Vec::new()
        } else {
            named::named_symbols(&r.path, source, &words)
        };
        let change = if r.lexical <= 0.0 {
            format!("Adapt to the changes in its strong neighbours so that \u{201c}{summary}\u{201d} holds end to end.")
        } else if is_test {
            format!("Extend these tests to cover \u{201c}{summary}\u{201d}.")
        } else if !symbols.is_empty() {
            format!(
                "Change {} for \u{201c}{summary}\u{201d}{role}.",
                named::describe(&symbols)
            )
        } else {
            let about = r
                .matched
                .iter()
                .take(4)
                .map(|t| format!("`{}`", named::surface(&words, t)))
                .collect::<Vec<_>>()
                .join(", ");
            format!("Apply \u{201c}{summary}\u{201d} where this file deals with {about}{role}.")
        };
        let reasons: Vec<String> = r
            .reasons
            .iter()
            .map(|reason| in_request_words(reason, &r.matched, &words))
            .collect();
        let rationale = format!("Ranked #{} for the request: {}.", i + 1, reasons.join("; "));
        out.push(Chosen {
            change: FileChange {
                path: r.path.clone(),
                operation: Operation::Edit,
                change,
                rationale,
            },
            rank: Some(i),
            symbols,
        });
        if is_test {
            tests_added += 1;
        }
        edits += 1;
    }
    if out.is_empty() {
        // Nothing matched: start from an entry point so the plan still names
        // a concrete place, and say so in the rationale.
        let fallback = map
            .entry_points
            .iter()
            .map(|e| e.path.clone())
            .chain(
                scanned
                    .files
                    .iter()
                    .filter(|f| f.language.is_some_and(lang::is_code_language))
                    .map(|f| f.path.clone()),
            )
            .chain(scanned.files.first().map(|f| f.path.clone()))
            .next();
        if let Some(p) = fallback {
            out.push(Chosen {
                change: FileChange {
                    path: p.clone(),
                    operation: Operation::Edit,
                    change: format!("Wire in \u{201c}{summary}\u{201d} from this entry point."),
                    rationale: "No file shares vocabulary with the request; the entry point is where the change \
                                would be reached from. Confirm the location before approving."
                        .to_string(),
                },
                rank: None,
                symbols: Vec::new(),
            });
        }
    }

    // A new item the request names gets its sibling file and registration first.
    if let Some(nf) = analogy::new_by_analogy(scanned, request) {
        let sibs = text::backticked(nf.siblings.iter().map(|p| lang::file_name(p)));
        let (noun, name) = (&nf.noun, &nf.name);
        let mut front = vec![Chosen {
            change: FileChange {
                path: nf.path.clone(),
                operation: Operation::Create,
                change: format!("New {noun} `{name}`, written like its siblings {sibs}."),
                rationale: format!(
                    "The request names a new {noun}, and `{}/` keeps one file per {noun} ({sibs}); the name follows theirs.",
                    lang::parent_dir(&nf.path)
                ),
            },
            rank: None,
            symbols: Vec::new(),
        }];
        if let Some(reg) = &nf.registration {
            out.retain(|c| &c.change.path != reg);
            front.push(Chosen {
                change: FileChange {
                    path: reg.clone(),
                    operation: Operation::Edit,
                    change: format!("Register the {noun} `{name}` the way {sibs} are registered."),
                    rationale: format!(
                        "`{reg}` declares the existing ones, so the new {noun} is unreachable until it is added there."
                    ),
                },
                rank: None,
                symbols: Vec::new(),
            });
        }
        front.append(&mut out);
        out = front;
    }

    // A test beside the best non-test edit, in the test file nearest it.
    let primary = out
        .iter()
        .find(|c| {
            c.change.operation == Operation::Edit
                && !lang::is_test_path(&c.change.path)
                && lang::language_of(&c.change.path).is_some_and(lang::is_code_language)
        })
        .map(|c| c.change.path.clone());
    if tests_added == 0 {
        if let Some(primary) = primary.as_deref() {
            if let Some(place) = test_place(scanned, graph, map, primary, ranked) {
                if !has(&out, &place.path) {
                    let (operation, change) = if place.exists {
                        (
                            Operation::Edit,
                            format!("Add cases covering \u{201c}{summary}\u{201d}."),
                        )
                    } else {
                        (
                            Operation::Create,
                            format!("New tests proving \u{201c}{summary}\u{201d} for `{primary}`."),
                        )
                    };
                    out.push(Chosen {
                        change: FileChange {
                            path: place.path,
                            operation,
                            change,
                            rationale: format!(
                                "{}; the change to `{primary}` needs a test that fails without it.",
                                text::capitalized(&place.why)
                            ),
                        },
                        rank: None,
                        symbols: Vec::new(),
                    });
                }
            }
        }
    }

    if intent.touches_dependencies {
        let anchor = primary
            .clone()
            .or_else(|| out.first().map(|c| c.change.path.clone()))
            .unwrap_or_default();
        let manifests: Vec<String> = if intent.bumped.is_empty() {
            nearest_manifest(map, &anchor).into_iter().collect()
        } else {
            let mut m: Vec<&crate::Manifest> = map
                .dependency_manifests()
                .filter(|m| intent.bumped.iter().any(|d| m.has_dep(d)))
                .collect();
            // The changed package's own manifest first, then by depth.
            m.sort_by_key(|m| {
                let own = !m.dir().is_empty() && anchor.starts_with(&format!("{}/", m.dir()));
                (!own, m.path.matches('/').count(), m.path.clone())
            });
            m.into_iter().take(3).map(|m| m.path.clone()).collect()
        };
        let what = if !intent.new_dependencies.is_empty() {
            text::backticked(&intent.new_dependencies)
        } else if !intent.bumped.is_empty() {
            text::backticked(&intent.bumped)
        } else {
            "the dependency the request names".to_string()
        };
        // A manifest the ranking already chose moves here, with the dependency rationale.
        out.retain(|c| !manifests.contains(&c.change.path));
        let mut dep_changes: Vec<Chosen> = Vec::new();
        for m in &manifests {
            if has(&out, m) || dep_changes.iter().any(|c| &c.change.path == m) {
                continue;
            }
            let why = if intent.bumped.is_empty() {
                format!("The request changes dependencies and `{m}` is the nearest manifest to `{anchor}`.")
            } else {
                format!("`{m}` declares {what}, which the request names.")
            };
            dep_changes.push(Chosen {
                change: FileChange {
                    path: m.clone(),
                    operation: Operation::Edit,
                    change: format!("Declare or update {what}."),
                    rationale: why,
                },
                rank: None,
                symbols: Vec::new(),
            });
            if let Some(lock) = lockfile_for(scanned, m) {
                if !has(&out, &lock) && !dep_changes.iter().any(|c| c.change.path == lock) {
                    dep_changes.push(Chosen {
                        change: FileChange {
                            path: lock.clone(),
                            operation: Operation::Edit,
                            change: "Regenerated by the package manager when the change is executed; never edited by hand."
                                .to_string(),
                            rationale: format!("`{lock}` pins the versions `{m}` resolves to, so it moves with the manifest."),
                        },
                        rank: None,
                        symbols: Vec::new(),
                    });
                }
            }
        }
        if intent.dependency_only {
            dep_changes.append(&mut out);
            out = dep_changes;
        } else {
            out.append(&mut dep_changes);
        }
    }

    if intent.schema_change {
        if let Some(path) = next_migration(scanned, map, request) {
            if !has(&out, &path) {
                out.push(Chosen {
                    change: FileChange {
                        path: path.clone(),
                        operation: Operation::Create,
                        change: "New schema migration for the data-model change (with its rollback).".to_string(),
                        rationale: format!(
                            "The request implies a schema change and migrations live in `{}`; the name follows the existing numbering.",
                            lang::parent_dir(&path)
                        ),
                    },
                    rank: None,
                    symbols: Vec::new(),
                });
            }
        }
    }
    // The changelog nearest the change: a package's own before the root's.
    let log_anchor = primary
        .clone()
        .or_else(|| out.first().map(|c| c.change.path.clone()))
        .unwrap_or_default();
    if intent.release {
        // A release bumps the version in the root manifests and records the changelog.
        let mut release: Vec<Chosen> = Vec::new();
        let roots: Vec<String> = map
            .dependency_manifests()
            .filter(|m| m.dir().is_empty() && m.name.is_some())
            .map(|m| m.path.clone())
            .collect();
        for m in roots {
            out.retain(|c| c.change.path != m);
            release.push(Chosen {
                change: FileChange {
                    path: m.clone(),
                    operation: Operation::Edit,
                    change: "Bump the version for the release.".to_string(),
                    rationale: format!("`{m}` carries the project's version."),
                },
                rank: None,
                symbols: Vec::new(),
            });
            if let Some(lock) = lockfile_for(scanned, &m) {
                out.retain(|c| c.change.path != lock);
                release.push(Chosen {
                    change: FileChange {
                        path: lock.clone(),
                        operation: Operation::Edit,
                        change: "Regenerated by the package manager with the new version."
                            .to_string(),
                        rationale: format!("`{lock}` records the root package's version."),
                    },
                    rank: None,
                    symbols: Vec::new(),
                });
            }
        }
        if let Some(log) = changelog(scanned, &log_anchor) {
            out.retain(|c| c.change.path != log);
            release.push(Chosen {
                change: FileChange {
                    path: log.clone(),
                    operation: Operation::Edit,
                    change: "Move the unreleased entries under the new version heading."
                        .to_string(),
                    rationale: format!("The project records releases in `{log}`."),
                },
                rank: None,
                symbols: Vec::new(),
            });
        }
        release.append(&mut out);
        out = release;
    }
    if intent.changes_behaviour {
        if let Some(log) = changelog(scanned, &log_anchor) {
            if !has(&out, &log) {
                out.push(Chosen {
                    change: FileChange {
                        path: log.clone(),
                        operation: Operation::Edit,
                        change: format!("Add an entry for \u{201c}{summary}\u{201d} under the unreleased section."),
                        rationale: format!("The project records user-visible changes in `{log}`."),
                    },
                    rank: None,
                    symbols: Vec::new(),
                });
            }
        }
    }
    out
}

fn file_role(map: &RepoMap, path: &str) -> String {
    if let Some(e) = map.entry_points.iter().find(|e| e.path == path) {
        return format!(" (it is the {} entry point)", e.kind);
    }
    if let Some(h) = map.most_imported.iter().find(|h| h.path == path) {
        return format!(" (imported by {} files)", h.imported_by);
    }
    String::new()
}

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
