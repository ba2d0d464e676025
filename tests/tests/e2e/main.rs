//! End-to-end tests of the fake GitHub.
