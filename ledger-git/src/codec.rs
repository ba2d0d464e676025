//! Reading and writing the two ledger files, with validation that names the file and field.

use std::collections::HashSet;

use serde::Serialize;
use thiserror::Error;

use crate::model::{Board, Ledger, Mission, MissionStatus, Step, SCHEMA_VERSION};

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

/// `mission.json` keeps `steps` right after `origin`.
const STEPS_AFTER: &str = "origin";

fn from_value<T: serde::de::DeserializeOwned>(
    file: &str,
    prefix: &str,
    value: serde_json::Value,
) -> Result<T, Corrupt> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let path = if prefix.is_empty() {
            path
        } else if path == "." {
            prefix.to_string()
        } else {
            format!("{prefix}{path}")
        };
        Corrupt::new(file, path, format!("{}", e.into_inner()))
    })
}

/// Parses `mission.json`, splitting off its derived `steps`.
fn parse_mission(bytes: &[u8]) -> Result<(Mission, Vec<Step>), Corrupt> {
    let mut value: serde_json::Value = parse(MISSION_FILE, bytes)?;
    let Some(object) = value.as_object_mut() else {
        return Err(Corrupt::new(MISSION_FILE, ".", "expected a JSON object"));
    };
    let steps = object
        .shift_remove("steps")
        .ok_or_else(|| Corrupt::new(MISSION_FILE, "steps", "missing field"))?;
    let steps: Vec<Step> = from_value(MISSION_FILE, "steps", steps)?;
    Ok((from_value(MISSION_FILE, "", value)?, steps))
}

/// Parses and validates both files.
pub fn decode(mission: &[u8], board: &[u8]) -> Result<Ledger, Corrupt> {
    let (mission, steps) = parse_mission(mission)?;
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
    check_mission(&mission, &steps, &board)?;
    Ok(Ledger { mission, board })
}

fn check_board(board: &mut Board) -> Result<(), Corrupt> {
    let mut seen = HashSet::new();
    for (i, task) in board.tasks.iter().enumerate() {
        if !crate::model::valid_step_id(&task.id) {
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
        use crate::model::index::GraphError;
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

fn check_mission(mission: &Mission, steps: &[Step], board: &Board) -> Result<(), Corrupt> {
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
    if steps.len() != board.tasks.len() {
        return Err(Corrupt::new(
            MISSION_FILE,
            "steps",
            format!(
                "{} steps but board.json has {} tasks",
                steps.len(),
                board.tasks.len()
            ),
        ));
    }
    for (i, (step, task)) in steps.iter().zip(&board.tasks).enumerate() {
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

/// Pretty JSON with the struct's field order, one trailing newline; the
/// mission's `steps` are derived from the board here.
pub fn encode(ledger: &Ledger) -> Result<(Vec<u8>, Vec<u8>), serde_json::Error> {
    Ok((pretty(&mission_value(ledger)?)?, pretty(&ledger.board)?))
}

/// `mission.json` as a JSON value, with `steps` in place.
pub fn mission_value(ledger: &Ledger) -> Result<serde_json::Value, serde_json::Error> {
    let mut mission = serde_json::to_value(&ledger.mission)?;
    if let Some(object) = mission.as_object_mut() {
        let at = object
            .keys()
            .position(|k| k == STEPS_AFTER)
            .map_or(object.len(), |i| i + 1);
        object.shift_insert(
            at,
            "steps".to_string(),
            serde_json::to_value(ledger.steps())?,
        );
    }
    Ok(mission)
}

/// The JSON Schema of `mission.json`: the [`Mission`] type plus its derived `steps`.
pub fn mission_schema() -> schemars::Schema {
    let mut generator = schemars::SchemaGenerator::default();
    let steps = generator.subschema_for::<Vec<Step>>();
    let mut schema = generator.into_root_schema_for::<Mission>();
    if let Some(object) = schema.as_object_mut() {
        if let Some(serde_json::Value::Object(props)) = object.get_mut("properties") {
            let at = props
                .keys()
                .position(|k| k == STEPS_AFTER)
                .map_or(props.len(), |i| i + 1);
            let mut value = steps.to_value();
            if let Some(o) = value.as_object_mut() {
                o.insert(
                    "description".into(),
                    "One per board task, in board order; must match board.json".into(),
                );
            }
            props.shift_insert(at, "steps".into(), value);
        }
        if let Some(serde_json::Value::Array(required)) = object.get_mut("required") {
            required.push("steps".into());
        }
    }
    schema
}
