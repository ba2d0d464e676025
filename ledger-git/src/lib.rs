//! Navin's domain: mission ledger, task board and plan documents, plus the git2 store for the ledger branch.

pub mod plan;
