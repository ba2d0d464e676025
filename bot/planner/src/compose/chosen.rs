//! The plan builder's picked changes, in a module of their own because the sections, stages and risks the builder calls read them too.

use navin_ledger::plan::FileChange;

use crate::detect::symbols::Symbol;

/// A proposed change with the ranking evidence that chose it.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub change: FileChange,
    /// Rank position (0-based) for files that came from the ranking.
    pub rank: Option<usize>,
    /// The definitions the request names in this file (for Target State and Risks).
    pub symbols: Vec<Symbol>,
}
