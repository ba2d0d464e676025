//! Line-level markdown scanning shared by the parser, the validator and the renderer: fences, headings, list items, labels.

/// One input line with its 1-based number and whether it belongs to a fenced
/// code block (opening and closing fence lines included).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    pub no: usize,
    pub text: &'a str,
    pub fence: bool,
    /// The opening or closing line of a fence (not its content).
    pub fence_edge: bool,
}

#[derive(Debug)]
pub(crate) struct Scan<'a> {
    pub lines: Vec<Line<'a>>,
    /// Line number of a fence that is never closed.
    pub unclosed_fence: Option<usize>,
}

/// Splits on `\n` (dropping a `\r` before it) and marks fenced lines. A fence
/// is three or more backticks or tildes, at any indentation so fences nested
/// in list items count too; it closes on a line with at least as many of the
/// same character and nothing else.
pub(crate) fn scan(input: &str) -> Scan<'_> {
    // Editors on Windows may save a byte-order mark first.
    let input = input.strip_prefix('\u{feff}').unwrap_or(input);
    let body = input.strip_suffix('\n').unwrap_or(input);
    let mut lines = Vec::with_capacity(body.len() / 32 + 1);
    let mut open: Option<(u8, usize, usize)> = None;
    if !input.is_empty() {
        for (index, raw) in body.split('\n').enumerate() {
            let text = raw.strip_suffix('\r').unwrap_or(raw);
            let no = index + 1;
            let marker = fence_marker(text);
            let (fence, fence_edge) = match open {
                Some((ch, len, _)) => match marker {
                    Some((c, l, rest)) if c == ch && l >= len && rest.trim().is_empty() => {
                        open = None;
                        (true, true)
                    }
                    _ => (true, false),
                },
                None => match marker {
                    Some((c, l, rest)) if c == b'~' || !rest.contains('`') => {
                        open = Some((c, l, no));
                        (true, true)
                    }
                    _ => (false, false),
                },
            };
            lines.push(Line {
                no,
                text,
                fence,
                fence_edge,
            });
        }
    }
    Scan {
        lines,
        unclosed_fence: open.map(|(_, _, no)| no),
    }
}

/// `(char, run length, rest of line)` when the line starts a fence marker.
fn fence_marker(text: &str) -> Option<(u8, usize, &str)> {
    let trimmed = text.trim_start_matches([' ', '\t']);
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let run = trimmed.bytes().take_while(|b| *b == first).count();
    (run >= 3).then(|| (first, run, &trimmed[run..]))
}

/// An ATX heading: up to three spaces, 1-6 `#`, then a space or the end.
/// Closing `#`s are kept as text so titles such as "Support C #" survive.
pub(crate) fn heading(text: &str) -> Option<(usize, &str)> {
    let spaces = text.bytes().take_while(|b| *b == b' ').count();
    if spaces > 3 {
        return None;
    }
    let rest = &text[spaces..];
    let level = rest.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some((level, after.trim()))
}

/// A list item line: `-`, `*`, `+` or `1.`/`1)` followed by a space or the end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Item<'a> {
    pub indent: usize,
    pub content: &'a str,
}

pub(crate) fn list_item(text: &str) -> Option<Item<'_>> {
    let indent = indent_width(text);
    let rest = text.trim_start_matches([' ', '\t']);
    let bytes = rest.as_bytes();
    let marker_len = match bytes.first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return None;
            }
            digits + 1
        }
        _ => return None,
    };
    let after = &rest[marker_len..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some(Item {
        indent,
        content: after.trim(),
    })
}

/// Leading whitespace width, a tab counting as four columns.
pub(crate) fn indent_width(text: &str) -> usize {
    text.bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .map(|b| if b == b'\t' { 4 } else { 1 })
        .sum()
}

/// Splits `**Label:** value`, `**Label**: value` or `Label: value` into a
/// normalised label ("completion criteria") and the trimmed value. Plain
/// labels are limited to a few words so ordinary sentences with a colon are
/// not mistaken for fields.
pub(crate) fn label(content: &str) -> Option<(String, &str)> {
    let s = content.trim_start();
    let (raw, value) = if let Some(inner) = s.strip_prefix("**").or_else(|| s.strip_prefix("__")) {
        let close = inner.find("**").or_else(|| inner.find("__"))?;
        let name = &inner[..close];
        let rest = &inner[close + 2..];
        if let Some(name) = name.strip_suffix(':') {
            (name, rest)
        } else {
            (name, rest.trim_start().strip_prefix(':')?)
        }
    } else {
        let colon = s.find(':')?;
        let name = &s[..colon];
        if name.len() > 40 {
            return None;
        }
        (name, &s[colon + 1..])
    };
    let plain = |c: char| c.is_alphabetic() || c == ' ' || c == '_' || c == '-';
    if raw.trim().is_empty() || !raw.chars().all(plain) {
        return None;
    }
    let mut normalised = String::with_capacity(raw.len());
    for word in raw.split([' ', '_', '-']).filter(|w| !w.is_empty()) {
        if !normalised.is_empty() {
            normalised.push(' ');
        }
        normalised.extend(word.chars().flat_map(char::to_lowercase));
    }
    Some((normalised, value.trim()))
}

/// "None.", "none", "_None._", "**None**": the explicit empty marker.
pub(crate) fn is_none_marker(text: &str) -> bool {
    let t = text
        .trim()
        .trim_matches(|c| c == '*' || c == '_')
        .trim_end_matches('.')
        .trim();
    t.eq_ignore_ascii_case("none")
}

/// Strips one inline-code wrapping: "`cargo test`" → "cargo test".
pub(crate) fn strip_code(value: &str) -> &str {
    let v = value.trim();
    let ticks = v.bytes().take_while(|b| *b == b'`').count();
    if ticks == 0 || v.len() < 2 * ticks + 1 {
        return v;
    }
    let closing = v.bytes().rev().take_while(|b| *b == b'`').count();
    if closing != ticks {
        return v;
    }
    v[ticks..v.len() - ticks].trim()
}

/// Tracks `<!-- ... -->` comments, which structured sections ignore.
#[derive(Debug, Default)]
pub(crate) struct Comments {
    open: bool,
}

impl Comments {
    /// True when the line is (part of) an HTML comment and carries nothing else.
    pub(crate) fn skip(&mut self, text: &str) -> bool {
        let t = text.trim();
        if self.open {
            if t.contains("-->") {
                self.open = false;
            }
            return true;
        }
        if let Some(rest) = t.strip_prefix("<!--") {
            match rest.find("-->") {
                Some(end) => rest[end + 3..].trim().is_empty(),
                None => {
                    self.open = true;
                    true
                }
            }
        } else {
            false
        }
    }
}

/// Normal form of a free-text body: trailing whitespace removed from every
/// line, no leading or trailing blank lines, and runs of blank lines outside
/// code fences collapsed to one. Blank lines inside fences are kept.
pub(crate) fn normalise_block<'a>(lines: impl IntoIterator<Item = Line<'a>>) -> String {
    let mut out = String::new();
    let mut pending_blank = false;
    for line in lines {
        let text = line.text.trim_end();
        if text.is_empty() && !line.fence {
            pending_blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
            if pending_blank {
                out.push('\n');
            }
        }
        pending_blank = false;
        out.push_str(text);
    }
    out
}

/// One line of text, surrounding whitespace removed, for quoting in errors.
pub(crate) fn quote(text: &str) -> String {
    const MAX: usize = 80;
    let t = text.trim();
    match t.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t.to_owned(),
    }
}
