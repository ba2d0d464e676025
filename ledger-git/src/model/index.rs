//! Integer-indexed dependency graph of the board: the ready queue, dependents and cycle checks.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::{Board, Task, TaskStatus};

/// Dependency graph over task positions. Built once per loaded board and
/// extended on every add, so queries never hash strings per edge.
#[derive(Debug, Clone, Default)]
pub(crate) struct BoardIndex {
    by_id: HashMap<String, u32>,
    deps: Vec<Vec<u32>>,
    dependents: Vec<Vec<u32>>,
}

/// Why a set of tasks does not form a valid graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GraphError {
    Duplicate { id: String },
    Unknown { task: String, dependency: String },
    SelfDependency { task: String },
    Cycle { path: Vec<String> },
}

impl BoardIndex {
    /// Builds the index and checks the graph: unique ids, known dependencies, no cycles.
    pub(crate) fn build(tasks: &[Arc<Task>]) -> Result<Self, GraphError> {
        let mut by_id = HashMap::with_capacity(tasks.len());
        for (i, task) in tasks.iter().enumerate() {
            if by_id.insert(task.id.clone(), i as u32).is_some() {
                return Err(GraphError::Duplicate {
                    id: task.id.clone(),
                });
            }
        }
        let mut deps = Vec::with_capacity(tasks.len());
        let mut dependents = vec![Vec::new(); tasks.len()];
        for (i, task) in tasks.iter().enumerate() {
            let mut these = Vec::with_capacity(task.depends_on.len());
            for dep in &task.depends_on {
                if dep == &task.id {
                    return Err(GraphError::SelfDependency {
                        task: task.id.clone(),
                    });
                }
                let Some(&d) = by_id.get(dep) else {
                    return Err(GraphError::Unknown {
                        task: task.id.clone(),
                        dependency: dep.clone(),
                    });
                };
                these.push(d);
                dependents[d as usize].push(i as u32);
            }
            deps.push(these);
        }
        let index = Self {
            by_id,
            deps,
            dependents,
        };
        if let Some(path) = index.find_cycle(tasks) {
            return Err(GraphError::Cycle { path });
        }
        Ok(index)
    }

    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).map(|&i| i as usize)
    }

    /// Planned tasks whose dependencies are all done, in board order.
    pub(crate) fn ready(&self, tasks: &[Arc<Task>]) -> Vec<usize> {
        tasks
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                t.status == TaskStatus::Planned
                    && self.deps[*i]
                        .iter()
                        .all(|&d| tasks[d as usize].status == TaskStatus::Done)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Dependencies of `pos` that are not done yet.
    pub(crate) fn pending_deps(&self, tasks: &[Arc<Task>], pos: usize) -> Vec<usize> {
        self.deps[pos]
            .iter()
            .map(|&d| d as usize)
            .filter(|&d| tasks[d].status != TaskStatus::Done)
            .collect()
    }

    /// `pos` and everything that transitively depends on it, in board order.
    pub(crate) fn with_dependents(&self, pos: usize) -> Vec<usize> {
        let mut seen = vec![false; self.deps.len()];
        let mut queue = VecDeque::from([pos]);
        seen[pos] = true;
        let mut out = Vec::new();
        while let Some(p) = queue.pop_front() {
            out.push(p);
            for &d in &self.dependents[p] {
                if !seen[d as usize] {
                    seen[d as usize] = true;
                    queue.push_back(d as usize);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Kahn's algorithm; on a cycle, walks one to report its ids in order.
    fn find_cycle(&self, tasks: &[Arc<Task>]) -> Option<Vec<String>> {
        let n = self.deps.len();
        let mut indegree: Vec<usize> = self.deps.iter().map(Vec::len).collect();
        let mut queue: VecDeque<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut visited = 0;
        while let Some(p) = queue.pop_front() {
            visited += 1;
            for &d in &self.dependents[p] {
                indegree[d as usize] -= 1;
                if indegree[d as usize] == 0 {
                    queue.push_back(d as usize);
                }
            }
        }
        if visited == n {
            return None;
        }
        // Every remaining node has an unresolved dependency; follow them until one repeats.
        let start = (0..n).find(|&i| indegree[i] > 0)?;
        let mut order = Vec::new();
        let mut at = vec![usize::MAX; n];
        let mut p = start;
        while at[p] == usize::MAX {
            at[p] = order.len();
            order.push(p);
            p = *self.deps[p].iter().find(|&&d| indegree[d as usize] > 0)? as usize;
        }
        let mut path: Vec<String> = order[at[p]..]
            .iter()
            .map(|&i| tasks[i].id.clone())
            .collect();
        // Each id depends on the next: A -> B -> A.
        path.push(tasks[p].id.clone());
        Some(path)
    }
}

impl Board {
    /// Rebuilds the index after deserializing or bulk changes.
    pub(crate) fn reindex(&mut self) -> Result<(), GraphError> {
        self.index = Arc::new(BoardIndex::build(&self.tasks)?);
        Ok(())
    }

    /// Mutable access to one task, copying it first if another ledger shares it.
    pub(crate) fn task_mut(&mut self, pos: usize) -> &mut Task {
        Arc::make_mut(&mut self.tasks[pos])
    }

    pub fn task(&self, id: &str) -> Option<&Task> {
        self.index.position(id).map(|p| &*self.tasks[p])
    }

    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.index.position(id)
    }

    /// Planned tasks whose dependencies are all done, stage gate aside: the ready
    /// queue is [`crate::Ledger::ready`], which also holds back unreleased stages.
    pub fn unblocked(&self) -> Vec<&Task> {
        self.index
            .ready(&self.tasks)
            .into_iter()
            .map(|i| &*self.tasks[i])
            .collect()
    }

    /// Ids of `id` and every task that transitively depends on it.
    pub fn dependents_closure(&self, id: &str) -> Vec<String> {
        match self.index.position(id) {
            Some(p) => self
                .index
                .with_dependents(p)
                .into_iter()
                .map(|i| self.tasks[i].id.clone())
                .collect(),
            None => Vec::new(),
        }
    }
}
