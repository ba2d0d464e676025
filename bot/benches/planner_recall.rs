//! Recall of the built-in planner against real history: for each recent commit, plan its subject line
//! against the parent tree (read through git2, no checkout) and compare with the files the commit touched.
//!
//! Usage: `cargo bench -p navin-bot --bench planner_recall -- <git-dir-or-checkout> [N] [--verbose] [--dump]`
//! (`--dump` prints each plan as JSON).

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::Instant;

use navin_planner::{plan_repository, MemorySource, PlannerOptions};

const K: usize = 10;

struct Outcome {
    recall: f64,
    hit: bool,
}

fn touched_files(
    repo: &git2::Repository,
    commit: &git2::Commit<'_>,
    parent: &git2::Commit<'_>,
) -> Result<Vec<String>, git2::Error> {
    let diff = repo.diff_tree_to_tree(Some(&parent.tree()?), Some(&commit.tree()?), None)?;
    let mut out = BTreeSet::new();
    for d in diff.deltas() {
        // Files the commit modified or deleted existed in the parent tree; added
        // files are counted too, since a plan can propose creating them.
        if let Some(p) = d.new_file().path().or_else(|| d.old_file().path()) {
            out.insert(p.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(out.into_iter().collect())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let dump = args.iter().any(|a| a == "--dump");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(path) = positional.first() else {
        eprintln!("usage: planner_recall <git-dir-or-checkout> [N] [--verbose]");
        return ExitCode::from(2);
    };
    let n: usize = positional.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let repo = match git2::Repository::open(path.as_str()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot open {path}: {}", e.message());
            return ExitCode::from(1);
        }
    };
    match run(&repo, n, verbose, dump) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(
    repo: &git2::Repository,
    n: usize,
    verbose: bool,
    dump: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut walk = repo.revwalk()?;
    walk.push_head()?;
    walk.set_sorting(git2::Sort::TIME | git2::Sort::TOPOLOGICAL)?;
    let opts = PlannerOptions::default();
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut total_touched = 0usize;
    let mut total_found = 0usize;
    let mut times = Vec::new();
    let mut invalid = 0usize;
    let (mut edits, mut named_edits, mut questions) = (0usize, 0usize, 0usize);
    for oid in walk {
        if outcomes.len() >= n {
            break;
        }
        let commit = repo.find_commit(oid?)?;
        if commit.parent_count() != 1 {
            continue;
        }
        let parent = commit.parent(0)?;
        let subject = commit
            .summary()
            .ok()
            .flatten()
            .unwrap_or("")
            .trim()
            .to_string();
        if subject.is_empty() {
            continue;
        }
        let touched = touched_files(repo, &commit, &parent)?;
        if touched.is_empty() {
            continue;
        }
        let tree = parent.tree()?;
        let source = MemorySource::from_git_tree(repo, &tree)?;
        let t0 = Instant::now();
        let out = plan_repository(&source, &subject, &opts)?;
        times.push(t0.elapsed().as_secs_f64());
        // Every plan must pass the one validator, whatever the request.
        if let Err(e) = navin_ledger::plan::PlanDocument::from_plan(&out.plan) {
            invalid += 1;
            println!("INVALID {:.8} {subject}: {e}", commit.id().to_string());
        }
        // How specific the text is: source edits whose Change line names a
        // definition, and how many questions the plan asks.
        for c in &out.plan.changes {
            let source_edit = c.operation == navin_ledger::plan::Operation::Edit
                && !c.change.starts_with("Extend these tests")
                && !c.change.starts_with("Adapt to");
            if source_edit {
                edits += 1;
                if c.change.starts_with("Change `") {
                    named_edits += 1;
                }
            }
        }
        questions += out.plan.questions.len();
        let planned: Vec<String> = out.planned_files().into_iter().take(K).collect();
        let found: Vec<&String> = touched.iter().filter(|t| planned.contains(t)).collect();
        let recall = found.len() as f64 / touched.len() as f64;
        total_touched += touched.len();
        total_found += found.len();
        let hit = !found.is_empty();
        println!(
            "{} {:>4.0}% {}/{} {:.8} {}",
            if hit { "HIT " } else { "MISS" },
            recall * 100.0,
            found.len(),
            touched.len(),
            commit.id().to_string(),
            subject
        );
        if dump {
            println!("{}", serde_json::to_string_pretty(&out.plan)?);
        }
        if verbose {
            println!("      touched: {}", touched.join(" "));
            println!("      planned: {}", planned.join(" "));
        }
        outcomes.push(Outcome { recall, hit });
    }
    if outcomes.is_empty() {
        println!("no non-merge commits with a parent found");
        return Ok(());
    }
    let m = outcomes.len() as f64;
    let mean_recall = outcomes.iter().map(|o| o.recall).sum::<f64>() / m;
    let hits = outcomes.iter().filter(|o| o.hit).count();
    times.sort_by(f64::total_cmp);
    println!(
        "source edits naming a definition: {named_edits}/{edits}; questions per plan: {:.2}",
        questions as f64 / m
    );
    println!(
        "commits={} invalid_plans={invalid} recall@{K}={:.3} (mean per commit) micro_recall@{K}={:.3} hit_rate={:.3} median_plan_s={:.3}",
        outcomes.len(),
        mean_recall,
        total_found as f64 / total_touched.max(1) as f64,
        hits as f64 / m,
        times[times.len() / 2]
    );
    Ok(())
}
