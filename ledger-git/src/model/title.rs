//! One-line texts of bounded length: step titles, and the questions and facts a plan or
//! a person adds, so the board stays a list and not a place for essays.

/// Longest step title (or question, or fact) kept.
pub const MAX_TITLE: usize = 200;

/// `text` on one line, at most [`MAX_TITLE`] characters (an ellipsis marks a cut).
pub fn clip(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(MAX_TITLE) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}
