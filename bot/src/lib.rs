//! The `navin` binary's library: the local CLI, the durable delivery queue and the webhook server; the engine, planner and GitHub client are their own crates.

pub mod cli;
#[cfg(feature = "github")]
pub mod config;
#[cfg(feature = "dashboard")]
pub mod dashboard;
pub mod local;
pub mod logging;
pub mod mcp;
pub mod questions;
#[cfg(feature = "github")]
pub mod queue;
pub mod seal_key;
#[cfg(feature = "github")]
pub mod server;
