//! Escaping and size helpers that keep text from people, models and CI inert inside Navin's comments.

use std::fmt::Write;

/// GitHub refuses comment bodies longer than this many characters.
pub const COMMENT_LIMIT: usize = 65_536;

/// What every renderer stays under, counted in UTF-8 bytes. A byte count is
/// never smaller than the character or UTF-16 count, so a body under this
/// budget is under GitHub's limit however GitHub counts; the margin leaves
/// the engine room to append a line without re-rendering.
pub const COMMENT_BUDGET: usize = 64_000;

/// Cuts `text` to at most `max` characters, marking the cut with `…`.
pub fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some(_) if max == 0 => String::new(),
        Some(_) => {
            let keep: String = text.chars().take(max.saturating_sub(1)).collect();
            format!("{}…", keep.trim_end())
        }
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a char boundary.
pub fn prefix_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Untrusted text (titles, goals, reasons, check names) as one inert line of
/// markdown: line breaks become spaces, markdown punctuation is backslash
/// escaped so it cannot open links, code or table cells, `<`/`>`/`&` become
/// entities so it cannot open HTML (a fake `<!-- navin:` marker or an
/// unclosed comment hiding the rest of the panel), and `@login` is split so
/// re-rendering the panel never pings anyone. Truncated to `max` characters
/// first, so the escapes themselves are never cut.
pub fn inline(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = truncate_chars(&flat, max);
    let mut out = String::with_capacity(cut.len() + 8);
    escape_into(&mut out, &cut, None);
    out
}

/// Like [`inline`], but each balanced code span (`` `/mission close` ``) stays a code
/// span: Navin's sentences name commands and keys in code, and escaping those showed
/// literal backticks on GitHub. Code spans are safe whatever they hold (no markup, no
/// HTML, no mentions inside); a backtick with no partner is escaped as before.
pub fn prose(text: &str, max: usize) -> String {
    prose_with(text, max, false)
}

/// [`prose`] for a table cell: a `|` splits the cell even inside a code span, so there it
/// is escaped too (GitHub shows `\|` in a table's code span as `|`).
pub fn prose_cell(text: &str, max: usize) -> String {
    prose_with(text, max, true)
}

fn prose_with(text: &str, max: usize, cell: bool) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut = truncate_chars(&flat, max);
    let mut out = String::with_capacity(cut.len() + 8);
    let mut rest = cut.as_str();
    let mut prev: Option<char> = None;
    while let Some(open) = rest.find('`') {
        let (before, from) = rest.split_at(open);
        escape_into(&mut out, before, prev);
        let ticks = from.chars().take_while(|c| *c == '`').count();
        let after = &from[ticks..];
        match closing_run(after, ticks) {
            Some(i) => {
                let span = &from[..ticks + i + ticks];
                match cell {
                    true => out.push_str(&span.replace('|', "\\|")),
                    false => out.push_str(span),
                }
                rest = &after[i + ticks..];
                prev = Some('`');
            }
            None => {
                out.push_str(&"\\`".repeat(ticks));
                rest = after;
                prev = Some('`');
            }
        }
    }
    escape_into(&mut out, rest, prev);
    out
}

/// Where the code span opened by a run of `ticks` backticks ends in `after` (the text
/// past that run): the byte offset of the closing run of exactly as many backticks, at a
/// run's start, with something between; `None` when the run opens no span. Backticks
/// are ASCII, so the offset is a char boundary.
pub fn closing_run(after: &str, ticks: usize) -> Option<usize> {
    let bytes = after.as_bytes();
    (0..bytes.len())
        .find(|&i| {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            run == ticks && (i == 0 || bytes[i - 1] != b'`')
        })
        .filter(|&i| i > 0)
}

/// Appends `text` with markdown, HTML and mentions neutralized (see [`inline`]).
fn escape_into(out: &mut String, text: &str, mut prev: Option<char>) {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' if starts_mention(prev, chars.peek().copied()) => out.push_str("@<!-- -->"),
            _ => out.push(c),
        }
        prev = Some(c);
    }
}

/// An `@` that GitHub would turn into a mention: not inside a word (so
/// e-mail addresses stay as they are) and followed by a login character.
fn starts_mention(prev: Option<char>, next: Option<char>) -> bool {
    let after_word = prev.is_some_and(|p| p.is_alphanumeric() || p == '_' || p == '`');
    !after_word && next.is_some_and(|n| n.is_ascii_alphanumeric())
}

/// `text` as an inline code span whose fence is longer than any backtick run
/// inside it, so names like ``a`b`` cannot close the span early.
pub fn code(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "` `".to_owned();
    }
    let longest = longest_run(&flat, '`');
    let fence = "`".repeat(longest + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') {
        " "
    } else {
        ""
    };
    // Inside a table a `|` still splits the cell, even in a code span.
    let body = flat.replace('|', "\\|");
    format!("{fence}{pad}{body}{pad}{fence}")
}

fn longest_run(text: &str, ch: char) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == ch {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// A URL fit for a markdown link target, or `None` when it is not plain
/// http(s). Characters that would end the target or break a table cell are
/// percent-encoded; control characters and spaces reject the URL outright.
pub fn safe_url(url: &str) -> Option<String> {
    let url = url.trim();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return None;
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return None;
    }
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '(' | ')' | '<' | '>' | '"' | '\'' | '|' | '`' | '[' | ']' | '\\' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "%{b:02X}");
                }
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

/// `[text](url)` with both parts made safe; plain escaped text when the URL is unusable.
pub fn link(text: &str, url: Option<&str>, max: usize) -> String {
    let label = inline(text, max);
    match url.and_then(safe_url) {
        Some(u) => format!("[{label}]({u})"),
        None => label,
    }
}

/// The first seven characters of a commit SHA, as GitHub shows them.
pub fn short_sha(sha: &str) -> String {
    sha.chars().take(7).collect()
}

/// Splits `@login` mentions in markdown that is otherwise shown as written
/// (a plan document), leaving code spans and fenced blocks untouched so code
/// still reads correctly.
pub fn defuse_mentions(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 16);
    let mut fence: Option<(char, usize)> = None;
    for line in markdown.split_inclusive('\n') {
        let marker = fence_marker(line);
        match (fence, marker) {
            (Some((ch, len)), Some((c, l, rest)))
                if c == ch && l >= len && rest.trim().is_empty() =>
            {
                fence = None;
                out.push_str(line);
                continue;
            }
            (Some(_), _) => {
                out.push_str(line);
                continue;
            }
            (None, Some((c, l, _))) => {
                fence = Some((c, l));
                out.push_str(line);
                continue;
            }
            (None, None) => {}
        }
        let mut in_code = false;
        let mut prev: Option<char> = None;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '`' {
                in_code = !in_code;
            }
            if c == '@' && !in_code && starts_mention(prev, chars.peek().copied()) {
                out.push_str("@<!-- -->");
            } else {
                out.push(c);
            }
            prev = Some(c);
        }
    }
    out
}

/// `(fence char, run length, rest)` when the line opens or closes a code fence.
pub fn fence_marker(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start_matches([' ', '\t']);
    let first = trimmed.chars().next()?;
    if first != '`' && first != '~' {
        return None;
    }
    let run = trimmed.chars().take_while(|c| *c == first).count();
    (run >= 3).then(|| (first, run, &trimmed[run..]))
}

/// What must be appended to a cut piece of markdown so nothing it opened
/// swallows the text after it: a closing fence for an open code block, and
/// `-->` for an open HTML comment.
pub fn closers_for(cut: &str) -> String {
    let mut fence: Option<(char, usize)> = None;
    for line in cut.lines() {
        match (fence, fence_marker(line)) {
            (Some((ch, len)), Some((c, l, rest)))
                if c == ch && l >= len && rest.trim().is_empty() =>
            {
                fence = None
            }
            (None, Some((c, l, _))) => fence = Some((c, l)),
            _ => {}
        }
    }
    let mut out = String::new();
    if let Some((ch, len)) = fence {
        out.push('\n');
        out.extend(std::iter::repeat_n(ch, len));
        out.push('\n');
    } else if cut
        .rfind("<!--")
        .is_some_and(|open| !cut[open..].contains("-->"))
    {
        out.push_str(" -->\n");
    }
    out
}

/// `1234567` as `1,234,567`, for token counts.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration as people read it on a status line: `45s`, `3m 12s`, `2h 5m`.
pub fn human_duration(d: std::time::Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m {}s", secs / 60, secs % 60)
    } else {
        format!("{}h {}m", secs / 3600, (secs % 3600) / 60)
    }
}
