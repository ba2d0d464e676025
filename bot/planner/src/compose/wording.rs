//! Change lines in the plan's own words: what happens to the symbol a file changes, not the request quoted back.
//!
//! A reviewer reads the Change column to check that each file is touched for a
//! reason. Quoting the request on every row tells them nothing the title did
//! not; saying "extend `History` (command, line 4) with `--since`" does. The
//! built-in planner has no model, so the words come from two things it can read
//! reliably: the request's action (add, fix, remove, rename, rework) and the
//! names it spells out (flags, identifiers); everything else is the ranking's
//! matched words.

use crate::request::{Kind, Request};
use crate::text;

/// What the request does to the code, from its verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Add,
    Fix,
    Remove,
    Rename,
    Rework,
}

/// The request as the Change lines use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ask {
    pub(crate) action: Action,
    /// Flags (`--since`) and identifiers (`HTTPError`, `json`) the request spells out.
    pub(crate) names: Vec<String>,
}

const ADD: &[&str] = &[
    "add",
    "adds",
    "added",
    "adding",
    "introduce",
    "introduces",
    "support",
    "supports",
    "allow",
    "allows",
    "implement",
    "implements",
    "enable",
    "expose",
    "exposes",
    "create",
    "provide",
    "accept",
    "accepts",
    "new",
    "re-add",
    "readd",
    "restore",
];
const FIX: &[&str] = &[
    "fix", "fixes", "fixed", "correct", "corrects", "handle", "handles", "prevent", "prevents",
    "avoid", "avoids", "resolve", "repair", "don't", "do not",
];
const REMOVE: &[&str] = &[
    "remove",
    "removes",
    "removed",
    "drop",
    "drops",
    "delete",
    "deletes",
    "deprecate",
    "deprecates",
    "disable",
    "strip",
];
const RENAME: &[&str] = &["rename", "renames", "renamed"];

impl Ask {
    /// Reads the action from the request's first verb (a conventional-commit
    /// prefix such as `fix(cli):` counts), falling back on the request's kind.
    pub(crate) fn of(request: &Request) -> Ask {
        let words = &request.verb_words;
        let verb = words.iter().find_map(|w| {
            let w = w.as_str();
            if RENAME.contains(&w) {
                Some(Action::Rename)
            } else if REMOVE.contains(&w) {
                Some(Action::Remove)
            } else if FIX.contains(&w) {
                Some(Action::Fix)
            } else if ADD.contains(&w) || w == "feat" {
                Some(Action::Add)
            } else {
                None
            }
        });
        let action = verb.unwrap_or(match request.kind() {
            Kind::Feature => Action::Add,
            Kind::Fix => Action::Fix,
            _ => Action::Rework,
        });
        let mut names: Vec<String> = request.flags.clone();
        for id in &request.identifiers {
            if !names.contains(id) {
                names.push(id.clone());
            }
        }
        Ask { action, names }
    }

    /// The spelled names not already defined by the symbols a line names, so a
    /// line never says "extend `history` with `history`".
    fn new_names(&self, defined: &[String]) -> Vec<String> {
        self.names
            .iter()
            .filter(|n| {
                let bare = n.trim_start_matches('-');
                !defined.iter().any(|d| d.eq_ignore_ascii_case(bare))
            })
            .cloned()
            .collect()
    }
}

fn listed(items: &[String]) -> String {
    text::backticked(items.iter().take(4))
}

/// The Change line of a source file the ranking chose. `symbols` is the
/// described definitions (`` `history` (fn, line 9) ``) with their bare names in
/// `defined`; `about` is the request's words the file matched; `role` says where
/// the file sits (" (imported by 12 files)") or is empty.
pub(crate) fn source_change(
    ask: &Ask,
    symbols: &str,
    defined: &[String],
    about: &[String],
    role: &str,
) -> String {
    let new = ask.new_names(defined);
    let subject = if new.is_empty() {
        listed(about)
    } else {
        listed(&new)
    };
    let has_subject = !subject.is_empty();
    if !symbols.is_empty() {
        return match ask.action {
            Action::Add if has_subject => format!("Extend {symbols} with {subject}{role}."),
            Action::Add => format!("Extend {symbols} with the new behaviour{role}."),
            Action::Fix if has_subject => {
                format!("Correct how {symbols} handles {subject}{role}.")
            }
            Action::Fix => format!("Correct the faulty path in {symbols}{role}."),
            Action::Remove if has_subject => format!("Take {subject} out of {symbols}{role}."),
            Action::Remove => format!("Retire {symbols} and its uses here{role}."),
            Action::Rename => format!("Rename {symbols} and its uses in this file{role}."),
            Action::Rework if has_subject => format!("Rework {symbols} around {subject}{role}."),
            Action::Rework => format!("Rework {symbols}{role}."),
        };
    }
    let area = if about.is_empty() {
        "the matched code".to_owned()
    } else {
        format!("the code dealing with {}", listed(about))
    };
    let what = if has_subject {
        subject
    } else {
        "what is asked".to_owned()
    };
    match ask.action {
        Action::Add if !new.is_empty() => format!("Add {} in {area}{role}.", listed(&new)),
        Action::Add => format!("Add the new case to {area}{role}."),
        Action::Fix => format!("Correct {area}{role}."),
        Action::Remove => format!("Remove {what} from {area}{role}."),
        Action::Rename => format!("Rename {what} in {area}{role}."),
        Action::Rework => format!("Rework {area}{role}."),
    }
}

/// The Change line of a prose file (a README, a docs page, a changelog the ranking chose).
pub(crate) fn doc_change(ask: &Ask, about: &[String]) -> String {
    let subject = if ask.names.is_empty() {
        listed(about)
    } else {
        listed(&ask.names)
    };
    let on = if subject.is_empty() {
        "the affected behaviour".to_owned()
    } else {
        subject
    };
    match ask.action {
        Action::Add => format!("Document {on} beside the neighbouring options."),
        Action::Fix => format!("Correct the passage on {on}."),
        Action::Remove => format!("Drop the passage on {on}, or mark it removed."),
        Action::Rename => format!("Use the new name of {on} throughout."),
        Action::Rework => format!("Bring the passage on {on} in line with the change."),
    }
}

/// The Change line of a test file, existing (`source` is `None`) or new for `source`.
pub(crate) fn test_change(ask: &Ask, about: &[String], source: Option<&str>) -> String {
    let new = ask.new_names(&[]);
    let subject = if new.is_empty() {
        listed(about)
    } else {
        listed(&new)
    };
    let subject = if subject.is_empty() {
        "the changed behaviour".to_owned()
    } else {
        subject
    };
    let cases = match ask.action {
        Action::Add => format!("cases that exercise {subject}"),
        Action::Fix => {
            format!("a case that fails on the old handling of {subject} and passes with the fix")
        }
        Action::Remove => format!("no case that still relies on {subject}"),
        Action::Rename => format!("cases that use the new name of {subject}"),
        Action::Rework => format!("cases that pin the behaviour of {subject} across the rework"),
    };
    match source {
        Some(src) => format!("New tests for `{src}` with {cases}."),
        None if ask.action == Action::Remove => format!("Leave {cases}."),
        None => format!("Add {cases}."),
    }
}

/// The Change line of a file ranked for its neighbours, not its own words.
pub(crate) fn neighbour_change() -> String {
    "Follow the definitions it uses from the files above where their signatures or behaviour change."
        .to_owned()
}

/// The Change line of a caller: its definitions that use what the edits above change.
pub(crate) fn caller_change(callers: &str, used: &[&str]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for u in used {
        if !names.contains(u) {
            names.push(u);
        }
    }
    format!(
        "Update {callers}, which use{} {}, where their signatures or behaviour change.",
        if callers.contains(" and ") { "" } else { "s" },
        crate::text::backticked(&names)
    )
}

/// The changelog line: the Keep a Changelog heading the change belongs under.
pub(crate) fn changelog_change(ask: &Ask, about: &[String]) -> String {
    let heading = match ask.action {
        Action::Add => "Added",
        Action::Fix => "Fixed",
        Action::Remove => "Removed",
        Action::Rename | Action::Rework => "Changed",
    };
    let subject = if ask.names.is_empty() {
        listed(about)
    } else {
        listed(&ask.names)
    };
    if subject.is_empty() {
        format!("Add an entry under \u{201c}{heading}\u{201d} in the unreleased section.")
    } else {
        format!("Add an entry about {subject} under \u{201c}{heading}\u{201d} in the unreleased section.")
    }
}

/// The Change line of the entry point proposed when nothing matched.
pub(crate) fn entry_change(ask: &Ask) -> String {
    if ask.names.is_empty() {
        "Reach the new behaviour from here; no file shares the request's words yet.".to_owned()
    } else {
        format!(
            "Reach {} from here; no file shares the request's words yet.",
            listed(&ask.names)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_action_comes_from_the_first_verb_and_a_conventional_prefix() {
        assert_eq!(
            Ask::of(&Request::parse(
                "add a --since option to navin ledger history"
            ))
            .action,
            Action::Add
        );
        assert_eq!(
            Ask::of(&Request::parse("fix(cli): crash on an empty config")).action,
            Action::Fix
        );
        assert_eq!(
            Ask::of(&Request::parse("Remove the deprecated `json_body` helper")).action,
            Action::Remove
        );
        assert_eq!(
            Ask::of(&Request::parse("rename `Walker` to `WalkDir`")).action,
            Action::Rename
        );
        assert_eq!(
            Ask::of(&Request::parse("refactor the router")).action,
            Action::Rework
        );
        assert_eq!(
            Ask::of(&Request::parse("feat: colour output")).action,
            Action::Add
        );
    }

    #[test]
    fn flags_and_spelled_identifiers_are_the_names_a_line_can_use() {
        let ask = Ask::of(&Request::parse(
            "add a --since option and `HistoryFilter` to ledger history.",
        ));
        assert_eq!(ask.names, ["--since", "HistoryFilter"]);
    }

    #[test]
    fn a_change_line_names_the_symbol_and_what_it_gains_without_quoting_the_request() {
        let request = "add a --since option to navin ledger history";
        let ask = Ask::of(&Request::parse(request));
        let line = source_change(
            &ask,
            "`History` (command, line 4)",
            &["History".to_owned()],
            &["history".to_owned()],
            "",
        );
        assert_eq!(line, "Extend `History` (command, line 4) with `--since`.");
        assert!(!line.contains(request));
        let fix = source_change(
            &Ask::of(&Request::parse("fix crash when the config file is empty")),
            "`load` (fn, line 3)",
            &["load".to_owned()],
            &["config".to_owned(), "empty".to_owned()],
            " (imported by 4 files)",
        );
        assert_eq!(
            fix,
            "Correct how `load` (fn, line 3) handles `config`, `empty` (imported by 4 files)."
        );
    }

    #[test]
    fn a_name_the_symbol_already_has_is_not_offered_as_new() {
        let ask = Ask::of(&Request::parse("remove `legacy_mode`"));
        let line = source_change(
            &ask,
            "`legacy_mode` (fn, line 2)",
            &["legacy_mode".to_owned()],
            &["legacy".to_owned()],
            "",
        );
        assert_eq!(line, "Take `legacy` out of `legacy_mode` (fn, line 2).");
    }

    #[test]
    fn test_lines_say_which_cases_each_action_needs() {
        let fix = Ask::of(&Request::parse("fix crash when the config file is empty"));
        assert_eq!(
            test_change(&fix, &["config".to_owned()], None),
            "Add a case that fails on the old handling of `config` and passes with the fix."
        );
        assert_eq!(
            doc_change(
                &Ask::of(&Request::parse("contributing")),
                &["contributing".to_owned()]
            ),
            "Bring the passage on `contributing` in line with the change."
        );
        let add = Ask::of(&Request::parse("add a --since option"));
        assert_eq!(
            test_change(&add, &[], Some("src/cli.rs")),
            "New tests for `src/cli.rs` with cases that exercise `--since`."
        );
        assert_eq!(
            changelog_change(&fix, &["config".to_owned()]),
            "Add an entry about `config` under \u{201c}Fixed\u{201d} in the unreleased section."
        );
    }
}
