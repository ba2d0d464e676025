//! The plan builder's picked changes and what choosing them reads, in a module of their own because the sections, stages, risks and docs steps read them too.

use navin_ledger::plan::FileChange;

use crate::detect::imports::Graph;
use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::detect::symbols::Symbol;
use crate::rank::intent::Intent;
use crate::rank::RankedFile;
use crate::request::Request;
use crate::PlannerOptions;

/// A proposed change with the ranking evidence that chose it.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub change: FileChange,
    /// Rank position (0-based) for files that came from the ranking.
    pub rank: Option<usize>,
    /// The definitions the request names in this file (for Target State and Risks).
    pub symbols: Vec<Symbol>,
}

/// What every step reads: the repository, the ranking and the request.
pub struct Inputs<'a> {
    pub scanned: &'a Scanned,
    pub map: &'a RepoMap,
    pub graph: &'a Graph,
    pub ranked: &'a [RankedFile],
    pub request: &'a Request,
    pub intent: &'a Intent,
    pub opts: &'a PlannerOptions,
}

impl Inputs<'_> {
    pub(crate) fn text_of(&self, path: &str) -> &str {
        self.scanned
            .index_of(path)
            .and_then(|i| self.scanned.files[i].text.as_deref())
            .unwrap_or_default()
    }
}
