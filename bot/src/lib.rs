//! Navin's engine: planner, CLI, and (later) the GitHub adapter and webhook server.

pub mod cli;
pub mod evidence;
pub mod planner;
pub mod render;
