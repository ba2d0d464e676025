//! The repository config's plan settings in the ledger's policy terms: `require_plan_for` triggers, the auto-accept config, and `Navin-Plan:` references in PR bodies.

use navin_ledger::plan::policy::{AutoAcceptConfig, OperationClass, PlanTrigger};

use crate::config::ChangeClass;
use crate::config::RepoConfig;

/// The classes of `require_plan_for` that changed files can set off. `file-create`,
/// `file-delete` and the tool-use classes describe plans, not diffs, and are ignored here.
pub fn plan_triggers(config: &RepoConfig) -> Vec<PlanTrigger> {
    config
        .require_plan_for
        .iter()
        .filter_map(|c| match c {
            ChangeClass::MultiFileChange => Some(PlanTrigger::MultiFileChange),
            ChangeClass::DependencyAdd => Some(PlanTrigger::DependencyAdd),
            ChangeClass::SchemaMigration => Some(PlanTrigger::SchemaMigration),
            _ => None,
        })
        .collect()
}

fn operation_class(class: ChangeClass) -> Option<OperationClass> {
    match class {
        ChangeClass::ReadOnlyToolUse => Some(OperationClass::ReadOnlyToolUse),
        ChangeClass::InWorkspaceFileEdit | ChangeClass::FileCreate => {
            Some(OperationClass::InWorkspaceFileEdit)
        }
        ChangeClass::FileDelete | ChangeClass::DestructiveToolUse => {
            Some(OperationClass::DestructiveToolUse)
        }
        ChangeClass::DependencyAdd => Some(OperationClass::DependencyAdd),
        ChangeClass::SchemaMigration => Some(OperationClass::SchemaMigration),
        ChangeClass::MultiFileChange => Some(OperationClass::MultiFileChange),
    }
}

/// The auto-accept policy, or `None` when the config leaves auto-accept off (no
/// `auto_accept.after_n_safe_operations`) or when `approval.require_codeowners` says only
/// code owners' approvals count: an automatic approval is nobody's, so it would walk
/// around the owners.
pub fn auto_accept_config(config: &RepoConfig) -> Option<AutoAcceptConfig> {
    if config.approval.require_codeowners {
        return None;
    }
    let auto = &config.auto_accept;
    let after = auto.after_n_safe_operations?;
    let mut safe: Vec<OperationClass> = auto
        .safe_operation_classes
        .iter()
        .filter_map(|c| operation_class(*c))
        .collect();
    safe.dedup();
    let mut required: Vec<OperationClass> = auto
        .require_approval_for
        .iter()
        .filter_map(|c| operation_class(*c))
        .collect();
    required.dedup();
    Some(AutoAcceptConfig {
        after_n_safe_operations: after,
        safe_operation_classes: safe,
        require_approval_for: required,
    })
}

/// Plan ids a pull request body names on `Navin-Plan:` lines, in order. `#12` and `12`
/// name issue or PR 12 (both ids are returned, issue first); `issue-12` and `pr-12`
/// name one plan exactly.
pub fn referenced_plans(body: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for line in body.lines() {
        let line = line.trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("navin-plan") {
            continue;
        }
        for word in value.split(|c: char| c == ',' || c.is_whitespace()) {
            let word = word.trim().to_ascii_lowercase();
            let number = word.strip_prefix('#').unwrap_or(&word);
            if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) {
                ids.push(format!("issue-{number}"));
                ids.push(format!("pr-{number}"));
            } else if let Some(n) = word
                .strip_prefix("issue-")
                .or_else(|| word.strip_prefix("pr-"))
            {
                if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
                    ids.push(word.clone());
                }
            }
        }
    }
    ids.dedup();
    ids
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use crate::config::parse_repo_config;

    #[test]
    fn require_plan_for_keeps_the_classes_a_diff_can_set_off() {
        let c = parse_repo_config(
            "require_plan_for: [multi-file-change, schema-migration, file-delete]\n",
        )
        .unwrap();
        assert_eq!(
            plan_triggers(&c),
            [PlanTrigger::MultiFileChange, PlanTrigger::SchemaMigration]
        );
    }

    #[test]
    fn auto_accept_is_off_without_a_threshold_and_never_makes_deletes_safe() {
        assert!(auto_accept_config(&RepoConfig::default()).is_none());
        let c = parse_repo_config("auto_accept:\n  after_n_safe_operations: 2\n").unwrap();
        let a = auto_accept_config(&c).unwrap();
        assert_eq!(a.after_n_safe_operations, 2);
        assert!(a
            .safe_operation_classes
            .contains(&OperationClass::InWorkspaceFileEdit));
        assert!(a
            .require_approval_for
            .contains(&OperationClass::DestructiveToolUse));
        assert!(!a
            .safe_operation_classes
            .contains(&OperationClass::DestructiveToolUse));
    }

    #[test]
    fn require_codeowners_turns_auto_accept_off() {
        let c = parse_repo_config(
            "auto_accept:\n  after_n_safe_operations: 1\napproval:\n  require_codeowners: true\n",
        )
        .unwrap();
        assert!(auto_accept_config(&c).is_none());
    }

    #[test]
    fn multi_file_change_in_require_approval_for_reaches_the_policy() {
        let c = parse_repo_config(
            "auto_accept:\n  after_n_safe_operations: 1\n  require_approval_for: [multi-file-change]\n",
        )
        .unwrap();
        let a = auto_accept_config(&c).unwrap();
        assert!(a
            .require_approval_for
            .contains(&OperationClass::MultiFileChange));
    }

    #[test]
    fn plan_references_in_a_pr_body() {
        let body =
            "Fixes things.\n\nNavin-Plan: #12\nnavin-plan: pr-7, issue-3\nNot-Navin-Plan: #9\n";
        assert_eq!(
            referenced_plans(body),
            ["issue-12", "pr-12", "pr-7", "issue-3"]
        );
        assert!(referenced_plans("Navin-Plan: soon").is_empty());
    }
}
