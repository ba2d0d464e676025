//! The `navin` binary's library: the local CLI, the durable delivery queue and the webhook server; the engine, planner and GitHub client are their own crates.

pub mod cli;
pub mod config;
#[cfg(feature = "dashboard")]
pub mod dashboard;
pub mod local;
pub mod logging;
pub mod mcp;
pub mod questions;
pub mod queue;
pub mod server;
