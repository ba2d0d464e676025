//! The step graph as SVG drawn on the server: steps in columns by dependency depth, so the page needs no script to show it.

use std::collections::HashMap;
use std::fmt::Write;

use navin_ledger::Task;

const NODE_W: u32 = 168;
const NODE_H: u32 = 34;
const GAP_X: u32 = 56;
const GAP_Y: u32 = 14;
const PAD: u32 = 8;
/// Characters of a title shown in a box; the full title is the box's tooltip.
const LABEL_CHARS: usize = 22;

/// Where each step sits: column = the longest chain of dependencies before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// (column, row) per task, in board order.
    pub cells: Vec<(u32, u32)>,
    pub columns: u32,
    pub rows: u32,
}

/// Lays out `tasks` (board order). Dependencies on unknown ids are ignored and a cycle
/// (which the ledger refuses, but a page must not hang on) is cut where it is met.
pub fn layout(tasks: &[std::sync::Arc<Task>]) -> Layout {
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let mut depth: Vec<Option<u32>> = vec![None; tasks.len()];
    for start in 0..tasks.len() {
        // Iterative depth-first walk: a 500-step chain must not overflow the stack.
        let mut stack = vec![(start, false)];
        let mut on_path = vec![false; tasks.len()];
        while let Some((i, expanded)) = stack.pop() {
            if depth[i].is_some() {
                continue;
            }
            let deps: Vec<usize> = tasks[i]
                .depends_on
                .iter()
                .filter_map(|d| index.get(d.as_str()).copied())
                .collect();
            if expanded {
                on_path[i] = false;
                let d = deps
                    .iter()
                    .filter_map(|&j| depth[j])
                    .max()
                    .map_or(0, |m| m + 1);
                depth[i] = Some(d);
                continue;
            }
            on_path[i] = true;
            stack.push((i, true));
            for j in deps {
                if depth[j].is_none() && !on_path[j] {
                    stack.push((j, false));
                }
            }
        }
    }
    let mut rows_in: Vec<u32> = Vec::new();
    let mut cells = Vec::with_capacity(tasks.len());
    for d in depth {
        let column = d.unwrap_or(0);
        let c = column as usize;
        if rows_in.len() <= c {
            rows_in.resize(c + 1, 0);
        }
        cells.push((column, rows_in[c]));
        rows_in[c] += 1;
    }
    Layout {
        cells,
        columns: u32::try_from(rows_in.len()).unwrap_or(u32::MAX),
        rows: rows_in.iter().copied().max().unwrap_or(0),
    }
}

fn x_of(column: u32) -> u32 {
    PAD + column * (NODE_W + GAP_X)
}

fn y_of(row: u32) -> u32 {
    PAD + row * (NODE_H + GAP_Y)
}

fn escape(text: &str) -> String {
    maud::html! { (text) }.into_string()
}

/// The graph as an `<svg>` element. Each box links to its row in the steps table.
pub fn svg(tasks: &[std::sync::Arc<Task>]) -> String {
    let layout = layout(tasks);
    let width = x_of(layout.columns.max(1)) - GAP_X + PAD;
    let height = y_of(layout.rows.max(1)) - GAP_Y + PAD;
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let mut out = String::with_capacity(tasks.len() * 400);
    let _ = write!(
        out,
        r#"<svg class="dag" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="Step dependency graph">"#
    );
    for (i, task) in tasks.iter().enumerate() {
        let (c, r) = layout.cells[i];
        let (x2, y2) = (x_of(c), y_of(r) + NODE_H / 2);
        for dep in &task.depends_on {
            let Some(&j) = index.get(dep.as_str()) else {
                continue;
            };
            let (dc, dr) = layout.cells[j];
            let (x1, y1) = (x_of(dc) + NODE_W, y_of(dr) + NODE_H / 2);
            let mid = (x1 + x2) / 2;
            let _ = write!(
                out,
                r#"<path class="edge" d="M{x1} {y1} C{mid} {y1} {mid} {y2} {x2} {y2}"/>"#
            );
        }
    }
    for (i, task) in tasks.iter().enumerate() {
        let (c, r) = layout.cells[i];
        let (x, y) = (x_of(c), y_of(r));
        // SVG text has no code spans: their backticks go, the words stay.
        let plain = task.title.replace('`', "");
        let label: String = if plain.chars().count() > LABEL_CHARS {
            let cut: String = plain.chars().take(LABEL_CHARS - 1).collect();
            format!("{cut}…")
        } else {
            plain.clone()
        };
        let _ = write!(
            out,
            r##"<a href="#step-{id}"><g class="node {class}"><title>{id}: {title} ({status})</title><rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="5"/><text x="{tx}" y="{ty}">{id} {label}</text></g></a>"##,
            id = escape(&task.id),
            title = escape(&plain),
            status = task.status.as_str(),
            class = task.status.as_str(),
            tx = x + 8,
            ty = y + NODE_H / 2 + 4,
            label = escape(&label),
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn task(id: &str, deps: &[&str]) -> Arc<Task> {
        let json = serde_json::json!({
            "id": id, "title": format!("step {id}"), "description": null, "status": "planned",
            "depends_on": deps, "acceptance": null, "validation": "none", "retry_count": 0,
            "max_retries": 3, "agent": null, "evidence": [], "links": {"prs": [], "head_sha": null, "branch": null, "issue": null}
        });
        Arc::new(serde_json::from_value(json).unwrap())
    }

    #[test]
    fn a_step_sits_one_column_right_of_its_deepest_dependency() {
        let tasks = vec![
            task("S1", &[]),
            task("S2", &["S1"]),
            task("S3", &["S1", "S2"]),
            task("S4", &[]),
        ];
        let l = layout(&tasks);
        assert_eq!(l.cells, vec![(0, 0), (1, 0), (2, 0), (0, 1)]);
        assert_eq!((l.columns, l.rows), (3, 2));
    }

    #[test]
    fn a_cycle_or_unknown_dependency_does_not_hang_the_page() {
        let tasks = vec![task("A", &["B", "missing"]), task("B", &["A"])];
        let l = layout(&tasks);
        assert_eq!(l.cells.len(), 2);
    }

    #[test]
    fn a_500_step_chain_lays_out_without_recursion() {
        let mut tasks = vec![task("S0", &[])];
        for i in 1..500 {
            tasks.push(task(&format!("S{i}"), &[&format!("S{}", i - 1)]));
        }
        let l = layout(&tasks);
        assert_eq!(l.columns, 500);
        assert_eq!(l.cells[499], (499, 0));
    }

    #[test]
    fn titles_are_escaped_in_the_svg() {
        let mut t = (*task("S1", &[])).clone();
        t.title = "<script>x</script>".to_owned();
        let svg = svg(&[Arc::new(t)]);
        assert!(!svg.contains("<script>"), "{svg}");
    }
}
