//! Words, quoted strings and flags on one command line.

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    /// The word opened with a quote, so it is literal (`"--after"` is a title word, not a
    /// flag); a quote later in the word (`--acceptance="a b"`) only groups the value.
    pub quoted: bool,
}

impl Token {
    /// `--name` or `--name=value` → (`--name`, value), dashes normalised; `None` if not a flag.
    pub fn as_flag(&self) -> Option<(String, Option<String>)> {
        if self.quoted {
            return None;
        }
        let body = self
            .text
            .strip_prefix("--")
            .or_else(|| self.text.strip_prefix('—'))
            .or_else(|| self.text.strip_prefix('–'))?;
        if body.is_empty() || body.starts_with('-') {
            return None;
        }
        Some(match body.split_once('=') {
            Some((name, value)) => (
                format!("--{}", name.to_lowercase()),
                Some(value.to_string()),
            ),
            None => (format!("--{}", body.to_lowercase()), None),
        })
    }
}

/// A quote opened on the line and never closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unterminated;

fn closing_quote(open: char) -> Option<char> {
    match open {
        '"' => Some('"'),
        '“' => Some('”'),
        '„' => Some('“'),
        _ => None,
    }
}

/// Splits the next word off `input`: whitespace ends a word except inside quotes, and quoted
/// parts join the word they touch (`--acceptance="a b"` is one word).
pub fn next_token(input: &str) -> Result<Option<(Token, &str)>, Unterminated> {
    let input = input.trim_start();
    if input.is_empty() {
        return Ok(None);
    }
    let mut text = String::new();
    let mut quoted = false;
    let mut chars = input.char_indices();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            return Ok(Some((Token { text, quoted }, &input[i..])));
        }
        let Some(close) = closing_quote(c) else {
            text.push(c);
            continue;
        };
        quoted |= text.is_empty();
        let mut closed = false;
        while let Some((_, q)) = chars.next() {
            if q == close || (close != '"' && q == '"') {
                closed = true;
                break;
            }
            if q == '\\' {
                match chars.clone().next() {
                    Some((_, next)) if next == '"' || next == '\\' || next == close => {
                        text.push(next);
                        chars.next();
                    }
                    _ => text.push(q),
                }
                continue;
            }
            text.push(q);
        }
        if !closed {
            return Err(Unterminated);
        }
    }
    Ok(Some((Token { text, quoted }, "")))
}

/// Every word of `input`.
pub fn tokens(input: &str) -> Result<Vec<Token>, Unterminated> {
    let mut out = Vec::new();
    let mut rest = input;
    while let Some((token, tail)) = next_token(rest)? {
        out.push(token);
        rest = tail;
    }
    Ok(out)
}

/// The first whitespace-separated word, raw, and the rest of the line.
pub fn split_word(input: &str) -> (&str, &str) {
    let input = input.trim_start();
    match input.find(char::is_whitespace) {
        Some(i) => (&input[..i], &input[i..]),
        None => (input, ""),
    }
}

/// Free text to the end of the line: `None` when blank; a text wrapped whole in one pair of
/// quotes with none inside loses them, anything else is kept exactly as written.
pub fn free_text(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    for (open, close) in [('"', '"'), ('“', '”'), ('„', '“')] {
        let inner = trimmed
            .strip_prefix(open)
            .and_then(|t| t.strip_suffix(close))
            .map(str::trim);
        if let Some(inner) = inner {
            if !inner.is_empty() && !inner.contains(['"', '“', '”', '„']) {
                return Some(inner.to_string());
            }
        }
    }
    Some(trimmed.to_string())
}
