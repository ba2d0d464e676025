//! Escaping helpers.

use crate::render::text::{code, inline, safe_url, truncate_chars};

#[test]
fn inline_text_cannot_open_markup_or_ping() {
    assert_eq!(inline("a | b", 50), "a \\| b");
    assert_eq!(inline("[x](y) `z` *w*", 50), "\\[x\\](y) \\`z\\` \\*w\\*");
    assert_eq!(inline("<!-- hidden -->", 50), "&lt;!-- hidden --&gt;");
    assert_eq!(inline("hi @octocat", 50), "hi @<!-- -->octocat");
    assert_eq!(inline("mail me@example.com", 50), "mail me@example.com");
    assert_eq!(inline("two\nlines\r\n  here", 50), "two lines here");
}

#[test]
fn truncation_marks_the_cut_and_respects_characters() {
    assert_eq!(truncate_chars("abcdef", 4), "abc…");
    assert_eq!(truncate_chars("abc", 3), "abc");
    assert_eq!(truncate_chars("ééééé", 3), "éé…");
    assert_eq!(inline("@@@@@@", 3).matches("<!--").count(), 0);
}

#[test]
fn code_spans_survive_backticks_and_pipes() {
    assert_eq!(code("S1"), "`S1`");
    assert_eq!(code("a`b"), "``a`b``");
    assert_eq!(code("`x"), "`` `x ``");
    assert_eq!(code("a|b"), "`a\\|b`");
}

#[test]
fn only_plain_http_urls_become_links() {
    assert_eq!(safe_url("javascript:alert(1)"), None);
    assert_eq!(safe_url("https://x.test/a b"), None);
    assert_eq!(
        safe_url("https://x.test/run(1)|x").as_deref(),
        Some("https://x.test/run%281%29%7Cx")
    );
}
