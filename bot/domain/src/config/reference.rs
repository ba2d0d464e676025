//! The key reference of `.github/navin.yml` in docs/config.md, generated from the same
//! schema (and so the same doc comments) editors use, so the page cannot drift from
//! what the parser takes.

use serde_json::Value;

/// Marks the generated part of docs/config.md (checked and rewritten by the test).
#[cfg(test)]
const BEGIN: &str =
    "<!-- BEGIN GENERATED: `cargo test -p navin-domain config_reference` with NAVIN_BLESS=1 -->";
#[cfg(test)]
const END: &str = "<!-- END GENERATED -->";

/// One table: every key as a dotted path, its type, its default and what it is for.
pub fn reference_markdown() -> String {
    let schema = super::schema().to_value();
    let mut rows = Vec::new();
    walk(&schema, &schema, "", &mut rows);
    let mut out =
        String::from("| key | type | default | what it is for |\n| --- | --- | --- | --- |\n");
    for row in rows {
        out.push_str(&row);
        out.push('\n');
    }
    out
}

/// The definition a `$ref` (possibly inside `anyOf` with null) points at.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let target = node.get("$ref").or_else(|| {
        node.get("anyOf")?
            .as_array()?
            .iter()
            .find_map(|v| v.get("$ref"))
    });
    match target.and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|name| root["$defs"].get(name))
            .unwrap_or(node),
        None => node,
    }
}

fn walk(root: &Value, node: &Value, prefix: &str, rows: &mut Vec<String>) {
    let Some(properties) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let key = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let target = resolve(root, property);
        let section = target.get("properties").is_some();
        let kind = if section {
            "section".to_owned()
        } else {
            type_of(root, property)
        };
        let default = if section {
            String::new()
        } else {
            match property.get("default") {
                None => String::new(),
                Some(Value::Null) => "none".to_owned(),
                Some(d) => format!("`{d}`"),
            }
        };
        let about = one_line(property.get("description").or(target.get("description")));
        rows.push(format!("| `{key}` | {kind} | {default} | {about} |"));
        if section {
            walk(root, target, &key, rows);
        }
    }
}

fn type_of(root: &Value, node: &Value) -> String {
    let target = resolve(root, node);
    if let Some(choices) = target.get("oneOf").or(target.get("enum")) {
        let names: Vec<String> = choices
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("const").or(Some(c)).and_then(Value::as_str))
            .map(|c| format!("`{c}`"))
            .collect();
        if !names.is_empty() {
            return format!("one of {}", names.join(", "));
        }
    }
    if target.get("pattern").is_some() || target.get("anyOf").is_some() && is_duration(target) {
        return "duration".to_owned();
    }
    let types: Vec<&str> = match target.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"array") {
        let item = target
            .get("items")
            .map(|i| type_of(root, i))
            .unwrap_or_else(|| "value".to_owned());
        return format!("list of {item}");
    }
    if types.contains(&"object") {
        return "map".to_owned();
    }
    if types.contains(&"integer") {
        return "whole number".to_owned();
    }
    if types.contains(&"number") && !types.contains(&"string") {
        return "number".to_owned();
    }
    if types.contains(&"boolean") && !types.contains(&"string") {
        return "true or false".to_owned();
    }
    if types.contains(&"string") {
        return "text".to_owned();
    }
    "value".to_owned()
}

/// Durations are "whole seconds or a duration string": an `anyOf` of an integer and a
/// patterned string.
fn is_duration(node: &Value) -> bool {
    node["anyOf"]
        .as_array()
        .is_some_and(|alts| alts.iter().any(|a| a.get("pattern").is_some()))
}

/// The description's first paragraph on one line, safe inside a table cell.
fn one_line(description: Option<&Value>) -> String {
    let text = description.and_then(Value::as_str).unwrap_or("");
    let first = text.split("\n\n").next().unwrap_or("");
    first
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn config_reference_in_docs_matches_the_schema() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let (Some(start), Some(end)) = (doc.find(BEGIN), doc.find(END)) else {
            panic!("docs/config.md lacks the generated key reference markers");
        };
        let current = &doc[start + BEGIN.len()..end];
        let generated = format!("\n{}", reference_markdown());
        if std::env::var_os("NAVIN_BLESS").is_some() {
            let updated = format!(
                "{}{}{}",
                &doc[..start + BEGIN.len()],
                generated,
                &doc[end..]
            );
            std::fs::write(&path, updated).unwrap();
            return;
        }
        assert!(
            current == generated,
            "docs/config.md's key reference is stale: run \
             NAVIN_BLESS=1 cargo test -p navin-domain config_reference"
        );
    }

    #[test]
    fn every_key_of_the_schema_has_a_row_with_a_description() {
        let table = reference_markdown();
        for key in [
            "ledger_branch",
            "approval.required_approvals",
            "planner.max_turns",
        ] {
            assert!(table.contains(&format!("| `{key}` |")), "{key} missing");
        }
        for row in table.lines().skip(2) {
            let cells: Vec<&str> = row.split(" | ").collect();
            assert!(
                cells
                    .last()
                    .is_some_and(|c| c.trim_end_matches(" |").len() > 3),
                "a key without a description: {row}"
            );
        }
    }
}
