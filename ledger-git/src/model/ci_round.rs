//! One completed CI round on a step's head, as the progress ledger records it, and the per-file change a red round hands the attempt it failed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One completed CI round on a step's linked head: which required checks were green and
/// which red (names, sorted), and the failure's fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CiRound {
    pub head_sha: String,
    pub green: Vec<String>,
    pub red: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The red checks' normalized output, as fingerprinted: handed to the attempt that
    /// failed (for the next brief), never kept on the task itself.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
    /// What the red head changes, file by file: handed to the attempt that failed, so
    /// the next one knows what was tried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<FileDelta>,
}

/// One file an attempt changed, with its line counts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileDelta {
    pub path: String,
    #[serde(default)]
    pub additions: u32,
    #[serde(default)]
    pub deletions: u32,
}
