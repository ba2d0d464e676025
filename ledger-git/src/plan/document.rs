//! The validated plan: the only form in which a plan can be shown, stored or approved.

use super::error::PlanError;
use super::hash::content_hash;
use super::model::Plan;
use super::{parse, render, validate};
use serde::{Deserialize, Serialize};

/// A plan that passed every rule, with its canonical markdown and that
/// text's content hash. It can only be built by [`PlanDocument::parse`] or
/// [`PlanDocument::from_plan`] (and by deserializing, which parses), so any
/// function taking a `PlanDocument` knows the plan is valid.
///
/// The text is always [`render`] of the plan, whatever spelling the input
/// used, so the hash depends on the plan's content rather than on bullet
/// style or spacing. It serializes as that markdown text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct PlanDocument {
    plan: Plan,
    text: String,
    hash: String,
}

impl PlanDocument {
    /// Parses markdown (from a person, a model or a plan file).
    pub fn parse(text: &str) -> Result<Self, PlanError> {
        parse(text).map(Self::canonical)
    }

    /// Validates a plan built in code, then normalises it the way the text
    /// round trip would (trimmed items, collapsed blank lines), so the stored
    /// plan is exactly what reading the stored text gives back.
    pub fn from_plan(plan: &Plan) -> Result<Self, PlanError> {
        validate(plan)?;
        parse(&render(plan)).map(Self::canonical)
    }

    fn canonical(plan: Plan) -> Self {
        let text = render(&plan);
        let hash = content_hash(&text);
        Self { plan, text, hash }
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The canonical markdown, as [`render`] writes it.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// `sha256:<hex>` of [`Self::text`], as [`content_hash`] computes it.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    pub fn into_plan(self) -> Plan {
        self.plan
    }
}

impl From<PlanDocument> for String {
    fn from(doc: PlanDocument) -> Self {
        doc.text
    }
}

impl TryFrom<String> for PlanDocument {
    type Error = PlanError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        Self::parse(&text)
    }
}
