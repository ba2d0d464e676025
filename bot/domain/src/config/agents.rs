//! `agents:`: when the closed agent loop gives up on an attempt and starts the next one.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::duration;

/// `agents:`: the waits of the closed agent loop. A step handed to an agent (or to
/// people) gets its next attempt from Navin when the last one ends without the step
/// being done; these say how long an attempt may sit before it counts as ended.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Agents {
    /// After CI fails on an attempt's pull request, how long Navin waits for a push (the
    /// agent fixing it itself) before it starts the next attempt with the failure. Seconds
    /// or `20m`, `1h`. Default: `20m`.
    #[serde(
        deserialize_with = "duration::deserialize",
        serialize_with = "duration::serialize"
    )]
    #[schemars(schema_with = "duration::schema")]
    pub idle_after: Duration,
    /// How long a dispatched agent has to open a pull request for its step before the
    /// attempt counts as failed and the next one starts. Default: `60m`.
    #[serde(
        deserialize_with = "duration::deserialize",
        serialize_with = "duration::serialize"
    )]
    #[schemars(schema_with = "duration::schema")]
    pub timeout: Duration,
}

impl Default for Agents {
    fn default() -> Self {
        Self {
            idle_after: Duration::from_secs(20 * 60),
            timeout: Duration::from_secs(60 * 60),
        }
    }
}
