//! Property tests of the merge: an untouched side never wins over an edit, edits to different parts always combine, a conflict keeps every text it was given.

use super::props::plan;
use crate::plan::render::part;
use crate::plan::*;
use proptest::collection::vec;
use proptest::prelude::*;

/// The parts that no rule ties to another part, so any combination of them is valid.
const FREE_PARTS: [Section; 13] = [
    Section::Title,
    Section::SystemPersona,
    Section::Goal,
    Section::RepositoryArchitecture,
    Section::FunctionalCapabilities,
    Section::DataFlow,
    Section::TargetState,
    Section::ImpactIsolation,
    Section::NewDependencies,
    Section::Risks,
    Section::ActionableNextSteps,
    Section::RisksAndAssumptions,
    Section::OptionalGoalHandoffContract,
];

/// `plan` with part `section` taken from `from`.
fn take(plan: &mut Plan, from: &Plan, section: Section) {
    match section {
        Section::Title => plan.title.clone_from(&from.title),
        Section::SystemPersona => plan.persona.clone_from(&from.persona),
        Section::Goal => plan.goal.clone_from(&from.goal),
        Section::RepositoryArchitecture => plan.architecture.clone_from(&from.architecture),
        Section::FunctionalCapabilities => plan.capabilities.clone_from(&from.capabilities),
        Section::DataFlow => plan.data_flow.clone_from(&from.data_flow),
        Section::TargetState => plan.target_state.clone_from(&from.target_state),
        Section::ImpactIsolation => plan.impact_isolation.clone_from(&from.impact_isolation),
        Section::NewDependencies => plan.new_dependencies.clone_from(&from.new_dependencies),
        Section::Risks => plan.risks.clone_from(&from.risks),
        Section::ActionableNextSteps => plan.next_steps.clone_from(&from.next_steps),
        Section::RisksAndAssumptions => plan.questions.clone_from(&from.questions),
        Section::OptionalGoalHandoffContract => plan.handoff.clone_from(&from.handoff),
        Section::ProposedChanges | Section::Stages => {
            unreachable!("tied parts are not swapped")
        }
    }
}

fn doc(plan: &Plan) -> Result<PlanDocument, TestCaseError> {
    PlanDocument::from_plan(plan).map_err(|e| TestCaseError::fail(e.to_string()))
}

fn text(doc: &PlanDocument, section: Section) -> String {
    part(doc.plan(), section).unwrap_or_default()
}

/// Base, ours and theirs: ours takes the parts marked 1 or 3 from `a`, theirs the parts
/// marked 2 or 3 from `b` (3: both edit the part).
fn edits(
    base: &Plan,
    a: &Plan,
    b: &Plan,
    who: &[u8],
) -> Result<(PlanDocument, PlanDocument, PlanDocument), TestCaseError> {
    let (mut ours, mut theirs) = (base.clone(), base.clone());
    for (section, who) in FREE_PARTS.iter().zip(who) {
        if who & 1 == 1 {
            take(&mut ours, a, *section);
        }
        if who & 2 == 2 {
            take(&mut theirs, b, *section);
        }
    }
    Ok((doc(base)?, doc(&ours)?, doc(&theirs)?))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn an_untouched_side_or_the_same_edit_gives_the_edit(base in plan(), x in plan()) {
        let (base, x) = (doc(&base)?, doc(&x)?);
        for (ours, theirs) in [(&x, &base), (&base, &x), (&x, &x)] {
            match merge(&base, ours, theirs) {
                MergeOutcome::Merged { document, merged_sections } => {
                    prop_assert_eq!(&*document, &x);
                    prop_assert!(merged_sections.is_empty());
                }
                other => prop_assert!(false, "expected the edit, got {:?}", other),
            }
        }
    }

    #[test]
    fn edits_to_disjoint_parts_always_merge_and_keep_both(
        base in plan(),
        a in plan(),
        b in plan(),
        sides in vec(0u8..3, FREE_PARTS.len()),
    ) {
        let (base_doc, ours, theirs) = edits(&base, &a, &b, &sides)?;
        let MergeOutcome::Merged { document, merged_sections } = merge(&base_doc, &ours, &theirs) else {
            return Err(TestCaseError::fail("disjoint edits did not merge"));
        };
        prop_assert!(merged_sections.is_empty());
        for (section, side) in FREE_PARTS.iter().zip(&sides) {
            let expected = match side {
                1 => text(&ours, *section),
                2 => text(&theirs, *section),
                _ => text(&base_doc, *section),
            };
            prop_assert_eq!(text(&document, *section), expected, "{}", section);
        }
        for section in [Section::ProposedChanges, Section::Stages] {
            prop_assert_eq!(text(&document, section), text(&base_doc, section));
        }
    }

    #[test]
    fn a_conflict_keeps_every_text_it_was_given(
        base in plan(),
        a in plan(),
        b in plan(),
        sides in vec(0u8..4, FREE_PARTS.len()),
    ) {
        let (base_doc, ours, theirs) = edits(&base, &a, &b, &sides)?;
        let outcome = merge(&base_doc, &ours, &theirs);
        let MergeOutcome::Conflict { conflicts, invalid, .. } = outcome else {
            return Ok(());
        };
        prop_assert!(!conflicts.is_empty());
        for c in &conflicts {
            prop_assert_eq!(&c.base, &text(&base_doc, c.section));
            prop_assert_eq!(&c.ours, &text(&ours, c.section));
            prop_assert_eq!(&c.theirs, &text(&theirs, c.section));
            prop_assert_ne!(&c.ours, &c.theirs);
        }
        let listed: Vec<Section> = conflicts.iter().map(|c| c.section).collect();
        for section in std::iter::once(Section::Title).chain(Section::ORDER) {
            let (o, t, b) = (text(&ours, section), text(&theirs, section), text(&base_doc, section));
            let expected = match invalid {
                // Overlapping edits: exactly the parts that do not merge line by line.
                None => o != b && t != b && o != t && diffy::merge(&b, &o, &t).is_err(),
                // A combination the parser refuses: every part the sides disagree on.
                Some(_) => o != t,
            };
            prop_assert_eq!(listed.contains(&section), expected, "{}", section);
        }
    }
}
