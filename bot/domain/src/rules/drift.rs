//! Plan against actual: the files a pull request changes that its plan does not propose (for a mission step: or that belong to another stage of it), reported on the `navin/plan` check and, with `plan.scope: strict`, failing it.

use navin_ledger::plan::policy::ChangedFile;
use navin_ledger::plan::Plan;
use navin_ledger::PlanDrift;

use crate::check::{CheckAnnotation, CheckState, PlanCheck};
use crate::config::PlanScope;
use crate::rules::plan_file::is_plan_path;

/// Files listed before "and N more" in the check summary.
const MAX_LISTED: usize = 20;

/// Files of each list kept on the ledger (the panel shows fewer).
const MAX_KEPT: usize = 20;

/// What a pull request changes outside its plan and, for a mission step of a staged
/// plan, outside the step's stage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drift {
    /// Changed paths the plan's Proposed Changes do not name.
    pub outside_plan: Vec<String>,
    /// Changed paths the plan proposes, but not for `stage`: each with the stages that
    /// list it (empty when no stage does).
    pub outside_stage: Vec<(String, Vec<u32>)>,
    /// The step's stage (1-based), when it has one.
    pub stage: Option<u32>,
}

impl Drift {
    pub fn is_empty(&self) -> bool {
        self.outside_plan.is_empty() && self.outside_stage.is_empty()
    }

    fn count(&self) -> usize {
        self.outside_plan.len() + self.outside_stage.len()
    }

    /// The ledger's record of it on `head_sha`: each list cut to a few dozen files (the
    /// rest counted), `None` when nothing is outside.
    pub fn record(&self, head_sha: &str, strict: bool) -> Option<PlanDrift> {
        if self.is_empty() {
            return None;
        }
        let kept_plan: Vec<String> = self.outside_plan.iter().take(MAX_KEPT).cloned().collect();
        let kept_stage: Vec<String> = self
            .outside_stage
            .iter()
            .take(MAX_KEPT)
            .map(|(p, _)| p.clone())
            .collect();
        let omitted = self.count() - kept_plan.len() - kept_stage.len();
        Some(PlanDrift {
            head_sha: head_sha.to_owned(),
            outside_plan: kept_plan,
            outside_stage: kept_stage,
            omitted: u32::try_from(omitted).unwrap_or(u32::MAX),
            strict,
        })
    }
}

/// Plan files and the ledger's own `.navin/` files are never drift.
fn bookkeeping(path: &str) -> bool {
    is_plan_path(path) || path.starts_with(".navin/")
}

/// Changed paths the plan's Proposed Changes do not name and, for a mission step of
/// stage `stage` (1-based), the ones the plan proposes for another stage (or for none).
/// A rename counts under either name; plan files and the ledger's own `.navin/` files
/// are not drift. A stage the plan does not have (it was edited since) scopes nothing.
pub fn step_drift(plan: &Plan, stage: Option<u32>, files: &[ChangedFile]) -> Drift {
    // A rename counts under either name.
    let either = |f: &ChangedFile, list: &[String]| {
        let named = |p: &str| list.iter().any(|c| c == p);
        named(&f.path) || f.previous_path.as_deref().is_some_and(named)
    };
    let planned: Vec<String> = plan.changes.iter().map(|c| c.path.clone()).collect();
    let scope = stage
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| plan.stages.get(i));
    let mut drift = Drift {
        stage: scope.and(stage),
        ..Drift::default()
    };
    for f in files.iter().filter(|f| !bookkeeping(&f.path)) {
        if !either(f, &planned) {
            drift.outside_plan.push(f.path.clone());
            continue;
        }
        let Some(own) = scope else { continue };
        if either(f, &own.files) {
            continue;
        }
        let stages: Vec<u32> = (1u32..)
            .zip(&plan.stages)
            .filter(|(_, s)| either(f, &s.files))
            .map(|(n, _)| n)
            .collect();
        drift.outside_stage.push((f.path.clone(), stages));
    }
    drift
}

fn listed(paths: impl Iterator<Item = String>, total: usize) -> String {
    let shown: Vec<String> = paths.take(MAX_LISTED).collect();
    let more = total.saturating_sub(MAX_LISTED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(", "))
}

fn files(n: usize) -> String {
    format!("{n} file{}", if n == 1 { "" } else { "s" })
}

/// Where a planned file belongs, for a sentence: `stage 2`, `stages 1 and 3`, `no stage`.
pub fn stages_word(stages: &[u32]) -> String {
    match stages {
        [] => "no stage".to_owned(),
        [one] => format!("stage {one}"),
        many => {
            let names: Vec<String> = many.iter().map(u32::to_string).collect();
            format!("stages {}", names.join(", "))
        }
    }
}

/// `check` with the drift added: listed in the summary and annotated on each file;
/// under `strict` the check fails until the plan is edited or the files reverted.
pub fn with_drift(
    mut check: PlanCheck,
    plan_id: &str,
    drift: &Drift,
    scope: PlanScope,
) -> PlanCheck {
    if drift.is_empty() {
        return check;
    }
    let strict = scope == PlanScope::Strict;
    let until = if strict {
        "; `plan.scope: strict` fails this check until then"
    } else {
        ""
    };
    let level = if strict { "failure" } else { "warning" };
    if !drift.outside_plan.is_empty() {
        let n = drift.outside_plan.len();
        check.summary.push_str(&format!(
            "\n\n**Outside the plan** ({}): {}. Add them to plan `{plan_id}` (`/plan edit`) or revert them{until}.",
            files(n),
            listed(drift.outside_plan.iter().map(|p| format!("`{p}`")), n),
        ));
        check
            .annotations
            .extend(drift.outside_plan.iter().map(|p| CheckAnnotation {
                path: p.clone(),
                line: 1,
                level,
                title: "Not in the plan".to_owned(),
                message: format!("Plan `{plan_id}` does not propose changing this file."),
            }));
    }
    if !drift.outside_stage.is_empty() {
        let n = drift.outside_stage.len();
        let own = drift
            .stage
            .map(|s| format!("stage {s}"))
            .unwrap_or_default();
        check.summary.push_str(&format!(
            "\n\n**Outside {own}** ({}): {}. Plan `{plan_id}` proposes them, but not for this step's stage: leave them to their own stage's pull request, move them into {own} (`/plan edit`) or revert them{until}.",
            files(n),
            listed(
                drift
                    .outside_stage
                    .iter()
                    .map(|(p, s)| format!("`{p}` ({})", stages_word(s))),
                n
            ),
        ));
        check
            .annotations
            .extend(drift.outside_stage.iter().map(|(p, s)| CheckAnnotation {
                path: p.clone(),
                line: 1,
                level,
                title: format!("Not in {own}"),
                message: format!(
                    "Plan `{plan_id}` proposes this file for {}, not for {own}.",
                    stages_word(s)
                ),
            }));
    }
    if strict {
        check.verdict = CheckState::Broken;
        check.title = format!("{} changed outside plan {plan_id}", files(drift.count()));
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
                    optional: false,
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
            additions: 0,
            deletions: 0,
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
        let drift = step_drift(&p, None, &files);
        assert_eq!(drift.outside_plan, ["src/other.rs"]);
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
            with_drift(
                waiting.clone(),
                "pr-3",
                &Drift::default(),
                PlanScope::Strict
            ),
            waiting
        );
    }

    #[test]
    fn a_step_of_a_staged_plan_is_held_to_its_stage_and_another_stages_file_is_named_as_such() {
        let mut p = plan(&["src/greet.rs", "src/lib.rs", "docs/x.md"]);
        p.stages = vec![
            navin_ledger::plan::Stage {
                title: "one".into(),
                files: vec!["src/greet.rs".into()],
                verification: String::new(),
            },
            navin_ledger::plan::Stage {
                title: "two".into(),
                files: vec!["src/lib.rs".into()],
                verification: String::new(),
            },
        ];
        let files = [
            changed("src/greet.rs", None),
            changed("src/lib.rs", None),
            changed("docs/x.md", None),
            changed("ops/deploy.sh", None),
        ];
        let drift = step_drift(&p, Some(1), &files);
        assert_eq!(drift.outside_plan, ["ops/deploy.sh"]);
        assert_eq!(
            drift.outside_stage,
            [
                ("src/lib.rs".to_owned(), vec![2]),
                ("docs/x.md".to_owned(), vec![])
            ]
        );
        // No stage (a cruise mission, or a stage the plan lost): the plan alone counts.
        assert!(step_drift(&p, None, &files).outside_stage.is_empty());
        assert!(step_drift(&p, Some(9), &files).outside_stage.is_empty());

        let waiting = PlanCheck {
            verdict: CheckState::Approved,
            title: "ok".into(),
            summary: "s".into(),
            annotations: vec![],
            actions: vec![],
        };
        let check = with_drift(waiting.clone(), "issue-1", &drift, PlanScope::Advisory);
        assert_eq!(check.conclusion(), "success");
        assert!(
            check.summary.contains(
                "**Outside stage 1** (2 files): `src/lib.rs` (stage 2), `docs/x.md` (no stage)"
            ),
            "{}",
            check.summary
        );
        let titles: Vec<(&str, &str)> = check
            .annotations
            .iter()
            .map(|a| (a.path.as_str(), a.title.as_str()))
            .collect();
        assert_eq!(
            titles,
            [
                ("ops/deploy.sh", "Not in the plan"),
                ("src/lib.rs", "Not in stage 1"),
                ("docs/x.md", "Not in stage 1")
            ]
        );
        let strict = with_drift(waiting, "issue-1", &drift, PlanScope::Strict);
        assert_eq!(strict.conclusion(), "failure");
        assert_eq!(strict.title, "3 files changed outside plan issue-1");

        let record = drift.record("abc", true).unwrap();
        assert_eq!(record.outside_stage, ["src/lib.rs", "docs/x.md"]);
        assert_eq!((record.count(), record.strict), (3, true));
        assert_eq!(Drift::default().record("abc", true), None);
    }
}
