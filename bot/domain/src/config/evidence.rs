//! `evidence:`: which CI runs prove a step, when, and what its change must show.

use std::collections::BTreeSet;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{duration, GITHUB_ACTIONS_APP_ID};

/// `evidence:`: what counts as CI evidence for a step.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Evidence {
    /// App ids whose check runs are trusted; add your CI's GitHub App when it is not
    /// GitHub Actions. At least one. Default: `[15368]` (GitHub Actions).
    #[schemars(with = "Vec<u64>", length(min = 1))]
    pub trusted_apps: BTreeSet<u64>,
    /// Check names that must be green on the head, per step validation kind, so an
    /// unrelated green check cannot close a step. Default: none for every kind (every
    /// trusted check must be green).
    pub required_checks: RequiredChecks,
    /// A green run faster than this is treated as a failure (bors' `min_ci_time`), to
    /// catch a CI that skipped its tests. Seconds as a number, or a string like `90s`,
    /// `5m`, `1h`. Default: 0 (off).
    #[serde(
        deserialize_with = "duration::deserialize",
        serialize_with = "duration::serialize"
    )]
    #[schemars(schema_with = "duration::schema")]
    pub min_ci_time: Duration,
    /// When a step its CI proves is done: once its pull request is merged with every
    /// required check green on the final head (`merged`, the default), or as soon as
    /// they are green on the linked head (`green`).
    pub done_on: DoneOn,
    /// What CI on a draft pull request does to the step it carries: `wait` (the default)
    /// keeps its green runs as evidence but closes no step, spends no attempt and counts
    /// no CI round until the pull request is marked ready for review, which judges its
    /// head again; `count` treats a draft like any open pull request.
    pub drafts: Drafts,
    /// What closing a step whose change touches files outside the step's scope (the
    /// files its plan proposes) does: `warn` (the default) closes it and names the files
    /// in the ledger's history; `refuse` keeps it open until the change stays inside.
    pub scope: navin_ledger::model::ScopePolicy,
    /// Which test steps closed from a checkout also need a test the change repaired
    /// (failing or absent on the step's base, passing on its head), as `navin board
    /// verify` records it: `auto` (the default) those whose plan pairs a source change
    /// with its test; `required` every test step; `off` none.
    pub fail_to_pass: navin_ledger::model::FailToPass,
    /// With `done_on: merged`, whether Navin merges a step's pull request itself once
    /// every required check is green on its head and nothing else holds the step (its
    /// dependencies done, no draft, no drift hold): `off` (the default) waits for a
    /// person; `merge`, `squash` or `rebase` merge that way, naming the judged head so
    /// nothing pushed after the judgement is merged. Branch protection still applies: a
    /// merge GitHub refuses is logged and waits for a person.
    pub merge: MergeMethod,
}

/// `evidence.merge`: whether and how Navin merges a step's green pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MergeMethod {
    /// A person merges.
    #[default]
    Off,
    /// A merge commit.
    Merge,
    /// One squashed commit.
    Squash,
    /// The commits rebased onto the base branch.
    Rebase,
}

impl MergeMethod {
    /// The `merge_method` GitHub's merge endpoint takes; `None` when off.
    pub fn as_api(self) -> Option<&'static str> {
        match self {
            MergeMethod::Off => None,
            MergeMethod::Merge => Some("merge"),
            MergeMethod::Squash => Some("squash"),
            MergeMethod::Rebase => Some("rebase"),
        }
    }
}

/// `evidence.drafts`: whether CI on a draft pull request moves its step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Drafts {
    /// A draft is work in progress: its red runs spend no attempt and its green runs
    /// close nothing until it is ready for review, so an agent can push half-done work.
    #[default]
    Wait,
    /// A draft counts like any open pull request.
    Count,
}

/// `evidence.done_on`: when CI proves a step done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoneOn {
    /// Once its pull request is merged with every required check green on the final
    /// head, so downstream work always starts from merged code.
    #[default]
    Merged,
    /// As soon as the required checks are green on the linked head, for faster missions.
    Green,
}

impl Default for Evidence {
    fn default() -> Self {
        Self {
            trusted_apps: [GITHUB_ACTIONS_APP_ID].into_iter().collect(),
            required_checks: RequiredChecks::default(),
            min_ci_time: Duration::ZERO,
            done_on: DoneOn::Merged,
            drafts: Drafts::Wait,
            scope: navin_ledger::model::ScopePolicy::Warn,
            fail_to_pass: navin_ledger::model::FailToPass::Auto,
            merge: MergeMethod::Off,
        }
    }
}

/// `evidence.required_checks`: check names for each validation kind of a step.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RequiredChecks {
    /// For `validation: test`. Default: none.
    pub test: Vec<String>,
    /// For `validation: lint`. Default: none.
    pub lint: Vec<String>,
    /// For `validation: verify`. Default: none.
    pub verify: Vec<String>,
}
