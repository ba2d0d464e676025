//! An issue's task list as mission steps (an approved plan converts in `navin_ledger::plan::convert`).

use navin_ledger::model::clip;
use navin_ledger::NewTask;

/// Open items of the issue body's task list (`- [ ] …` or `* [ ] …`, outside code
/// fences) as steps `T1`, `T2`, … in order. Checked items are already done and skipped.
pub fn task_list_steps(body: &str) -> Vec<NewTask> {
    let mut steps = Vec::new();
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            continue;
        }
        let item = trimmed
            .strip_prefix("- [ ] ")
            .or_else(|| trimmed.strip_prefix("* [ ] "))
            .or_else(|| trimmed.strip_prefix("+ [ ] "));
        if let Some(title) = item.map(str::trim).filter(|t| !t.is_empty()) {
            steps.push(NewTask {
                id: format!("T{}", steps.len() + 1),
                title: clip(title),
                ..NewTask::default()
            });
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use navin_ledger::model::MAX_TITLE;
    use navin_ledger::Validation;

    #[test]
    fn open_task_list_items_become_steps_in_order() {
        let body = "Intro\n\n- [ ] Write the parser\n- [x] Already done\n* [ ]  Add tests  \n\n```\n- [ ] not a task\n```\n- [ ] Ship it\n";
        let steps = task_list_steps(body);
        let got: Vec<(&str, &str)> = steps
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("T1", "Write the parser"),
                ("T2", "Add tests"),
                ("T3", "Ship it")
            ]
        );
        assert!(steps.iter().all(|s| s.validation == Validation::None));
    }

    #[test]
    fn a_body_without_a_task_list_gives_no_steps() {
        assert!(task_list_steps("Just prose.\n- a plain bullet").is_empty());
    }

    #[test]
    fn long_titles_are_clipped_to_one_line() {
        let long = format!("- [ ] {}\n", "word ".repeat(100));
        let steps = task_list_steps(&long);
        assert!(steps[0].title.chars().count() <= MAX_TITLE + 1);
        assert!(steps[0].title.ends_with('…'));
    }
}
