//! Fake GitHub, webhook tester and end-to-end helpers for Navin's tests.

pub mod conformance;
pub mod fake;
pub mod keys;
pub mod scenario;
pub mod webhook;

pub use fake::{FakeGitHub, Fault};
pub use keys::AppKey;
pub use scenario::Scenario;
pub use webhook::{Payload, WebhookSender};
