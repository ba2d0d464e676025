//! Collects the engine's warnings and errors (tracing events) so the job log shows them and a refused call can fail the job naming its permission.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// What the engine logged at warn or error level during this run.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    inner: Arc<Mutex<Vec<(Level, String)>>>,
}

impl Captured {
    fn of(&self, level: Level) -> Vec<String> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|(l, _)| *l == level)
            .map(|(_, m)| m.clone())
            .collect()
    }

    pub fn errors(&self) -> Vec<String> {
        self.of(Level::ERROR)
    }

    pub fn warnings(&self) -> Vec<String> {
        self.of(Level::WARN)
    }
}

struct CaptureLayer(Captured);

/// Joins an event's message and fields into one line (`message key=value …`).
#[derive(Default)]
struct Line(String);

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.push(field, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.push(field, &format!("{value:?}"));
    }
}

/// Characters kept of one field value: text from outside (a refused argument, an error
/// body) must not blow up the job log.
const MAX_FIELD_CHARS: usize = 512;

impl Line {
    fn push(&mut self, field: &Field, value: &str) {
        let value = navin_domain::render::text::truncate_chars(value, MAX_FIELD_CHARS);
        let value = value.as_str();
        if !self.0.is_empty() {
            self.0.push_str(": ");
        }
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, "{}={value}", field.name());
        }
    }
}

impl<S: Subscriber> Layer<S> for CaptureLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let level = *event.metadata().level();
        // tracing orders levels by verbosity: ERROR and WARN are the two lowest.
        if level > Level::WARN {
            return;
        }
        let mut line = Line::default();
        event.record(&mut line);
        self.0
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((level, line.0));
    }
}

/// Installs the collector as this process's subscriber (once; later calls share it).
pub fn install() -> Captured {
    static GLOBAL: std::sync::OnceLock<Captured> = std::sync::OnceLock::new();
    GLOBAL
        .get_or_init(|| {
            let captured = Captured::default();
            let subscriber = tracing_subscriber::registry().with(CaptureLayer(captured.clone()));
            let _ = tracing::subscriber::set_global_default(subscriber);
            captured
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_and_errors_are_kept_with_their_fields_and_info_is_not() {
        let captured = install();
        tracing::info!("not kept");
        tracing::warn!(error = "GitHub answered 403", "cannot read the config");
        tracing::error!(op = "x#0", "command failed");
        assert!(captured.warnings().iter().any(
            |w| w.contains("cannot read the config") && w.contains("error=GitHub answered 403")
        ));
        assert!(captured
            .errors()
            .iter()
            .any(|e| e.contains("command failed") && e.contains("op=x#0")));
        assert!(!captured
            .warnings()
            .iter()
            .chain(captured.errors().iter())
            .any(|m| m.contains("not kept")));
        tracing::warn!(value = %"y".repeat(100_000), "huge");
        let huge = captured
            .warnings()
            .into_iter()
            .find(|w| w.starts_with("huge"))
            .unwrap_or_default();
        assert!(huge.len() < 2 * MAX_FIELD_CHARS, "{} bytes", huge.len());
    }
}
