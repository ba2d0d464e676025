//! The checked-in JSON Schemas must match the types; run with NAVIN_BLESS=1 to regenerate.

use std::path::PathBuf;

use navin_ledger::model::Board;

fn check(name: &str, schema: schemars::Schema) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(name);
    let mut generated = serde_json::to_string_pretty(&schema).expect("schema serializes");
    generated.push('\n');
    if std::env::var_os("NAVIN_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write schema");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "{} drifted from the Rust types; regenerate with `NAVIN_BLESS=1 cargo test -p navin-ledger --test ledger schema` and review the diff",
        path.display()
    );
}

#[test]
fn mission_schema_file_matches_the_types() {
    check("mission.schema.json", navin_ledger::codec::mission_schema());
}

#[test]
fn board_schema_file_matches_the_types() {
    check("board.schema.json", schemars::schema_for!(Board));
}

#[test]
fn schemas_accept_a_real_ledger_and_name_the_seed_fields() {
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/mission.schema.json"),
    )
    .expect("schema file");
    for field in [
        "goal",
        "status",
        "version",
        "constraints",
        "facts",
        "missing_info",
        "acceptance_criteria",
        "steps",
        "history",
        "paused_at",
        "pause_reason",
        "current_step_id",
        "last_result_ok",
        "last_evidence",
        "real_progress",
        "loop_detected",
        "stall_count",
        "replan_needed",
        "recent_action_fingerprints",
        "budget",
        "max_retries",
        "max_replans",
        "max_stalls",
        "next_actor",
    ] {
        assert!(
            text.contains(&format!("\"{field}\"")),
            "mission schema lacks seed field {field}"
        );
    }
}

#[test]
fn a_board_written_with_one_step_command_still_reads_as_a_command_list() {
    let old = r#"{"schema_version": 1, "tasks": [{"id": "S1", "title": "t", "description": null,
        "status": "planned", "depends_on": [], "acceptance": null, "validation": "test",
        "command": "cargo test", "retry_count": 0, "max_retries": 3, "agent": null,
        "evidence": [], "links": {"prs": [], "head_sha": null, "branch": null, "issue": null}}]}"#;
    let board: Board = serde_json::from_str(old).expect("an older board reads");
    assert_eq!(board.tasks[0].commands, ["cargo test"]);
    let written = serde_json::to_value(&board).expect("writes");
    assert_eq!(
        written["tasks"][0]["commands"],
        serde_json::json!(["cargo test"])
    );
    assert!(written["tasks"][0].get("command").is_none());
}
