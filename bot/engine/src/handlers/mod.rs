//! One file per handled webhook event: each turns its typed payload into a session and runs the features that event drives.

mod check_run_action;
mod ci_completed;
mod installation;
mod issue_comment;
mod issues;
mod pull_request;
mod pull_request_review;
mod sweep;
