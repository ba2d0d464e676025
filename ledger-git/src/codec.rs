//! Reading and writing the two ledger files, with validation that names the file and field.

use std::collections::HashSet;

use serde::Serialize;
use thiserror::Error;

use crate::model::{Board, Ledger, Mission, MissionStatus, SCHEMA_VERSION};

pub const MISSION_FILE: &str = "mission.json";
pub const BOARD_FILE: &str = "board.json";

/// A ledger file that does not parse or breaks an invariant. Reported, never
/// overwritten: the store refuses to write on top of it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}: {field}: {message}")]
pub struct Corrupt {
    /// `mission.json` or `board.json` (the store prefixes the directory).
    pub file: String,
    /// A JSON path such as `tasks[3].depends_on[0]`, or `.` for the whole file.
    pub field: String,
    pub message: String,
}

impl Corrupt {
    fn new(file: &str, field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.to_string(),
            field: field.into(),
            message: message.into(),
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(file: &str, bytes: &[u8]) -> Result<T, Corrupt> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        Corrupt::new(file, path, format!("{inner}"))
    })?;
    de.end()
        .map_err(|e| Corrupt::new(file, ".", format!("trailing data: {e}")))?;
    Ok(value)
}

/// Parses and validates both files.
pub fn decode(mission: &[u8], board: &[u8]) -> Result<Ledger, Corrupt> {
    let mission: Mission = parse(MISSION_FILE, mission)?;
    let mut board: Board = parse(BOARD_FILE, board)?;
    if mission.schema_version != SCHEMA_VERSION {
        return Err(Corrupt::new(
            MISSION_FILE,
            "schema_version",
            format!(
                "version {} is not supported (this build reads {SCHEMA_VERSION})",
                mission.schema_version
            ),
        ));
    }
    if board.schema_version != SCHEMA_VERSION {
        return Err(Corrupt::new(
            BOARD_FILE,
            "schema_version",
            format!(
                "version {} is not supported (this build reads {SCHEMA_VERSION})",
                board.schema_version
            ),
        ));
    }
    check_board(&mut board)?;
    check_mission(&mission, &board)?;
    Ok(Ledger { mission, board })
}

fn check_board(board: &mut Board) -> Result<(), Corrupt> {
    let mut seen = HashSet::new();
    for (i, task) in board.tasks.iter().enumerate() {
        if !crate::model::valid_name(&task.id) {
            return Err(Corrupt::new(
                BOARD_FILE,
                format!("tasks[{i}].id"),
                format!("invalid step id {:?}", task.id),
            ));
        }
        if !seen.insert(task.id.as_str()) {
            return Err(Corrupt::new(
                BOARD_FILE,
                format!("tasks[{i}].id"),
                format!("duplicate step id {:?}", task.id),
            ));
        }
    }
    for (i, task) in board.tasks.iter().enumerate() {
        for (j, dep) in task.depends_on.iter().enumerate() {
            if !seen.contains(dep.as_str()) {
                return Err(Corrupt::new(
                    BOARD_FILE,
                    format!("tasks[{i}].depends_on[{j}]"),
                    format!("{} depends on unknown step {dep:?}", task.id),
                ));
            }
        }
    }
    board.reindex().map_err(|e| {
        use crate::index::GraphError;
        let message = match e {
            GraphError::Cycle { path } => format!("dependency cycle: {}", path.join(" -> ")),
            GraphError::SelfDependency { task } => format!("{task} depends on itself"),
            GraphError::Duplicate { id } => format!("duplicate step id {id:?}"),
            GraphError::Unknown { task, dependency } => {
                format!("{task} depends on unknown step {dependency:?}")
            }
        };
        Corrupt::new(BOARD_FILE, "tasks", message)
    })
}

fn check_mission(mission: &Mission, board: &Board) -> Result<(), Corrupt> {
    if mission.version == 0 {
        return Err(Corrupt::new(MISSION_FILE, "version", "must be at least 1"));
    }
    if let Some(last) = mission.history.last() {
        if last.version != mission.version {
            return Err(Corrupt::new(
                MISSION_FILE,
                format!("history[{}].version", mission.history.len() - 1),
                format!(
                    "last history entry is v{} but the mission is v{}",
                    last.version, mission.version
                ),
            ));
        }
    }
    if mission
        .history
        .windows(2)
        .any(|w| w[0].version >= w[1].version)
    {
        return Err(Corrupt::new(
            MISSION_FILE,
            "history",
            "versions must increase",
        ));
    }
    let paused = mission.status == MissionStatus::Paused;
    if paused != mission.pause_reason.is_some() {
        return Err(Corrupt::new(
            MISSION_FILE,
            "pause_reason",
            "must be set exactly when the status is paused",
        ));
    }
    if mission.steps.len() != board.tasks.len() {
        return Err(Corrupt::new(
            MISSION_FILE,
            "steps",
            format!(
                "{} steps but board.json has {} tasks",
                mission.steps.len(),
                board.tasks.len()
            ),
        ));
    }
    for (i, (step, task)) in mission.steps.iter().zip(&board.tasks).enumerate() {
        if *step != task.to_step() {
            return Err(Corrupt::new(
                MISSION_FILE,
                format!("steps[{i}]"),
                format!("step {:?} does not match board task {:?}", step.id, task.id),
            ));
        }
    }
    if let Some(current) = &mission.progress.current_step_id {
        if board.task(current).is_none() {
            return Err(Corrupt::new(
                MISSION_FILE,
                "progress.current_step_id",
                format!("unknown step {current:?}"),
            ));
        }
    }
    Ok(())
}

fn pretty<T: Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = serde_json::to_vec_pretty(value)?;
    out.push(b'\n');
    Ok(out)
}

/// Pretty JSON with the struct's field order, one trailing newline.
pub fn encode(ledger: &Ledger) -> Result<(Vec<u8>, Vec<u8>), serde_json::Error> {
    Ok((pretty(&ledger.mission)?, pretty(&ledger.board)?))
}
