//! Repository paths named in free text: one rule for what a step "names", shared by its brief's context paths and by missing info that blocks it.

/// The path-like words of `text` (`src/lib.rs`, `main.c`, `.github/navin.yml`), in order,
/// without duplicates; prose (`e.g.`, `v1.2`), URLs and flags are not paths.
pub fn text_paths(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let w = word
            .trim_matches(|c: char| {
                matches!(
                    c,
                    ',' | ';' | ':' | '`' | '(' | ')' | '"' | '\'' | '?' | '!'
                )
            })
            .trim_end_matches('.');
        if looks_like_path(w) && !out.iter().any(|p| p == w) {
            out.push(w.to_owned());
        }
    }
    out
}

fn looks_like_path(w: &str) -> bool {
    if w.len() < 3 || w.contains("://") || w.starts_with('-') {
        return false;
    }
    if !w
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'))
    {
        return false;
    }
    let name = w.rsplit('/').next().unwrap_or(w);
    // `e.g` and `i.e` are prose; `main.c` and `a.rs` are files.
    let has_ext = name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !ext.is_empty()
            && ext.len() <= 5
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && (stem.len() + ext.len() > 2 || name.starts_with('.'))
    });
    (w.contains('/') && !w.ends_with('/') && !name.is_empty()) || has_ext
}
