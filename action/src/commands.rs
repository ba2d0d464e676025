//! GitHub Actions workflow commands and the files the runner reads back (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::error::ActionError;

/// Escapes a workflow command's message so a newline or `%` in it cannot
/// end the command early or start another one.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// `::error title=navin::…`: shown as an annotation on the run.
pub fn error(message: &str) -> String {
    format!("::error title=navin::{}", escape_data(message))
}

/// `::warning title=navin::…`.
pub fn warning(message: &str) -> String {
    format!("::warning title=navin::{}", escape_data(message))
}

/// `::notice title=navin::…`.
pub fn notice(message: &str) -> String {
    format!("::notice title=navin::{}", escape_data(message))
}

/// Tells the runner to replace `secret` with `***` in every later log line.
pub fn add_mask(secret: &str) -> String {
    format!("::add-mask::{}", escape_data(secret))
}

/// A heredoc delimiter that occurs in none of `values`: the runner ends a
/// multiline value at the first line equal to it, so a value containing it
/// could smuggle in other outputs.
pub fn delimiter(seed: u64, values: &[&str]) -> String {
    let mut n = seed;
    loop {
        let candidate = format!("ghadelimiter_navin_{n:016x}");
        if values.iter().all(|v| !v.contains(&candidate)) {
            return candidate;
        }
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
}

/// Step outputs in the `name<<DELIM` form, safe for any value.
pub fn format_outputs(outputs: &[(&str, String)], seed: u64) -> String {
    let values: Vec<&str> = outputs.iter().map(|(_, v)| v.as_str()).collect();
    let delim = delimiter(seed, &values);
    let mut out = String::new();
    for (name, value) in outputs {
        out.push_str(&format!("{name}<<{delim}\n{value}\n{delim}\n"));
    }
    out
}

/// Appends `text` to a runner file (outputs or job summary).
pub fn append(path: &Path, text: &str) -> Result<(), ActionError> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| ActionError::io(format!("opening {}", path.display()), e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| ActionError::io(format!("writing {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_with_newlines_stays_one_command() {
        let line = error("push failed\n::add-mask::x 100%");
        assert_eq!(line.lines().count(), 1);
        assert!(line.ends_with("push failed%0A::add-mask::x 100%25"));
    }

    #[test]
    fn outputs_use_a_delimiter_absent_from_every_value() {
        let first = delimiter(7, &[]);
        let hostile = format!("x\n{first}\nmission-status=done");
        let text = format_outputs(&[("ready-steps", hostile.clone())], 7);
        let delim = text
            .lines()
            .next()
            .and_then(|l| l.split_once("<<"))
            .map(|(_, d)| d.to_string());
        let delim = delim.expect("heredoc header");
        assert_ne!(delim, first);
        assert!(!hostile.contains(&delim));
        assert!(text.ends_with(&format!("{delim}\n")));
    }
}
