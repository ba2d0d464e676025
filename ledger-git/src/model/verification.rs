//! What proves a step's change: the repository's validation commands a mission records, and the step's scope.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Task, Validation};

/// One command line per validation kind, as the repository configured them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfiguredCommands {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
}

impl ConfiguredCommands {
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

impl Task {
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
