//! Tests of the plan document: rendering, parsing, validation, hashing, diffs and policies.

mod fixture;
mod golden;
mod hash;
mod parse_errors;
mod validate;
mod variations;
