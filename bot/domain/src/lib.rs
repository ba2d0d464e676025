//! Navin's pure decisions and text, shared by the engine (GitHub), the Action and the local CLI: what a repository's `.github/navin.yml` says, what a comment commands, what an event carries, what CI proves, what the rules allow, and how each reply reads.
//!
//! Nothing here talks to GitHub: the engine reads and writes through its client and
//! passes what it read in, with `now` as an argument where time matters. Kept apart so
//! a CLI that never reaches GitHub builds without the HTTP stack.

pub mod check;
pub mod command;
pub mod config;
pub mod event;
pub mod evidence;
pub mod render;
pub mod rules;
pub mod sweeps;
