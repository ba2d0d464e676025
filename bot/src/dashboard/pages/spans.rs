//! People's and Navin's one-line texts on pages (goals, step titles, facts, requests): code spans shown as code, everything else as escaped text.
//!
//! Goals and titles name commands and files in backticks (`` `--since` ``); shown raw,
//! the backticks are noise, and rendering the whole text as Markdown would let a title
//! open links or emphasis. Only balanced backtick runs become `<code>`; an unpaired
//! backtick stays a character.

use maud::{html, Markup};

/// `text` with its code spans as `<code>`: a run of N backticks up to the next run of
/// exactly N.
pub fn text(text: &str) -> Markup {
    let mut parts: Vec<(bool, &str)> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let ticks = rest[open..].chars().take_while(|c| *c == '`').count();
        let after = &rest[open + ticks..];
        match navin_domain::render::text::closing_run(after, ticks) {
            Some(i) => {
                parts.push((false, &rest[..open]));
                let inner = &after[..i];
                // CommonMark strips one space on each side of a padded span.
                let inner = match inner.strip_prefix(' ').and_then(|s| s.strip_suffix(' ')) {
                    Some(trimmed) if !trimmed.trim().is_empty() => trimmed,
                    _ => inner,
                };
                parts.push((true, inner));
                rest = &after[i + ticks..];
            }
            None => {
                parts.push((false, &rest[..open + ticks]));
                rest = after;
            }
        }
    }
    parts.push((false, rest));
    html! {
        @for (code, part) in parts {
            @if code { code { (part) } } @else { (part) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_become_code_and_everything_else_stays_escaped_text() {
        assert_eq!(
            text("Add `--since` to `navin ledger history`").into_string(),
            "Add <code>--since</code> to <code>navin ledger history</code>"
        );
        assert_eq!(
            text("a `` x`y `` <b>[l](j)</b> `odd").into_string(),
            "a <code>x`y</code> &lt;b&gt;[l](j)&lt;/b&gt; `odd"
        );
    }
}
