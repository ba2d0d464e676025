//! The hidden first line of every Navin comment, so the engine can find and edit its own comments in place.

use std::fmt::{self, Write};

/// Version of the mission panel's layout; bump it when the engine must
/// recognise panels written by an older build differently.
pub const PANEL_FORMAT: u32 = 1;

/// What a Navin comment is. Rendered as the comment's first line, e.g.
/// `<!-- navin:panel v=1 -->` or `<!-- navin:plan id=p-12 hash=sha256:… -->`.
/// An HTML comment, so GitHub shows nothing of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// The sticky mission panel on the mission's issue.
    Panel { format: u32 },
    /// The comment showing one plan, with the content hash it shows.
    Plan { id: String, hash: String },
    /// A one-off reply to a command; never edited, marked so Navin and
    /// people can tell its kind without reading prose.
    Reply { kind: ReplyKind },
}

/// The kinds of short replies to commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplyKind {
    Refusal,
    Accepted,
    Error,
    Help,
}

impl ReplyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReplyKind::Refusal => "refusal",
            ReplyKind::Accepted => "accepted",
            ReplyKind::Error => "error",
            ReplyKind::Help => "help",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "refusal" => ReplyKind::Refusal,
            "accepted" => ReplyKind::Accepted,
            "error" => ReplyKind::Error,
            "help" => ReplyKind::Help,
            _ => return None,
        })
    }
}

impl fmt::Display for Marker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Marker::Panel { format } => write!(f, "<!-- navin:panel v={format} -->"),
            Marker::Plan { id, hash } => write!(
                f,
                "<!-- navin:plan id={} hash={} -->",
                encode(id),
                encode(hash)
            ),
            Marker::Reply { kind } => write!(f, "<!-- navin:reply kind={} -->", kind.as_str()),
        }
    }
}

/// Reads the marker on the first line of a comment body; `None` for any
/// comment that does not start with a well-formed Navin marker. Only the first
/// line counts, so a person quoting a marker further down a comment (or a
/// plan text containing one) never makes that comment look like Navin's.
/// Unknown keys are ignored, so newer builds may add some.
pub fn parse_marker(body: &str) -> Option<Marker> {
    let body = body.strip_prefix('\u{feff}').unwrap_or(body);
    let first = body.trim_start().lines().next()?.trim();
    let inner = first.strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    let mut words = inner.split_whitespace();
    let kind = words.next()?.strip_prefix("navin:")?;
    let mut fields: Vec<(&str, String)> = Vec::new();
    for word in words {
        let (key, value) = word.split_once('=')?;
        fields.push((key, decode(value)?));
    }
    let field = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    };
    match kind {
        "panel" => Some(Marker::Panel {
            format: field("v")?.parse().ok()?,
        }),
        "plan" => {
            let id = field("id")?;
            let hash = field("hash")?;
            (!id.is_empty() && !hash.is_empty()).then_some(Marker::Plan { id, hash })
        }
        "reply" => Some(Marker::Reply {
            kind: ReplyKind::parse(&field("kind")?)?,
        }),
        _ => None,
    }
}

/// Percent-encodes everything but `[A-Za-z0-9._:-]`, so a value can never
/// hold a space, `=` or `-->` and always reads back exactly.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    // "--" inside an HTML comment is tolerated by browsers but not by every
    // parser; a lone "-" pair is encoded too.
    out.replace("--", "-%2D")
}

fn decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
