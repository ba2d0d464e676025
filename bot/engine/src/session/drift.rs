//! Plan against actual: the files a pull request changes that its plan does not propose, reported on the `navin/plan` check and, with `plan.scope: strict`, failing it.

use navin_ledger::plan::policy::ChangedFile;
use navin_ledger::plan::Plan;

use super::plan_file::is_plan_path;
use crate::config::PlanScope;
use crate::effects::plan_check::{CheckAnnotation, CheckState, PlanCheck};

/// Files listed before "and N more" in the check summary.
const MAX_LISTED: usize = 20;

/// Changed paths the plan's Proposed Changes do not name. A rename counts under
/// either name; plan files and the ledger's own `.navin/` files are not drift.
pub fn outside_plan(plan: &Plan, files: &[ChangedFile]) -> Vec<String> {
    let planned = |p: &str| plan.changes.iter().any(|c| c.path == p);
    files
        .iter()
        .filter(|f| !planned(&f.path) && !f.previous_path.as_deref().is_some_and(planned))
        .map(|f| f.path.clone())
        .filter(|p| !is_plan_path(p) && !p.starts_with(".navin/"))
        .collect()
}

/// `check` with the drift added: listed in the summary and annotated on each file;
/// under `strict` the check fails until the plan is edited or the files reverted.
pub fn with_drift(
    mut check: PlanCheck,
    plan_id: &str,
    drift: &[String],
    scope: PlanScope,
) -> PlanCheck {
    if drift.is_empty() {
        return check;
    }
    let listed: Vec<String> = drift
        .iter()
        .take(MAX_LISTED)
        .map(|p| format!("`{p}`"))
        .collect();
    let more = drift.len().saturating_sub(MAX_LISTED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    let strict = scope == PlanScope::Strict;
    check.summary.push_str(&format!(
        "\n\n**Outside the plan** ({} file{}): {}{more}. Add them to plan `{plan_id}` (`/plan edit`) or revert them{}.",
        drift.len(),
        if drift.len() == 1 { "" } else { "s" },
        listed.join(", "),
        if strict { "; `plan.scope: strict` fails this check until then" } else { "" }
    ));
    let level = if strict { "failure" } else { "warning" };
    check
        .annotations
        .extend(drift.iter().map(|p| CheckAnnotation {
            path: p.clone(),
            line: 1,
            level,
            title: "Not in the plan".to_owned(),
            message: format!("Plan `{plan_id}` does not propose changing this file."),
        }));
    if strict {
        check.verdict = CheckState::Broken;
        check.title = format!(
            "{} file{} changed outside plan {plan_id}",
            drift.len(),
            if drift.len() == 1 { "" } else { "s" }
        );
    }
    check
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use navin_ledger::plan::policy::FileStatus;
    use navin_ledger::plan::{FileChange, Operation};

    fn plan(paths: &[&str]) -> Plan {
        Plan {
            title: "t".into(),
            persona: "p".into(),
            goal: "g".into(),
            architecture: "a".into(),
            capabilities: "c".into(),
            data_flow: "d".into(),
            target_state: "t".into(),
            impact_isolation: "i".into(),
            changes: paths
                .iter()
                .map(|path| FileChange {
                    path: (*path).to_owned(),
                    operation: Operation::Edit,
                    change: "c".into(),
                    rationale: "r".into(),
                })
                .collect(),
            new_dependencies: vec![],
            risks: vec![],
            next_steps: vec![],
            questions: vec![],
            handoff: None,
            stages: vec![],
        }
    }

    fn changed(path: &str, previous: Option<&str>) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            status: if previous.is_some() {
                FileStatus::Renamed
            } else {
                FileStatus::Modified
            },
            previous_path: previous.map(str::to_owned),
        }
    }

    #[test]
    fn files_the_plan_does_not_name_are_drift_and_strict_fails_the_check() {
        let p = plan(&["src/greet.rs", "src/old.rs"]);
        let files = [
            changed("src/greet.rs", None),
            changed("src/new.rs", Some("src/old.rs")),
            changed("src/other.rs", None),
            changed("plans/greeting.md", None),
            changed(".navin/x.json", None),
        ];
        let drift = outside_plan(&p, &files);
        assert_eq!(drift, ["src/other.rs"]);
        let waiting = PlanCheck {
            verdict: CheckState::Waiting,
            title: "Waiting".into(),
            summary: "s".into(),
            annotations: vec![],
            actions: vec![],
        };
        let advisory = with_drift(waiting.clone(), "pr-3", &drift, PlanScope::Advisory);
        assert_eq!(advisory.verdict, CheckState::Waiting);
        assert!(
            advisory
                .summary
                .contains("**Outside the plan** (1 file): `src/other.rs`"),
            "{}",
            advisory.summary
        );
        assert_eq!(advisory.annotations[0].level, "warning");
        let strict = with_drift(waiting.clone(), "pr-3", &drift, PlanScope::Strict);
        assert_eq!(strict.conclusion(), "failure");
        assert_eq!(strict.title, "1 file changed outside plan pr-3");
        assert_eq!(strict.annotations[0].level, "failure");
        assert_eq!(
            with_drift(waiting.clone(), "pr-3", &[], PlanScope::Strict),
            waiting
        );
    }
}
