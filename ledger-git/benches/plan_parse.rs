//! Parse, render and hash time of plan documents of 10k, 100k and 1M lines, per line, to show the cost stays linear.

use navin_ledger::plan::{
    content_hash, parse, render, FileChange, HandoffBudgets, HandoffContract, Operation, Plan,
    Question, Stage, READ_ONLY_PERSONA,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Free text with prose, lists and a fenced block holding `#` lines.
fn free_text(lines: usize, seed: usize) -> String {
    let mut out = Vec::with_capacity(lines);
    while out.len() < lines {
        let n = out.len() + seed;
        match n % 12 {
            0 => out.push(String::new()),
            3 => {
                out.push("```sh".to_owned());
                out.push(format!("## not a heading {n}"));
                out.push(format!("cargo test -p crate{n}"));
                out.push("```".to_owned());
            }
            6 => out.push(format!(
                "- module {n} talks to the store through `Ledger::append`"
            )),
            _ => out.push(format!(
                "Line {n} of prose about the repository, its entry points and data."
            )),
        }
    }
    out.join("\n").trim().to_owned()
}

/// A valid plan whose rendering has about `target` lines: half file blocks,
/// a third free text, the rest steps, questions and stages.
fn plan_of(target: usize) -> Plan {
    let files = target / 2 / 6;
    let text = target / 3 / 7;
    let steps = target / 20;
    let questions = target / 20 / 3;
    let changes: Vec<FileChange> = (0..files)
        .map(|i| FileChange {
            path: format!("src/module_{}/file_{i}.rs", i % 97),
            operation: [Operation::Edit, Operation::Create, Operation::Delete][i % 3],
            change: format!("Change number {i}: move the parser behind a trait."),
            rationale: "Keeps the domain free of I/O.".to_owned(),
            optional: false,
        })
        .collect();
    let stages = (0..files / 50)
        .map(|s| Stage {
            title: format!("Stage block {s}"),
            files: (0..3)
                .map(|k| changes[(s * 50 + k) % files].path.clone())
                .collect(),
            verification: "cargo test passes".to_owned(),
        })
        .collect();
    Plan {
        title: "Benchmark plan".to_owned(),
        persona: READ_ONLY_PERSONA.to_owned(),
        goal: free_text(text, 1),
        architecture: free_text(text, 2),
        capabilities: free_text(text, 3),
        data_flow: free_text(text, 4),
        target_state: free_text(text, 5),
        impact_isolation: free_text(text, 6),
        changes,
        new_dependencies: vec!["serde_yaml 0.9".to_owned()],
        risks: (0..5).map(|i| format!("Risk {i}")).collect(),
        next_steps: (0..steps)
            .map(|i| format!("Step {i}: run the tests"))
            .collect(),
        questions: (0..questions)
            .map(|i| Question {
                question: format!("Question {i}?"),
                default: "the default".to_owned(),
                answer: (i % 2 == 0).then(|| format!("answer {i}")),
            })
            .collect(),
        handoff: Some(HandoffContract {
            objective: "Ship it.".to_owned(),
            completion_criteria: vec!["tests pass".to_owned()],
            budgets: HandoffBudgets::default(),
            allowed_tools: vec!["read_file".to_owned()],
            scope: vec!["src/".to_owned()],
            verification: vec!["cargo test".to_owned()],
        }),
        stages,
    }
}

/// Best of `runs` timings, which is the least disturbed by other work on the machine.
fn best(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    println!(
        "{:>9} {:>10} {:>12} {:>12} {:>12} {:>12}",
        "lines", "bytes", "parse ms", "parse ns/ln", "render ns/ln", "hash ns/ln"
    );
    for target in [10_000usize, 100_000, 1_000_000] {
        // plan_of lands about 10% short of its target; aim a little higher.
        let plan = plan_of(target + target / 9);
        let text = render(&plan);
        let lines = text.lines().count();
        match parse(&text) {
            Ok(parsed) if parsed == plan => {}
            Ok(_) => panic!("the benchmark plan did not read back unchanged"),
            Err(err) => panic!("the benchmark plan does not parse: {err}"),
        }
        let runs = if target >= 1_000_000 { 3 } else { 10 };
        let parse_time = best(runs, || {
            let _ = black_box(parse(black_box(&text)));
        });
        let render_time = best(runs, || {
            black_box(render(black_box(&plan)));
        });
        let hash_time = best(runs, || {
            black_box(content_hash(black_box(&text)));
        });
        let per_line = |d: Duration| d.as_nanos() as f64 / lines as f64;
        println!(
            "{:>9} {:>10} {:>12.2} {:>12.1} {:>12.1} {:>12.1}",
            lines,
            text.len(),
            parse_time.as_secs_f64() * 1e3,
            per_line(parse_time),
            per_line(render_time),
            per_line(hash_time)
        );
    }
}
