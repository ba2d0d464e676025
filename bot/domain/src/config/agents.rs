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
    /// What the next attempt does with a dispatched agent's red pull request once
    /// `idle_after` has passed: `start_over` closes it and works on a fresh
    /// `navin/<step>-a<n>-…` branch, told the failure and what the red attempt changed;
    /// `continue` pushes the fix to the same pull request. `auto` (the default): the
    /// agent workflow starts over (each run begins from a clean checkout with no memory
    /// of the last), Copilot continues its own pull request from a mention. A person's
    /// pull request is always continued and never closed by Navin.
    pub after_red: AfterRed,
}

/// `agents.after_red`: whether an agent's next attempt after red CI continues its pull
/// request or starts over on a new branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AfterRed {
    /// The agent workflow starts over; Copilot continues.
    #[default]
    Auto,
    /// Every agent continues its red pull request.
    Continue,
    /// Every agent starts over; Navin closes the red pull request.
    StartOver,
}

impl AfterRed {
    /// Whether an attempt by `agent` (as the ledger names it: `workflow`, `copilot`)
    /// that ended red is followed by a fresh start. People's attempts never are.
    pub fn starts_over(self, agent: &str) -> bool {
        match (self, agent) {
            (_, "workflow") => self != AfterRed::Continue,
            (AfterRed::StartOver, "copilot") => true,
            _ => false,
        }
    }
}

impl Default for Agents {
    fn default() -> Self {
        Self {
            idle_after: Duration::from_secs(20 * 60),
            timeout: Duration::from_secs(60 * 60),
            after_red: AfterRed::Auto,
        }
    }
}
