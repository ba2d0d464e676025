//! Recall of the built-in planner against real history: for each recent commit, plan its subject line
//! against the parent tree (read through git2, no checkout) and compare with the files the commit touched.
//!
//! Usage: `cargo bench -p navin-planner --bench planner_recall -- <git-dir-or-checkout>... [N] [--history=DEPTH] [--verbose] [--dump]`
//! (several repositories give one table row each plus a pooled row; `--dump` prints each plan as JSON).
//!
//! Recall@10 is reported for all touched files, non-test files, source files (not tests, docs,
//! changelogs or manifests) and files the commit added, each as found/touched over the commits
//! (pooled), plus the median of the per-commit recall over all touched files.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::time::Instant;

use navin_planner::{
    definitions, file_kind, plan_repository_with, FileKind, History, MemorySource, PlannerOptions,
    RepoSource,
};

const K: usize = 10;

/// One touched file of a commit.
struct Touched {
    path: String,
    added: bool,
}

/// Found/touched counts per file group, summed over commits.
#[derive(Default, Clone, Copy)]
struct Counts {
    found: usize,
    touched: usize,
}

impl Counts {
    fn add(&mut self, hit: bool) {
        self.touched += 1;
        self.found += usize::from(hit);
    }

    fn show(self) -> String {
        if self.touched == 0 {
            return format!("{:>15}", "-");
        }
        format!(
            "{:>5.3} ({:>3}/{:<3})",
            self.found as f64 / self.touched as f64,
            self.found,
            self.touched
        )
    }
}

/// What one repository (or all of them pooled) measured.
#[derive(Default, Clone)]
struct Tally {
    all: Counts,
    non_test: Counts,
    source: Counts,
    added: Counts,
    /// Per-commit recall over all touched files.
    recalls: Vec<f64>,
    hits: usize,
    invalid: usize,
    edits: usize,
    named_edits: usize,
    /// Source edits naming a definition whose named definition (any of them) the
    /// commit's diff touched: the change lands where the line says.
    landed: usize,
    /// Change lines that repeat the request word for word.
    quoted: usize,
    questions: usize,
    times: Vec<f64>,
}

impl Tally {
    fn merge(&mut self, o: &Tally) {
        for (a, b) in [
            (&mut self.all, o.all),
            (&mut self.non_test, o.non_test),
            (&mut self.source, o.source),
            (&mut self.added, o.added),
        ] {
            a.found += b.found;
            a.touched += b.touched;
        }
        self.recalls.extend(&o.recalls);
        self.times.extend(&o.times);
        self.hits += o.hits;
        self.invalid += o.invalid;
        self.edits += o.edits;
        self.named_edits += o.named_edits;
        self.landed += o.landed;
        self.quoted += o.quoted;
        self.questions += o.questions;
    }

    fn row(&self, name: &str) -> String {
        let m = self.recalls.len().max(1) as f64;
        format!(
            "{name:<22} {:>4} {} {} {} {} {:>6.3} {:>5.3} {:>7.3} {:>6}/{:<4} {} {:>6} {:>5.2}",
            self.recalls.len(),
            self.all.show(),
            self.non_test.show(),
            self.source.show(),
            self.added.show(),
            median(&self.recalls),
            self.hits as f64 / m,
            median(&self.times),
            self.named_edits,
            self.edits,
            Counts {
                found: self.landed,
                touched: self.named_edits,
            }
            .show(),
            self.quoted,
            self.questions as f64 / m,
        )
    }
}

fn header() -> String {
    format!(
        "{:<22} {:>4} {:>15} {:>15} {:>15} {:>15} {:>6} {:>5} {:>7} {:>11} {:>15} {:>6} {:>5}",
        "repository",
        "n",
        "all",
        "non-test",
        "source",
        "added",
        "median",
        "hit",
        "plan_s",
        "named/edits",
        "def touched",
        "quoted",
        "q/pl"
    )
}

fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn touched_files(
    repo: &git2::Repository,
    commit: &git2::Commit<'_>,
    parent: &git2::Commit<'_>,
) -> Result<Vec<Touched>, git2::Error> {
    let diff = repo.diff_tree_to_tree(Some(&parent.tree()?), Some(&commit.tree()?), None)?;
    let mut out: Vec<Touched> = Vec::new();
    let mut seen = BTreeSet::new();
    for d in diff.deltas() {
        // Files the commit modified or deleted existed in the parent tree; added
        // files are counted too, since a plan can propose creating them.
        if let Some(p) = d.new_file().path().or_else(|| d.old_file().path()) {
            let path = p.to_string_lossy().replace('\\', "/");
            if seen.insert(path.clone()) {
                out.push(Touched {
                    path,
                    added: d.status() == git2::Delta::Added,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Per file the commit changed, the parent's line ranges its hunks replace (first
/// line, last line; an insertion is the line it follows, as a one-line range).
fn old_hunks(
    repo: &git2::Repository,
    commit: &git2::Commit<'_>,
    parent: &git2::Commit<'_>,
) -> Result<BTreeMap<String, Vec<(u32, u32)>>, git2::Error> {
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(0);
    let diff = repo.diff_tree_to_tree(
        Some(&parent.tree()?),
        Some(&commit.tree()?),
        Some(&mut opts),
    )?;
    let mut out: BTreeMap<String, Vec<(u32, u32)>> = BTreeMap::new();
    diff.foreach(
        &mut |_, _| true,
        None,
        Some(&mut |d, h| {
            if let Some(p) = d.old_file().path() {
                let start = h.old_start().max(1);
                let end = start + h.old_lines().max(1) - 1;
                out.entry(p.to_string_lossy().replace('\\', "/"))
                    .or_default()
                    .push((start, end));
            }
            true
        }),
        None,
    )?;
    Ok(out)
}

/// The lines of the definitions a Change line names (`` `name` (fn, line 83) ``).
fn named_lines(change: &str) -> Vec<u32> {
    change
        .match_indices(", line ")
        .filter_map(|(i, m)| {
            let digits: String = change[i + m.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect()
}

/// The last line of the definition starting at `line`: the line before the next
/// definition that starts after it, or the end of the file.
fn definition_end(defs: &[navin_planner::Symbol], line: u32) -> u32 {
    defs.iter()
        .map(|d| d.line)
        .filter(|&l| l > line)
        .min()
        .map_or(u32::MAX, |l| l - 1)
}

fn touches(hunks: &[(u32, u32)], start: u32, end: u32) -> bool {
    hunks.iter().any(|&(a, b)| a <= end && b >= start)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let dump = args.iter().any(|a| a == "--dump");
    // `--history=N`: plan with the N commits before each planned commit.
    let depth: usize = args
        .iter()
        .find_map(|a| a.strip_prefix("--history=")?.parse().ok())
        .unwrap_or(0);
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let n: usize = positional.iter().find_map(|s| s.parse().ok()).unwrap_or(30);
    let paths: Vec<&String> = positional
        .iter()
        .copied()
        .filter(|s| s.parse::<usize>().is_err())
        .collect();
    if paths.is_empty() {
        eprintln!("usage: planner_recall <git-dir-or-checkout>... [N] [--history=DEPTH] [--verbose] [--dump]");
        return ExitCode::from(2);
    }
    let mut rows: Vec<(String, Tally)> = Vec::new();
    for path in paths {
        let repo = match git2::Repository::open(path.as_str()) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("cannot open {path}: {}", e.message());
                return ExitCode::from(1);
            }
        };
        println!("== {path}");
        match run(&repo, n, depth, verbose, dump) {
            Ok(t) => rows.push((repo_name(path), t)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let mut pooled = Tally::default();
    println!("\nrecall@{K} as rate (found/touched); median = per-commit recall over all files");
    println!("{}", header());
    for (name, t) in &rows {
        println!("{}", t.row(name));
        pooled.merge(t);
    }
    if rows.len() > 1 {
        println!("{}", pooled.row("pooled"));
    }
    if pooled.invalid > 0 {
        println!("invalid plans: {}", pooled.invalid);
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// `/work/.mirror/pallets+flask/repo` gives `pallets+flask`.
fn repo_name(path: &str) -> String {
    let parts: Vec<&str> = path
        .trim_end_matches('/')
        .split('/')
        .filter(|p| !matches!(*p, "repo" | ".git" | ""))
        .collect();
    parts.last().map_or(path, |p| p).to_string()
}

fn run(
    repo: &git2::Repository,
    n: usize,
    depth: usize,
    verbose: bool,
    dump: bool,
) -> Result<Tally, Box<dyn std::error::Error>> {
    let mut walk = repo.revwalk()?;
    walk.push_head()?;
    walk.set_sorting(git2::Sort::TIME | git2::Sort::TOPOLOGICAL)?;
    let opts = PlannerOptions::default();
    let mut t = Tally::default();
    for oid in walk {
        if t.recalls.len() >= n {
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
        let hunks = old_hunks(repo, &commit, &parent)?;
        // History as a checkout fetched `depth` commits deep would have it: the
        // parent and what came before, never the commit being planned.
        let history = (depth > 0)
            .then(|| History::from_git(repo, parent.id(), depth))
            .transpose()?;
        let t0 = Instant::now();
        let out = plan_repository_with(&source, &subject, &opts, history.as_ref())?;
        t.times.push(t0.elapsed().as_secs_f64());
        // Every plan must pass the one validator, whatever the request.
        if let Err(e) = navin_ledger::plan::PlanDocument::from_plan(&out.plan) {
            t.invalid += 1;
            println!("INVALID {:.8} {subject}: {e}", commit.id().to_string());
        }
        // How specific the text is: source edits whose Change line names a
        // definition (`` `history` (fn, line 9) ``), Change lines that quote the
        // request back, and how many questions the plan asks.
        let quoted_head: String = subject.chars().take(40).collect();
        for c in &out.plan.changes {
            let source_edit = c.operation == navin_ledger::plan::Operation::Edit
                && file_kind(&c.path) == FileKind::Source;
            if source_edit {
                t.edits += 1;
                let lines = named_lines(&c.change);
                if !lines.is_empty() {
                    t.named_edits += 1;
                    let spans = hunks.get(&c.path).map(Vec::as_slice).unwrap_or_default();
                    let text = source
                        .read(&c.path, u64::MAX)
                        .ok()
                        .flatten()
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                    let defs = definitions(&c.path, &text);
                    if lines
                        .iter()
                        .any(|&l| touches(spans, l, definition_end(&defs, l)))
                    {
                        t.landed += 1;
                    }
                }
            }
            if subject.split_whitespace().count() >= 3 && c.change.contains(quoted_head.trim()) {
                t.quoted += 1;
            }
        }
        t.questions += out.plan.questions.len();
        let planned: Vec<String> = out.planned_files().into_iter().take(K).collect();
        let mut found = 0usize;
        for f in &touched {
            let hit = planned.contains(&f.path);
            found += usize::from(hit);
            let kind = file_kind(&f.path);
            t.all.add(hit);
            if kind != FileKind::Test {
                t.non_test.add(hit);
            }
            if kind == FileKind::Source {
                t.source.add(hit);
            }
            if f.added {
                t.added.add(hit);
            }
        }
        let recall = found as f64 / touched.len() as f64;
        t.recalls.push(recall);
        t.hits += usize::from(found > 0);
        println!(
            "{} {:>4.0}% {}/{} {:.8} {}",
            if found > 0 { "HIT " } else { "MISS" },
            recall * 100.0,
            found,
            touched.len(),
            commit.id().to_string(),
            subject
        );
        if dump {
            println!("{}", serde_json::to_string_pretty(&out.plan)?);
        }
        if verbose {
            let names: Vec<String> = touched
                .iter()
                .map(|f| {
                    let mark = if planned.contains(&f.path) { "+" } else { "" };
                    let added = if f.added { " (added)" } else { "" };
                    format!("{mark}{}{added}", f.path)
                })
                .collect();
            println!("      touched: {}", names.join(" "));
            println!("      planned: {}", planned.join(" "));
        }
    }
    if t.recalls.is_empty() {
        println!("no non-merge commits with a parent found");
    }
    Ok(t)
}
