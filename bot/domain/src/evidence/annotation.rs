//! Check-run annotations as the lines a failure fingerprint reads.

/// One item of `GET /repos/{o}/{r}/check-runs/{id}/annotations`, the fields a
/// fingerprint reads.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Annotation {
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// Each annotation as `path: title: message` (line numbers left out: they move with
/// every edit above the failure).
pub fn annotation_lines(list: &[Annotation]) -> Vec<String> {
    list.iter()
        .map(|a| {
            [&a.path, &a.title, &a.message]
                .into_iter()
                .flatten()
                .map(|s| s.trim())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(": ")
        })
        .filter(|m| !m.is_empty())
        .collect()
}
