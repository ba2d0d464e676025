//! Long property campaigns, ignored by default: the ledger codec on arbitrary and damaged bytes, the plan parser on arbitrary and damaged text.
//!
//! Run: `NAVIN_CAMPAIGN_CASES=20000 cargo test --release -p navin-ledger --test ledger -- --ignored campaign`.
//! A failing case is shrunk and its seed persisted next to this file
//! (`campaign.proptest-regressions`, committed), so every later run, campaign or not,
//! tries it first.

use chrono::{TimeZone, Utc};
use navin_ledger::model::{Actor, Validation};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};
use navin_ledger::plan::PlanDocument;
use proptest::prelude::*;

/// Cases per property: `NAVIN_CAMPAIGN_CASES`, else 10,000.
fn config() -> ProptestConfig {
    let cases = std::env::var("NAVIN_CAMPAIGN_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(10_000);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// A real ledger's two files, as the store writes them: a staged mission with evidence,
/// checkpoints and missing info, so every optional field is on disk.
fn encoded() -> (Vec<u8>, Vec<u8>) {
    let t0 = Utc
        .with_ymd_and_hms(2026, 12, 1, 12, 0, 0)
        .single()
        .expect("time");
    let ctx = Ctx::new(t0, Actor::Human("alice".into()));
    let step = |id: &str, deps: &[&str], stage: u32| NewTask {
        id: id.into(),
        title: format!("Stage {stage}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation: Validation::Test,
        commands: vec!["cargo test".into()],
        stage: Some(stage),
        destructive: (stage == 2).then(|| "deletes src/old.rs".into()),
        ..NewTask::default()
    };
    let init = Operation::Init(InitArgs {
        goal: "Ship it in stages".into(),
        missing_info: vec!["Which locale?".into()],
        steps: vec![step("S1", &[], 1), step("S2", &["S1"], 2)],
        ..InitArgs::default()
    });
    let Ok(Outcome::Applied(a)) = apply(None, &init, &ctx) else {
        panic!("init")
    };
    let start = Operation::Start { step: "S1".into() };
    let Ok(Outcome::Applied(a)) = apply(Some(&a.ledger), &start, &ctx) else {
        panic!("start")
    };
    navin_ledger::codec::encode(&a.ledger).expect("encode")
}

/// `bytes` with `flips` applied: each (position, byte) overwrites one byte.
fn damaged(bytes: &[u8], flips: &[(prop::sample::Index, u8)]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for (at, byte) in flips {
        let i = at.index(out.len());
        out[i] = *byte;
    }
    out
}

/// A valid plan (the golden plan of the renderer tests), for damage.
const PLAN: &str = include_str!("plan.md");

proptest! {
    #![proptest_config(config())]

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_codec_never_panics_on_arbitrary_bytes(
        mission in prop::collection::vec(any::<u8>(), 0..2048),
        board in prop::collection::vec(any::<u8>(), 0..2048),
    ) {
        let _ = navin_ledger::decode(&mission, &board);
    }

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_a_damaged_ledger_is_refused_or_reads_back_as_what_it_decodes_to(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        in_board in any::<bool>(),
    ) {
        let (mission, board) = encoded();
        let (mission, board) = if in_board {
            (mission.clone(), damaged(&board, &flips))
        } else {
            (damaged(&mission, &flips), board.clone())
        };
        if let Ok(ledger) = navin_ledger::decode(&mission, &board) {
            let (m2, b2) = navin_ledger::codec::encode(&ledger).expect("what decodes encodes");
            let again = navin_ledger::decode(&m2, &b2).expect("what it encodes decodes");
            prop_assert_eq!(again, ledger);
        }
    }

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_plan_parser_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = PlanDocument::parse(&text);
    }

    #[test]
    #[ignore = "long campaign: --ignored campaign"]
    fn campaign_plan_parser_on_a_damaged_plan_is_stable_in_what_it_accepts(
        cuts in prop::collection::vec((any::<prop::sample::Index>(), "[#`*\\-: \n0-9a-zA-Z]{0,12}"), 1..6),
    ) {
        let mut text = PLAN.to_owned();
        for (at, insert) in &cuts {
            let mut i = at.index(text.len() + 1);
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            text.insert_str(i, insert);
        }
        if let Ok(doc) = PlanDocument::parse(&text) {
            let again = PlanDocument::parse(doc.text()).expect("an accepted plan parses again");
            prop_assert_eq!(again.plan(), doc.plan());
        }
    }
}
