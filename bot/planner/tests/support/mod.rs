//! What the planner's integration tests share: a plan, a committed repository, and a scripted OpenAI-compatible endpoint on 127.0.0.1.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use navin_ledger::plan::{render, FileChange, Operation, Plan, READ_ONLY_PERSONA};
use navin_planner::external::{ExternalConfig, ExternalError};
use serde_json::{json, Value};
use tempfile::TempDir;

pub const REQUEST: &str =
    "Add retries with exponential backoff to send_webhook in the webhook client";

// ---------------------------------------------------------------- fixtures

pub fn valid_plan() -> Plan {
    Plan {
        title: "Retry webhook deliveries with backoff".to_owned(),
        persona: READ_ONLY_PERSONA.to_owned(),
        goal: "Retry failed webhook deliveries. Back off exponentially.".to_owned(),
        architecture: "One crate; `src/webhook.rs` sends deliveries.".to_owned(),
        capabilities: "Sends webhooks.".to_owned(),
        data_flow: "Caller -> send_webhook -> HTTP.".to_owned(),
        target_state: "send_webhook retries up to 3 times.".to_owned(),
        impact_isolation: "Only `src/webhook.rs` changes.".to_owned(),
        changes: vec![FileChange {
            path: "src/webhook.rs".to_owned(),
            operation: Operation::Edit,
            change: "Wrap the send in a retry loop with backoff.".to_owned(),
            rationale: "Transient failures lose deliveries today.".to_owned(),
            optional: false,
        }],
        new_dependencies: vec![],
        risks: vec![
            "Retries delay the caller.".to_owned(),
            "Duplicate deliveries if the receiver is slow.".to_owned(),
            "Backoff hides a dead endpoint.".to_owned(),
        ],
        next_steps: vec!["Run `cargo test`.".to_owned()],
        questions: vec![],
        handoff: None,
        stages: vec![],
    }
}

pub fn valid_text() -> String {
    render(&valid_plan())
}

/// Renders fine but breaks the 3-5 risks rule.
pub fn two_risk_text() -> String {
    let mut plan = valid_plan();
    plan.risks.truncate(2);
    render(&plan)
}

pub fn repo() -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let files = [
        ("Cargo.toml", "[package]\nname = \"hooks\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nureq = \"2\"\n"),
        ("src/lib.rs", "pub mod webhook;\n"),
        ("src/webhook.rs", "/// Sends one webhook delivery.\npub fn send_webhook(url: &str) -> Result<(), String> {\n    let _ = url;\n    Ok(())\n}\n"),
        ("tests/webhook_test.rs", "#[test]\nfn sends() { hooks::webhook::send_webhook(\"x\").unwrap(); }\n"),
    ];
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    commit_all(dir.path());
    dir
}

/// Commits every file of `dir` (a new repository), as the planners plan commits.
pub fn commit_all(dir: &Path) {
    let repo = git2::Repository::init(dir).expect("init");
    let mut index = repo.index().expect("index");
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .expect("add");
    index.write().expect("index write");
    let tree = repo
        .find_tree(index.write_tree().expect("tree"))
        .expect("tree");
    let sig = git2::Signature::now("Test", "test@example.com").expect("sig");
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, "test commit", &tree, &parents)
        .expect("commit");
}

/// A key made up at test time; no real service ever sees it.
pub fn test_key() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("sk-navin-test-{}-{nanos}", std::process::id())
}

pub fn assert_no_key(err: &ExternalError, key: &str) {
    assert!(!err.to_string().contains(key), "key in message: {err}");
    assert!(!format!("{err:?}").contains(key), "key in Debug: {err:?}");
}

// ------------------------------------------------------- fake chat endpoint

pub struct Reply {
    pub status: u16,
    pub body: String,
    pub delay: Duration,
}

pub fn chat(content: &str) -> Reply {
    Reply {
        status: 200,
        body: json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]
        })
        .to_string(),
        delay: Duration::ZERO,
    }
}

pub fn raw(status: u16, body: &str) -> Reply {
    Reply {
        status,
        body: body.to_owned(),
        delay: Duration::ZERO,
    }
}

pub struct Recorded {
    pub head: String,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    }

    pub fn message(&self, i: usize) -> (&str, &str) {
        let m = &self.body["messages"][i];
        (
            m["role"].as_str().unwrap_or_default(),
            m["content"].as_str().unwrap_or_default(),
        )
    }
}

/// Serves the scripted replies, one connection each, then stops listening,
/// so an unexpected extra request fails to connect.
pub struct FakeLlm {
    pub base_url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl FakeLlm {
    pub fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        thread::spawn(move || {
            for reply in replies {
                let Ok((mut stream, _)) = listener.accept() else {
                    return;
                };
                let (head, body) = read_request(&mut stream);
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                log.lock().expect("lock").push(Recorded { head, body });
                thread::sleep(reply.delay);
                let response = format!(
                    "HTTP/1.1 {} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                    reply.status,
                    reply.body.len(),
                    reply.body
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Self {
            base_url: format!("http://{addr}/v1"),
            requests,
        }
    }

    pub fn config(&self) -> ExternalConfig {
        ExternalConfig {
            base_url: Some(self.base_url.clone()),
            model: Some("test-model".to_owned()),
            ..ExternalConfig::default()
        }
    }

    pub fn requests(&self) -> std::sync::MutexGuard<'_, Vec<Recorded>> {
        self.requests.lock().expect("lock")
    }
}

pub fn read_request(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf).expect("read head");
        assert!(n > 0, "connection closed before the request head ended");
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while data.len() < head_end + length {
        let n = stream.read(&mut buf).expect("read body");
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
    }
    (head, data[head_end..].to_vec())
}

/// Every file under `dir`, `.git` included, with its bytes: equal snapshots
/// before and after a planner run prove it wrote nothing there.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.clone(), std::fs::read(&path).expect("read"));
            }
        }
    }
    out
}

/// Whether this process runs as root, for whom file modes do not stop writes.
pub fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}
