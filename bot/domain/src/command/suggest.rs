//! Did-you-mean: which `/word` lines are typos of a command (and get a reply), and which are paths or chatter (and are left alone).

use super::spec::CommandKind;

/// Words that are a command's subcommand typed on its own; each maps to the full command.
const SUBCOMMAND_ALIASES: &[(&str, &str)] = &[
    ("close", "mission close"),
    ("edit", "plan edit"),
    ("add", "step add"),
];

/// Punctuation people put after a command (`/approve!`), stripped before matching a typo.
const TRAILING_PUNCTUATION: &[char] = &['.', ',', '!', '?', ':', ';'];

/// Most edits between a typed word and a command name: one for short words, so `/home` or
/// `/tmp` are not taken for `/done` or `/step`, two from five letters on.
fn max_distance(word: &str) -> usize {
    if word.chars().count() <= 4 {
        1
    } else {
        2
    }
}

/// The top-level names a line can start with.
fn top_level_names() -> impl Iterator<Item = &'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    CommandKind::ALL.iter().filter_map(move |k| {
        let first = k.spec().name.split(' ').next().unwrap_or_default();
        if seen.contains(&first) {
            None
        } else {
            seen.push(first);
            Some(first)
        }
    })
}

/// Whether `word` names a top-level command (`plan`, `step`, …), case-insensitively.
pub fn is_command_name(word: &str) -> bool {
    top_level_names().any(|name| name.eq_ignore_ascii_case(word))
}

/// For a `/word` that is not a command: the command it is a typo of, or `None` when the line
/// is not meant for Navin and must be ignored. Only alphabetic words (after trailing
/// punctuation) qualify, so paths like `/usr/bin` never trigger a reply.
pub fn typo_of(word: &str) -> Option<&'static str> {
    let bare = word.trim_end_matches(TRAILING_PUNCTUATION);
    if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let bare = bare.to_ascii_lowercase();
    if let Some((_, full)) = SUBCOMMAND_ALIASES.iter().find(|(alias, _)| *alias == bare) {
        return Some(full);
    }
    nearest(&bare, top_level_names(), max_distance(&bare))
}

/// The candidate nearest to `word` by Damerau-Levenshtein distance, within `limit`; ties go
/// to the earlier candidate.
pub fn nearest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    limit: usize,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
