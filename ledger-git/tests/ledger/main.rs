//! navin-ledger's integration tests, one binary: DAG properties, the checked-in JSON Schemas, and the examples in docs/.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

mod campaign;
mod dag_props;
mod docs;
mod schema;
