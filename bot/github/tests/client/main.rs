//! navin-github's integration tests, one binary: the client against wiremock on loopback.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

mod app;
mod support;
mod token_mode;
