//! The step DAG as a mermaid `graph TD`, sized so GitHub's renderer accepts it.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use navin_ledger::model::{Board, Task, TaskStatus};

use super::text::truncate_chars;

/// At most this many steps are drawn: GitHub's mermaid refuses graphs over
/// 500 edges or ~50,000 characters, and a bigger picture is unreadable anyway.
pub const MAX_GRAPH_NODES: usize = 80;

/// Edge cap, under mermaid's default `maxEdges` of 500.
pub const MAX_GRAPH_EDGES: usize = 400;

/// How many characters of a step title a node shows.
const LABEL_TITLE_CHARS: usize = 40;

/// A rendered graph plus what was left out of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// The fenced ```` ```mermaid ```` block.
    pub block: String,
    pub drawn: usize,
    pub omitted: usize,
}

/// The node class of a task: its status, with planned steps split into
/// `ready` (dependencies done) and `planned` (waiting).
pub fn class_of(task: &Task, ready: &HashSet<&str>) -> &'static str {
    match task.status {
        TaskStatus::Done => "done",
        TaskStatus::InProgress => "in_progress",
        TaskStatus::Failed => "failed",
        TaskStatus::Planned if ready.contains(task.id.as_str()) => "ready",
        TaskStatus::Planned => "planned",
    }
}

/// Draws the board. Nodes get positional ids (`s0`, `s1`, …) so no step id
/// can collide with mermaid keywords such as `end` or `graph`; the step id and
/// title appear only inside quoted labels, escaped by [`label`]. When the
/// board is larger than [`MAX_GRAPH_NODES`], unfinished steps are drawn
/// first (the part of the graph still in play), in board order.
pub fn graph(board: &Board, ready: &HashSet<&str>) -> Graph {
    let tasks = &board.tasks;
    let chosen: Vec<usize> = if tasks.len() <= MAX_GRAPH_NODES {
        (0..tasks.len()).collect()
    } else {
        let mut open: Vec<usize> = (0..tasks.len())
            .filter(|&i| tasks[i].status != TaskStatus::Done)
            .take(MAX_GRAPH_NODES)
            .collect();
        let room = MAX_GRAPH_NODES - open.len();
        open.extend(
            (0..tasks.len())
                .filter(|&i| tasks[i].status == TaskStatus::Done)
                .take(room),
        );
        open.sort_unstable();
        open
    };
    let node_of: HashMap<&str, usize> = chosen.iter().map(|&i| (tasks[i].id.as_str(), i)).collect();

    let mut out = String::with_capacity(chosen.len() * 96 + 512);
    out.push_str("```mermaid\ngraph TD\n");
    for &i in &chosen {
        let task = &tasks[i];
        let text = format!(
            "{}: {}",
            task.id,
            truncate_chars(&task.title, LABEL_TITLE_CHARS)
        );
        let _ = writeln!(
            out,
            "  s{i}[\"{}\"]:::{}",
            label(&text),
            class_of(task, ready)
        );
    }
    let mut edges = 0;
    'edges: for &i in &chosen {
        for dep in &tasks[i].depends_on {
            if let Some(&d) = node_of.get(dep.as_str()) {
                if edges == MAX_GRAPH_EDGES {
                    break 'edges;
                }
                let _ = writeln!(out, "  s{d} --> s{i}");
                edges += 1;
            }
        }
    }
    out.push_str(CLASS_DEFS);
    out.push_str("```\n");
    Graph {
        block: out,
        drawn: chosen.len(),
        omitted: tasks.len() - chosen.len(),
    }
}

/// Status colours, readable in GitHub's light and dark themes.
const CLASS_DEFS: &str = "  classDef done fill:#dafbe1,stroke:#1a7f37,color:#1f2328
  classDef in_progress fill:#ddf4ff,stroke:#0969da,color:#1f2328
  classDef failed fill:#ffebe9,stroke:#cf222e,color:#1f2328
  classDef ready fill:#fff8c5,stroke:#9a6700,color:#1f2328
  classDef planned fill:#f6f8fa,stroke:#8c959f,color:#1f2328
";

/// Text safe inside a quoted mermaid label (`["…"]`). Everything outside a
/// small allow-list becomes a numeric entity (`#34;` for `"`, `#91;` for `[`),
/// which mermaid decodes for display: quotes cannot end the label, brackets
/// and pipes cannot start a new shape or edge text, `#`/`;`/`%` cannot start an
/// entity, a statement or a comment, backticks cannot close the surrounding
/// code fence, and `<`/`>` cannot inject HTML. Line breaks become spaces.
pub fn label(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_whitespace() {
            out.push(' ');
        } else if c.is_alphanumeric()
            || matches!(
                c,
                '-' | '_' | '.' | ',' | ':' | '/' | '+' | '=' | '!' | '?' | '*' | '\'' | '(' | ')'
            )
        {
            out.push(c);
        } else {
            let _ = write!(out, "#{};", c as u32);
        }
    }
    out
}
