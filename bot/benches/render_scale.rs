//! Render and evidence speed at scale: the mission panel for 100 to 5,000 (and 100,000) steps, a 200 KB plan comment, and `evaluate` over 5,000 observed runs.
//!
//! Usage: `cargo bench -p navin-bot --bench render_scale`

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use navin_domain::evidence::{evaluate, CheckObservation, CheckStatus, EvidencePolicy, RunKind};
use navin_domain::render::{
    mission_panel, plan_comment, PanelContext, PlanCommentInfo, PlanStatus, RepoRef,
};
use navin_ledger::model::{Actor, Ledger, Validation};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};
use navin_ledger::plan::{
    FileChange, HandoffBudgets, HandoffContract, Operation as FileOp, Plan, PlanDocument, Question,
    READ_ONLY_PERSONA,
};

fn ctx() -> Ctx {
    let now = Utc
        .with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .single()
        .unwrap_or_default();
    Ctx::new(now, Actor::Human("bench".into()))
}

fn applied(ledger: Option<&Ledger>, op: Operation) -> Ledger {
    match apply(ledger, &op, &ctx()) {
        Ok(Outcome::Applied(a)) => a.ledger,
        other => panic!("{} failed: {other:?}", op.name()),
    }
}

fn ledger(n: usize) -> Ledger {
    let steps = (0..n)
        .map(|i| NewTask {
            id: format!("S{i}"),
            title: format!("Migrate module {i} to the new config loader and update its tests"),
            depends_on: if i > 0 {
                vec![format!("S{}", i - 1)]
            } else {
                vec![]
            },
            validation: Validation::Test,
            ..NewTask::default()
        })
        .collect();
    let l = applied(
        None,
        Operation::Init(InitArgs {
            goal: "Migrate every module to the YAML config".into(),
            steps,
            ..InitArgs::default()
        }),
    );
    applied(Some(&l), Operation::Start { step: "S0".into() })
}

fn plan(files: usize) -> PlanDocument {
    let plan = Plan {
        title: "Load the config from YAML".into(),
        persona: READ_ONLY_PERSONA.into(),
        goal: "Load the config at start-up. Unknown keys fail with their name.".into(),
        architecture: "One workspace.".into(),
        capabilities: "Parses commands.".into(),
        data_flow: "Webhook -> engine -> ledger.".into(),
        target_state: "A Config struct.".into(),
        impact_isolation: "Only config changes.".into(),
        changes: (0..files)
            .map(|i| FileChange {
                path: format!("src/config/part_{i}.rs"),
                operation: FileOp::Edit,
                change: "Rewrite the parsing loop so errors carry the line number. ".repeat(2),
                rationale: "Typos must fail loudly.".into(),
                optional: false,
            })
            .collect(),
        new_dependencies: vec![],
        risks: vec!["One.".into(), "Two.".into(), "Three.".into()],
        next_steps: vec!["Write it.".into()],
        questions: vec![Question {
            question: "Keep INI?".into(),
            default: "No.".into(),
            answer: None,
        }],
        handoff: Some(HandoffContract {
            objective: "Config from YAML.".into(),
            completion_criteria: vec!["Tests pass.".into()],
            budgets: HandoffBudgets::default(),
            allowed_tools: vec![],
            scope: vec![],
            verification: vec!["cargo test".into()],
        }),
        stages: vec![],
    };
    PlanDocument::from_plan(&plan).unwrap_or_else(|e| panic!("bench plan invalid: {e}"))
}

/// Median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn main() {
    let panel_ctx = PanelContext::new(RepoRef::new("octo/widgets", "https://github.com"));
    println!("mission panel (median of 15 renders):");
    for n in [100, 1_000, 5_000, 100_000] {
        let l = ledger(n);
        let mut bytes = 0;
        let t = median(15, || bytes = mission_panel(&l, &panel_ctx).len());
        println!(
            "  {n:>7} steps: {:>8.2} ms, {bytes} bytes",
            t.as_secs_f64() * 1e3
        );
    }

    let doc = plan(1_600);
    let info = PlanCommentInfo {
        plan_id: "p-1".into(),
        source: "built-in planner".into(),
        status: PlanStatus::Pending { stale: None },
        diff: None,
        repo: Some(RepoRef::new("octo/widgets", "https://github.com")),
        run: None,
        owner_notes: Vec::new(),
    };
    let mut bytes = 0;
    let t = median(15, || bytes = plan_comment(&doc, &info).len());
    println!(
        "plan comment: {} KB plan text -> {bytes} bytes in {:.2} ms (median of 15)",
        doc.text().len() / 1024,
        t.as_secs_f64() * 1e3
    );

    let l = ledger(1);
    let mut task = l.board.tasks[0].as_ref().clone();
    task.links.head_sha = Some("abc".into());
    let start = ctx().now;
    let observations: Vec<CheckObservation> = (0..5_000u64)
        .map(|i| CheckObservation {
            id: i,
            kind: RunKind::CheckRun,
            name: format!("job-{}", i % 50),
            app_id: Some(15368),
            head_sha: if i % 3 == 0 {
                "old".into()
            } else {
                "abc".into()
            },
            status: CheckStatus::Completed,
            conclusion: Some("success".into()),
            started_at: Some(start + chrono::Duration::seconds(i as i64)),
            completed_at: Some(start + chrono::Duration::seconds(i as i64 + 300)),
            html_url: None,
            output: String::new(),
            annotations: 0,
        })
        .collect();
    let policy = EvidencePolicy::default();
    let mut green = false;
    let t = median(31, || {
        green = evaluate(&task, &observations, &policy, start).is_green()
    });
    println!(
        "evaluate: 5,000 runs, 50 names -> green={green} in {:.3} ms (median of 31)",
        t.as_secs_f64() * 1e3
    );
}
