//! `/plan`, `/approve`, `/reject` on issues: the built-in planner run read-only through the API, the plan record on the ledger branch, and the plan comment.

use std::collections::HashMap;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use navin_ledger::plan::PlanDocument;
use serde::{Deserialize, Serialize};

use super::comments;
use super::{blocking, Answer, EngineError, Session};
use crate::planner::{plan_repository, MemorySource, PlannerOptions, SourceEntry};
use crate::render::{plan_comment, Marker, PlanApproval, PlanCommentInfo, PlanStatus};

/// At most this many files are read through the API for one plan.
pub const MAX_BLOBS: usize = 150;
/// Files larger than this are listed but not read.
pub const MAX_BLOB_BYTES: u64 = 100 * 1024;
/// Reading stops once this many bytes were read.
pub const MAX_TOTAL_BYTES: u64 = 2 * 1024 * 1024;
/// Op ids remembered per record, for redelivered commands.
const OP_WINDOW: usize = 50;

const SOURCE: &str = "built-in planner";

/// Where a plan stands on the ledger branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    Pending,
    Approved,
    Rejected,
}

/// `.navin/plans/<id>.json`: the plan's status, who approved which text, and history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRecord {
    pub id: String,
    pub status: RecordStatus,
    /// Content hash of `.navin/plans/<id>.md`; approvals are bound to it.
    pub hash: String,
    pub source: String,
    pub request: String,
    pub repository: String,
    pub issue: u64,
    pub requested_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub approvals: Vec<ApprovalEntry>,
    pub rejections: Vec<RejectionEntry>,
    /// Commands already applied (`<delivery>#<index>`), newest last.
    pub op_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalEntry {
    pub approver: String,
    pub plan_hash: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectionEntry {
    pub by: String,
    pub feedback: Option<String>,
    pub plan_hash: String,
    pub at: DateTime<Utc>,
}

impl PlanRecord {
    fn remember(&mut self, op_id: &str, now: DateTime<Utc>) {
        self.op_ids.push(op_id.to_owned());
        if self.op_ids.len() > OP_WINDOW {
            let excess = self.op_ids.len() - OP_WINDOW;
            self.op_ids.drain(..excess);
        }
        self.updated_at = now;
    }

    fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// The status as the plan comment shows it.
    pub fn comment_status(&self) -> PlanStatus {
        match self.status {
            RecordStatus::Pending => PlanStatus::Pending { stale: None },
            RecordStatus::Approved => PlanStatus::Approved {
                approvals: self
                    .approvals
                    .iter()
                    .filter(|a| a.plan_hash == self.hash)
                    .map(|a| PlanApproval {
                        approver: a.approver.clone(),
                        plan_hash: a.plan_hash.clone(),
                        review_id: None,
                        at: a.at,
                    })
                    .collect(),
            },
            RecordStatus::Rejected => {
                let last = self.rejections.last();
                PlanStatus::Rejected {
                    by: last.map(|r| r.by.clone()).unwrap_or_default(),
                    feedback: last.and_then(|r| r.feedback.clone()),
                }
            }
        }
    }
}

/// The plan id of an issue: one plan per issue, regenerated in place.
pub fn plan_id(issue: u64) -> String {
    format!("issue-{issue}")
}

fn md_path(id: &str) -> String {
    format!("{}/{id}.md", navin_ledger::store::PLANS_DIR)
}

fn json_path(id: &str) -> String {
    format!("{}/{id}.json", navin_ledger::store::PLANS_DIR)
}

/// Which files of a tree listing to read, within the limits: manifests and shallow
/// paths first, since they say most about a repository.
pub fn pick_blobs(entries: &[(String, String, Option<u64>)]) -> Vec<(String, String)> {
    let mut candidates: Vec<&(String, String, Option<u64>)> = entries
        .iter()
        .filter(|(_, _, size)| size.is_some_and(|s| s <= MAX_BLOB_BYTES))
        .collect();
    candidates.sort_by_key(|(path, _, _)| (path.matches('/').count(), path.clone()));
    let mut total = 0u64;
    let mut picked = Vec::new();
    for (path, sha, size) in candidates {
        let size = size.unwrap_or(0);
        if picked.len() >= MAX_BLOBS || total + size > MAX_TOTAL_BYTES {
            break;
        }
        total += size;
        picked.push((path.clone(), sha.clone()));
    }
    picked
}

#[derive(Deserialize)]
struct Tree {
    tree: Vec<TreeItem>,
}

#[derive(Deserialize)]
struct TreeItem {
    path: String,
    #[serde(rename = "type")]
    kind: String,
    sha: String,
    #[serde(default)]
    size: Option<u64>,
}

#[derive(Deserialize)]
struct Blob {
    content: String,
    #[serde(default)]
    encoding: Option<String>,
}

impl Session<'_> {
    /// The plan of this issue: record and validated document, when there is one.
    pub(super) async fn read_plan(
        &self,
    ) -> Result<Option<(PlanRecord, PlanDocument)>, EngineError> {
        let id = plan_id(self.issue);
        let store = self.store().await?;
        let (json, md) = blocking(move || {
            Ok((
                store.read_file(&json_path(&id))?,
                store.read_file(&md_path(&id))?,
            ))
        })
        .await?;
        let (Some(json), Some(md)) = (json, md) else {
            return Ok(None);
        };
        let record: PlanRecord = serde_json::from_slice(&json).map_err(|e| {
            EngineError::Internal(format!(
                "{} does not parse: {e}",
                json_path(&plan_id(self.issue))
            ))
        })?;
        let text = String::from_utf8_lossy(&md);
        let doc = PlanDocument::parse(&text).map_err(|e| {
            EngineError::Internal(format!("{} is not a valid plan: {e}", md_path(&record.id)))
        })?;
        Ok(Some((record, doc)))
    }

    /// Reads the default branch through the API (bounded) and runs the built-in planner.
    async fn draft_plan(&self, request: &str) -> Result<Result<PlanDocument, String>, EngineError> {
        let mut branch = self.default_branch.clone();
        let path = format!("/repos/{}/git/trees/{branch}?recursive=1", self.repo);
        let tree: Tree = match self.client.get_json(&path).await {
            Ok(tree) => tree,
            // The payload's default branch may be stale (renamed since): ask the repository.
            Err(e) if e.status() == Some(404) => {
                let repo: serde_json::Value = self
                    .client
                    .get_json(&format!("/repos/{}", self.repo))
                    .await?;
                match repo["default_branch"].as_str() {
                    Some(found) if found != branch => branch = found.to_owned(),
                    _ => return Err(e.into()),
                }
                let path = format!("/repos/{}/git/trees/{branch}?recursive=1", self.repo);
                self.client.get_json(&path).await?
            }
            Err(e) => return Err(e.into()),
        };
        let blobs: Vec<(String, String, Option<u64>)> = tree
            .tree
            .into_iter()
            .filter(|i| i.kind == "blob")
            .map(|i| (i.path, i.sha, i.size))
            .collect();
        let mut files: HashMap<String, Vec<u8>> = HashMap::new();
        for (file, sha) in pick_blobs(&blobs) {
            let path = format!("/repos/{}/git/blobs/{sha}", self.repo);
            let blob: Blob = self.client.get_json(&path).await?;
            let bytes = match blob.encoding.as_deref() {
                Some("base64") => {
                    let packed: String = blob.content.split_whitespace().collect();
                    match base64::engine::general_purpose::STANDARD.decode(packed) {
                        Ok(b) => b,
                        Err(_) => continue,
                    }
                }
                _ => blob.content.into_bytes(),
            };
            files.insert(file, bytes);
        }
        let entries: Vec<SourceEntry> = blobs
            .iter()
            .map(|(path, _, size)| SourceEntry {
                path: path.clone(),
                size: *size,
            })
            .collect();
        let label = format!("github:{}@{branch}", self.repo);
        let request = request.to_owned();
        let drafted = tokio::task::spawn_blocking(move || {
            let source = MemorySource::new(label, entries, |p: &str| files.get(p).cloned());
            match plan_repository(&source, &request, &PlannerOptions::default()) {
                Ok(out) => PlanDocument::from_plan(&out.plan).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            }
        })
        .await
        .map_err(|e| EngineError::Internal(format!("planner task failed: {e}")))?;
        Ok(drafted)
    }

    pub(super) async fn plan(&self, request: &str, op_id: &str) -> Result<Answer, EngineError> {
        let id = plan_id(self.issue);
        // A retried `/plan` whose record landed only re-posts the comment.
        if let Some((record, doc)) = self.read_plan().await? {
            if record.op_ids.iter().any(|o| o == op_id) {
                self.show_plan(&record, &doc).await?;
                return Ok(Answer::React("+1"));
            }
        }
        let doc = match self.draft_plan(request).await? {
            Ok(doc) => doc,
            Err(reason) => return Ok(Answer::refuse(
                format!("no plan could be made: {reason}"),
                "Check the request and the repository's default branch, then try `/plan` again.",
            )),
        };
        let now = self.now();
        let store = self.store().await?;
        let (paths, message) = (
            [json_path(&id), md_path(&id)],
            format!(
                "navin: plan {id} by human:{}\n\n{}\n\nNavin-Plan: {id}\nNavin-Delivery: {op_id}\n",
                self.author,
                request.trim()
            ),
        );
        let text = doc.text().as_bytes().to_vec();
        let mut fresh = PlanRecord {
            id: id.clone(),
            status: RecordStatus::Pending,
            hash: doc.hash().to_owned(),
            source: SOURCE.to_owned(),
            request: request.trim().to_owned(),
            repository: self.repo.clone(),
            issue: self.issue,
            requested_by: self.author.clone(),
            created_at: now,
            updated_at: now,
            approvals: Vec::new(),
            rejections: Vec::new(),
            op_ids: Vec::new(),
        };
        let op = op_id.to_owned();
        let record = blocking(move || {
            let mut written = None;
            let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
            store.update_files(&refs, &message, now, |current| {
                let old: Option<PlanRecord> = current[0]
                    .as_deref()
                    .and_then(|b| serde_json::from_slice(b).ok());
                if let Some(old) = old.as_ref().filter(|r| r.op_ids.contains(&op)) {
                    written = Some(old.clone());
                    return None;
                }
                let mut record = fresh.clone();
                if let Some(old) = old {
                    // Regenerated: earlier approvals were for another text.
                    record.created_at = old.created_at;
                    record.rejections = old.rejections;
                    record.op_ids = old.op_ids;
                }
                record.remember(&op, now);
                written = Some(record.clone());
                Some(vec![
                    (paths[0].clone(), record.to_json()),
                    (paths[1].clone(), text.clone()),
                ])
            })?;
            fresh.remember(&op, now);
            Ok(written.unwrap_or(fresh))
        })
        .await?;
        self.show_plan(&record, &doc).await?;
        Ok(Answer::React("+1"))
    }

    async fn show_plan(&self, record: &PlanRecord, doc: &PlanDocument) -> Result<(), EngineError> {
        let info = PlanCommentInfo {
            plan_id: record.id.clone(),
            source: record.source.clone(),
            status: record.comment_status(),
            diff: None,
            repo: Some(self.repo_ref()),
        };
        let body = plan_comment(doc, &info);
        let id = record.id.clone();
        let probe = Marker::Plan {
            id: record.id.clone(),
            hash: doc.hash().to_owned(),
        }
        .to_string();
        comments::upsert(
            &self.client,
            &self.repo,
            self.issue,
            |m| matches!(m, Marker::Plan { id: found, .. } if *found == id),
            &probe,
            body,
        )
        .await?;
        Ok(())
    }

    pub(super) async fn approve(&self, op_id: &str) -> Result<Answer, EngineError> {
        let who = self.author.clone();
        self.decide(op_id, "approve", move |record, now| {
            if record.status == RecordStatus::Approved {
                return Err("the plan is already approved.".to_owned());
            }
            record.status = RecordStatus::Approved;
            record.approvals.push(ApprovalEntry {
                approver: who.clone(),
                plan_hash: record.hash.clone(),
                at: now,
            });
            Ok(())
        })
        .await
    }

    pub(super) async fn reject(
        &self,
        feedback: Option<String>,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let who = self.author.clone();
        self.decide(op_id, "reject", move |record, now| {
            if record.status == RecordStatus::Rejected {
                return Err("the plan is already rejected.".to_owned());
            }
            record.status = RecordStatus::Rejected;
            record.approvals.clear();
            record.rejections.push(RejectionEntry {
                by: who.clone(),
                feedback: feedback.clone(),
                plan_hash: record.hash.clone(),
                at: now,
            });
            Ok(())
        })
        .await
    }

    /// Read-modify-write of the plan record under compare-and-swap; `change` may refuse.
    async fn decide(
        &self,
        op_id: &str,
        verb: &'static str,
        change: impl Fn(&mut PlanRecord, DateTime<Utc>) -> Result<(), String> + Send + 'static,
    ) -> Result<Answer, EngineError> {
        let Some((_, doc)) = self.read_plan().await? else {
            return Ok(Answer::refuse(
                format!("there is no plan on this issue to {verb}."),
                "Ask for one with `/plan <request>`.",
            ));
        };
        let id = plan_id(self.issue);
        let now = self.now();
        let store = self.store().await?;
        let path = json_path(&id);
        let message = format!(
            "navin: plan {id} {verb} by human:{}\n\nNavin-Plan: {id}\nNavin-Delivery: {op_id}\n",
            self.author
        );
        let op = op_id.to_owned();
        let outcome = blocking(move || {
            let mut outcome: Result<Option<PlanRecord>, String> = Ok(None);
            store.update_files(&[path.as_str()], &message, now, |current| {
                let Some(mut record) = current[0]
                    .as_deref()
                    .and_then(|b| serde_json::from_slice::<PlanRecord>(b).ok())
                else {
                    outcome = Err(format!("{path} is missing or does not parse."));
                    return None;
                };
                if record.op_ids.contains(&op) {
                    outcome = Ok(Some(record));
                    return None;
                }
                if let Err(reason) = change(&mut record, now) {
                    outcome = Err(reason);
                    return None;
                }
                record.remember(&op, now);
                outcome = Ok(Some(record.clone()));
                Some(vec![(path.clone(), record.to_json())])
            })?;
            Ok(outcome)
        })
        .await?;
        match outcome {
            Ok(Some(record)) => {
                self.show_plan(&record, &doc).await?;
                Ok(Answer::React("+1"))
            }
            Ok(None) => Ok(Answer::refuse(format!("there is no plan to {verb}."), "")),
            Err(reason) => Ok(Answer::refuse(reason, "")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_shallow_small_files_first_within_the_limits() {
        let entries = vec![
            ("src/deep/a.rs".to_owned(), "1".to_owned(), Some(10)),
            ("Cargo.toml".to_owned(), "2".to_owned(), Some(10)),
            (
                "big.bin".to_owned(),
                "3".to_owned(),
                Some(MAX_BLOB_BYTES + 1),
            ),
            ("src/lib.rs".to_owned(), "4".to_owned(), Some(10)),
        ];
        let picked: Vec<String> = pick_blobs(&entries).into_iter().map(|p| p.0).collect();
        assert_eq!(picked, ["Cargo.toml", "src/lib.rs", "src/deep/a.rs"]);
        let many: Vec<(String, String, Option<u64>)> = (0..1000)
            .map(|i| (format!("f{i}"), i.to_string(), Some(1)))
            .collect();
        assert_eq!(pick_blobs(&many).len(), MAX_BLOBS);
    }
}
