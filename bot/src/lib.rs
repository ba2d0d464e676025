//! Navin's engine pieces: CLI, slash commands, planner, configuration, GitHub adapter, durable delivery queue and webhook server.

pub mod cli;
pub mod command;
pub mod config;
pub mod github;
pub mod planner;
pub mod queue;
pub mod server;
