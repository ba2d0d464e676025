//! Which mission step a pull request works on: a `Navin-Step:` line in its body, or a `navin/<step>` branch.

use navin_ledger::model::Board;

use crate::render::text::fence_marker;

/// The step a PR is linked to, from its body or its head branch. The body
/// wins: a line `Navin-Step: S3` (key in any case, at the very start of a
/// line, outside fenced code blocks; quoted, indented or commented lines do
/// not count) names the step. Otherwise a head branch `navin/S3` or
/// `navin/S3-short-description` does, the id ending at the first `-` or
/// `/`. Ids are letters, digits, `-`, `_` and `.`; a line or branch with
/// anything else (a template's `Navin-Step: <id>`) links nothing.
///
/// The branch form cannot tell `navin/fix-db` (step `fix-db`) from step `fix`
/// with a description; [`step_from_pr_in`] resolves that against the board.
pub fn step_from_pr(body: &str, head_ref: &str) -> Option<String> {
    step_from_body(body).or_else(|| {
        branch_tail(head_ref)
            .and_then(|tail| tail.split(['-', '/']).next())
            .filter(|id| valid_id(id))
            .map(str::to_owned)
    })
}

/// [`step_from_pr`] against the steps that exist: a body line naming an
/// unknown step links nothing, and a branch links the longest existing step
/// id that the part after `navin/` starts with, up to a `-`, `/` or its end
/// (so `navin/fix-db-retry` finds step `fix-db` before step `fix`).
pub fn step_from_pr_in(body: &str, head_ref: &str, board: &Board) -> Option<String> {
    if let Some(id) = step_from_body(body) {
        return board.task(&id).map(|t| t.id.clone());
    }
    let tail = branch_tail(head_ref)?;
    let tail = tail.split('/').next().unwrap_or(tail);
    let mut ends: Vec<usize> = tail.match_indices('-').map(|(i, _)| i).collect();
    ends.push(tail.len());
    ends.into_iter()
        .rev()
        .map(|end| &tail[..end])
        .find(|id| valid_id(id) && board.task(id).is_some())
        .map(str::to_owned)
}

fn branch_tail(head_ref: &str) -> Option<&str> {
    let branch = head_ref.trim();
    let branch = branch.strip_prefix("refs/heads/").unwrap_or(branch);
    branch.strip_prefix("navin/").filter(|t| !t.is_empty())
}

/// The first `Navin-Step:` line outside code fences.
fn step_from_body(body: &str) -> Option<String> {
    let mut fence: Option<(char, usize)> = None;
    for line in body.lines() {
        match (fence, fence_marker(line)) {
            (Some((ch, len)), Some((c, l, rest)))
                if c == ch && l >= len && rest.trim().is_empty() =>
            {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, Some((c, l, _))) => {
                fence = Some((c, l));
                continue;
            }
            (None, None) => {}
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if !key.eq_ignore_ascii_case("navin-step") {
            continue;
        }
        let id = value.trim();
        if valid_id(id) {
            return Some(id.to_owned());
        }
    }
    None
}

fn valid_id(id: &str) -> bool {
    navin_ledger::valid_step_id(id)
}
