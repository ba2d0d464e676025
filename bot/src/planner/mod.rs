//! The built-in read-only planner.
