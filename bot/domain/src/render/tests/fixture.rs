//! Ledgers built through the real operations, and valid plans, for the renderer tests.

use chrono::{DateTime, TimeZone, Utc};
use navin_ledger::model::{Actor, Evidence, EvidenceKind, Ledger, Validation};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};
use navin_ledger::plan::{
    FileChange, HandoffBudgets, HandoffContract, Operation as FileOp, Plan, PlanDocument, Question,
    READ_ONLY_PERSONA,
};

use crate::render::{PanelContext, PlanApproval, PlanCommentInfo, PlanStatus, RepoRef};

pub const HEAD: &str = "8f14e45fceea167a5a36dedd4bea2543a1b2c3d4";

pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .single()
        .expect("valid time")
}

pub fn ctx() -> PanelContext {
    PanelContext::new(RepoRef::new("octo/widgets", "https://github.com"))
}

pub fn run(ledger: Option<&Ledger>, op: Operation) -> Ledger {
    run_as(ledger, op, Actor::Human("alice".into()))
}

pub fn run_as(ledger: Option<&Ledger>, op: Operation, actor: Actor) -> Ledger {
    match apply(ledger, &op, &Ctx::new(t0(), actor)) {
        Ok(Outcome::Applied(a)) => a.ledger,
        other => panic!("{} was not applied: {other:?}", op.name()),
    }
}

pub fn task(id: &str, title: &str, deps: &[&str], validation: Validation) -> NewTask {
    NewTask {
        id: id.into(),
        title: title.into(),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation,
        ..NewTask::default()
    }
}

pub fn check_evidence(id: u64, name: &str, ok: bool, conclusion: &str) -> Evidence {
    let mut e = Evidence::run(
        EvidenceKind::CheckRun,
        ok,
        format!("check run {name} {conclusion}"),
    );
    e.check_run_id = Some(id);
    e.name = Some(name.into());
    e.url = Some(format!("https://github.com/octo/widgets/runs/{id}"));
    e.head_sha = Some(HEAD.into());
    e.conclusion = Some(conclusion.into());
    e.app_id = Some(15368);
    e
}

/// S1 done (green `test`), S2 in progress on PR #12 with a red `lint`, S3
/// waiting on S2, S4 ready.
pub fn small() -> Ledger {
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "Ship the YAML config loader".into(),
            steps: vec![
                task("S1", "Write the loader", &[], Validation::Test),
                task("S2", "Wire it into start-up", &["S1"], Validation::Test),
                task("S3", "Document the keys", &["S2"], Validation::None),
                task("S4", "Remove the INI reader", &[], Validation::Lint),
            ],
            ..InitArgs::default()
        }),
    );
    let l = run(Some(&l), Operation::Start { step: "S1".into() });
    let l = run(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(check_evidence(7, "test", true, "success")),
        },
    );
    let l = run(Some(&l), Operation::Start { step: "S2".into() });
    let l = run(
        Some(&l),
        Operation::Link {
            step: "S2".into(),
            pr: Some(12),
            head_sha: Some(HEAD.into()),
            branch: Some("navin/S2-startup".into()),
        },
    );
    run(
        Some(&l),
        Operation::RecordEvidence {
            step: "S2".into(),
            evidence: check_evidence(9, "lint", false, "failure"),
        },
    )
}

/// A valid plan with `files` proposed changes, each about `bytes_per_file` long.
pub fn plan(files: usize, bytes_per_file: usize) -> PlanDocument {
    let filler = "Rewrite the parsing loop so errors carry the line number. "
        .repeat(bytes_per_file / 58 + 1);
    let plan = Plan {
        title: "Load the config from YAML".into(),
        persona: READ_ONLY_PERSONA.into(),
        goal: "Load `.navin/config.yaml` at start-up. Unknown keys fail with their name. Ask @octocat if unsure."
            .into(),
        architecture: "One workspace.\n\n```text\n@not-a-mention stays in code\n```".into(),
        capabilities: "Parses commands and keeps the ledger.".into(),
        data_flow: "Webhook -> queue -> engine -> ledger branch.".into(),
        target_state: "A `Config` struct read once.".into(),
        impact_isolation: "Only the config module changes.".into(),
        changes: (0..files)
            .map(|i| FileChange {
                path: format!("bot/src/config/part_{i}.rs"),
                operation: FileOp::Edit,
                change: filler.trim().to_owned(),
                rationale: "Typos must fail loudly.".into(), optional: false,
            })
            .collect(),
        new_dependencies: vec![],
        risks: vec![
            "Existing INI configs stop loading.".into(),
            "YAML anchors allow huge documents.".into(),
            "Errors might echo secret values.".into(),
        ],
        next_steps: vec!["Write the loader and its tests.".into()],
        questions: vec![Question {
            question: "Keep INI for one release?".into(),
            default: "No.".into(),
            answer: None,
        }],
        handoff: Some(HandoffContract {
            objective: "Config is read from YAML and typos are rejected.".into(),
            completion_criteria: vec!["Loader tests pass.".into()],
            budgets: HandoffBudgets::default(),
            allowed_tools: vec!["read_file".into()],
            scope: vec!["bot/src/config/".into()],
            verification: vec!["cargo test -p navin-bot config".into()],
        }),
        stages: vec![],
    };
    PlanDocument::from_plan(&plan).expect("fixture plan is valid")
}

/// The plan comment's facts for `doc` approved by bob's review on `issue-7`.
pub fn approved_plan_info(doc: &PlanDocument) -> PlanCommentInfo {
    PlanCommentInfo {
        plan_id: "issue-7".into(),
        source: "built-in planner".into(),
        status: PlanStatus::Approved {
            approvals: vec![PlanApproval {
                approver: "bob".into(),
                plan_hash: doc.hash().into(),
                review_id: Some(81),
                at: t0(),
            }],
        },
        diff: None,
        repo: Some(RepoRef::new("octo/widgets", "https://github.com")),
        run: None,
        owner_notes: Vec::new(),
    }
}
