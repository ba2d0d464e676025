//! Fake GitHub, webhook tester and end-to-end helpers for Navin's tests.

pub mod fake;
pub mod keys;

pub use fake::{FakeGitHub, Fault};
pub use keys::AppKey;
