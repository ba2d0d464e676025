//! The JSON Schema of `.github/navin.yml`, generated from [`RepoConfig`] so editors
//! complete and check the same keys the parser takes. The checked-in copy is
//! `bot/domain/schema/navin.schema.json`; a test fails when the two drift.

use serde_json::{json, Map, Value};

use super::RepoConfig;

/// The schema of `.github/navin.yml`.
pub fn schema() -> schemars::Schema {
    let mut schema = schemars::schema_for!(RepoConfig);
    if let Some(root) = schema.as_object_mut() {
        root.insert(
            "title".into(),
            "Navin repository configuration (.github/navin.yml)".into(),
        );
        // An empty file, or one holding only comments, is valid: all defaults.
        root.insert("type".into(), json!(["object", "null"]));
        let objects: Vec<String> = match root.get("$defs") {
            Some(Value::Object(defs)) => defs
                .iter()
                .filter(|(_, d)| d["type"] == "object")
                .map(|(name, _)| format!("#/$defs/{name}"))
                .collect(),
            _ => Vec::new(),
        };
        loosen_properties(root, &objects);
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            for def in defs.values_mut().filter_map(Value::as_object_mut) {
                loosen_properties(def, &objects);
            }
        }
    }
    schema
}

/// [`schema`] as the checked-in file holds it: pretty JSON and a final newline.
pub fn schema_json() -> String {
    let mut text =
        serde_json::to_string_pretty(&schema()).expect("a schema of JSON values serializes");
    text.push('\n');
    text
}

/// Takes what serde_yaml_ng's reading takes beyond the Rust types: a section or list whose
/// value is left empty (every key under it commented out) is read as its default, and
/// numbers and booleans where text is expected are read as their text (`2024`, `true`).
/// `objects` are the `$ref`s of the sections.
fn loosen_properties(schema: &mut Map<String, Value>, objects: &[String]) {
    let Some(Value::Object(properties)) = schema.get_mut("properties") else {
        return;
    };
    for property in properties.values_mut().filter_map(Value::as_object_mut) {
        let section = property
            .get("$ref")
            .and_then(Value::as_str)
            .is_some_and(|r| objects.iter().any(|o| o == r));
        if section {
            if let Some(target) = property.remove("$ref") {
                property.insert(
                    "anyOf".into(),
                    json!([{ "$ref": target }, { "type": "null" }]),
                );
            }
        }
        if property.get("type").is_some_and(|t| t == "array") {
            property.insert("type".into(), json!(["array", "null"]));
            if let Some(Value::Object(items)) = property.get_mut("items") {
                text_takes_scalars(items);
            }
        }
        text_takes_scalars(property);
    }
}

/// A free-text string (not a choice, not a duration) also takes numbers and booleans.
fn text_takes_scalars(schema: &mut Map<String, Value>) {
    let widened = match schema.get("type") {
        Some(t) if t == "string" => json!(["string", "number", "boolean"]),
        Some(t) if *t == json!(["string", "null"]) => {
            json!(["string", "number", "boolean", "null"])
        }
        _ => return,
    };
    if !schema.contains_key("pattern") && !schema.contains_key("const") {
        schema.insert("type".into(), widened);
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests;
