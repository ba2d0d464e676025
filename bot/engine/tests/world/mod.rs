//! The engine's own test world: the engine called with typed events, no HTTP server or queue in front, against the fake GitHub at the HTTP wire, read back as a person reads GitHub.
//!
//! - `World::new()` is `octo-org/hello` (a Rust crate, writers alice and maya, reader
//!   bob, the App installed) and an engine with a fresh data directory.
//! - Each action builds the payload GitHub would send, parses it into the typed
//!   [`Event`] and awaits [`Engine::handle`]; the returned [`Report`] is the test's.
//! - [`World::reply`] is the one bot comment posted since the last read, redacted
//!   ([`redact`]) so a snapshot holds what a person reads and nothing that changes from
//!   run to run.

use std::sync::Arc;
use std::time::Duration;

use navin_e2e::hello::{self, OWNER, REPO};
use navin_e2e::{Payload, Scenario, WebhookSender};
use navin_engine::{parse_event, Delivery, Engine, EngineConfig, Report};
use navin_github::{AppKey, Credentials, GitHubApp, GitHubConfig, NoMetrics, RetryPolicy};

pub struct World {
    sc: Scenario,
    engine: Engine,
    deliveries: u64,
    sent: Vec<Payload>,
    _dir: tempfile::TempDir,
}

impl World {
    pub async fn new() -> World {
        let fake = hello::seeded();
        let dir = tempfile::tempdir().expect("tempdir");
        let key = AppKey::from_pem(fake.app_key().private_pem.as_bytes()).expect("app key");
        let config = GitHubConfig {
            api_url: fake.base_url().to_owned(),
            credentials: Credentials::App {
                issuer: fake.with_state(|m| m.app.id).to_string(),
                key,
            },
            write_spacing: Duration::ZERO,
            policy: RetryPolicy::default(),
            git_url_template: fake.git_url_template(),
            stateless_s2s_token: None,
            read_timeout: Some(Duration::from_secs(20)),
        };
        let github = GitHubApp::new(config, Arc::new(NoMetrics)).expect("client");
        let engine = Engine::new(github, EngineConfig::new(dir.path().join("data")));
        // Payloads are built by the scenario's helpers and never sent: the engine is
        // called directly.
        let unused = WebhookSender::new("http://127.0.0.1:9/webhook".to_owned(), "unused");
        World {
            sc: Scenario::new(fake, unused),
            engine,
            deliveries: 0,
            sent: Vec::new(),
            _dir: dir,
        }
    }

    /// Opens an issue by alice; its number.
    pub fn issue(&self, title: &str) -> u64 {
        self.sc.fake().create_issue(OWNER, REPO, title, "", "alice")
    }

    /// A maintainer commits `yaml` as `.github/navin.yml` on the default branch.
    pub fn config(&self, yaml: &str) {
        self.sc.fake().commit_files(
            OWNER,
            REPO,
            "main",
            &[(".github/navin.yml", yaml)],
            "configure navin",
        );
    }

    /// A maintainer closes issue `number` (as completed).
    pub fn close(&self, number: u64) {
        self.sc.fake().close(OWNER, REPO, number, false);
    }

    /// The ledger branch's tip, if the ledger exists.
    pub fn ledger_tip(&self) -> Option<String> {
        self.sc.fake().branch_sha(OWNER, REPO, "navin/ledger")
    }

    /// `who` comments `body` on `number`, and the engine handles the event.
    pub async fn comment(&mut self, who: &str, number: u64, body: &str) -> Report {
        let id = self.sc.fake().add_comment(OWNER, REPO, number, who, body);
        let payload = self.sc.comment_payload(OWNER, REPO, number, who, body, id);
        self.handle(&payload).await
    }

    /// The engine handles `payload` as delivery `d-<n>`, its first attempt.
    pub async fn handle(&mut self, payload: &Payload) -> Report {
        self.deliveries += 1;
        self.sent.push(payload.clone());
        self.redeliver(payload, self.deliveries).await
    }

    /// The payload of delivery `d-<n>`.
    pub fn sent(&self, n: u64) -> Payload {
        let i = usize::try_from(n).unwrap_or(usize::MAX).saturating_sub(1);
        self.sent.get(i).cloned().expect("a delivery sent")
    }

    /// Delivery `d-<n>` again (GitHub redelivers with the same id).
    pub async fn redeliver(&mut self, payload: &Payload, n: u64) -> Report {
        let delivery = Delivery {
            id: format!("d-{n}"),
            attempt: 1,
            installation: None,
            repository: None,
            received_at: None,
            final_attempt: false,
        };
        let body = serde_json::to_vec(payload.json()).expect("payload");
        let event = parse_event(delivery, payload.event(), &body)
            .expect("a payload GitHub sends")
            .expect("an event Navin handles");
        self.engine.handle(&event).await.expect("the engine")
    }

    /// The bot's comments posted since the last read, oldest first, redacted. (The
    /// engine has finished with each event before the test reads: nothing is pending.)
    pub fn replies(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(c) = self.sc.try_next_comment() {
            out.push(redact(&c.body));
        }
        out
    }

    /// The one bot comment posted since the last read.
    pub fn reply(&mut self) -> String {
        let mut replies = self.replies();
        assert_eq!(replies.len(), 1, "expected one reply, got {replies:#?}");
        replies.remove(0)
    }
}

impl World {
    /// How many times the bot has edited the mission panel so far.
    pub fn panel_edits(&self) -> usize {
        self.sc
            .fake()
            .bot_comment_edits()
            .iter()
            .filter(|c| c.body.contains("navin:panel"))
            .count()
    }

    /// The head of the bot's comment on `number` that carries `marker`, as it reads now
    /// (edits included): a plan's status line, a panel's first lines.
    pub fn comment_head(&self, number: u64, marker: &str, lines: usize) -> String {
        let comments = self.sc.fake().comments(OWNER, REPO, number);
        let body = comments
            .iter()
            .rev()
            .find(|c| c.body.contains(marker))
            .map(|c| c.body.clone())
            .unwrap_or_else(|| panic!("no comment with {marker} on #{number}"));
        let head: Vec<&str> = body.lines().take(lines).collect();
        redact(&head.join("\n"))
    }
}

/// What changes from run to run, replaced: commit ids and hashes (lowercase hex runs
/// of 7 or more), times.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        // A short commit id can be all digits or all letters, so any run counts.
        let hex = word.len() >= 7 && word.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'));
        out.push_str(if hex { "<hex>" } else { word.as_str() });
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    redact_times(&out)
}

/// `2026-12-06T20:01:02Z` and `2026-12-06 20:01` read `<time>`.
fn redact_times(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let date = bytes.len() >= i + 10
            && bytes[i..i + 4].iter().all(u8::is_ascii_digit)
            && bytes[i + 4] == b'-'
            && bytes[i + 5..i + 7].iter().all(u8::is_ascii_digit)
            && bytes[i + 7] == b'-'
            && bytes[i + 8..i + 10].iter().all(u8::is_ascii_digit);
        if date {
            let mut j = i + 10;
            while j < bytes.len()
                && matches!(bytes[j], b'T' | b' ' | b':' | b'.' | b'Z' | b'0'..=b'9')
            {
                j += 1;
            }
            // Keep a trailing space that separates words.
            while j > i + 10 && bytes[j - 1] == b' ' {
                j -= 1;
            }
            out.push_str("<time>");
            i = j;
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}
