//! Section-aware three-way merge of plan documents: concurrent edits to different parts both land, edits to the same part are merged line by line when they do not overlap.
//!
//! A plan is compared part by part: the title and each `##` section of
//! [`Section::ORDER`], each as the renderer writes it ([`super::render`]), so the
//! spelling an editor used never shows up as a change. For each part:
//!
//! - unchanged on one side: the other side's text;
//! - changed identically on both: that text;
//! - changed differently on both: a line-based three-way merge of the part's text
//!   (`diffy`); when the changes overlap, the part is a [`SectionConflict`].
//!
//! The combined text is read back by the one parser ([`PlanDocument::parse`]). Rules
//! span parts (a stage may only list files of Proposed Changes, 3 to 5 risks), so two
//! edits that are each valid can combine into a plan that is not. Such a merge is a
//! conflict, never an error: it lists every part either side changed, with the
//! parser's problem in `invalid`, so the person saving sees what each side did and
//! why they do not fit together. Nothing is ever silently dropped: a conflict carries
//! the base, ours and theirs text of each part it lists.

use serde::{Deserialize, Serialize};

use super::document::PlanDocument;
use super::error::PlanError;
use super::render::{assemble, part};
use super::section::Section;

/// What merging two edits of one base plan gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// Both edits fit together: the combined plan, valid.
    Merged {
        /// Boxed: a plan is large beside a list of conflicts.
        document: Box<PlanDocument>,
        /// Parts both sides changed differently, combined line by line: the ones a
        /// person may want to read again. Empty when the edits touched different parts
        /// (or made the same change).
        merged_sections: Vec<Section>,
    },
    /// The edits do not fit together; nothing was combined.
    Conflict {
        /// The parts to resolve, in document order.
        conflicts: Vec<SectionConflict>,
        /// When every part merged but the combined plan breaks a rule that spans parts:
        /// the parser's first problem with it. `None` for overlapping edits of a part.
        invalid: Option<PlanError>,
        /// A text to resolve from: every part as merged, and each conflicting part as
        /// `theirs` has it (the saver's version is in `conflicts`). Not always a valid
        /// plan (see `invalid`).
        draft: String,
    },
}

/// One part both sides changed in ways that do not combine: its text in the base both
/// edits started from, in ours (the edit being saved) and in theirs (the text stored
/// meanwhile), each as the renderer writes it (`""` for absent stages).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionConflict {
    pub section: Section,
    pub base: String,
    pub ours: String,
    pub theirs: String,
}

/// Merges `ours` (the edit being saved) with `theirs` (the text stored since), both
/// edits of `base`. Pure: the same three plans always give the same outcome.
pub fn merge(base: &PlanDocument, ours: &PlanDocument, theirs: &PlanDocument) -> MergeOutcome {
    let mut combined: Vec<(Section, String)> = Vec::with_capacity(Section::ORDER.len() + 1);
    let mut merged_sections = Vec::new();
    let mut conflicts = Vec::new();
    let mut changed = Vec::new();
    for section in std::iter::once(Section::Title).chain(Section::ORDER) {
        let texts = Texts {
            base: part(base.plan(), section).unwrap_or_default(),
            ours: part(ours.plan(), section).unwrap_or_default(),
            theirs: part(theirs.plan(), section).unwrap_or_default(),
        };
        let ours_changed = texts.ours != texts.base;
        let theirs_changed = texts.theirs != texts.base;
        let text = if !ours_changed {
            texts.theirs.clone()
        } else if !theirs_changed || texts.ours == texts.theirs {
            texts.ours.clone()
        } else {
            match diffy::merge(&texts.base, &texts.ours, &texts.theirs) {
                Ok(text) => {
                    merged_sections.push(section);
                    text
                }
                Err(_) => {
                    conflicts.push(texts.conflict(section));
                    texts.theirs.clone()
                }
            }
        };
        if (ours_changed || theirs_changed) && texts.ours != texts.theirs {
            changed.push(texts.conflict(section));
        }
        if !text.is_empty() {
            combined.push((section, text));
        }
    }
    let text = assemble(combined.iter().map(|(s, t)| (*s, t.as_str())));
    if !conflicts.is_empty() {
        return MergeOutcome::Conflict {
            conflicts,
            invalid: None,
            draft: text,
        };
    }
    match PlanDocument::parse(&text) {
        Ok(document) => MergeOutcome::Merged {
            document: Box::new(document),
            merged_sections,
        },
        Err(problem) => MergeOutcome::Conflict {
            conflicts: changed,
            invalid: Some(problem),
            draft: text,
        },
    }
}

/// One part's text in each of the three plans.
struct Texts {
    base: String,
    ours: String,
    theirs: String,
}

impl Texts {
    fn conflict(&self, section: Section) -> SectionConflict {
        SectionConflict {
            section,
            base: self.base.clone(),
            ours: self.ours.clone(),
            theirs: self.theirs.clone(),
        }
    }
}
