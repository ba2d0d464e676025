//! Properties: the parser never panics, and fenced text never yields a command.

use proptest::prelude::*;

use crate::command::{new_commands, parse_comment};

/// Lines that would be commands outside a code block.
fn command_like_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("/approve".to_string()),
        Just("/plan edit".to_string()),
        Just("  /mission close done".to_string()),
        "/[a-z]{1,8}( [A-Za-z0-9 \"-]{0,20})?",
        "[^`~\n\r]{0,30}",
    ]
}

/// Text with no backticks, tildes or `<`, so it cannot open or close a fence or an HTML block
/// that would swallow the fence under test.
fn plain_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof!["[^`~<\r]{0,40}", command_like_line()], 0..5)
        .prop_map(|lines| lines.join("\n"))
}

proptest! {
    #[test]
    fn parse_comment_never_panics(body in any::<String>()) {
        let _ = parse_comment(&body);
    }

    #[test]
    fn parse_comment_never_panics_on_markdown_soup(
        body in "([/ `~>\\[\\]()<!\\-\n\"“”—a-z0-9]|plan|edit|step add|--after|```){0,60}"
    ) {
        let parsed = parse_comment(&body);
        for p in &parsed {
            prop_assert!(body[p.offset..].starts_with('/'));
        }
        let _ = new_commands(&body, &body);
    }

    #[test]
    fn text_inside_a_fenced_block_never_yields_a_command(
        before in plain_text(),
        inside in prop::collection::vec(command_like_line(), 0..8),
        after in plain_text(),
        fence in prop_oneof![Just("```"), Just("````"), Just("~~~")],
    ) {
        let body = format!("{before}\n\n{fence}\n{}\n{fence}\n{after}", inside.join("\n"));
        let first = before.lines().count() + 3;
        let last = first + inside.len();
        for p in parse_comment(&body) {
            prop_assert!(
                p.line < first || p.line >= last,
                "line {} inside the fence yielded {:?}", p.line, p.result
            );
        }
    }

    #[test]
    fn an_unchanged_comment_has_no_new_commands(body in plain_text()) {
        prop_assert!(new_commands(&body, &body).is_empty());
    }
}
