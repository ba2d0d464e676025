//! Navin's engine pieces: CLI, slash commands, the comment engine, planner, renderers, evidence policy, configuration, GitHub adapter, durable delivery queue and webhook server.

pub mod cli;
pub mod command;
pub mod config;
pub mod engine;
pub mod evidence;
pub mod github;
pub mod planner;
pub mod queue;
pub mod render;
pub mod server;
