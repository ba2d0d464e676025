//! Tests of the plan document: rendering, parsing, validation, hashing, diffs and policies.

mod diff;
mod fixture;
mod golden;
mod hash;
mod parse_errors;
mod policy;
mod props;
mod validate;
mod variations;
