//! Which files a plan proposes, in order: the ranked edits, a new item's file, the paired tests, then the files a kind of change always brings along.
//!
//! Each step is a function over one [`Inputs`] so a reader can hold it: the
//! ranking decides the core edits, and every later step only adds what the
//! request's intent or the repository's layout implies (a test beside the code,
//! a manifest with its lockfile, a migration, a changelog entry, the docs that
//! describe a changed option).

use navin_ledger::plan::{FileChange, Operation};

use crate::compose::analogy;
use crate::compose::chosen::Chosen;
pub use crate::compose::chosen::Inputs;
use crate::compose::concept;
use crate::compose::docs;
use crate::compose::floor;
use crate::compose::named_new;
use crate::compose::targets::{changelog, lockfile_for, nearest_manifest, next_migration};
use crate::compose::test_place::test_place;
use crate::compose::wording::{self, Ask};
use crate::detect::map::RepoMap;
use crate::lang;
use crate::rank::named;
use crate::request::Kind;
use crate::text;

/// Files within this share of the best score are proposed for edit.
const EDIT_THRESHOLD: f64 = 0.35;
/// Ranked files below this share of the best score may change: they are in scope,
/// marked optional and asked about, never required.
const MUST_THRESHOLD: f64 = 0.5;
/// Ranked test files taken as edits of their own; more would crowd out the code.
const MAX_RANKED_TESTS: usize = 2;
/// Source edits that get their existing test file proposed right after them.
const MAX_PAIRED_TESTS: usize = 2;

fn has(out: &[Chosen], path: &str) -> bool {
    out.iter().any(|c| c.change.path == path)
}

fn added(path: String, operation: Operation, change: String, rationale: String) -> Chosen {
    Chosen {
        change: FileChange {
            path,
            operation,
            change,
            rationale,
            optional: false,
        },
        rank: None,
        symbols: Vec::new(),
    }
}

/// The plan's changes, in the order a reader and an agent should take them.
pub fn choose_changes(cx: &Inputs) -> Vec<Chosen> {
    let mut out = ranked_edits(cx);
    if out.is_empty() {
        out.extend(entry_point(cx));
    }
    new_item_first(cx, &mut out);
    named_first(cx, &mut out);
    toolchain_floor(cx, &mut out);
    paired_tests(cx, &mut out);
    let primary = primary_source(&out);
    dependency_changes(cx, &mut out, primary.as_deref());
    migration(cx, &mut out);
    docs::doc_changes(cx, &mut out);
    // The changelog nearest the change: a package's own before the root's.
    let log_anchor = primary
        .or_else(|| out.first().map(|c| c.change.path.clone()))
        .unwrap_or_default();
    release(cx, &mut out, &log_anchor);
    changelog_entry(cx, &mut out, &log_anchor);
    out
}

/// The best non-test code edit: the file the tests, manifests and changelog anchor to.
fn primary_source(out: &[Chosen]) -> Option<String> {
    out.iter()
        .find(|c| {
            c.change.operation == Operation::Edit
                && !lang::is_test_path(&c.change.path)
                && lang::language_of(&c.change.path).is_some_and(lang::is_code_language)
        })
        .map(|c| c.change.path.clone())
}

/// The ranking's strong files, each with a Change line naming what in it changes.
fn ranked_edits(cx: &Inputs) -> Vec<Chosen> {
    let mut out = Vec::new();
    let ask = Ask::of(cx.request);
    let words = cx.request.words.clone();
    let top = cx.ranked.first().map(|r| r.score).unwrap_or(0.0);
    let mut tests_added = 0;
    // A dependency bump rarely needs more than a few call-site edits.
    let max_edits = if cx.intent.dependency_only {
        cx.opts.max_edits.min(3)
    } else {
        cx.opts.max_edits
    };
    for (i, r) in cx.ranked.iter().enumerate() {
        if out.len() >= max_edits || r.score < top * EDIT_THRESHOLD || r.score <= 0.0 {
            break;
        }
        let is_test = lang::is_test_path(&r.path);
        if is_test && tests_added >= MAX_RANKED_TESTS {
            continue;
        }
        // A file ranked only for its neighbours: the definitions in it that use what
        // the edits above it name are where it changes (callers through the imports).
        let used: Vec<String> = out
            .iter()
            .flat_map(|c: &Chosen| c.symbols.iter().map(|s| s.name.clone()))
            .collect();
        let callers = if r.lexical <= 0.0 && !is_test {
            named::callers(&r.path, cx.text_of(&r.path), &used)
        } else {
            Vec::new()
        };
        let symbols = if is_test {
            Vec::new()
        } else if !callers.is_empty() {
            callers.iter().map(|(s, _)| s.clone()).collect()
        } else {
            named::named_symbols(&r.path, cx.text_of(&r.path), &words)
        };
        let about = matched_words(&r.matched, &words);
        let change = if r.lexical <= 0.0 && !callers.is_empty() {
            let calls: Vec<&str> = callers.iter().map(|(_, c)| c.as_str()).collect();
            wording::caller_change(&named::describe(&symbols), &calls)
        } else if r.lexical <= 0.0 {
            wording::neighbour_change()
        } else if is_test {
            wording::test_change(&ask, &about, None)
        } else if lang::is_doc_path(&r.path) {
            wording::doc_change(&ask, &about)
        } else {
            let defined: Vec<String> = symbols.iter().map(|s| s.name.clone()).collect();
            wording::source_change(
                &ask,
                &named::describe(&symbols),
                &defined,
                &about,
                &file_role(cx.map, &r.path),
            )
        };
        let reasons: Vec<String> = r
            .reasons
            .iter()
            .map(|reason| in_request_words(reason, &r.matched, &words))
            .collect();
        // A caller with no word of the request, or a file well below the best, may
        // change; the step is complete without it.
        let optional = i > 0 && (r.lexical <= 0.0 || r.score < top * MUST_THRESHOLD);
        out.push(Chosen {
            change: FileChange {
                path: r.path.clone(),
                operation: Operation::Edit,
                change,
                rationale: format!("Ranked #{} for the request: {}.", i + 1, reasons.join("; ")),
                optional,
            },
            rank: Some(i),
            symbols,
        });
        tests_added += usize::from(is_test);
    }
    out
}

/// Nothing matched: start from an entry point so the plan still names a concrete
/// place, and say so in the rationale.
fn entry_point(cx: &Inputs) -> Option<Chosen> {
    let path = cx
        .map
        .entry_points
        .iter()
        .map(|e| e.path.clone())
        .chain(
            cx.scanned
                .files
                .iter()
                .filter(|f| f.language.is_some_and(lang::is_code_language))
                .map(|f| f.path.clone()),
        )
        .chain(cx.scanned.files.first().map(|f| f.path.clone()))
        .next()?;
    Some(added(
        path,
        Operation::Edit,
        wording::entry_change(&Ask::of(cx.request)),
        "No file shares vocabulary with the request; the entry point is where the change \
         would be reached from. Confirm the location before approving."
            .to_string(),
    ))
}

/// A new item the request names gets its sibling file and registration first;
/// failing that, a new concern gets its module in the crate the ranking points at.
fn new_item_first(cx: &Inputs, out: &mut Vec<Chosen>) {
    let (nf, create, why, register) = if let Some(nf) =
        analogy::new_by_analogy(cx.scanned, cx.request)
    {
        let sibs = text::backticked(nf.siblings.iter().map(|p| lang::file_name(p)));
        let (noun, name) = (&nf.noun, &nf.name);
        let create = format!("New {noun} `{name}`, written like its siblings {sibs}.");
        let why = format!(
                "The request names a new {noun}, and `{}/` keeps one file per {noun} ({sibs}); the name follows theirs.",
                lang::parent_dir(&nf.path)
            );
        let register = format!("Register the {noun} `{name}` the way {sibs} are registered.");
        (nf, create, why, register)
    } else {
        let near = cx.ranked.iter().map(|r| r.path.as_str()).find(|p| {
            !lang::is_test_path(p) && lang::language_of(p).is_some_and(lang::is_code_language)
        });
        let Some(nf) = concept::new_concern(cx.scanned, cx.request, near) else {
            return;
        };
        let sibs = text::backticked(nf.siblings.iter().map(|p| lang::file_name(p)));
        let (noun, name) = (&nf.noun, &nf.name);
        let create = format!("New module `{name}` holding the {noun}, beside {sibs}.");
        let why = format!(
                "Nothing in the repository spells `{name}` yet, and `{}/` keeps one module per concern ({sibs}).",
                lang::parent_dir(&nf.path)
            );
        let register = format!("Declare the module `{name}` the way {sibs} are declared.");
        (nf, create, why, register)
    };
    let mut front = vec![added(nf.path.clone(), Operation::Create, create, why)];
    if let Some(reg) = &nf.registration {
        out.retain(|c| &c.change.path != reg);
        front.push(added(
            reg.clone(),
            Operation::Edit,
            register,
            format!("`{reg}` declares the existing ones, so the new module is unreachable until it is added there."),
        ));
    }
    front.append(out);
    *out = front;
}

/// What the request names outright (a file, a module, a type, a test file) comes
/// first. Ranked edits that matched only the new files' own names go: a request
/// for `CONTRIBUTING.md` is not about every file with `md` in its path.
fn named_first(cx: &Inputs, out: &mut Vec<Chosen>) {
    let near = cx.ranked.iter().map(|r| r.path.as_str()).find(|p| {
        !lang::is_test_path(p) && lang::language_of(p).is_some_and(lang::is_code_language)
    });
    let mut front = named_new::named_new(cx, near);
    if front.is_empty() {
        return;
    }
    let new = &cx.request.new;
    let mut created: Vec<String> = front
        .iter()
        .filter(|c| c.change.operation == Operation::Create)
        .flat_map(|c| text::terms(lang::file_name(&c.change.path)))
        .chain(
            new.types
                .iter()
                .chain(&new.modules)
                .flat_map(|n| text::terms(n)),
        )
        .collect();
    if new.tests {
        created.extend(text::terms("test tests"));
    }
    out.retain(|c| {
        let only_names = c
            .rank
            .is_some_and(|r| cx.ranked[r].matched.iter().all(|m| created.contains(m)));
        !only_names && !front.iter().any(|f| f.change.path == c.change.path)
    });
    front.append(out);
    *out = front;
}

/// A request moving the supported language versions edits the manifests that
/// declare the floor and the CI that pins it, ahead of anything ranked.
fn toolchain_floor(cx: &Inputs, out: &mut Vec<Chosen>) {
    let Some(language) = floor::floor_request(cx.request) else {
        return;
    };
    let files = floor::floor_files(cx.scanned, language);
    if files.is_empty() {
        return;
    }
    let mut front: Vec<Chosen> = Vec::new();
    for f in files {
        out.retain(|c| c.change.path != f.path);
        front.push(added(f.path, Operation::Edit, f.change, f.why));
    }
    front.append(out);
    *out = front;
}

/// The test each leading source edit already has goes right after it; when the
/// ranking proposed no test at all, the best edit gets one (a new file if its
/// package has none).
fn paired_tests(cx: &Inputs, out: &mut Vec<Chosen>) {
    let ask = Ask::of(cx.request);
    let words = cx.request.words.clone();
    // Only a feature or a fix gets cases beside each edit; a refactor or a chore
    // keeps to the one test the primary edit needs.
    let kind = cx.request.kind();
    let pairs = if matches!(kind, Kind::Feature | Kind::Fix) {
        MAX_PAIRED_TESTS
    } else {
        1
    };
    let ranked_test = out.iter().any(|c| lang::is_test_path(&c.change.path));
    let sources: Vec<String> = out
        .iter()
        .filter(|c| {
            c.change.operation == Operation::Edit
                && !lang::is_test_path(&c.change.path)
                && lang::language_of(&c.change.path).is_some_and(lang::is_code_language)
        })
        .map(|c| c.change.path.clone())
        .take(pairs)
        .collect();
    for (n, source) in sources.iter().enumerate() {
        let Some(place) = test_place(cx.scanned, cx.graph, cx.map, source, cx.ranked) else {
            continue;
        };
        if has(out, &place.path) {
            continue;
        }
        // Only the primary edit may ask for a new test file, and only when the
        // ranking brought none: later edits borrow the tests that exist.
        let primary = n == 0 && !ranked_test;
        if !place.exists && !primary {
            continue;
        }
        if place.exists && !primary && !place.paired {
            continue;
        }
        let about = cx
            .ranked
            .iter()
            .find(|r| &r.path == source)
            .map(|r| matched_words(&r.matched, &words))
            .unwrap_or_default();
        let (operation, change) = if place.exists {
            (Operation::Edit, wording::test_change(&ask, &about, None))
        } else {
            (
                Operation::Create,
                wording::test_change(&ask, &about, Some(source)),
            )
        };
        let chosen = added(
            place.path,
            operation,
            change,
            format!(
                "{}; the change to `{source}` needs a test that fails without it.",
                text::capitalized(&place.why)
            ),
        );
        let at = out
            .iter()
            .position(|c| &c.change.path == source)
            .map_or(out.len(), |i| i + 1);
        out.insert(at, chosen);
    }
}

/// A dependency change: the manifests that declare it (the changed package's own
/// first), each with its lockfile.
fn dependency_changes(cx: &Inputs, out: &mut Vec<Chosen>, primary: Option<&str>) {
    let intent = cx.intent;
    if !intent.touches_dependencies {
        return;
    }
    let anchor = primary
        .map(str::to_string)
        .or_else(|| out.first().map(|c| c.change.path.clone()))
        .unwrap_or_default();
    let manifests: Vec<String> = if intent.bumped.is_empty() {
        nearest_manifest(cx.map, &anchor).into_iter().collect()
    } else {
        let mut m: Vec<&crate::Manifest> = cx
            .map
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
        if has(out, m) || has(&dep_changes, m) {
            continue;
        }
        let why = if intent.bumped.is_empty() {
            format!(
                "The request changes dependencies and `{m}` is the nearest manifest to `{anchor}`."
            )
        } else {
            format!("`{m}` declares {what}, which the request names.")
        };
        dep_changes.push(added(
            m.clone(),
            Operation::Edit,
            format!("Declare or update {what}."),
            why,
        ));
        if let Some(lock) = lockfile_for(cx.scanned, m) {
            if !has(out, &lock) && !has(&dep_changes, &lock) {
                dep_changes.push(added(
                    lock.clone(),
                    Operation::Edit,
                    "Regenerated by the package manager when the change is executed; never edited by hand."
                        .to_string(),
                    format!("`{lock}` pins the versions `{m}` resolves to, so it moves with the manifest."),
                ));
            }
        }
    }
    if intent.dependency_only {
        dep_changes.append(out);
        *out = dep_changes;
    } else {
        out.append(&mut dep_changes);
    }
}

/// A schema change gets the next migration file, numbered like the existing ones.
fn migration(cx: &Inputs, out: &mut Vec<Chosen>) {
    if !cx.intent.schema_change {
        return;
    }
    let Some(path) = next_migration(cx.scanned, cx.map, cx.request) else {
        return;
    };
    if has(out, &path) {
        return;
    }
    let dir = lang::parent_dir(&path).to_string();
    out.push(added(
        path,
        Operation::Create,
        "New schema migration for the data-model change (with its rollback).".to_string(),
        format!(
            "The request implies a schema change and migrations live in `{dir}`; the name follows the existing numbering."
        ),
    ));
}

/// A release bumps the version in the root manifests and records the changelog, first.
fn release(cx: &Inputs, out: &mut Vec<Chosen>, log_anchor: &str) {
    if !cx.intent.release {
        return;
    }
    let mut release: Vec<Chosen> = Vec::new();
    let roots: Vec<String> = cx
        .map
        .dependency_manifests()
        .filter(|m| m.dir().is_empty() && m.name.is_some())
        .map(|m| m.path.clone())
        .collect();
    for m in roots {
        out.retain(|c| c.change.path != m);
        release.push(added(
            m.clone(),
            Operation::Edit,
            "Bump the version for the release.".to_string(),
            format!("`{m}` carries the project's version."),
        ));
        let version = cx
            .scanned
            .index_of(&m)
            .and_then(|i| cx.scanned.files[i].text.as_deref())
            .and_then(floor::manifest_version);
        for file in version.map_or_else(Vec::new, |v| floor::version_files(cx.scanned, &m, &v)) {
            out.retain(|c| c.change.path != file);
            release.push(added(
                file.clone(),
                Operation::Edit,
                "Write the new version where this file spells out the old one.".to_string(),
                format!("`{file}` repeats the version `{m}` declares."),
            ));
        }
        if let Some(lock) = lockfile_for(cx.scanned, &m) {
            out.retain(|c| c.change.path != lock);
            release.push(added(
                lock.clone(),
                Operation::Edit,
                "Regenerated by the package manager with the new version.".to_string(),
                format!("`{lock}` records the root package's version."),
            ));
        }
    }
    if let Some(log) = changelog(cx.scanned, log_anchor) {
        out.retain(|c| c.change.path != log);
        release.push(added(
            log.clone(),
            Operation::Edit,
            "Move the unreleased entries under the new version heading.".to_string(),
            format!("The project records releases in `{log}`."),
        ));
    }
    release.append(out);
    *out = release;
}

/// A user-visible change gets an entry in the nearest changelog.
fn changelog_entry(cx: &Inputs, out: &mut Vec<Chosen>, log_anchor: &str) {
    if !cx.intent.changes_behaviour {
        return;
    }
    let Some(log) = changelog(cx.scanned, log_anchor) else {
        return;
    };
    if has(out, &log) {
        return;
    }
    let words = cx.request.words.clone();
    let about: Vec<String> = cx
        .ranked
        .first()
        .map(|r| matched_words(&r.matched, &words))
        .unwrap_or_default();
    out.push(added(
        log.clone(),
        Operation::Edit,
        wording::changelog_change(&Ask::of(cx.request), &about),
        format!("The project records user-visible changes in `{log}`."),
    ));
}

/// The request's words (as it spells them) behind a file's matched stems, at most four.
fn matched_words(stems: &[String], words: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for stem in stems {
        let word = named::surface(words, stem).to_owned();
        if !out.contains(&word) {
            out.push(word);
        }
        if out.len() == 4 {
            break;
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

/// A ranking reason with each stemmed term in backticks shown as the request spells it.
pub fn in_request_words(reason: &str, stems: &[String], words: &[String]) -> String {
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
