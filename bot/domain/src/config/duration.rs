//! Durations in `.github/navin.yml`: whole seconds (`90`) or numbers with the units `s`,
//! `m` and `h` (`90s`, `5m`, `1h30m`), read, written back and described in the schema.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// What [`parse`] accepts, for the JSON Schema: editors then flag `5 minutes` the way the
/// parser would (surrounding spaces are trimmed by both).
const PATTERN: &str = r"^\s*(\+?[0-9]+|([0-9]+[smh])+)\s*$";

pub(super) fn deserialize<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Seconds(u64),
        Text(String),
    }
    match Raw::deserialize(deserializer)? {
        Raw::Seconds(s) => Ok(Duration::from_secs(s)),
        Raw::Text(text) => parse(&text).map_err(serde::de::Error::custom),
    }
}

/// `Option` only for the type: a present key must hold a duration (`~` is refused).
pub(super) fn deserialize_optional<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Duration>, D::Error> {
    deserialize(deserializer).map(Some)
}

/// Written as a person would write it, so the schema's defaults read `5m`, not a struct.
pub(super) fn serialize<S: Serializer>(d: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&compact(*d))
}

pub(super) fn serialize_optional<S: Serializer>(
    d: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => serialize(d, serializer),
        None => serializer.serialize_none(),
    }
}

/// Both spellings [`deserialize`] takes. Used for `Option<Duration>` fields too: they
/// refuse `~`, so the schema must not offer `null`.
pub(super) fn schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            { "type": "integer", "minimum": 0, "description": "Whole seconds." },
            {
                "type": "string",
                "pattern": PATTERN,
                "description": "Numbers with the units s, m and h, without spaces: 90s, 5m, 1h30m."
            }
        ]
    })
}

/// A wait as a person would write it in the file: `48h`, `90m`, `30s`.
pub(super) fn compact(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        s if s >= 3600 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Accepts `90`, `90s`, `5m`, `1h`, `1h30m`.
pub(super) fn parse(text: &str) -> Result<Duration, String> {
    let bad = || format!("`{text}` is not a duration (write e.g. 90s, 5m or 1h)");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(bad());
    }
    if let Ok(seconds) = trimmed.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    let mut total: u64 = 0;
    let mut digits = String::new();
    for ch in trimmed.chars() {
        if ch.is_ascii_digit() {
            digits.push(ch);
            continue;
        }
        let unit = match ch {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => return Err(bad()),
        };
        let value: u64 = digits.parse().map_err(|_| bad())?;
        total = value
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        digits.clear();
    }
    if !digits.is_empty() {
        return Err(bad());
    }
    Ok(Duration::from_secs(total))
}
