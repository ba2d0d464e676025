//! Navin's engine pieces: planner, configuration, GitHub adapter, durable delivery queue and webhook server.

pub mod config;
pub mod github;
pub mod planner;
pub mod queue;
pub mod server;
