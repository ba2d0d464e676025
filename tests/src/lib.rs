//! Fake GitHub, webhook tester and end-to-end helpers for Navin's tests.

pub mod browser;
pub mod conformance;
pub mod disk;
pub mod fake;
pub mod hello;
pub mod keys;
pub mod llm;
pub mod postgres;
pub mod scenario;
pub mod webhook;
pub mod workflow;

pub use fake::{FakeGitHub, Fault};
pub use keys::AppKey;
pub use scenario::Scenario;
pub use webhook::{Payload, WebhookSender};

/// A plain HTTP client for talking to loopback servers. rustls needs one process-wide
/// crypto provider; the workspace's TLS stack is ring (octocrab's), installed here so a
/// client builds whichever reqwest features the build unified.
pub fn http_client() -> reqwest::Client {
    http_client_builder()
        .build()
        .unwrap_or_else(|e| panic!("http client: {e}"))
}

/// `http_client`'s builder, for a client that must differ (no redirects followed, to see
/// where a sign-in flow sends the browser).
pub fn http_client_builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}
