//! Plan files in pull requests: a PR whose diff adds or changes `*.plan.md` or a `.md` under a `plans/` directory carries its plan as that file; each event records it, stores an edit with its diff, or fails the `navin/plan` check naming the first problem.

use base64::Engine as _;
use navin_github::ops;
use navin_ledger::plan::policy::{safe_operations_in, ChangedFile, FileStatus};
use navin_ledger::plan::PlanDocument;

use super::gate::short;
use super::plans::{json_path, pr_plan_id, PullInfo, Seen};
use super::{EngineError, Session};
use crate::effects::plan_check::{CheckAnnotation, CheckState, PlanCheck, BROKEN_TITLE};
use crate::rules::plan_policy;
use navin_ledger::plan::record::{EditEntry, PlanRecord};

/// Whether `path` follows the plan-file convention: a `.md` file named `*.plan.md` or
/// lying under a directory called `plans` at any depth (case-insensitive).
pub fn is_plan_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    if !lower.ends_with(".md") {
        return false;
    }
    if lower.ends_with(".plan.md") {
        return true;
    }
    let mut parts: Vec<&str> = lower.split('/').collect();
    parts.pop();
    parts.contains(&"plans")
}

/// The pull request's plan file: the first changed file, in the files list's order, that
/// follows the convention. A removed file carries no plan.
pub fn plan_file_of(files: &[ChangedFile]) -> Option<&str> {
    plan_file_candidates(files).next()
}

/// Every changed (not removed) file whose path makes it a plan candidate, in list order.
pub fn plan_file_candidates(files: &[ChangedFile]) -> impl Iterator<Item = &str> {
    files
        .iter()
        .filter(|f| f.status != FileStatus::Removed)
        .map(|f| f.path.as_str())
        .filter(|p| is_plan_path(p))
}

/// Candidates read at most per event: a PR with many notes under `plans/` costs a
/// bounded number of reads.
const MAX_CANDIDATES: usize = 5;

/// A new text for an existing plan, however it came (`/plan edit`, a plan file).
pub(crate) struct TextEdit {
    pub edited: PlanDocument,
    /// Why the text changed, in words: the superseded entry's reason and the edit's `via`.
    pub via: String,
    /// The plan file's hash when the text came from one.
    pub file_hash: Option<String>,
    /// Write only while the stored text has this hash: the text `edited` was merged
    /// with. `None`: replace whatever is stored (a plan file's text is the file's).
    pub expected: Option<String>,
}

/// Why [`Session::store_edit`] wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditRefused {
    /// The record is missing or does not parse.
    Missing(String),
    /// Another text was stored since the edit was merged: merge again.
    Moved,
}

impl std::fmt::Display for EditRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditRefused::Missing(why) => f.write_str(why),
            EditRefused::Moved => f.write_str("the plan's text changed while it was edited"),
        }
    }
}

/// Whether a markdown file presents itself as a plan: its first non-blank line is the
/// `# Plan: …` title every plan document starts with.
pub fn looks_like_plan(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| {
            l.get(..7)
                .is_some_and(|head| head.eq_ignore_ascii_case("# plan:"))
        })
}

/// The check for a head whose plan file does not parse. `failure` rather than
/// `action_required`: the fix is a push, as for a failing lint, not a person's approval.
/// With the parser's `line`, the problem is also an annotation at that line of the file.
pub(crate) fn broken_check(
    path: &str,
    head_sha: &str,
    problem: &str,
    line: Option<usize>,
    record: Option<&PlanRecord>,
) -> PlanCheck {
    let head: String = head_sha.chars().take(7).collect();
    let kept = match record {
        Some(r) => format!(
            "Plan `{}` keeps its last valid text ({}, {}); nothing was recorded from this commit.",
            r.id,
            short(&r.hash),
            r.status.word()
        ),
        None => "No plan is recorded for this pull request until the file is valid.".to_owned(),
    };
    PlanCheck {
        verdict: CheckState::Broken,
        title: format!("{BROKEN_TITLE}{path} is not valid"),
        summary: format!(
            "`{path}` at {head} is not a valid plan: {problem}.\n\n{kept} Fix the file and push again."
        ),
        annotations: line
            .map(|line| CheckAnnotation {
                path: path.to_owned(),
                line,
                level: "failure",
                title: "Not a valid plan".to_owned(),
                message: format!("{problem}. The plan format is checked by Navin's parser; fix this line and push."),
            })
            .into_iter()
            .collect(),
        actions: Vec::new(),
    }
}

impl Session<'_> {
    /// The plan file of the pull request at its head, if it has one. Returns whether the
    /// `navin/plan` check on the head was written here (then the gate has nothing to add).
    pub(crate) async fn plan_file(
        &self,
        pr: &PullInfo,
        files: &[ChangedFile],
    ) -> Result<bool, EngineError> {
        if plan_file_of(files).is_none() {
            return Ok(false);
        }
        let id = pr_plan_id(pr.number);
        let op_id = format!("{}#plan-file", self.delivery.id);
        let existing = self.read_plan_id(&id).await?;
        // Ordinary notes under a `plans/` folder are not Navin's business: a file is a
        // plan when it says so in its title, or when this PR's plan already came from it.
        let mut found = None;
        for path in plan_file_candidates(files).take(MAX_CANDIDATES) {
            let read = self.file_at(path, &pr.head_sha).await?;
            let ours = existing
                .as_ref()
                .is_some_and(|(r, _)| r.source.ends_with(path));
            match read {
                Ok(text) if !ours && !looks_like_plan(&text) => continue,
                // Unreadable (binary, over 1 MB): a plan only if the plan came from it.
                Err(_) if !ours => continue,
                read => {
                    found = Some((path, read));
                    break;
                }
            }
        }
        let Some((path, read)) = found else {
            return Ok(false);
        };
        let parsed = match read {
            Ok(text) => PlanDocument::parse(&text).map_err(|e| (e.to_string(), e.line)),
            Err(unreadable) => Err((unreadable, None)),
        };
        let doc = match parsed {
            Ok(doc) => doc,
            Err((problem, line)) => {
                let check = broken_check(
                    path,
                    &pr.head_sha,
                    &problem,
                    line,
                    existing.as_ref().map(|r| &r.0),
                );
                self.sync_check(pr, &check, &id).await?;
                return Ok(true);
            }
        };
        let Some((record, current)) = existing else {
            return self.record_file(pr, path, doc, &op_id).await;
        };
        if record.op_ids.contains(&op_id) {
            // A redelivery after the record landed: only the comment and check again.
            self.publish_plan(&record, &current, Some(pr), &[]).await?;
            return Ok(true);
        }
        let unchanged =
            record.hash == doc.hash() || record.file_hash.as_deref() == Some(doc.hash());
        if unchanged {
            // An implementation commit, or a file `/plan edit` has overtaken since.
            return Ok(false);
        }
        let head: String = pr.head_sha.chars().take(7).collect();
        let edit = TextEdit {
            file_hash: Some(doc.hash().to_owned()),
            edited: doc,
            via: format!("edited in the pull request's file {path} at {head}"),
            expected: None,
        };
        match self
            .store_edit(record, &current, edit, &op_id, Some(pr))
            .await?
        {
            Ok(_) => Ok(true),
            Err(refused) => Err(EngineError::Internal(refused.to_string())),
        }
    }

    /// The first text of plan `pr-<n>`, from its file: stored pending and published
    /// exactly as `/plan` on a pull request does.
    async fn record_file(
        &self,
        pr: &PullInfo,
        path: &str,
        doc: PlanDocument,
        op_id: &str,
    ) -> Result<bool, EngineError> {
        let id = pr_plan_id(pr.number);
        let now = self.now();
        let config = self.repo_config();
        let auto = plan_policy::auto_accept_config(&config);
        let required = config.approval.required_approvals;
        let safe_ops = auto
            .as_ref()
            .map(|a| safe_operations_in(doc.plan(), a))
            .unwrap_or(0);
        let source = format!("pull request file {path}");
        let fresh = PlanRecord {
            source: source.clone(),
            request: format!("the plan in {path} of pull request #{}", pr.number),
            repository: self.repo.clone(),
            issue: pr.number,
            pull_request: true,
            requested_by: pr.author.clone(),
            safe_operations: safe_ops,
            file_hash: Some(doc.hash().to_owned()),
            ..PlanRecord::pending(&id, doc.hash(), now)
        };
        let message = format!(
            "navin: plan {id} from {source} by human:{}\n\nNavin-Plan: {id}\nNavin-Delivery: {op_id}\n",
            pr.author
        );
        let checked = doc.clone();
        let change = move |old: Option<PlanRecord>, seen: &Seen| {
            if old.is_some() {
                // Written meanwhile (a concurrent event): this one is not the first text.
                return Ok(None);
            }
            let mut record = fresh.clone();
            if let Some(auto) = &auto {
                record.auto_accept(&checked, auto, seen.safe_operations, required, now);
            }
            Ok(Some(record))
        };
        let stored = self
            .update_record(
                &id,
                Some((doc.text().to_owned(), safe_ops)),
                message,
                Some(op_id),
                Box::new(change),
            )
            .await?;
        match stored {
            Ok(Some(record)) if record.hash == doc.hash() => {
                self.publish_plan(&record, &doc, Some(pr), &[]).await?;
                Ok(true)
            }
            // Another text won the race; the gate shows the record as it is.
            Ok(_) => Ok(false),
            Err(reason) => Err(EngineError::Internal(reason)),
        }
    }

    /// Replaces the plan's text with `edit`: the diff against the original text (kept
    /// from the first edit on) is stored and shown, the edit is logged under the
    /// session's author, approvals of the old text go stale, and the comment and check
    /// are published again. With [`TextEdit::expected`], nothing is written when the
    /// stored text has moved on ([`EditRefused::Moved`]).
    pub(crate) async fn store_edit(
        &self,
        record: PlanRecord,
        current: &PlanDocument,
        edit: TextEdit,
        op_id: &str,
        pr: Option<&PullInfo>,
    ) -> Result<Result<Option<PlanRecord>, EditRefused>, EngineError> {
        let TextEdit {
            edited,
            via,
            file_hash,
            expected,
        } = edit;
        let original = match record.original.as_deref() {
            Some(text) => PlanDocument::parse(text).map_err(|e| {
                EngineError::Internal(format!(
                    "{}: the stored original does not parse: {e}",
                    json_path(&record.id)
                ))
            })?,
            None => current.clone(),
        };
        let diff = navin_ledger::plan::diff(original.plan(), edited.plan());
        let id = record.id.clone();
        let now = self.now();
        let who = self.author.clone();
        let who_id = self.author_id;
        let op = op_id.to_owned();
        let config = self.repo_config();
        let auto = plan_policy::auto_accept_config(&config);
        let required = config.approval.required_approvals;
        let safe_ops = auto
            .as_ref()
            .map(|a| safe_operations_in(edited.plan(), a))
            .unwrap_or(0);
        let (new_hash, original_text) = (edited.hash().to_owned(), original.text().to_owned());
        let checked = edited.clone();
        let message = format!(
            "navin: plan {id} edit by human:{who}\n\nReplaced with an edited text ({new_hash}): {via}.\n\nNavin-Plan: {id}\nNavin-Delivery: {op_id}\n"
        );
        let change = move |old: Option<PlanRecord>, seen: &Seen| {
            let Some(mut record) = old else {
                return Err(EditRefused::Missing(format!(
                    "{} is missing or does not parse.",
                    json_path(&id)
                )));
            };
            if expected.as_ref().is_some_and(|hash| *hash != record.hash) {
                return Err(EditRefused::Moved);
            }
            record.edits.push(EditEntry {
                by: who.clone(),
                by_id: who_id,
                at: now,
                from_hash: record.hash.clone(),
                to_hash: new_hash.clone(),
                via: Some(via.clone()),
                op_id: Some(op.clone()),
            });
            record.original = Some(original_text.clone());
            record.diff = (!diff.is_empty()).then(|| diff.clone());
            record.replace_text(&new_hash, &who, &via, now);
            if file_hash.is_some() {
                record.file_hash = file_hash.clone();
            }
            if let Some(auto) = &auto {
                record.auto_accept(&checked, auto, seen.safe_operations, required, now);
            }
            Ok(Some(record))
        };
        let text = edited.text().to_owned();
        let outcome = self
            .update_record(
                &record.id,
                Some((text, safe_ops)),
                message,
                Some(op_id),
                Box::new(change),
            )
            .await?;
        if let Ok(Some(stored)) = &outcome {
            if stored.hash == edited.hash() {
                self.publish_plan(stored, &edited, pr, &[]).await?;
            } else if let Some((record, doc)) = self.read_plan_id(&stored.id).await? {
                // The op id had landed already, with another text: show what is stored.
                self.publish_plan(&record, &doc, pr, &[]).await?;
            }
        }
        Ok(outcome)
    }

    /// The text of `path` at commit `sha` through the contents API, or why it cannot be
    /// read as a plan (absent, a directory, over the API's 1 MB, not UTF-8).
    pub(crate) async fn file_at(
        &self,
        path: &str,
        sha: &str,
    ) -> Result<Result<String, String>, EngineError> {
        let api = ops::contents(&self.repo, path, Some(sha));
        let file: serde_json::Value = match self.client.get_json(&api).await {
            Ok(file) => file,
            Err(e) if e.status() == Some(404) => {
                return Ok(Err(format!("`{path}` is not in the head commit")))
            }
            Err(e) => return Err(e.into()),
        };
        if file["type"].as_str() != Some("file") {
            return Ok(Err(format!("`{path}` is not a file")));
        }
        if file["encoding"].as_str() != Some("base64") {
            return Ok(Err(format!(
                "`{path}` is too large to read through the contents API (over 1 MB)"
            )));
        }
        let packed: String = file["content"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(packed) else {
            return Ok(Err(format!(
                "the contents API sent undecodable base64 for `{path}`"
            )));
        };
        Ok(String::from_utf8(bytes).map_err(|_| format!("`{path}` is not UTF-8 text")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(path: &str, status: FileStatus) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            status,
            previous_path: None,
        }
    }

    #[test]
    fn plan_files_are_plan_md_names_or_markdown_under_a_plans_directory() {
        assert!(is_plan_path("docs/plans/greeting.plan.md"));
        assert!(is_plan_path("greeting.plan.md"));
        assert!(is_plan_path("docs/plans/greeting.md"));
        assert!(is_plan_path("plans/a/b/deep.md"));
        assert!(is_plan_path("Docs/Plans/Greeting.MD"));
        assert!(!is_plan_path("plans.md"));
        assert!(!is_plan_path("docs/plans/notes.txt"));
        assert!(!is_plan_path("docs/myplans/greeting.md"));
        assert!(!is_plan_path("README.md"));
    }

    #[test]
    fn the_first_plan_file_that_is_not_removed_is_the_plan() {
        let files = vec![
            changed("src/greet.rs", FileStatus::Modified),
            changed("plans/old.md", FileStatus::Removed),
            changed("docs/plans/greeting.plan.md", FileStatus::Added),
            changed("plans/second.md", FileStatus::Modified),
        ];
        assert_eq!(plan_file_of(&files), Some("docs/plans/greeting.plan.md"));
        assert_eq!(plan_file_of(&files[..2]), None);
    }

    #[test]
    fn a_broken_plan_file_fails_the_check_naming_file_and_problem() {
        let check = broken_check(
            "docs/plans/greeting.plan.md",
            "0123456789abcdef",
            "line 5, section \"Goal\": the section is empty",
            Some(5),
            None,
        );
        assert_eq!(check.conclusion(), "failure");
        let mark = &check.annotations[0];
        assert_eq!(
            (mark.path.as_str(), mark.line),
            ("docs/plans/greeting.plan.md", 5)
        );
        assert!(mark.message.contains("the section is empty"));
        assert!(check.title.contains("docs/plans/greeting.plan.md"));
        assert!(check.summary.contains("at 0123456"), "{}", check.summary);
        assert!(check.summary.contains("line 5, section \"Goal\""));
    }

    #[test]
    fn only_a_file_titled_as_a_plan_is_taken_for_one() {
        assert!(looks_like_plan("\u{feff}\n# Plan: Configurable greeting\n"));
        assert!(looks_like_plan("  # PLAN: x"));
        assert!(!looks_like_plan("# Release plans for 2027\n"));
        assert!(!looks_like_plan("Notes\n# Plan: later\n"));
        assert!(!looks_like_plan(""));
    }
}
