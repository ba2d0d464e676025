//! What runs in a workflow: jobs in `needs:` order, matrix instances, and the token scopes a `permissions:` block grants.

use serde_json::{Map, Value};
use serde_yaml_ng::Value as Yaml;

/// Scopes a `permissions:` block grants, in the fake's names (`pull_requests`); GitHub's
/// default for a workflow without one is write to everything the job token can hold.
pub(super) fn permissions(block: Option<&Yaml>) -> (Vec<(String, String)>, bool) {
    const ALL: [&str; 9] = [
        "actions",
        "checks",
        "contents",
        "deployments",
        "issues",
        "packages",
        "pull-requests",
        "statuses",
        "discussions",
    ];
    let mut out = Vec::new();
    let mut id_token = false;
    match block {
        None => {
            for s in ALL {
                out.push((s.replace('-', "_"), "write".to_owned()));
            }
        }
        Some(Yaml::String(all)) => {
            let level = if all == "write-all" { "write" } else { "read" };
            for s in ALL {
                out.push((s.replace('-', "_"), level.to_owned()));
            }
            id_token = all == "write-all";
        }
        Some(Yaml::Mapping(m)) => {
            for (k, v) in m {
                let (Some(k), Some(v)) = (k.as_str(), v.as_str()) else {
                    continue;
                };
                if k == "id-token" {
                    id_token = v == "write";
                } else if v != "none" {
                    out.push((k.replace('-', "_"), v.to_owned()));
                }
            }
        }
        Some(_) => {}
    }
    (out, id_token)
}

pub(super) fn needs(job: &Yaml) -> Vec<String> {
    match &job["needs"] {
        Yaml::String(s) => vec![s.clone()],
        Yaml::Sequence(items) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

pub(super) fn runner_arch() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "ARM64"
    } else {
        "X64"
    }
}

/// The matrix instances of `job`: one empty matrix without `strategy.matrix`, else one
/// per `include` entry (the form the shipped workflows use), each entry's values as
/// text; kept only where `only` (key, value) matches, as a runner that serves one
/// platform would.
pub(super) fn matrix_instances(
    job: &Yaml,
    only: Option<&(String, String)>,
) -> Vec<Map<String, Value>> {
    let include = job["strategy"]["matrix"]["include"].as_sequence();
    let Some(entries) = include else {
        return vec![Map::new()];
    };
    entries
        .iter()
        .filter_map(|entry| {
            let map: Map<String, Value> = entry
                .as_mapping()?
                .iter()
                .filter_map(|(k, v)| {
                    let text = match v {
                        Yaml::String(s) => s.clone(),
                        Yaml::Bool(b) => b.to_string(),
                        Yaml::Number(n) => n.to_string(),
                        _ => return None,
                    };
                    Some((k.as_str()?.to_owned(), Value::String(text)))
                })
                .collect();
            Some(map)
        })
        .filter(|m| only.is_none_or(|(k, v)| m.get(k).and_then(Value::as_str) == Some(v.as_str())))
        .collect()
}

/// Topological order of a workflow's jobs by `needs:`.
pub(super) fn order(doc: &Yaml, file: &str) -> Vec<(String, Yaml)> {
    let mut pending: Vec<(String, Yaml)> = doc["jobs"]
        .as_mapping()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.clone())))
        .collect();
    let mut done: Vec<(String, Yaml)> = Vec::new();
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|(_, job)| needs(job).iter().all(|n| done.iter().any(|(d, _)| d == n)));
        let Some(i) = ready else {
            panic!(
                "{file}: jobs whose needs never finish: {:?}",
                pending.iter().map(|p| &p.0).collect::<Vec<_>>()
            )
        };
        done.push(pending.remove(i));
    }
    done
}
