//! Dashboard page weight and render speed: the missions page for 100 missions and a repository page with a 500-step graph, against JSON-encoding the same ledgers in the same run.
//!
//! Usage: `cargo bench -p navin-bot --bench dashboard_render`

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use navin_bot::dashboard::pages::missions::{self, MissionRow};
use navin_bot::dashboard::pages::repo::{self, GitHubLinks};
use navin_bot::dashboard::pages::Chrome;
use navin_engine::view::RepoView;
use navin_ledger::model::{Actor, Ledger, Validation};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};

fn ctx() -> Ctx {
    let now = Utc
        .with_ymd_and_hms(2026, 12, 1, 12, 0, 0)
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

/// `n` steps in a lattice: each depends on the one before it and on one four back, so
/// the graph has long chains and crossing edges, like a real migration plan.
fn ledger(n: usize) -> Ledger {
    let steps = (0..n)
        .map(|i| NewTask {
            id: format!("S{i}"),
            title: format!("Migrate module {i} to the new config loader"),
            depends_on: match i {
                0 => vec![],
                1..=3 => vec![format!("S{}", i - 1)],
                _ => vec![format!("S{}", i - 1), format!("S{}", i - 4)],
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

/// Reads each store's whole branch at its tip, as the missions page does per repository
/// once its clone is fresh (`Store::view` without a fetch): mission, board and plans.
fn read_all(stores: &[navin_ledger::store::Store]) -> usize {
    stores
        .iter()
        .map(|s| match s.view(false) {
            Ok(v) => v.plan_files.len() + usize::from(matches!(v.ledger, Ok(Some(_)))),
            Err(e) => panic!("view: {e}"),
        })
        .sum()
}

/// 100 bare repositories, each with a 12-step mission on its ledger branch, opened the
/// way the server opens its clones.
fn stores(dir: &std::path::Path) -> Vec<navin_ledger::store::Store> {
    use navin_ledger::store::{Store, StoreConfig};
    (0..100)
        .map(|i| {
            let path = dir.join(format!("r{i}.git"));
            git2::Repository::init_bare(&path).unwrap_or_else(|e| panic!("init: {e}"));
            let store =
                Store::open(&path, StoreConfig::default()).unwrap_or_else(|e| panic!("open: {e}"));
            let init = Operation::Init(InitArgs {
                goal: format!("Mission {i}"),
                steps: (0..12)
                    .map(|j| NewTask {
                        id: format!("S{j}"),
                        title: format!("Step {j}"),
                        validation: Validation::Test,
                        ..NewTask::default()
                    })
                    .collect(),
                ..InitArgs::default()
            });
            store
                .transact(&init, &ctx())
                .unwrap_or_else(|e| panic!("write: {e}"));
            store
        })
        .collect()
}

fn time<T>(rounds: u32, mut f: impl FnMut() -> T) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..rounds {
        let start = Instant::now();
        std::hint::black_box(f());
        best = best.min(start.elapsed());
    }
    best
}

fn main() {
    let chrome = Chrome {
        base: "",
        login: "octocat",
        csrf: "csrf-token-for-the-bench-000000000000000000",
        admin_somewhere: true,
    };
    let rows: Vec<MissionRow> = (0..100)
        .map(|i| MissionRow {
            full_name: format!("octo-org/service-{i:03}"),
            ledger: Ok(Some(ledger(12))),
            plans: 3,
            pending_plans: 1,
        })
        .collect();
    let big = RepoView {
        repository: "octo-org/monolith".into(),
        ledger_branch: "navin/ledger".into(),
        commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        ledger: Ok(Some(ledger(500))),
        trusted: None,
        plans: Vec::new(),
    };
    let links = GitHubLinks {
        repo_url: "https://github.com/octo-org/monolith".into(),
    };

    let missions_html = missions::render(&chrome, &rows, false).into_string();
    let repo_html = repo::render(&chrome, &big, &links, None, None).into_string();
    let css = include_str!("../src/dashboard/assets/dashboard.css").len();
    let js = include_str!("../src/dashboard/assets/dashboard.js").len();

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let stores = stores(dir.path());
    let rounds = 30;
    let t_read = time(rounds, || read_all(&stores));
    let t_missions = time(rounds, || {
        missions::render(&chrome, &rows, false).into_string()
    });
    let t_missions_json = time(rounds, || {
        rows.iter()
            .map(|r| match &r.ledger {
                Ok(Some(l)) => serde_json::to_string(&l.mission)
                    .map(|s| s.len())
                    .unwrap_or(0),
                _ => 0,
            })
            .sum::<usize>()
    });
    let t_repo = time(rounds, || {
        repo::render(&chrome, &big, &links, None, None).into_string()
    });
    let t_repo_json = time(rounds, || match &big.ledger {
        Ok(Some(l)) => {
            serde_json::to_string(&l.mission)
                .map(|s| s.len())
                .unwrap_or(0)
                + serde_json::to_string(&l.board.tasks)
                    .map(|s| s.len())
                    .unwrap_or(0)
        }
        _ => 0,
    });

    println!("dashboard_render (best of {rounds} rounds)");
    println!(
        "  first load: missions page {} B HTML + {css} B CSS + {js} B JS = {} B (no other request; assets cached for a year after)",
        missions_html.len(),
        missions_html.len() + css + js
    );
    println!(
        "  missions page, 100 missions x 12 steps: {:.2} ms; JSON-encoding the same missions: {:.2} ms; ratio {:.1}x",
        ms(t_missions),
        ms(t_missions_json),
        ratio(t_missions, t_missions_json)
    );
    println!(
        "  reading 100 fresh ledger clones (Store::view, no fetch), what the missions page does before rendering: {:.2} ms ({:.1}x the render)",
        ms(t_read),
        ratio(t_read, t_missions)
    );
    println!(
        "  repository page, 500-step graph (SVG + table): {:.2} ms, {} B; JSON-encoding that ledger: {:.2} ms; ratio {:.1}x",
        ms(t_repo),
        repo_html.len(),
        ms(t_repo_json),
        ratio(t_repo, t_repo_json)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
