//! Log lines that stay small whatever the input: every field value is clipped and kept on one line before it is written.
//!
//! Values in Navin's logs can carry text from outside (a refused command's argument, an
//! error quoting a goal, a GitHub error body). One comment of 64 KB must not become
//! 64 KB of log per retry, nor forge extra log lines with embedded newlines.

//!
//! Two formats share that rule: `text` for a person at a terminal and `json` (one object a
//! line) for a log collector; [`init`] installs either for `navin serve` and `navin mcp`.

use std::fmt::{self, Write as _};
use std::io::IsTerminal;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormattedFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

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

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-12-02T10:00:00Z  INFO navin: delivery queued delivery=… event=…`.
    Text,
    /// `{"timestamp":…,"level":"INFO","target":…,"message":…,"delivery":…}`, one a line.
    Json,
}

impl LogFormat {
    /// Text for a person at a terminal, JSON for whatever collects a service's stderr.
    pub fn detect() -> Self {
        if std::io::stderr().is_terminal() {
            Self::Text
        } else {
            Self::Json
        }
    }
}

/// Installs the process's subscriber on stderr: `format` (else [`LogFormat::detect`]),
/// filtered by `RUST_LOG` (else `default`). octocrab's own tracing (its retry layer, which
/// Navin turns off, and request spans) is silenced unless `RUST_LOG` names it.
pub fn init(format: Option<LogFormat>, default: &str) {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter(std::env::var("RUST_LOG").ok(), default))
        .with_writer(std::io::stderr);
    // A second call (tests, `navin mcp` after serve) keeps the first subscriber.
    let _ = match format.unwrap_or_else(LogFormat::detect) {
        LogFormat::Text => builder
            .fmt_fields(ClippedFields)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
        LogFormat::Json => builder
            .fmt_fields(ClippedJsonFields)
            .event_format(JsonLines)
            .try_init(),
    };
}

/// `RUST_LOG` (or `default`), with `octocrab=off` unless it says otherwise about octocrab.
fn filter(rust_log: Option<String>, default: &str) -> EnvFilter {
    let spec = rust_log
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.to_owned());
    let with_octocrab = |spec: &str| {
        if spec.contains("octocrab") {
            spec.to_owned()
        } else {
            format!("{spec},octocrab=off")
        }
    };
    EnvFilter::try_new(with_octocrab(&spec))
        .unwrap_or_else(|_| EnvFilter::new(with_octocrab(default)))
}

/// Fields as one JSON object, each string clipped as [`ClippedFields`] clips it; numbers
/// and booleans stay JSON numbers and booleans. Used for span fields in JSON lines.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClippedJsonFields;

impl<'writer> FormatFields<'writer> for ClippedJsonFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut map = Map::new();
        fields.record(&mut JsonVisitor(&mut map));
        write!(writer, "{}", Value::Object(map))
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let mut map = match serde_json::from_str(&current.fields) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        fields.record(&mut JsonVisitor(&mut map));
        current.fields = Value::Object(map).to_string();
        Ok(())
    }
}

/// One JSON object a line: timestamp, level, target, then the fields of the event's
/// spans (outermost first; the engine's span carries delivery, event and repository)
/// and of the event itself, flattened, every string clipped.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonLines;

impl<S> FormatEvent<S, ClippedJsonFields> for JsonLines
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, ClippedJsonFields>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                .into(),
        );
        line.insert("level".into(), meta.level().as_str().into());
        line.insert("target".into(), meta.target().into());
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                let extensions = span.extensions();
                let Some(fields) = extensions.get::<FormattedFields<ClippedJsonFields>>() else {
                    continue;
                };
                if let Ok(Value::Object(map)) = serde_json::from_str(&fields.fields) {
                    line.extend(map);
                }
            }
        }
        event.record(&mut JsonVisitor(&mut line));
        writeln!(writer, "{}", Value::Object(line))
    }
}

struct JsonVisitor<'m>(&'m mut Map<String, Value>);

impl Visit for JsonVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), clip(value).into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), clip(&format!("{value:?}")).into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
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
    fn a_json_line_clips_untrusted_values_and_keeps_span_fields() {
        let buffer = Buffer::default();
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .fmt_fields(ClippedJsonFields)
            .event_format(JsonLines)
            .with_writer(move || sink.clone())
            .finish();
        let huge = "x".repeat(300_000);
        let forged = "ok\n{\"level\":\"ERROR\",\"message\":\"forged\"}";
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("event", delivery = "d-1", repository = %forged);
            let _entered = span.enter();
            tracing::warn!(value = %huge, attempt = 2_u64, "refused: {}", "a".repeat(10_000));
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.len() < 3 * MAX_FIELD_CHARS + 600,
            "{} bytes",
            text.len()
        );
        let line: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["delivery"], "d-1");
        assert_eq!(line["attempt"], 2);
        assert!(
            line["repository"].as_str().unwrap().starts_with("ok\\n{"),
            "{line}"
        );
        let value = line["value"].as_str().unwrap();
        assert!(value.ends_with("…(299488 more bytes)"), "{value}");
        assert!(line["message"]
            .as_str()
            .unwrap()
            .starts_with("refused: aaa"));
    }

    #[test]
    fn octocrab_is_silenced_unless_rust_log_names_it() {
        let directives = |rust_log: Option<&str>, default: &str| {
            let text = filter(rust_log.map(str::to_owned), default).to_string();
            let mut parts: Vec<String> = text.split(',').map(str::to_owned).collect();
            parts.sort();
            parts
        };
        assert_eq!(directives(None, "info"), ["info", "octocrab=off"]);
        assert_eq!(directives(Some("  "), "warn"), ["octocrab=off", "warn"]);
        assert_eq!(
            directives(Some("debug,octocrab=trace"), "info"),
            ["debug", "octocrab=trace"]
        );
    }

    #[test]
    fn short_values_are_written_as_they_are() {
        assert_eq!(clip("delivery 1234"), "delivery 1234");
        assert_eq!(clip("tab\there"), "tab\\there");
    }
}
