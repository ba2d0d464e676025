//! Checks requests the fake handled against GitHub's REST description (`@octokit/openapi` subset).
//!
//! Every REST request must match a documented operation (method + path template);
//! its path and query parameters and JSON body must satisfy the documented schemas;
//! and the fake's own 2xx answers must satisfy the response schema, so the fake
//! cannot drift from what real GitHub returns. Schemas win over GitHub's examples.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{json, Value};

use crate::fake::{FakeGitHub, LoggedRequest, RequestKind};

/// Statuses any endpoint may answer (auth, visibility, validation, rate limits, outages) though few document them.
const GENERIC_STATUSES: [u16; 9] = [401, 403, 404, 422, 429, 500, 502, 503, 504];

/// One documented operation of the subset.
#[derive(Debug, Clone)]
pub struct Operation {
    pub operation_id: String,
    pub method: String,
    pub path: String,
    pub parameters: Vec<Value>,
    pub request_body: Option<Value>,
    pub responses: serde_json::Map<String, Value>,
}

/// What was wrong with one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViolationKind {
    UndocumentedOperation,
    InvalidPathParameter,
    UndocumentedQueryParameter,
    InvalidQueryParameter,
    MissingBody,
    InvalidBody,
    UndocumentedStatus,
    InvalidResponse,
}

#[derive(Debug, Clone)]
pub struct Violation {
    pub request: String,
    pub kind: ViolationKind,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} in `{}`: {}", self.kind, self.request, self.detail)
    }
}

/// The REST description subset the fake serves, with compiled schema validators.
#[derive(Debug)]
pub struct OpenApi {
    pub package_version: String,
    pub operations: Vec<Operation>,
    components: Value,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

impl OpenApi {
    /// The committed extract (`tests/fixtures/openapi/github-rest-subset.json`).
    pub fn github() -> &'static OpenApi {
        static API: OnceLock<OpenApi> = OnceLock::new();
        API.get_or_init(|| {
            let text = include_str!("../fixtures/openapi/github-rest-subset.json");
            match serde_json::from_str::<Value>(text) {
                Ok(doc) => OpenApi::from_extract(&doc),
                Err(e) => panic!("github-rest-subset.json does not parse: {e}"),
            }
        })
    }

    pub fn from_extract(doc: &Value) -> OpenApi {
        let operations = doc["operations"]
            .as_array()
            .map(|ops| {
                ops.iter()
                    .map(|op| Operation {
                        operation_id: op["operationId"].as_str().unwrap_or_default().to_string(),
                        method: op["method"].as_str().unwrap_or_default().to_string(),
                        path: op["path"].as_str().unwrap_or_default().to_string(),
                        parameters: op["parameters"].as_array().cloned().unwrap_or_default(),
                        request_body: op.get("requestBody").filter(|b| !b.is_null()).cloned(),
                        responses: op["responses"].as_object().cloned().unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        OpenApi {
            package_version: doc["source"]["version"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            operations,
            components: doc["components"].clone(),
            validators: Mutex::new(HashMap::new()),
        }
    }

    /// The operation for a method and a raw request path, with its path parameters.
    pub fn find(&self, method: &str, path: &str) -> Option<(&Operation, HashMap<String, String>)> {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let mut best: Option<(usize, &Operation, HashMap<String, String>)> = None;
        for op in self
            .operations
            .iter()
            .filter(|o| o.method.eq_ignore_ascii_case(method))
        {
            if let Some((score, params)) = match_template(&op.path, &segs) {
                if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                    best = Some((score, op, params));
                }
            }
        }
        best.map(|(_, op, params)| (op, params))
    }

    fn validator(&self, key: &str, schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
        let mut cache = self.validators.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = cache.get(key) {
            return Ok(v.clone());
        }
        // Wrap so `#/components/schemas/...` refs resolve inside one document.
        let root = json!({ "allOf": [schema], "components": self.components });
        let compiled = jsonschema::draft7::new(&root)
            .map_err(|e| format!("schema for {key} does not compile: {e}"))?;
        let compiled = Arc::new(compiled);
        cache.insert(key.to_string(), compiled.clone());
        Ok(compiled)
    }

    fn schema_errors(&self, key: &str, schema: &Value, instance: &Value) -> Vec<String> {
        match self.validator(key, schema) {
            Ok(v) => v
                .iter_errors(instance)
                .take(5)
                .map(|e| format!("at `{}`: {e}", e.instance_path()))
                .collect(),
            Err(e) => vec![e],
        }
    }

    /// Everything wrong with one logged request (empty when it conforms). Git traffic is skipped.
    pub fn check(&self, req: &LoggedRequest) -> Vec<Violation> {
        if req.kind != RequestKind::Rest {
            return vec![];
        }
        let line = req.line();
        let violation = |kind, detail: String| Violation {
            request: line.clone(),
            kind,
            detail,
        };
        // GitHub accepts POST for PATCH endpoints (octocrab relies on it), so POST may map to PATCH.
        let found = self.find(&req.method, &req.path).or_else(|| {
            (req.method == "POST")
                .then(|| self.find("PATCH", &req.path))
                .flatten()
        });
        let Some((op, path_params)) = found else {
            return vec![violation(
                ViolationKind::UndocumentedOperation,
                "no operation in the REST description".into(),
            )];
        };
        let mut out = Vec::new();
        for p in op.parameters.iter().filter(|p| p["in"] == "path") {
            let name = p["name"].as_str().unwrap_or_default();
            if let Some(value) = path_params.get(name) {
                if let Some(msg) = self.check_scalar(op, name, &p["schema"], value) {
                    out.push(violation(ViolationKind::InvalidPathParameter, msg));
                }
            }
        }
        for (name, value) in query_pairs(req.query.as_deref()) {
            match op
                .parameters
                .iter()
                .find(|p| p["in"] == "query" && p["name"] == name.as_str())
            {
                None => out.push(violation(
                    ViolationKind::UndocumentedQueryParameter,
                    format!(
                        "`{name}` is not a documented query parameter of {}",
                        op.operation_id
                    ),
                )),
                Some(p) => {
                    if let Some(msg) = self.check_scalar(op, &name, &p["schema"], &value) {
                        out.push(violation(ViolationKind::InvalidQueryParameter, msg));
                    }
                }
            }
        }
        match (&op.request_body, &req.body) {
            (Some(spec), Some(body)) => {
                let key = format!("{}:request", op.operation_id);
                for e in self.schema_errors(&key, &spec["schema"], body) {
                    out.push(violation(ViolationKind::InvalidBody, e));
                }
            }
            (Some(spec), None) if spec["required"] == true && !req.faulted => {
                out.push(violation(
                    ViolationKind::MissingBody,
                    format!("{} requires a JSON body", op.operation_id),
                ));
            }
            (None, Some(body)) if !body.is_null() && body != &json!({}) => {
                out.push(violation(
                    ViolationKind::InvalidBody,
                    format!("{} takes no body", op.operation_id),
                ));
            }
            _ => {}
        }
        if !req.faulted {
            let status = req.status.to_string();
            match op.responses.get(&status) {
                None if GENERIC_STATUSES.contains(&req.status) => {}
                None => out.push(violation(
                    ViolationKind::UndocumentedStatus,
                    format!("{} does not document status {status}", op.operation_id),
                )),
                Some(resp) => {
                    if let (Some(schema), Some(body), true) = (
                        resp.get("schema").filter(|s| !s.is_null()),
                        &req.response,
                        (200..300).contains(&req.status),
                    ) {
                        let key = format!("{}:response:{status}", op.operation_id);
                        for e in self.schema_errors(&key, schema, body) {
                            out.push(violation(ViolationKind::InvalidResponse, e));
                        }
                    }
                }
            }
        }
        out
    }

    /// A path or query value is a string on the wire: coerce to the schema's type first.
    fn check_scalar(
        &self,
        op: &Operation,
        name: &str,
        schema: &Value,
        raw: &str,
    ) -> Option<String> {
        let value = match schema.get("type").and_then(Value::as_str) {
            Some("integer") => match raw.parse::<i64>() {
                Ok(n) => json!(n),
                Err(_) => return Some(format!("`{name}`={raw:?} is not an integer")),
            },
            Some("boolean") => match raw {
                "true" => json!(true),
                "false" => json!(false),
                _ => return Some(format!("`{name}`={raw:?} is not a boolean")),
            },
            _ => json!(raw),
        };
        let key = format!("{}:param:{name}", op.operation_id);
        let errors = self.schema_errors(&key, schema, &value);
        (!errors.is_empty()).then(|| format!("`{name}`={raw:?}: {}", errors.join("; ")))
    }

    pub fn check_all(&self, requests: &[LoggedRequest]) -> Vec<Violation> {
        requests.iter().flat_map(|r| self.check(r)).collect()
    }
}

/// Matches path segments to a template; the score prefers templates with more literal segments.
/// A final `{path}` or `{ref}` may span several segments (raw slashes on the wire).
fn match_template(template: &str, segs: &[&str]) -> Option<(usize, HashMap<String, String>)> {
    let tpl: Vec<&str> = template.trim_start_matches('/').split('/').collect();
    let mut params = HashMap::new();
    let mut score = 0;
    for (i, t) in tpl.iter().enumerate() {
        let is_param = t.starts_with('{') && t.ends_with('}');
        let last = i == tpl.len() - 1;
        if is_param && last && matches!(*t, "{path}" | "{ref}") && segs.len() >= tpl.len() {
            let joined = segs[i..].join("/");
            params.insert(t[1..t.len() - 1].to_string(), decode(&joined));
            return Some((score, params));
        }
        let seg = segs.get(i)?;
        if is_param {
            if seg.is_empty() {
                return None;
            }
            params.insert(t[1..t.len() - 1].to_string(), decode(seg));
        } else if t != seg {
            return None;
        } else {
            score += 1;
        }
    }
    (tpl.len() == segs.len()).then_some((score, params))
}

fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(&k.replace('+', " ")), decode(&v.replace('+', " ")))
        })
        .collect()
}

impl FakeGitHub {
    /// Every way the requests so far depart from GitHub's REST description.
    pub fn conformance_violations(&self) -> Vec<Violation> {
        OpenApi::github().check_all(&self.requests())
    }

    /// Fails the test on any undocumented request, invalid parameter or body, or off-schema response.
    pub fn assert_conformant(&self) {
        let violations = self.conformance_violations();
        assert!(
            violations.is_empty(),
            "{} request(s) depart from GitHub's REST description (@octokit/openapi {}):\n  {}",
            violations.len(),
            OpenApi::github().package_version,
            violations
                .iter()
                .map(Violation::to_string)
                .collect::<Vec<_>>()
                .join("\n  ")
        );
    }
}
