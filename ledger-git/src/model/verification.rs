//! What proves a step's change: the repository's validation commands (as configured, and as a mission records them), and the step's scope.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Task, Validation};

/// One command line per validation kind, run with no shell (words split as a POSIX
/// shell would, but nothing expanded), so a step's evidence comes from the same command
/// in every checkout: `validation.commands` of `.github/navin.yml`, and the copy a
/// mission records of them when it is made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ValidationCommands {
    /// For steps with `validation: test` (`cargo test --workspace`). Default: none.
    pub test: Option<String>,
    /// For steps with `validation: lint` (`cargo clippy -- -D warnings`). Default: none.
    pub lint: Option<String>,
    /// For steps with `validation: verify`. Default: none.
    pub verify: Option<String>,
}

impl ValidationCommands {
    /// The command for a step of `validation`, if one was configured.
    pub fn for_validation(&self, validation: Validation) -> Option<&str> {
        match validation {
            Validation::Test => self.test.as_deref(),
            Validation::Lint => self.lint.as_deref(),
            Validation::Verify => self.verify.as_deref(),
            _ => None,
        }
    }
}

/// `evidence.scope`: what closing a step with changes outside its scope does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScopePolicy {
    /// The step closes; the files outside are named in the ledger's history.
    #[default]
    Warn,
    /// The step does not close until the change stays inside its scope.
    Refuse,
}

/// `evidence.fail_to_pass`: which test steps need a test the change repaired, that is,
/// one that fails (or does not exist) on the step's base and passes on its head, so a
/// fix is shown to fix something and not only to break nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailToPass {
    /// The steps whose plan pairs a source change with its test ([`Task::fail_to_pass`]).
    #[default]
    Auto,
    /// Every test step closed from a checkout.
    Required,
    /// None: a green run (against the base) proves a test step.
    Off,
}

impl FailToPass {
    /// Whether `task`, closed from a checkout, needs a fail-to-pass test.
    pub fn applies_to(self, task: &Task) -> bool {
        task.validation == super::Validation::Test
            && match self {
                FailToPass::Auto => task.fail_to_pass,
                FailToPass::Required => true,
                FailToPass::Off => false,
            }
    }
}

impl Task {
    /// The files the step must change that `changed` leaves untouched.
    pub fn untouched_required<'a>(&'a self, changed: &[String]) -> Vec<&'a str> {
        self.required
            .iter()
            .map(String::as_str)
            .filter(|r| !changed.iter().any(|c| c == r))
            .collect()
    }

    /// The changed paths outside the step's scope (none when it has no scope): a path is
    /// inside when the scope names it or a directory above it.
    pub fn outside_scope<'a>(&self, changed: &'a [String]) -> Vec<&'a str> {
        if self.scope.is_empty() {
            return Vec::new();
        }
        changed
            .iter()
            .map(String::as_str)
            .filter(|path| {
                !self.scope.iter().any(|s| {
                    let s = s.trim_end_matches('/');
                    *path == s || path.strip_prefix(s).is_some_and(|r| r.starts_with('/'))
                })
            })
            .collect()
    }
}
