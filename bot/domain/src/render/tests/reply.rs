//! Short replies: refusal, acknowledgement, generic error, help.

use crate::render::reply::{accepted, error, help, refusal, refusal_to};
use crate::render::{parse_marker, Marker, ReplyKind};

fn kind(body: &str) -> Option<ReplyKind> {
    match parse_marker(body) {
        Some(Marker::Reply { kind }) => Some(kind),
        _ => None,
    }
}

#[test]
fn refusal_gives_reason_and_what_to_do() {
    let body = refusal(
        "@mallory needs write access to run /pause.",
        "Ask a maintainer to run it.",
    );
    assert_eq!(kind(&body), Some(ReplyKind::Refusal));
    assert!(
        body.contains("🚫 Nothing changed: @<!-- -->mallory needs write access to run /pause."),
        "{body}"
    );
    assert!(body.contains("👉 Ask a maintainer to run it."));
}

#[test]
fn a_refusal_to_someone_mentions_only_them_and_only_a_real_login() {
    let body = refusal_to("bob", "you clicked a button", "@bob has role read.", "Ask.");
    assert_eq!(kind(&body), Some(ReplyKind::Refusal));
    assert!(body.contains("@bob, you clicked a button:"), "{body}");
    assert!(
        body.contains("Nothing changed: @<!-- -->bob has role read."),
        "{body}"
    );
    assert!(body.contains("👉 Ask."));
    let odd = refusal_to("x](http://evil)", "w", "r", "");
    assert!(!odd.contains("@x"), "{odd}");
    assert!(
        odd.contains("x\\](http://evil), w:"),
        "escaped, not a link: {odd}"
    );
}

#[test]
fn accepted_acknowledges_in_one_line() {
    let body = accepted("Step `S3` is done.");
    assert_eq!(kind(&body), Some(ReplyKind::Accepted));
    assert_eq!(body.lines().count(), 2);
}

#[test]
fn error_reply_reveals_no_internals() {
    let body = error(Some("72d3162e-cc78-11e3-81ab-4c9367dc0958"));
    assert_eq!(kind(&body), Some(ReplyKind::Error));
    assert!(body.contains("`72d3162e-cc78-11e3-81ab-4c9367dc0958`"));
    assert!(body.contains("/status"));
    assert_eq!(kind(&error(None)), Some(ReplyKind::Error));
    assert!(!error(None).contains("reference"));
}

#[test]
fn help_wraps_the_command_list() {
    let body = help("- `/plan <request>`: write a plan\n");
    assert_eq!(kind(&body), Some(ReplyKind::Help));
    assert!(body.contains("### 🧭 Navin commands\n\n- `/plan <request>`: write a plan"));
}

#[test]
fn prose_keeps_balanced_code_spans_and_escapes_a_lone_backtick_next_to_any_text() {
    use crate::render::text::prose;
    assert_eq!(
        prose("run `/mission close` now", 100),
        "run `/mission close` now"
    );
    assert_eq!(prose("a ``b`c`` d", 100), "a ``b`c`` d");
    assert_eq!(prose("stray ` …mark", 100), "stray \\` …mark");
    assert_eq!(prose("`…`é` ", 100), "`…`é\\`");
    assert_eq!(prose("*x* `y`", 100), "\\*x\\* `y`");
}
