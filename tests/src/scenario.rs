//! A test's view of one end-to-end scenario: the fake GitHub, the webhook sender, and what the bot said.
//!
//! The scenario fails the test when it is dropped while the bot posted a comment
//! the test never read (`next_comment` consumes them in order) or while requests
//! depart from GitHub's REST description. Call `finish()` to run the same checks
//! after waiting for the bot to go quiet.

use std::time::Duration;

use serde_json::{json, Value};

use crate::fake::{BotComment, CheckRunSpec, FakeGitHub, PullSpec, UserKind};
use crate::webhook::{Delivery, Payload, WebhookError, WebhookSender};

/// How long `next_comment` waits for the bot by default.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub struct Scenario {
    fake: FakeGitHub,
    sender: WebhookSender,
    read: usize,
    wait: Duration,
    check_conformance: bool,
    done: bool,
}

impl Scenario {
    pub fn new(fake: FakeGitHub, sender: WebhookSender) -> Self {
        Scenario {
            fake,
            sender,
            read: 0,
            wait: DEFAULT_WAIT,
            check_conformance: true,
            done: false,
        }
    }

    /// Changes how long `next_comment` waits.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// Skips the REST-description check at the end (for tests that send off-spec requests on purpose).
    pub fn without_conformance_check(mut self) -> Self {
        self.check_conformance = false;
        self
    }

    pub fn fake(&self) -> &FakeGitHub {
        &self.fake
    }

    pub fn sender(&self) -> &WebhookSender {
        &self.sender
    }

    /// Delivers a payload and records the attempt in the fake's App hook log
    /// (`GET /app/hook/deliveries`), as GitHub would, with the bot's status code.
    pub async fn send(&self, payload: &Payload) -> Delivery {
        match self.try_send(payload).await {
            Ok(d) => d,
            Err(e) => panic!("{e}"),
        }
    }

    /// The repository's real default branch, which GitHub sends in every payload's
    /// `repository` (the examples say `master`): a dispatch to the wrong ref would fail.
    fn default_branch(&self, owner: &str, repo: &str) -> String {
        self.fake
            .with_state(|m| m.repo(owner, repo).map(|r| r.default_branch.clone()))
            .unwrap_or_else(|| "main".to_owned())
    }

    /// As `send`; a connection failure is recorded as a 502 delivery and returned as an error.
    pub async fn try_send(&self, payload: &Payload) -> Result<Delivery, WebhookError> {
        let request = self.sender.request(payload.event(), payload.json());
        let guid = request.guid.clone().unwrap_or_default();
        let result = self.sender.send_request(request).await;
        let status = result.as_ref().map(|d| d.status).unwrap_or(502);
        self.fake
            .record_delivery_of(&guid, payload.event(), payload.json(), status);
        result
    }

    /// A person comments on an issue or PR: the comment is stored in the fake (so REST reads
    /// see it) and the matching `issue_comment.created` webhook is delivered.
    pub async fn comment(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        author: &str,
        body: &str,
    ) -> (u64, Delivery) {
        let id = self.fake.add_comment(owner, repo, number, author, body);
        let payload = self.comment_payload(owner, repo, number, author, body, id);
        (id, self.send(&payload).await)
    }

    /// Opens an issue by `author` in the fake; returns its number and the
    /// `issues.opened` payload GitHub would send.
    pub fn open_issue(
        &self,
        owner: &str,
        repo: &str,
        title: &str,
        body: &str,
        author: &str,
    ) -> (u64, Payload) {
        let number = self.fake.create_issue(owner, repo, title, body, author);
        let user_id = self.fake.user_id(author);
        let kind = self.fake.with_state(|m| {
            m.users
                .get(author)
                .map(|u| u.kind)
                .unwrap_or(UserKind::User)
        });
        let installation = self.installation_for(owner, repo);
        let mut payload = Payload::fixture("issues.opened")
            .repo(owner, repo, self.fake.repo_id(owner, repo))
            .default_branch(&self.default_branch(owner, repo))
            .number(number)
            .issue_title(title)
            .issue_body(body)
            .issue_author(author, user_id, kind)
            .sender(author, user_id, kind);
        if let Some(id) = installation {
            payload = payload.installation(id);
        }
        (number, payload)
    }

    /// The `issue_comment.created` payload `comment` would send, for tweaking before sending.
    pub fn comment_payload(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        author: &str,
        body: &str,
        id: u64,
    ) -> Payload {
        let issue = self.fake.issue(owner, repo, number);
        let user_id = self.fake.user_id(author);
        let kind = self.fake.with_state(|m| {
            m.users
                .get(author)
                .map(|u| u.kind)
                .unwrap_or(UserKind::User)
        });
        let name = if issue.pull.is_some() {
            "issue_comment.created.on_pull_request"
        } else {
            "issue_comment.created"
        };
        let repo_id = self.fake.repo_id(owner, repo);
        let installation = self.installation_for(owner, repo);
        let author_id = self.fake.user_id(&issue.author);
        let stamp =
            |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let written = self.fake.comment(id).map_or_else(
            || {
                let now = stamp(chrono::Utc::now());
                (now.clone(), now)
            },
            |c| (stamp(c.created_at), stamp(c.updated_at)),
        );
        let mut payload = Payload::fixture(name)
            .repo(owner, repo, repo_id)
            .default_branch(&self.default_branch(owner, repo))
            .number(number)
            .issue_title(&issue.title)
            .issue_body(issue.body.as_deref().unwrap_or(""))
            .issue_author(&issue.author, author_id, UserKind::User)
            .comment_id(id)
            .comment_body(body)
            .comment_author(author, user_id, kind)
            // When it was written, as the fake stored it: a `/plan edit` merges with what came after.
            .set("/comment/created_at", json!(written.0))
            .set("/comment/updated_at", json!(written.1))
            // Open or closed (a merged PR's conversation is closed), as the fake has it.
            .set("/issue/state", serde_json::json!(issue.state));
        if let Some(inst) = installation {
            payload = payload.installation(inst);
        }
        payload
    }

    /// Common patches: repository, installation, PR number, title/body/author, head and base.
    fn pull_payload(&self, fixture: &str, owner: &str, repo: &str, number: u64) -> Payload {
        let issue = self.fake.issue(owner, repo, number);
        let pull = self.fake.pull(owner, repo, number);
        let author_id = self.fake.user_id(&issue.author);
        let mut payload = Payload::fixture(fixture)
            .repo(owner, repo, self.fake.repo_id(owner, repo))
            .default_branch(&self.default_branch(owner, repo))
            .number(number)
            .issue_title(&issue.title)
            .issue_body(issue.body.as_deref().unwrap_or(""))
            .issue_author(&issue.author, author_id, UserKind::User)
            .head_sha(&pull.head_sha)
            .head_ref(&pull.head_ref)
            .set("/pull_request/base/ref", json!(pull.base_ref))
            .set("/pull_request/base/sha", json!(pull.base_sha))
            .set("/pull_request/draft", json!(pull.draft))
            .sender(&issue.author, author_id, UserKind::User);
        if let Some(fork) = &pull.head_repo {
            // A fork PR's head lives in the fork, as GitHub's payload says.
            let fork_owner = fork.split('/').next().unwrap_or(fork.as_str());
            payload = payload
                .set("/pull_request/head/repo/full_name", json!(fork))
                .set("/pull_request/head/repo/owner/login", json!(fork_owner))
                .set("/pull_request/head/repo/fork", json!(true));
        }
        if let Some(inst) = self.installation_for(owner, repo) {
            payload = payload.installation(inst);
        }
        payload
    }

    /// Opens a pull request in the fake and delivers `pull_request.opened`.
    pub async fn open_pull(&self, owner: &str, repo: &str, spec: PullSpec) -> (u64, Delivery) {
        let number = self.fake.create_pull(owner, repo, spec);
        let payload = self.pull_payload("pull_request.opened", owner, repo, number);
        (number, self.send(&payload).await)
    }

    /// Closes the PR in the fake (merged or not); returns the `pull_request.closed`
    /// payload GitHub would send.
    pub fn close_pull(&self, owner: &str, repo: &str, number: u64, merged: bool) -> Payload {
        self.fake.close(owner, repo, number, merged);
        let pull = self.fake.pull(owner, repo, number);
        self.pull_payload("pull_request.closed", owner, repo, number)
            .set("/pull_request/state", json!("closed"))
            .set("/pull_request/merged", json!(merged))
            .set(
                "/pull_request/merged_at",
                match (merged, pull.merged_at) {
                    (true, Some(at)) => json!(at.to_rfc3339()),
                    _ => serde_json::Value::Null,
                },
            )
    }

    /// Reopens a closed PR in the fake; returns the `pull_request.reopened` payload (the
    /// `opened` example with its action changed: the payloads share their shape).
    pub fn reopen_pull(&self, owner: &str, repo: &str, number: u64) -> Payload {
        self.fake.reopen(owner, repo, number);
        self.pull_payload("pull_request.opened", owner, repo, number)
            .set("/action", json!("reopened"))
    }

    /// Marks a draft PR ready for review in the fake; returns the
    /// `pull_request.ready_for_review` payload GitHub would send.
    pub fn ready_pull(&self, owner: &str, repo: &str, number: u64) -> Payload {
        self.fake.mark_ready(owner, repo, number);
        self.pull_payload("pull_request.ready_for_review", owner, repo, number)
    }

    /// Pushes files to the PR's head branch and delivers `pull_request.synchronize`.
    pub async fn push_to_pull(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        files: &[(&str, &str)],
        message: &str,
    ) -> (String, Delivery) {
        let before = self.fake.pull(owner, repo, number).head_sha;
        let sha = self.fake.push_to_pull(owner, repo, number, files, message);
        let payload = self
            .pull_payload("pull_request.synchronize", owner, repo, number)
            .set("/before", before.into());
        (sha, self.send(&payload).await)
    }

    /// A review on the PR's current head: stored (REST `APPROVED` spelling) and delivered as
    /// `pull_request_review.submitted` with the webhook's lowercase state.
    pub async fn review(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        reviewer: &str,
        state: &str,
    ) -> (u64, Delivery) {
        let head = self.fake.pull(owner, repo, number).head_sha;
        let id = self
            .fake
            .add_review(owner, repo, number, reviewer, state, &head);
        let fixture = match state.to_ascii_lowercase().as_str() {
            "approved" => "pull_request_review.submitted.approved",
            "changes_requested" => "pull_request_review.submitted.changes_requested",
            _ => "pull_request_review.submitted",
        };
        let reviewer_id = self.fake.user_id(reviewer);
        let payload = self
            .pull_payload(fixture, owner, repo, number)
            .review_id(id)
            .review_state(state)
            .reviewer(reviewer, reviewer_id, UserKind::User);
        (id, self.send(&payload).await)
    }

    /// Dismisses a stored review and delivers `pull_request_review.dismissed`.
    pub async fn dismiss_review(
        &self,
        owner: &str,
        repo: &str,
        number: u64,
        review_id: u64,
    ) -> Delivery {
        let reviewer = self.fake.with_state(|m| {
            let review = m.reviews.get_mut(&review_id)?;
            review.state = "DISMISSED".into();
            Some(review.user.clone())
        });
        let reviewer = reviewer.unwrap_or_else(|| panic!("no review {review_id}"));
        let reviewer_id = self.fake.user_id(&reviewer);
        let payload = self
            .pull_payload("pull_request_review.dismissed", owner, repo, number)
            .review_id(review_id)
            .review_state("dismissed")
            .reviewer(&reviewer, reviewer_id, UserKind::User);
        self.send(&payload).await
    }

    /// Stores a completed check run and delivers `check_run.completed` for it; the payload's
    /// `pull_requests` lists open same-repository PRs whose head is the run's sha (empty for forks).
    pub async fn complete_check_run(
        &self,
        owner: &str,
        repo: &str,
        spec: CheckRunSpec,
    ) -> (u64, Delivery) {
        let id = self.fake.add_check_run(owner, repo, spec);
        let run = self
            .fake
            .check_run(id)
            .unwrap_or_else(|| panic!("check run {id} vanished"));
        let repo_id = self.fake.repo_id(owner, repo);
        let pulls = self.pulls_at(owner, repo, &run.head_sha);
        let mut payload = Payload::fixture("check_run.completed")
            .repo(owner, repo, repo_id)
            .default_branch(&self.default_branch(owner, repo))
            .check_run_id(id)
            .check_name(&run.name)
            .head_sha(&run.head_sha)
            .app_id(run.app_id)
            .conclusion(run.conclusion.as_deref().unwrap_or("neutral"))
            .set("/check_run/pull_requests", Value::Array(pulls));
        if let Some(inst) = self.installation_for(owner, repo) {
            payload = payload.installation(inst);
        }
        (id, self.send(&payload).await)
    }

    /// The `check_run.requested_action` payload GitHub sends when `login` clicks the button
    /// `identifier` on check run `run_id`: the run as stored (name, head, external id,
    /// app, output), its pull requests, and the clicker as sender. The button must be one
    /// the run shows or showed (a page loaded before an update still offers the older one).
    pub fn requested_action(
        &self,
        owner: &str,
        repo: &str,
        run_id: u64,
        identifier: &str,
        login: &str,
    ) -> Payload {
        let run = self
            .fake
            .check_run(run_id)
            .unwrap_or_else(|| panic!("no check run {run_id}"));
        assert!(
            run.shown_identifiers.iter().any(|s| s == identifier),
            "check run {run_id} never showed a button {identifier:?}: {:?}",
            run.shown_identifiers
        );
        let repo_id = self.fake.repo_id(owner, repo);
        let pulls = self.pulls_at(owner, repo, &run.head_sha);
        let kind = self
            .fake
            .with_state(|m| m.users.get(login).map(|u| u.kind).unwrap_or(UserKind::User));
        let mut payload = Payload::fixture("check_run.requested_action")
            .repo(owner, repo, repo_id)
            .default_branch(&self.default_branch(owner, repo))
            .check_run_id(run_id)
            .check_name(&run.name)
            .head_sha(&run.head_sha)
            .app_id(run.app_id)
            .sender(login, self.fake.user_id(login), kind)
            .set(
                "/check_run/external_id",
                json!(run.external_id.clone().unwrap_or_default()),
            )
            .set("/check_run/status", json!(run.status))
            .set("/check_run/conclusion", json!(run.conclusion))
            .set(
                "/check_run/output/title",
                run.output.get("title").cloned().unwrap_or(Value::Null),
            )
            .set(
                "/check_run/output/summary",
                run.output.get("summary").cloned().unwrap_or(Value::Null),
            )
            .set("/check_run/pull_requests", Value::Array(pulls))
            .set("/requested_action/identifier", json!(identifier));
        if let Some(inst) = self.installation_for(owner, repo) {
            payload = payload.installation(inst);
        }
        payload
    }

    /// Open same-repository pull requests whose head is `sha`, as a check run payload's
    /// `pull_requests` lists them (forks are left out, as GitHub does).
    fn pulls_at(&self, owner: &str, repo: &str, sha: &str) -> Vec<Value> {
        let repo_id = self.fake.repo_id(owner, repo);
        self.fake.with_state(|m| {
            m.repo(owner, repo)
                .map(|r| {
                    r.issues
                        .values()
                        .filter_map(|i| i.pull.as_ref().map(|p| (i, p)))
                        .filter(|(i, p)| p.head_sha == sha && p.head_repo.is_none() && i.state == "open")
                        .map(|(i, p)| {
                            let repo_ref = serde_json::json!({ "id": repo_id, "url": format!("https://api.github.com/repos/{owner}/{repo}"), "name": repo });
                            serde_json::json!({
                                "url": format!("https://api.github.com/repos/{owner}/{repo}/pulls/{}", i.number),
                                "id": p.id, "number": i.number,
                                "head": { "ref": p.head_ref, "sha": p.head_sha, "repo": repo_ref },
                                "base": { "ref": p.base_ref, "sha": p.base_sha, "repo": repo_ref },
                            })
                        })
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    /// The installation that covers a repository, if any.
    pub fn installation_for(&self, owner: &str, repo: &str) -> Option<u64> {
        let full = format!("{owner}/{repo}").to_ascii_lowercase();
        self.fake.with_state(|m| {
            m.installations
                .values()
                .find(|i| i.repos.contains(&full))
                .map(|i| i.id)
        })
    }

    /// The next comment the bot created (in order), waiting up to the scenario's wait time.
    pub async fn next_comment(&mut self) -> BotComment {
        let index = self.read;
        let fake = self.fake.clone();
        let arrived =
            crate::fake::wait_until(self.wait, || fake.bot_comments().len() > index).await;
        if !arrived {
            self.done = true;
            panic!(
                "the bot posted no comment within {:?} (already read {index})",
                self.wait
            );
        }
        self.read += 1;
        self.fake.bot_comments()[index].clone()
    }

    /// The next comment if one is already there.
    pub fn try_next_comment(&mut self) -> Option<BotComment> {
        let comment = self.fake.bot_comments().get(self.read).cloned()?;
        self.read += 1;
        Some(comment)
    }

    /// Asserts the bot stays silent for `quiet` (no new comment).
    pub async fn assert_no_comment(&self, quiet: Duration) {
        tokio::time::sleep(quiet).await;
        let unread = self.unread();
        assert!(
            unread.is_empty(),
            "the bot posted unexpected comment(s): {unread:#?}"
        );
    }

    fn unread(&self) -> Vec<BotComment> {
        self.fake
            .bot_comments()
            .into_iter()
            .skip(self.read)
            .collect()
    }

    fn problems(&self) -> Vec<String> {
        let mut problems: Vec<String> = self
            .unread()
            .iter()
            .map(|c| {
                format!(
                    "unread bot comment on {}#{}: {:?}",
                    c.repo, c.issue_number, c.body
                )
            })
            .collect();
        if self.check_conformance {
            problems.extend(
                self.fake
                    .conformance_violations()
                    .iter()
                    .map(|v| v.to_string()),
            );
        }
        problems
    }

    /// Waits `settle` for stragglers, then fails on unread comments or off-spec requests.
    pub async fn finish_after(mut self, settle: Duration) {
        tokio::time::sleep(settle).await;
        self.done = true;
        let problems = self.problems();
        assert!(
            problems.is_empty(),
            "scenario ended with problems:\n  {}",
            problems.join("\n  ")
        );
    }

    pub async fn finish(self) {
        self.finish_after(Duration::from_millis(100)).await
    }

    /// Ends without the unread-comment and request checks: for load tests that judge
    /// the outcome from the ledger and the queue instead of reading every reply.
    pub fn dismiss(mut self) {
        self.done = true;
    }

    /// The JSON of the last request matching, for asserting what the bot sent.
    pub fn last_request_body(&self, method: &str, pattern: &str) -> Option<Value> {
        self.fake
            .requests_to(method, pattern)
            .last()
            .and_then(|r| r.body.clone())
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        if self.done || std::thread::panicking() {
            return;
        }
        let problems = self.problems();
        if !problems.is_empty() {
            panic!(
                "scenario dropped with problems:\n  {}",
                problems.join("\n  ")
            );
        }
    }
}
