//! One file per handled webhook event: each turns its typed payload into a repository context and runs the features that event drives.

pub(crate) mod check_run_action;
pub(crate) mod ci_completed;
pub(crate) mod installation;
pub(crate) mod issue_comment;
pub(crate) mod issues;
pub(crate) mod pull_request;
pub(crate) mod pull_request_review;
pub(crate) mod sweep;
