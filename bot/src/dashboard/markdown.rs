//! Markdown to HTML for pages: plan text and diffs rendered with every raw HTML tag escaped and only safe link targets kept.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};

/// Renders `text` as HTML that cannot carry script: raw HTML in the markdown is shown
/// as text, and a link or image whose target is not http(s), mailto, a path or an
/// anchor loses its target (`javascript:` and `data:` among them).
pub fn to_html(text: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(text, options).map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// [`to_html`] for one line of Navin's own words that may hold code spans and links
/// (a refusal, the reason a ledger cannot be read): inline, without the paragraph.
pub fn inline(text: &str) -> String {
    let html = to_html(text);
    let trimmed = html.trim_end();
    match trimmed
        .strip_prefix("<p>")
        .and_then(|rest| rest.strip_suffix("</p>"))
    {
        Some(inner) if !inner.contains("<p>") => inner.to_owned(),
        _ => html,
    }
}

fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    if is_safe_url(&url) {
        url
    } else {
        CowStr::Borrowed("#")
    }
}

/// Whether a link target is one a page may point at.
pub fn is_safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    match lower.split_once(':') {
        // No scheme: a path, a query or an anchor (a colon after `/`, `?` or `#` is not one).
        Some((scheme, _)) if !scheme.contains(['/', '?', '#']) => {
            matches!(scheme, "http" | "https" | "mailto")
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_in_a_plan_is_shown_as_text() {
        let html = to_html("Hello <script>alert(1)</script> and <img src=x onerror=alert(2)>");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn script_links_lose_their_target_and_web_links_keep_it() {
        let html = to_html("[a](javascript:alert(1)) [b](JaVaScRiPt:x) [c](https://example.com/x) [d](#goal) [e](data:text/html,x)");
        assert!(!html.to_ascii_lowercase().contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("href=\"https://example.com/x\""), "{html}");
        assert!(html.contains("href=\"#goal\""), "{html}");
    }

    #[test]
    fn tables_and_headings_render() {
        let html = to_html("## Goal\n\n| a | b |\n|---|---|\n| 1 | 2 |\n");
        assert!(html.contains("<h2>Goal</h2>"), "{html}");
        assert!(html.contains("<table>"), "{html}");
    }
}
