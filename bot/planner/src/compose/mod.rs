//! Composition: turning the ranked files into the plan's changes, sections, stages, risks and questions.

pub(crate) mod analogy;
pub(crate) mod build;
pub(crate) mod changes;
pub(crate) mod chosen;
pub(crate) mod concept;
pub(crate) mod docs;
pub(crate) mod floor;
pub(crate) mod named_new;
pub(crate) mod questions;
pub(crate) mod risks;
pub(crate) mod sections;
pub(crate) mod stages;
pub(crate) mod targets;
pub(crate) mod test_place;
pub(crate) mod wording;

#[cfg(test)]
mod tests_new;
#[cfg(test)]
mod tests_plan;
#[cfg(test)]
mod tests_readonly;
#[cfg(test)]
mod tests_support;
#[cfg(test)]
mod tests_targets;
