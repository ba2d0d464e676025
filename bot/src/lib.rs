//! Navin's engine: planner, CLI, and (later) the GitHub adapter and webhook server.

pub mod config;
pub mod github;
pub mod planner;
pub mod queue;
pub mod server;
