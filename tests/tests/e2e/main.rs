//! End-to-end tests of the fake GitHub with the real octocrab client, the git CLI and the webhook DSL.

mod api_apps;
mod api_checks;
mod api_issues;
mod api_repos;
mod browser;
mod common;
mod conformance;
mod faults;
mod git_http;
mod oauth;
mod scenario;
mod webhooks;
