//! Fake GitHub for end-to-end tests.
