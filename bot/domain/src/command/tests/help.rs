//! `/help` lists every command, and every listed example parses to its command.

use super::one;
use crate::command::{help_text, CommandKind};

#[test]
fn help_lists_every_command() {
    let help = help_text();
    for kind in CommandKind::ALL {
        let usage = kind.spec().usage.replace('|', "\\|");
        assert!(help.contains(&usage), "help lacks {usage}");
        assert!(help.contains(kind.spec().summary));
    }
}

#[test]
fn every_help_example_parses_to_its_command() {
    for kind in CommandKind::ALL {
        let example = kind.spec().example;
        let parsed = one(example).unwrap_or_else(|e| panic!("{example:?} fails: {e}"));
        assert_eq!(parsed.kind(), *kind, "{example:?}");
        assert_eq!(parsed.name(), kind.spec().name);
    }
}

#[test]
fn command_names_are_unique() {
    let mut names: Vec<&str> = CommandKind::ALL.iter().map(|k| k.spec().name).collect();
    names.sort_unstable();
    let count = names.len();
    names.dedup();
    assert_eq!(names.len(), count);
}

#[test]
fn help_marks_read_only_commands() {
    let help = help_text();
    let status_row = help
        .lines()
        .find(|l| l.contains("`` /status ``"))
        .expect("status row");
    assert!(status_row.ends_with("| no |"), "{status_row}");
    let approve_row = help
        .lines()
        .find(|l| l.contains("`` /approve ``"))
        .expect("approve row");
    assert!(approve_row.ends_with("| yes |"), "{approve_row}");
}

#[test]
fn help_is_valid_markdown_table_with_one_row_per_command() {
    let rows = help_text()
        .lines()
        .filter(|l| l.starts_with("| ``"))
        .count();
    assert_eq!(rows, CommandKind::ALL.len());
}
