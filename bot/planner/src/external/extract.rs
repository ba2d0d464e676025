//! Finds the plan in a model's or command's reply: a fenced markdown block or the text from `# Plan:` on.

/// Returns the plan text inside `reply`. Models wrap the plan in a
/// ```` ```markdown ```` fence, add a sentence before it, or print it bare;
/// all three give the plan. When no `# Plan:` line exists the whole reply
/// is returned, so the parser's error ("expected the title line") reaches
/// the model as feedback.
pub(crate) fn extract_plan(reply: &str) -> &str {
    let lines: Vec<(usize, &str)> = line_spans(reply);
    let Some(title_idx) = lines
        .iter()
        .position(|(_, l)| l.trim_start().starts_with("# Plan:"))
    else {
        return reply.trim();
    };
    let start =
        lines[title_idx].0 + (lines[title_idx].1.len() - lines[title_idx].1.trim_start().len());
    let opener = lines[..title_idx]
        .iter()
        .rev()
        .find(|(_, l)| !l.trim().is_empty())
        .and_then(|(_, l)| fence_marker(l));
    let Some(marker) = opener else {
        return reply[start..].trim_end();
    };
    let end = closing_fence(&lines[title_idx + 1..], &marker)
        .map(|i| lines[title_idx + 1 + i].0)
        .unwrap_or(reply.len());
    reply[start..end].trim_end()
}

/// Byte offset and text of every line.
fn line_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        out.push((offset, line.trim_end_matches(['\n', '\r'])));
        offset += line.len();
    }
    out
}

/// The backtick or tilde run opening a fence (three or more), if `line` is one.
fn fence_marker(line: &str) -> Option<String> {
    let t = line.trim();
    let ch = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run: String = t.chars().take_while(|c| *c == ch).collect();
    (run.len() >= 3).then_some(run)
}

/// Index of the line closing the outer fence. Plans may hold inner code
/// blocks: a fence line with an info string (```` ```text ````) always
/// opens one, and a bare fence closes it; a bare fence with no inner
/// block open closes the outer one.
fn closing_fence(lines: &[(usize, &str)], marker: &str) -> Option<usize> {
    let mut inner_open = false;
    for (i, (_, line)) in lines.iter().enumerate() {
        let t = line.trim();
        let Some(run) = fence_marker(t) else { continue };
        let info = t[run.len()..].trim();
        if !info.is_empty() {
            inner_open = true;
        } else if inner_open {
            inner_open = false;
        } else if run.starts_with(marker) {
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_the_fenced_block_after_a_preamble() {
        let reply =
            "Sure, here it is:\n\n```markdown\n# Plan: X\n\n## Goal\n\nDo it.\n```\n\nLet me know!";
        assert_eq!(extract_plan(reply), "# Plan: X\n\n## Goal\n\nDo it.");
    }

    #[test]
    fn keeps_inner_code_blocks_of_the_plan() {
        let reply = "```md\n# Plan: X\n\n## Data Flow\n\n```text\na -> b\n```\n\n## Risks\n\n- r\n```\ntrailer";
        assert_eq!(
            extract_plan(reply),
            "# Plan: X\n\n## Data Flow\n\n```text\na -> b\n```\n\n## Risks\n\n- r"
        );
    }

    #[test]
    fn takes_bare_text_from_the_title_line() {
        let reply = "<think>hmm</think>\n# Plan: Y\n\n## Goal\n\nG.\n";
        assert_eq!(extract_plan(reply), "# Plan: Y\n\n## Goal\n\nG.");
    }

    #[test]
    fn unclosed_fence_runs_to_the_end() {
        assert_eq!(
            extract_plan("```markdown\n# Plan: Z\nbody\n"),
            "# Plan: Z\nbody"
        );
    }

    #[test]
    fn reply_without_title_is_returned_whole() {
        assert_eq!(extract_plan("  no plan here \n"), "no plan here");
    }
}
