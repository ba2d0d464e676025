//! Fits a list of markdown parts into a byte budget by cutting the longest ones evenly.

use super::text::{closers_for, prefix_bytes};

/// A piece of a comment: fixed wrapper text around a body that may be cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    open: String,
    body: String,
    close: String,
    /// Replaces the default note when this part is cut.
    note: Option<String>,
}

impl Part {
    pub fn new(open: &str, body: String, close: &str) -> Self {
        Self {
            open: open.to_owned(),
            body,
            close: close.to_owned(),
            note: None,
        }
    }

    /// Says where the uncut text of this part lives, when it is not where the default note says.
    pub fn with_note(mut self, note: String) -> Self {
        self.note = Some(note);
        self
    }

    fn len(&self) -> usize {
        self.open.len() + self.body.len() + self.close.len()
    }
}

/// Bytes a cut may add besides the note: closing a code fence or a comment.
const CLOSER_ROOM: usize = 24;

/// Joins `parts` in order within `budget` bytes. When they do not fit, the
/// shortest bodies stay whole and the longer ones are all cut to one common
/// length (water-filling), each cut ending on a line break, closing any code
/// fence or HTML comment it leaves open, and followed by `note`. Wrappers
/// (headings, `<details>` tags) are never cut, so folds always close.
pub fn fit(parts: Vec<Part>, budget: usize, note: &str) -> String {
    let total: usize = parts.iter().map(Part::len).sum();
    if total <= budget {
        return parts
            .into_iter()
            .map(|p| p.open + &p.body + &p.close)
            .collect();
    }
    let fixed: usize = parts.iter().map(|p| p.open.len() + p.close.len()).sum();
    let cap = common_cap(
        &parts,
        budget.saturating_sub(fixed),
        note.len() + CLOSER_ROOM,
    );
    let mut out = String::with_capacity(budget);
    for p in parts {
        out.push_str(&p.open);
        if p.body.len() <= cap {
            out.push_str(&p.body);
        } else {
            let cut = cut_at_line(&p.body, cap);
            out.push_str(cut);
            out.push_str(&closers_for(cut));
            out.push_str(p.note.as_deref().unwrap_or(note));
        }
        out.push_str(&p.close);
    }
    if out.len() > budget {
        // Only reachable when the wrappers alone nearly fill the budget.
        let cut = prefix_bytes(&out, budget.saturating_sub(note.len() + CLOSER_ROOM)).to_owned();
        return format!("{cut}{}{note}", closers_for(&cut));
    }
    out
}

/// The largest body length `c` such that bodies up to `c` stay whole and the
/// rest, cut to `c` plus `per_cut` bytes of note, fit in `room`.
fn common_cap(parts: &[Part], room: usize, per_cut: usize) -> usize {
    let mut lens: Vec<usize> = parts.iter().map(|p| p.body.len()).collect();
    lens.sort_unstable();
    let mut whole = 0usize;
    for (k, &len) in lens.iter().enumerate() {
        let cut_parts = lens.len() - k;
        let share = room.saturating_sub(whole) / cut_parts;
        let cap = share.saturating_sub(per_cut);
        if cap < len {
            return cap;
        }
        whole += len;
    }
    usize::MAX
}

/// At most `max` bytes of `body`, ending after a line break when one lies in
/// the second half of the cut, so a cut rarely splits a line.
fn cut_at_line(body: &str, max: usize) -> &str {
    let cut = prefix_bytes(body, max);
    match cut.rfind('\n') {
        Some(nl) if nl >= cut.len() / 2 => &cut[..=nl],
        _ => cut,
    }
}
