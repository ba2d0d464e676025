//! The brief's account of earlier attempts: what the last one left (continue its pull request or start over), what failed and how (in CI, or in the last run `navin board verify` recorded), and what each attempt tried.

use navin_ledger::model::{Attempt, Task};

use super::text::{code, inline};
use crate::rules::attempts::continues;

/// Attempts listed in the brief's table, newest last.
const LISTED: usize = 6;

/// Where the step's work lives, so the brief tells the next attempt where to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workplace {
    /// On GitHub: each attempt is a pull request.
    PullRequests,
    /// A local checkout (`navin board brief`, `navin mcp` on a local mission): each
    /// attempt is commits proven by `navin board verify`.
    Checkout,
}

/// The "Previous attempts" section of `task`'s brief, or nothing before its second
/// attempt. Written for the next agent: it did not see the earlier runs.
pub fn previous_attempts(task: &Task, place: Workplace) -> String {
    let ended: Vec<&Attempt> = task.attempts.iter().filter(|a| !a.is_open()).collect();
    let Some(last) = ended.last() else {
        return String::new();
    };
    let number = task
        .attempts
        .last()
        .map_or(1, |a| if a.is_open() { a.number } else { a.number + 1 });
    let mut out = String::from("### Previous attempts\n");
    out.push_str(&format!(
        "This is attempt {number} at this step. The last one ended: {}.",
        last.outcome.map_or("ended", |o| o.describe())
    ));
    if let Some(note) = last.note.as_deref().filter(|n| !n.trim().is_empty()) {
        out.push_str(&format!(" ({})", inline(note, 300)));
    }
    out.push_str("\n\n");
    match (place, continues(task)) {
        (Workplace::Checkout, _) => out.push_str(
            "**Start over** from the step's base in this checkout: revert or rework the last attempt's commits rather than build on them, then `navin board verify` again.\n\n",
        ),
        (Workplace::PullRequests, Some(pr)) => out.push_str(&format!(
            "**Continue pull request #{pr}**{}: push the fix to its branch; do not open a second pull request.\n\n",
            task.links
                .branch
                .as_deref()
                .map(|b| format!(" (branch {})", code(b)))
                .unwrap_or_default()
        )),
        (Workplace::PullRequests, None) => out.push_str(&format!(
            "**Start over** from the default branch in a new pull request: the last attempt's work{} is not to be built on. Learn from what it tried and what failed.\n\n",
            last.pr.map(|n| format!(" (#{n})")).unwrap_or_default()
        )),
    }
    if let Some(failure) = last
        .failure
        .as_ref()
        .or_else(|| ended.iter().rev().find_map(|a| a.failure.as_ref()))
    {
        let checks: Vec<String> = failure.checks.iter().map(|c| code(c)).collect();
        out.push_str(&format!(
            "What failed: {} on {}.\n",
            checks.join(", "),
            code(&failure.head_sha.chars().take(12).collect::<String>())
        ));
        if !failure.changed.is_empty() {
            let files: Vec<String> = failure
                .changed
                .iter()
                .map(|f| format!("{} (+{} −{})", code(&f.path), f.additions, f.deletions))
                .collect();
            out.push_str(&format!("What it changed: {}.\n", files.join(", ")));
        }
        if !failure.excerpt.trim().is_empty() {
            out.push('\n');
            out.push_str(&fenced(&failure.excerpt));
        }
        out.push('\n');
    }
    let on_github = place == Workplace::PullRequests;
    out.push_str(if on_github {
        "| # | by | ended | pull request | failure |\n|---|---|---|---|---|\n"
    } else {
        "| # | by | ended | failure |\n|---|---|---|---|\n"
    });
    let skip = ended.len().saturating_sub(LISTED);
    for a in ended.iter().skip(skip) {
        let fingerprint = a
            .failure
            .as_ref()
            .and_then(|f| f.fingerprint.as_deref())
            .map(code)
            .unwrap_or_else(|| "–".to_owned());
        let pr = match on_github {
            true => format!(" {} |", a.pr.map_or("–".to_owned(), |n| format!("#{n}"))),
            false => String::new(),
        };
        out.push_str(&format!(
            "| {} | {} | {} |{pr} {} |\n",
            a.number,
            inline(&a.agent, 40),
            a.outcome.map_or("–", |o| o.describe()),
            fingerprint
        ));
    }
    out.push_str(
        "\nA failure whose fingerprint repeats counts as a loop: try something different from the attempts above.\n\n",
    );
    out
}

/// Output of a red recorded run shown in the brief, at most (its tail: the end of a
/// test run names the failures).
const RUN_EXCERPT: usize = 1_500;

/// The "Last recorded run" section of `task`'s brief when the newest run Navin recorded
/// for it (`navin board verify`, the Action's verify mode) is red: the command, how it
/// ended, the tests it broke, and its output's tail. Nothing when that run is green or
/// there is none: CI failures are in "Previous attempts".
pub fn last_red_run(task: &Task) -> String {
    let Some((e, run)) = task
        .evidence
        .iter()
        .rev()
        .find_map(|e| e.run.as_ref().map(|r| (e, r)))
    else {
        return String::new();
    };
    if e.ok {
        return String::new();
    }
    let ended = match (run.timed_out, run.exit_code) {
        (true, _) => "timed out".to_owned(),
        (false, Some(code)) => format!("exited {code}"),
        (false, None) => "was killed".to_owned(),
    };
    let mut out = String::from(
        "### Last recorded run
",
    );
    out.push_str(&format!(
        "{} {ended} on {}{}.\n",
        code(&run.command.join(" ")),
        code(&run.head.chars().take(12).collect::<String>()),
        if run.dirty {
            " (with uncommitted changes)"
        } else {
            ""
        }
    ));
    if let Some(base) = &run.baseline {
        if !base.new_failures.is_empty() {
            let ids: Vec<String> = base.new_failures.iter().take(10).map(|t| code(t)).collect();
            out.push_str(&format!(
                "Failing since the step's base: {}.\n",
                ids.join(", ")
            ));
        }
        if !base.pre_existing.is_empty() {
            out.push_str(&format!(
                "{} test(s) also fail on the base: not this step's to fix.\n",
                base.pre_existing.len()
            ));
        }
    }
    let tail: String = {
        let chars: Vec<char> = run.output_tail.chars().collect();
        chars[chars.len().saturating_sub(RUN_EXCERPT)..]
            .iter()
            .collect()
    };
    if !tail.trim().is_empty() {
        out.push('\n');
        out.push_str(&fenced(&tail));
    }
    out.push('\n');
    out
}

/// `text` in a fenced block whose fence is longer than any backtick run inside it, so CI
/// output cannot close the block and render as Markdown (or mention anyone).
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}text\n{}\n{fence}\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    use chrono::{TimeZone, Utc};
    use navin_ledger::model::{AttemptFailure, AttemptOutcome};

    fn previous_attempts_on_github(task: &Task) -> String {
        previous_attempts(task, Workplace::PullRequests)
    }

    fn attempt(number: u32, outcome: Option<AttemptOutcome>, failure: Option<&str>) -> Attempt {
        let at = Utc
            .with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
            .single()
            .expect("time");
        Attempt {
            number,
            agent: "workflow".into(),
            started_at: at,
            ended_at: outcome.map(|_| at),
            outcome,
            pr: Some(12),
            tokens: 0,
            cost_usd: 0.0,
            failure: failure.map(|f| AttemptFailure {
                head_sha: "ab".repeat(20),
                checks: vec!["test".into()],
                fingerprint: Some(format!("fp:{number}")),
                excerpt: f.into(),
                changed: Vec::new(),
            }),
            note: None,
            spend_unreported: false,
            start_over: false,
        }
    }

    fn task_with(attempts: Vec<Attempt>) -> Task {
        let mut t: Task = serde_json::from_value(serde_json::json!({
            "id": "S2", "title": "t", "description": null, "status": "failed",
            "depends_on": [], "acceptance": null, "validation": "test",
            "retry_count": 1, "max_retries": 3, "agent": null, "evidence": [],
            "links": {"prs": [12], "head_sha": null, "branch": "navin/S2-t", "issue": 4}
        }))
        .expect("task");
        t.attempts = attempts;
        t
    }

    #[test]
    fn the_second_brief_carries_the_first_failure_and_says_to_continue_the_red_pull_request() {
        let text = previous_attempts_on_github(&task_with(vec![attempt(
            1,
            Some(AttemptOutcome::CiRed),
            Some("test: failure\n```\nassertion failed: left == right @alice"),
        )]));
        assert!(text.contains("This is attempt 2"), "{text}");
        assert!(text.contains("Continue pull request #12"), "{text}");
        assert!(text.contains("assertion failed: left == right"), "{text}");
        assert!(
            text.contains("````text"),
            "the fence outgrows the output's own: {text}"
        );
        assert!(text.contains("`fp:1`"), "{text}");
    }

    #[test]
    fn a_closed_pull_request_means_start_over_and_a_first_attempt_has_no_section() {
        let text = previous_attempts_on_github(&task_with(vec![attempt(
            1,
            Some(AttemptOutcome::Closed),
            None,
        )]));
        assert!(text.contains("Start over"), "{text}");
        assert_eq!(
            previous_attempts_on_github(&task_with(vec![attempt(1, None, None)])),
            ""
        );
        assert_eq!(previous_attempts_on_github(&task_with(vec![])), "");
    }

    #[test]
    fn a_local_brief_starts_over_in_the_checkout_and_lists_no_pull_requests() {
        let ended = attempt(1, Some(AttemptOutcome::CiRed), Some("1 failed"));
        let text = previous_attempts(&task_with(vec![ended]), Workplace::Checkout);
        assert!(text.contains("in this checkout"), "{text}");
        assert!(!text.to_lowercase().contains("pull request"), "{text}");
    }
}

#[cfg(test)]
mod changed_tests {
    use super::*;
    use navin_ledger::model::{AttemptFailure, AttemptOutcome, FileDelta};

    #[test]
    fn the_next_brief_says_what_the_failed_attempt_changed_file_by_file() {
        let mut task: Task = serde_json::from_value(serde_json::json!({
            "id": "S1", "title": "t", "status": "in_progress", "depends_on": [],
            "validation": "test", "retry_count": 1, "max_retries": 3, "evidence": [],
            "links": {"prs": [7], "head_sha": null, "branch": null, "issue": null},
            "attempts": [{
                "number": 1, "agent": "workflow", "started_at": "2026-12-01T09:00:00Z",
                "ended_at": "2026-12-01T10:00:00Z", "outcome": "ci_red", "pr": 7
            }]
        }))
        .expect("task");
        task.attempts[0].failure = Some(AttemptFailure {
            head_sha: "cd".repeat(20),
            checks: vec!["test".into()],
            changed: vec![
                FileDelta {
                    path: "src/farewell.rs".into(),
                    additions: 12,
                    deletions: 3,
                },
                FileDelta {
                    path: "tests/farewell.rs".into(),
                    additions: 4,
                    deletions: 0,
                },
            ],
            ..AttemptFailure::default()
        });
        assert_eq!(task.attempts[0].outcome, Some(AttemptOutcome::CiRed));
        let text = previous_attempts(&task, Workplace::PullRequests);
        assert!(
            text.contains(
                "What it changed: `src/farewell.rs` (+12 −3), `tests/farewell.rs` (+4 −0)."
            ),
            "{text}"
        );
    }
}
