//! Log lines that stay small whatever the input: every field value is clipped and kept on one line before it is written.
//!
//! Values in Navin's logs can carry text from outside (a refused command's argument, an
//! error quoting a goal, a GitHub error body). One comment of 64 KB must not become
//! 64 KB of log per retry, nor forge extra log lines with embedded newlines.

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::{FormatFields, Writer};

/// Characters kept of one field value; the rest is counted, not written.
pub const MAX_FIELD_CHARS: usize = 512;

/// The field formatter of every Navin subscriber (`navin serve`, `navin mcp`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ClippedFields;

impl<'writer> FormatFields<'writer> for ClippedFields {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        let mut visitor = Visitor {
            writer,
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct Visitor<'w> {
    writer: Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl Visitor<'_> {
    fn write(&mut self, field: &Field, value: &str) {
        if self.result.is_err() {
            return;
        }
        let sep = if self.first { "" } else { " " };
        self.first = false;
        let value = clip(value);
        self.result = if field.name() == "message" {
            write!(self.writer, "{sep}{value}")
        } else {
            write!(self.writer, "{sep}{}={value}", field.name())
        };
    }
}

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.write(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.write(field, &format!("{value:?}"));
    }
}

/// `value` on one line (control characters escaped), at most [`MAX_FIELD_CHARS`]
/// characters, with how much was left out.
pub fn clip(value: &str) -> String {
    let mut out = String::with_capacity(value.len().min(MAX_FIELD_CHARS + 32));
    for (kept, (i, c)) in value.char_indices().enumerate() {
        if kept == MAX_FIELD_CHARS {
            let _ = write!(out, "…({} more bytes)", value.len() - i);
            return out;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_huge_or_multiline_value_is_one_short_line() {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .fmt_fields(ClippedFields)
            .with_ansi(false)
            .with_writer(move || sink.clone())
            .finish();
        let huge = "x".repeat(300_000);
        let forged = "ok\n2026-12-02T00:00:00Z  INFO navin: forged line";
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(value = %huge, other = %forged, "refused: {}", "a".repeat(10_000));
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.len() < 3 * MAX_FIELD_CHARS + 400,
            "{} bytes",
            text.len()
        );
        assert!(text.contains("…(299488 more bytes)"), "{text}");
        assert!(text.contains("other=ok\\n2026-12-02"), "{text}");
    }

    #[test]
    fn short_values_are_written_as_they_are() {
        assert_eq!(clip("delivery 1234"), "delivery 1234");
        assert_eq!(clip("tab\there"), "tab\\there");
    }
}
