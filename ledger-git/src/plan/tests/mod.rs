//! Tests of the plan document: rendering, parsing, validation, hashing, diffs and policies.

mod diff;
mod fixture;
mod golden;
mod hash;
mod merge;
mod merge_props;
mod parse_errors;
mod policy;
mod props;
mod record;
mod validate;
mod variations;
