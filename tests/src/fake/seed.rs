//! Seeding and inspection of issues, pull requests, comments, reviews, checks and deliveries.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::git;
use super::handle::fail;
use super::model::{
    BotComment, CheckRun, Comment, Dispatch, HookDelivery, Issue, Pull, PullFile, Repo, Review,
    Workflow, WorkflowRun, GITHUB_ACTIONS_APP_ID,
};
use super::FakeGitHub;

/// A pull request to create with `FakeGitHub::create_pull`.
#[derive(Debug, Clone)]
pub struct PullSpec {
    pub head_ref: String,
    pub base_ref: Option<String>,
    pub title: String,
    pub body: Option<String>,
    pub author: String,
    pub draft: bool,
    /// Files the head commit changes (`None` deletes); committed for real unless `head_sha` is set.
    pub files: Vec<(String, Option<String>)>,
    pub head_sha: Option<String>,
    /// `owner/name` of a fork the PR comes from (check runs then carry no `pull_requests`).
    pub fork: Option<String>,
}

impl PullSpec {
    pub fn new(head_ref: &str) -> Self {
        PullSpec {
            head_ref: head_ref.into(),
            base_ref: None,
            title: format!("Changes from {head_ref}"),
            body: None,
            author: "octocat".into(),
            draft: false,
            files: vec![],
            head_sha: None,
            fork: None,
        }
    }
    pub fn title(mut self, title: &str) -> Self {
        self.title = title.into();
        self
    }
    pub fn body(mut self, body: &str) -> Self {
        self.body = Some(body.into());
        self
    }
    pub fn author(mut self, login: &str) -> Self {
        self.author = login.into();
        self
    }
    pub fn base(mut self, base_ref: &str) -> Self {
        self.base_ref = Some(base_ref.into());
        self
    }
    pub fn draft(mut self) -> Self {
        self.draft = true;
        self
    }
    pub fn file(mut self, path: &str, content: &str) -> Self {
        self.files.push((path.into(), Some(content.into())));
        self
    }
    pub fn delete(mut self, path: &str) -> Self {
        self.files.push((path.into(), None));
        self
    }
    pub fn head_sha(mut self, sha: &str) -> Self {
        self.head_sha = Some(sha.into());
        self
    }
    pub fn from_fork(mut self, full_name: &str) -> Self {
        self.fork = Some(full_name.into());
        self
    }
}

/// A check run to seed with `FakeGitHub::add_check_run` (defaults: GitHub Actions, completed, success).
#[derive(Debug, Clone)]
pub struct CheckRunSpec {
    pub name: String,
    pub head_sha: String,
    pub app_id: u64,
    pub status: String,
    pub conclusion: Option<String>,
    pub started_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub head_branch: Option<String>,
    /// `output.summary` and `output.text`, as a test-report step writes them.
    pub output: Option<(String, String)>,
    /// `output.annotations` as a reporter posts them: (path, line, message) each.
    pub annotations: Vec<(String, u64, String)>,
}

impl CheckRunSpec {
    pub fn new(name: &str, head_sha: &str) -> Self {
        let now = Utc::now();
        CheckRunSpec {
            name: name.into(),
            head_sha: head_sha.into(),
            app_id: GITHUB_ACTIONS_APP_ID,
            status: "completed".into(),
            conclusion: Some("success".into()),
            started_at: now - chrono::Duration::minutes(5),
            completed_at: Some(now),
            head_branch: None,
            output: None,
            annotations: Vec::new(),
        }
    }
    /// One failure annotation, as a test reporter posts it on a line of a file.
    pub fn annotation(mut self, path: &str, line: u64, message: &str) -> Self {
        self.annotations.push((path.into(), line, message.into()));
        self
    }
    /// The run's own report: `output.summary` and `output.text`.
    pub fn output(mut self, summary: &str, text: &str) -> Self {
        self.output = Some((summary.into(), text.into()));
        self
    }
    pub fn app(mut self, app_id: u64) -> Self {
        self.app_id = app_id;
        self
    }
    pub fn conclusion(mut self, conclusion: &str) -> Self {
        self.status = "completed".into();
        self.conclusion = Some(conclusion.into());
        self
    }
    /// Queued or in progress: no conclusion, no completion time.
    pub fn pending(mut self, status: &str) -> Self {
        self.status = status.into();
        self.conclusion = None;
        self.completed_at = None;
        self
    }
    pub fn started_at(mut self, t: DateTime<Utc>) -> Self {
        self.started_at = t;
        self
    }
    pub fn completed_at(mut self, t: DateTime<Utc>) -> Self {
        self.completed_at = Some(t);
        self
    }
}

impl FakeGitHub {
    // ---- issues, pulls, comments, reviews ----------------------------------

    pub fn create_issue(
        &self,
        owner: &str,
        repo: &str,
        title: &str,
        body: &str,
        author: &str,
    ) -> u64 {
        let mut model = self.inner.model();
        model.user(author);
        let id = model.next_id();
        let Some(r) = model.repo_mut(owner, repo) else {
            fail("unknown repository", repo)
        };
        let number = r.next_number;
        r.next_number += 1;
        let now = Utc::now();
        r.issues.insert(
            number,
            Issue {
                id,
                number,
                title: title.into(),
                body: Some(body.into()),
                author: author.into(),
                state: "open".into(),
                labels: vec![],
                created_at: now,
                updated_at: now,
                closed_at: None,
                pull: None,
                assignees: Vec::new(),
                agent_assignment: None,
                copilot_sessions: 0,
            },
        );
        number
    }

    /// Opens a pull request; unless `head_sha` is given its files are committed on `head_ref`.
    pub fn create_pull(&self, owner: &str, repo: &str, spec: PullSpec) -> u64 {
        let dir = self.git_dir(owner, repo);
        let default_branch = self
            .inner
            .model()
            .repo(owner, repo)
            .map(|r| r.default_branch.clone())
            .unwrap_or_default();
        let base_ref = spec.base_ref.clone().unwrap_or(default_branch);
        let base_sha =
            git::resolve_commit(&dir, &base_ref).unwrap_or_else(|e| fail("resolve base", e));
        let mut files = Vec::new();
        for (path, content) in &spec.files {
            let existed = matches!(git::read_path(&dir, &base_sha, path), Ok(Some(_)));
            let status = match (content, existed) {
                (None, _) => "removed",
                (Some(_), true) => "modified",
                (Some(_), false) => "added",
            };
            let lines = content
                .as_deref()
                .map(|c| c.lines().count() as u64)
                .unwrap_or(0);
            files.push(PullFile {
                filename: path.clone(),
                status: status.into(),
                additions: lines,
                deletions: if content.is_none() { 1 } else { 0 },
                patch: content.as_deref().map(|c| {
                    format!(
                        "@@ -0,0 +1,{lines} @@\n{}",
                        c.lines()
                            .map(|l| format!("+{l}"))
                            .collect::<Vec<_>>()
                            .join("\n")
                    )
                }),
            });
        }
        let head_sha = match &spec.head_sha {
            Some(sha) => sha.clone(),
            None => {
                if self.branch_sha(owner, repo, &spec.head_ref).is_none() {
                    self.create_branch(owner, repo, &spec.head_ref, &base_sha);
                }
                let changes: Vec<(&str, Option<&[u8]>)> = spec
                    .files
                    .iter()
                    .map(|(p, c)| (p.as_str(), c.as_deref().map(str::as_bytes)))
                    .collect();
                if changes.is_empty() {
                    self.branch_sha(owner, repo, &spec.head_ref)
                        .unwrap_or_else(|| base_sha.clone())
                } else {
                    git::commit_files(&dir, &spec.head_ref, &changes, &spec.title)
                        .unwrap_or_else(|e| fail("commit PR files", e))
                }
            }
        };
        let mut model = self.inner.model();
        model.user(&spec.author);
        let issue_id = model.next_id();
        let pull_id = model.next_id();
        let Some(r) = model.repo_mut(owner, repo) else {
            fail("unknown repository", repo)
        };
        let number = r.next_number;
        r.next_number += 1;
        let now = Utc::now();
        r.issues.insert(
            number,
            Issue {
                id: issue_id,
                number,
                title: spec.title,
                body: spec.body,
                author: spec.author,
                state: "open".into(),
                labels: vec![],
                created_at: now,
                updated_at: now,
                closed_at: None,
                assignees: Vec::new(),
                agent_assignment: None,
                copilot_sessions: 0,
                pull: Some(Pull {
                    id: pull_id,
                    head_ref: spec.head_ref,
                    head_sha,
                    base_ref,
                    base_sha,
                    draft: spec.draft,
                    merged_at: None,
                    files,
                    head_repo: spec.fork,
                    requested_reviewers: Vec::new(),
                    requested_teams: Vec::new(),
                }),
            },
        );
        number
    }

    /// Pushes new files to a PR's head branch (a `synchronize`); returns the new head sha.
    pub fn push_to_pull(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        files: &[(&str, &str)],
        message: &str,
    ) -> String {
        let head_ref = self.pull(owner, repo, number).head_ref;
        let sha = self.commit_files(owner, repo, &head_ref, files, message);
        self.set_pull_head(owner, repo, number, &sha);
        // The PR's files list is the diff against its base: pushed files join it.
        let mut model = self.inner.model();
        if let Some(pull) = model
            .repo_mut(owner, repo)
            .and_then(|r| r.issues.get_mut(&number))
            .and_then(|i| i.pull.as_mut())
        {
            for (path, content) in files {
                let lines = content.lines().count() as u64;
                let patch = format!(
                    "@@ -0,0 +1,{lines} @@\n{}",
                    content
                        .lines()
                        .map(|l| format!("+{l}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                match pull.files.iter_mut().find(|f| f.filename == *path) {
                    Some(f) => {
                        f.status = "modified".into();
                        f.additions = lines;
                        f.patch = Some(patch);
                    }
                    None => pull.files.push(PullFile {
                        filename: (*path).to_owned(),
                        status: "added".into(),
                        additions: lines,
                        deletions: 0,
                        patch: Some(patch),
                    }),
                }
            }
        }
        sha
    }

    pub fn set_pull_head(&self, owner: &str, repo: &str, number: u64, sha: &str) {
        let mut model = self.inner.model();
        if let Some(pull) = model
            .repo_mut(owner, repo)
            .and_then(|r| r.issues.get_mut(&number))
            .and_then(|i| i.pull.as_mut())
        {
            pull.head_sha = sha.into();
        }
    }

    pub fn pull(&self, owner: &str, repo: &str, number: u64) -> Pull {
        self.issue(owner, repo, number)
            .pull
            .unwrap_or_else(|| fail("not a pull request", number))
    }

    pub fn issue(&self, owner: &str, repo: &str, number: u64) -> Issue {
        self.inner
            .model()
            .repo(owner, repo)
            .and_then(|r| r.issues.get(&number).cloned())
            .unwrap_or_else(|| fail("unknown issue", number))
    }

    /// Closes an issue or PR (`merged` also sets `merged_at` on a PR).
    pub fn close(&self, owner: &str, repo: &str, number: u64, merged: bool) {
        let mut model = self.inner.model();
        if let Some(issue) = model
            .repo_mut(owner, repo)
            .and_then(|r| r.issues.get_mut(&number))
        {
            let now = Utc::now();
            issue.state = "closed".into();
            issue.closed_at = Some(now);
            issue.updated_at = now;
            if let (true, Some(pull)) = (merged, issue.pull.as_mut()) {
                pull.merged_at = Some(now);
            }
        }
    }

    /// Marks a pull request ready for review (`draft: false`), as the "Ready for review"
    /// button does.
    pub fn mark_ready(&self, owner: &str, repo: &str, number: u64) {
        let mut model = self.inner.model();
        if let Some(issue) = model
            .repo_mut(owner, repo)
            .and_then(|r| r.issues.get_mut(&number))
        {
            issue.updated_at = Utc::now();
            if let Some(pull) = issue.pull.as_mut() {
                pull.draft = false;
            }
        }
    }

    /// Reopens a closed issue or PR (an unmerged one: GitHub cannot reopen a merge).
    pub fn reopen(&self, owner: &str, repo: &str, number: u64) {
        let mut model = self.inner.model();
        if let Some(issue) = model
            .repo_mut(owner, repo)
            .and_then(|r| r.issues.get_mut(&number))
        {
            issue.state = "open".into();
            issue.closed_at = None;
            issue.updated_at = Utc::now();
        }
    }

    /// A comment written by a person (not the bot); returns its id.
    pub fn add_comment(
        &self,
        owner: &str,
        repo: &str,
        issue: u64,
        author: &str,
        body: &str,
    ) -> u64 {
        let mut model = self.inner.model();
        model.user(author);
        let id = model.next_id();
        let full = model
            .repo(owner, repo)
            .map(Repo::full_name)
            .unwrap_or_else(|| fail("unknown repository", repo));
        let now = Utc::now();
        model.comments.insert(
            id,
            Comment {
                id,
                repo: full,
                issue_number: issue,
                body: body.into(),
                author: author.into(),
                created_at: now,
                updated_at: now,
                via_api: false,
                reactions: vec![],
            },
        );
        id
    }

    pub fn comments(&self, owner: &str, repo: &str, issue: u64) -> Vec<Comment> {
        let full = format!("{owner}/{repo}");
        self.inner
            .model()
            .comments
            .values()
            .filter(|c| c.repo.eq_ignore_ascii_case(&full) && c.issue_number == issue)
            .cloned()
            .collect()
    }

    pub fn comment(&self, id: u64) -> Option<Comment> {
        self.inner.model().comments.get(&id).cloned()
    }

    /// Reaction contents on a comment, in order (`["+1", "eyes"]`).
    pub fn reactions(&self, comment_id: u64) -> Vec<String> {
        self.comment(comment_id)
            .map(|c| c.reactions.iter().map(|r| r.content.clone()).collect())
            .unwrap_or_default()
    }

    /// Comments the bot created through the API, in order.
    pub fn bot_comments(&self) -> Vec<BotComment> {
        self.inner.model().bot_comments.clone()
    }

    /// Comment edits the bot made through the API, in order.
    pub fn bot_comment_edits(&self) -> Vec<BotComment> {
        self.inner.model().bot_comment_edits.clone()
    }

    /// Seeds a review; `state` may be webhook (`approved`) or REST (`APPROVED`) spelling.
    pub fn add_review(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        reviewer: &str,
        state: &str,
        commit_id: &str,
    ) -> u64 {
        let mut model = self.inner.model();
        model.user(reviewer);
        let id = model.next_id();
        let full = model
            .repo(owner, repo)
            .map(Repo::full_name)
            .unwrap_or_else(|| fail("unknown repository", repo));
        model.reviews.insert(
            id,
            Review {
                id,
                repo: full,
                pull_number: number,
                user: reviewer.into(),
                body: String::new(),
                state: state.to_ascii_uppercase(),
                commit_id: commit_id.into(),
                submitted_at: Utc::now(),
            },
        );
        id
    }

    pub fn reviews(&self, owner: &str, repo: &str, number: u64) -> Vec<Review> {
        let full = format!("{owner}/{repo}");
        self.inner
            .model()
            .reviews
            .values()
            .filter(|r| r.repo.eq_ignore_ascii_case(&full) && r.pull_number == number)
            .cloned()
            .collect()
    }

    // ---- checks and actions --------------------------------------------------

    pub fn add_check_run(&self, owner: &str, repo: &str, spec: CheckRunSpec) -> u64 {
        let mut model = self.inner.model();
        let full = model
            .repo(owner, repo)
            .map(Repo::full_name)
            .unwrap_or_else(|| fail("unknown repository", repo));
        let suite = model.suite_for(&full, &spec.head_sha, spec.app_id, spec.head_branch.clone());
        let id = model.next_id();
        model.check_runs.insert(
            id,
            CheckRun {
                id,
                repo: full,
                head_sha: spec.head_sha,
                name: spec.name,
                status: spec.status,
                conclusion: spec.conclusion,
                started_at: spec.started_at,
                completed_at: spec.completed_at,
                app_id: spec.app_id,
                check_suite_id: suite,
                external_id: None,
                details_url: None,
                actions: Vec::new(),
                shown_identifiers: Vec::new(),
                output: {
                    let mut output = match spec.output {
                        Some((summary, text)) => json!({ "summary": summary, "text": text }),
                        None => json!({}),
                    };
                    if !spec.annotations.is_empty() {
                        output["annotations"] = spec
                            .annotations
                            .iter()
                            .map(|(path, line, message)| {
                                json!({
                                    "path": path,
                                    "start_line": line,
                                    "end_line": line,
                                    "annotation_level": "failure",
                                    "title": "test failed",
                                    "message": message,
                                })
                            })
                            .collect();
                    }
                    output
                },
            },
        );
        model.refresh_suite(suite);
        id
    }

    pub fn check_runs(&self, owner: &str, repo: &str) -> Vec<CheckRun> {
        let full = format!("{owner}/{repo}");
        self.inner
            .model()
            .check_runs
            .values()
            .filter(|r| r.repo.eq_ignore_ascii_case(&full))
            .cloned()
            .collect()
    }

    pub fn check_run(&self, id: u64) -> Option<CheckRun> {
        self.inner.model().check_runs.get(&id).cloned()
    }

    /// Registers `.github/workflows/{file}` so dispatches to it succeed; returns its id.
    pub fn add_workflow(&self, owner: &str, repo: &str, file: &str, name: &str) -> u64 {
        let mut model = self.inner.model();
        let id = model.next_id();
        let Some(r) = model.repo_mut(owner, repo) else {
            fail("unknown repository", repo)
        };
        r.workflows.insert(
            file.into(),
            Workflow {
                id,
                file: file.into(),
                name: name.into(),
            },
        );
        id
    }

    /// Seeds a completed workflow run; returns its id.
    pub fn add_workflow_run(
        &self,
        owner: &str,
        repo: &str,
        workflow_file: &str,
        head_sha: &str,
        conclusion: &str,
    ) -> u64 {
        let mut model = self.inner.model();
        let id = model.next_id();
        let Some(r) = model.repo(owner, repo) else {
            fail("unknown repository", repo)
        };
        let full = r.full_name();
        let branch = r.default_branch.clone();
        let (workflow_id, name) = r
            .workflows
            .get(workflow_file)
            .map(|w| (w.id, w.name.clone()))
            .unwrap_or((0, workflow_file.to_string()));
        let number = model
            .workflow_runs
            .values()
            .filter(|w| w.repo == full)
            .count() as u64
            + 1;
        let now = Utc::now();
        model.workflow_runs.insert(
            id,
            WorkflowRun {
                id,
                repo: full,
                workflow_id,
                name,
                head_sha: head_sha.into(),
                head_branch: branch,
                event: "push".into(),
                status: "completed".into(),
                conclusion: Some(conclusion.into()),
                run_number: number,
                created_at: now,
                updated_at: now,
            },
        );
        id
    }

    pub fn dispatches(&self) -> Vec<Dispatch> {
        self.inner.model().dispatches.clone()
    }

    // ---- webhook deliveries (App hook log) ---------------------------------

    /// Records a delivery attempt as GitHub's hook log would list it; returns its id.
    pub fn record_delivery(
        &self,
        guid: &str,
        event: &str,
        action: Option<&str>,
        status_code: u16,
    ) -> u64 {
        self.record_delivery_of(guid, event, &json!({ "action": action }), status_code)
    }

    /// Records a delivery of `payload` (action, installation and repository ids taken from it).
    pub fn record_delivery_of(
        &self,
        guid: &str,
        event: &str,
        payload: &Value,
        status_code: u16,
    ) -> u64 {
        let action = payload["action"].as_str();
        let installation_id = payload["installation"]["id"].as_u64();
        let repository_id = payload["repository"]["id"].as_u64();
        let mut model = self.inner.model();
        let id = model.next_id();
        model.deliveries.push(HookDelivery {
            id,
            guid: guid.into(),
            delivered_at: Utc::now(),
            redelivery: false,
            duration: 0.1,
            status: if (200..300).contains(&status_code) {
                "OK".into()
            } else {
                format!("Invalid HTTP Response: {status_code}")
            },
            status_code,
            event: event.into(),
            action: action.map(str::to_string),
            installation_id,
            repository_id,
        });
        id
    }

    /// Delivery ids the App asked to redeliver (`POST /app/hook/deliveries/{id}/attempts`).
    pub fn redelivery_requests(&self) -> Vec<u64> {
        self.inner.model().redelivery_requests.clone()
    }

    /// Escape hatch for payload-level checks: the JSON a route would render for an issue.
    pub fn issue_json(&self, owner: &str, repo: &str, number: u64) -> Value {
        let model = self.inner.model();
        let renderer = super::render::Renderer {
            base: &self.inner.base_url,
            model: &model,
        };
        match model
            .repo(owner, repo)
            .and_then(|r| r.issues.get(&number).map(|i| (r, i)))
        {
            Some((r, i)) => renderer.issue(r, i),
            None => Value::Null,
        }
    }
}
