//! Which lines count as commands: start of line, outside code, quotes, links and HTML.

use super::{one, results};
use crate::command::{parse_comment, Command};

#[test]
fn command_alone_is_found() {
    assert_eq!(one("/approve"), Ok(Command::Approve));
}

#[test]
fn command_must_start_the_line() {
    assert!(results("please /approve this").is_empty());
    assert!(results("I think\nwe should /approve").is_empty());
}

#[test]
fn up_to_three_leading_spaces_are_allowed() {
    assert_eq!(one("   /approve"), Ok(Command::Approve));
}

#[test]
fn four_leading_spaces_make_code_not_a_command() {
    assert!(results("    /approve").is_empty());
    assert!(results("\t/approve").is_empty());
}

#[test]
fn two_commands_on_two_lines() {
    assert_eq!(
        results("/approve\n/status"),
        vec![Ok(Command::Approve), Ok(Command::Status)]
    );
}

#[test]
fn command_inside_a_paragraph_still_counts_when_it_starts_a_line() {
    assert_eq!(
        results("Looks good to me.\n/approve\nThanks!"),
        vec![Ok(Command::Approve)]
    );
}

#[test]
fn windows_line_endings_are_accepted() {
    assert_eq!(
        results("/approve\r\n/next\r\n"),
        vec![Ok(Command::Approve), Ok(Command::Next)]
    );
}

#[test]
fn second_command_on_the_same_line_is_part_of_the_first() {
    assert_eq!(
        one("/reject /approve"),
        Ok(Command::Reject {
            feedback: Some("/approve".into())
        })
    );
}

#[test]
fn ignore_command_in_code_block() {
    assert!(results("```\n/approve\n```").is_empty());
    assert!(results("~~~sh\n/mission close\n~~~\n").is_empty());
}

#[test]
fn ignore_command_in_unclosed_code_block() {
    assert!(results("```\n/approve\n").is_empty());
}

#[test]
fn ignore_command_in_indented_code_block() {
    assert!(results("Example:\n\n    /approve\n").is_empty());
}

#[test]
fn command_after_a_closed_code_block_counts() {
    assert_eq!(
        results("```\n/reject\n```\n/approve"),
        vec![Ok(Command::Approve)]
    );
}

#[test]
fn ignore_command_in_inline_code() {
    assert!(results("`/approve` is how you approve").is_empty());
    assert!(results("``\n/approve\n``").is_empty());
}

#[test]
fn ignore_command_in_quote() {
    assert!(results("> /approve").is_empty());
    assert!(results("> > nested\n> > /approve").is_empty());
}

#[test]
fn ignore_command_in_lazy_continuation_of_a_quote() {
    // GitHub renders this second line inside the quote, so it is quoted text.
    assert!(results("> someone said\n/approve").is_empty());
}

#[test]
fn command_after_a_quote_and_a_blank_line_counts() {
    assert_eq!(results("> /reject\n\n/approve"), vec![Ok(Command::Approve)]);
}

#[test]
fn ignore_command_in_link_text() {
    assert!(results("[see\n/approve](https://example.com)").is_empty());
}

#[test]
fn ignore_command_in_html() {
    assert!(results("<!--\n/approve\n-->").is_empty());
    assert!(results("<details>\n/approve\n</details>").is_empty());
}

#[test]
fn command_after_html_and_a_blank_line_counts() {
    assert_eq!(
        results("<details>\n<summary>x</summary>\n\n/approve\n</details>"),
        vec![Ok(Command::Approve)]
    );
}

#[test]
fn paths_and_other_slash_words_are_ignored() {
    assert!(results("/usr/bin/env bash\n/tmp\n/etc/hosts\n/cc @octocat\n/home").is_empty());
}

#[test]
fn slash_followed_by_space_is_not_a_command() {
    assert!(results("/ approve\n/").is_empty());
}

#[test]
fn positions_point_at_the_command_line() {
    let parsed = parse_comment("Hi\n\n  /status now\n");
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].line, 3);
    assert_eq!(parsed[0].offset, 6);
    assert_eq!(parsed[0].source, "/status now");
}

#[test]
fn non_ascii_text_around_commands_is_fine() {
    assert_eq!(
        results("Ça marche ✅\n/pause café ☕\n日本語"),
        vec![Ok(Command::Pause {
            reason: Some("café ☕".into())
        })]
    );
}

#[test]
fn link_in_the_arguments_does_not_hide_the_command() {
    assert_eq!(
        one("/reject see [the docs](https://example.com)"),
        Ok(Command::Reject {
            feedback: Some("see [the docs](https://example.com)".into())
        })
    );
}

#[test]
fn line_right_after_a_lone_html_tag_is_html() {
    // `<img …>` alone on a line opens an HTML block that runs to the next blank line.
    assert!(results("<img src=\"shot.png\">\n/approve").is_empty());
    assert_eq!(
        results("<img src=\"shot.png\">\n\n/approve"),
        vec![Ok(Command::Approve)]
    );
}

#[test]
fn inline_html_before_a_command_line_does_not_hide_it() {
    assert_eq!(
        results("<b>note</b> done\n/approve"),
        vec![Ok(Command::Approve)]
    );
}

#[test]
fn command_in_a_list_item_is_not_at_line_start() {
    assert!(results("- /approve\n1. /status").is_empty());
}
