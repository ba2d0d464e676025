//! Tokenizing requests, paths and source text into comparable terms.

/// Splits text into lowercase, lightly stemmed terms: identifiers are split
/// at `_`, `-`, `.`, `/` and camelCase humps (`parseHTTPHeader` gives
/// `parse`, `http`, `header`). Terms shorter than two characters are dropped.
/// ASCII words take an allocation-free path, since ranking tokenizes every
/// byte the scan read.
pub fn for_each_term(text: &str, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut slow = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_alphanumeric() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            if i < bytes.len() && bytes[i] >= 0x80 {
                let end = word_end(text, i);
                slow_word(&text[start..end], &mut slow, &mut f);
                i = end;
            } else {
                ascii_word(&bytes[start..i], &mut f);
            }
        } else if b >= 0x80 {
            let end = word_end(text, i);
            if end > i {
                slow_word(&text[i..end], &mut slow, &mut f);
                i = end;
            } else {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
            }
        } else {
            i += 1;
        }
    }
}

/// End of the run of alphanumeric characters starting at byte `i`.
fn word_end(text: &str, i: usize) -> usize {
    let mut end = i;
    for (off, c) in text[i..].char_indices() {
        if !c.is_alphanumeric() {
            return i + off;
        }
        end = i + off + c.len_utf8();
    }
    end
}

/// Longer parts are hashes, base64 or generated names, not words.
const MAX_PART: usize = 48;

fn ascii_word(w: &[u8], f: &mut impl FnMut(&str)) {
    let mut start = 0;
    for k in 1..w.len() {
        let (prev, c) = (w[k - 1], w[k]);
        let next_lower = w.get(k + 1).is_some_and(|n| n.is_ascii_lowercase());
        if c.is_ascii_uppercase()
            && (prev.is_ascii_lowercase() || (prev.is_ascii_uppercase() && next_lower))
        {
            ascii_part(&w[start..k], f);
            start = k;
        }
    }
    ascii_part(&w[start..], f);
}

fn ascii_part(part: &[u8], f: &mut impl FnMut(&str)) {
    if part.len() < 2 || part.len() > MAX_PART || part.iter().all(u8::is_ascii_digit) {
        return;
    }
    let mut buf = [0u8; MAX_PART];
    for (d, s) in buf.iter_mut().zip(part) {
        *d = s.to_ascii_lowercase();
    }
    if let Ok(s) = std::str::from_utf8(&buf[..part.len()]) {
        f(stem(s));
    }
}

fn slow_word(word: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
    split_camel(word, |part| {
        buf.clear();
        for c in part.chars() {
            buf.extend(c.to_lowercase());
        }
        if buf.len() >= 2 && !buf.bytes().all(|b| b.is_ascii_digit()) {
            f(stem(buf));
        }
    });
}

/// Collects the terms of `text` into a vector.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t.to_string()));
    out
}

/// Splits an alphanumeric word at camelCase boundaries, keeping acronyms
/// together (`HTTPServer` gives `HTTP`, `Server`).
fn split_camel(word: &str, mut f: impl FnMut(&str)) {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = (c.is_uppercase() && prev.is_lowercase())
            || (c.is_uppercase() && prev.is_uppercase() && next_lower);
        if boundary {
            f(&word[start..pos]);
            start = pos;
        }
    }
    f(&word[start..]);
}

/// A deliberately light stemmer that only ever cuts a suffix, so
/// `parsers`/`parser`, `handles`/`handled`/`handling`/`handle` meet.
pub fn stem(word: &str) -> &str {
    if !word.is_ascii() || word.len() <= 3 {
        return word;
    }
    let mut w = word;
    for suffix in ["ies", "ing", "ed", "s"] {
        if let Some(base) = w.strip_suffix(suffix) {
            if base.len() < 3
                || (suffix == "s"
                    && (base.ends_with('s') || base.ends_with('u') || base.ends_with('i')))
            {
                continue;
            }
            if suffix == "ed" && base.ends_with('e') {
                continue;
            }
            w = base;
            break;
        }
    }
    if w.len() > 3 && (w.ends_with('e') || w.ends_with('y')) {
        w = &w[..w.len() - 1];
    }
    w
}

/// Words that say nothing about where a change lands.
pub fn is_stopword(t: &str) -> bool {
    matches!(
        t,
        "the"
            | "an"
            | "to"
            | "of"
            | "in"
            | "for"
            | "and"
            | "or"
            | "on"
            | "with"
            | "when"
            | "add"
            | "fix"
            | "us"
            | "make"
            | "mak"
            | "support"
            | "updat"
            | "remov"
            | "new"
            | "should"
            | "be"
            | "is"
            | "it"
            | "this"
            | "that"
            | "from"
            | "by"
            | "as"
            | "not"
            | "no"
            | "into"
            | "via"
            | "so"
            | "can"
            | "all"
            | "some"
            | "do"
            | "doe"
            | "more"
            | "les"
            | "at"
            | "if"
            | "are"
            | "was"
            | "we"
            | "our"
            | "my"
            | "its"
            | "has"
            | "have"
            | "been"
            | "but"
            | "also"
            | "now"
            | "only"
            | "instead"
            | "allow"
            | "ensur"
            | "chang"
            | "implement"
            | "improv"
            | "handl"
            | "bump"
            | "set"
            | "get"
            | "way"
            | "there"
            | "their"
            | "them"
            | "then"
            | "than"
            | "which"
            | "what"
            | "who"
            | "how"
            | "why"
            | "will"
            | "would"
            | "could"
            | "ad"
            | "minor"
            | "small"
            | "other"
            | "using"
            | "use"
            | "used"
            | "don"
            | "doesn"
            | "isn"
            | "won"
            | "let"
            | "any"
            | "each"
            | "every"
            | "better"
            | "proper"
            | "properly"
            | "correct"
            | "correctly"
            | "wip"
            | "refactor"
            | "cleanup"
            | "clean"
            | "up"
            | "out"
            | "pr"
            | "merg"
            | "revert"
            | "re"
            | "non"
            | "too"
            | "one"
            | "two"
            | "first"
            | "last"
            | "fixe"
    )
}

/// A short file-name-safe slug of the request for new files (`add rate
/// limiting to uploads` gives `rate_limiting_uploads`).
pub fn slug(request: &str, sep: char) -> String {
    let mut words = Vec::new();
    for w in request.split(|c: char| !c.is_alphanumeric()) {
        let lw = w.to_lowercase();
        if lw.len() < 2
            || !lw.is_ascii()
            || lw.bytes().all(|b| b.is_ascii_digit())
            || is_stopword(&lw)
            || is_stopword(stem(&lw))
        {
            continue;
        }
        words.push(lw);
        if words.len() == 4 {
            break;
        }
    }
    if words.is_empty() {
        words.push("change".to_string());
    }
    words.join(&sep.to_string())
}

/// The first line of the request, cut at a word boundary to fit a title.
pub fn one_line(request: &str, max: usize) -> String {
    let line = request
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= max {
        return line.to_string();
    }
    let mut out = String::new();
    for w in line.split_whitespace() {
        if out.chars().count() + w.chars().count() + 1 > max.saturating_sub(1) {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out.push('…');
    out
}

/// The sentence with its first letter upper-cased (`` `a` `` and digits stay as they are).
pub fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// `` `a`, `b` ``: items in backticks, comma-joined, as plan text lists names and paths.
pub fn backticked<I, S>(items: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    items
        .into_iter()
        .map(|i| format!("`{}`", i.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}
