//! A test's view of one end-to-end scenario: the fake GitHub, the webhook sender, and what the bot said.
//!
//! The scenario fails the test when it is dropped while the bot posted a comment
//! the test never read (`next_comment` consumes them in order) or while requests
//! depart from GitHub's REST description. Call `finish()` to run the same checks
//! after waiting for the bot to go quiet.

use std::time::Duration;

use serde_json::Value;

use crate::fake::{BotComment, FakeGitHub, UserKind};
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
        let mut payload = Payload::fixture(name)
            .repo(owner, repo, repo_id)
            .number(number)
            .issue_title(&issue.title)
            .issue_body(issue.body.as_deref().unwrap_or(""))
            .issue_author(&issue.author, author_id, UserKind::User)
            .comment_id(id)
            .comment_body(body)
            .comment_author(author, user_id, kind);
        if let Some(inst) = installation {
            payload = payload.installation(inst);
        }
        payload
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
