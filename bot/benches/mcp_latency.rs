//! `navin mcp` round-trip latency: `ledger_get` and `board_next` on a 1k-step board (target
//! p50 < 20 ms), against `ping` (the protocol's floor) measured in the same run, plus a
//! 5k-step board for the bad day.
//!
//! Run: `cargo bench -p navin-bot --bench mcp_latency`. Talks JSON-RPC over the real
//! binary's stdin/stdout; no network.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use navin_ledger::ops::{Ctx, InitArgs, NewTask, Operation};
use navin_ledger::store::{Store, StoreConfig};
use navin_ledger::{Actor, Validation};

const ROUNDS: usize = 200;

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Session {
    fn start(repo: &std::path::Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
            .args(["--repo"])
            .arg(repo)
            .args(["--actor", "subagent:bench", "mcp", "--mode", "agent"])
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("navin mcp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        s.request(
            "initialize",
            serde_json::json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "bench", "version": "1" }
            }),
        );
        s.send(&serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        s
    }

    fn send(&mut self, msg: &serde_json::Value) {
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(
            &serde_json::json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
        );
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "navin mcp closed its output");
            let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON-RPC message");
            if v.get("id").and_then(|i| i.as_u64()) == Some(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v;
            }
        }
    }

    fn call(&mut self, tool: &str) -> serde_json::Value {
        let v = self.request(
            "tools/call",
            serde_json::json!({ "name": tool, "arguments": {} }),
        );
        assert_ne!(
            v.pointer("/result/isError"),
            Some(&serde_json::Value::Bool(true)),
            "{v}"
        );
        v
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn board(steps: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    git2::Repository::init(dir.path()).expect("git init");
    let store = Store::open(dir.path(), StoreConfig::default()).expect("store");
    let tasks = (0..steps)
        .map(|i| NewTask {
            id: format!("S{i}"),
            title: format!("step {i}: change module {i} and its tests"),
            description: Some(format!("Files: src/m{i}.rs, tests/m{i}.rs. Keep the API.")),
            depends_on: if i % 10 == 0 {
                Vec::new()
            } else {
                vec![format!("S{}", i - 1)]
            },
            validation: Validation::Test,
            ..NewTask::default()
        })
        .collect();
    let op = Operation::Init(InitArgs {
        goal: "Bench the MCP tools".into(),
        steps: tasks,
        ..InitArgs::default()
    });
    store
        .transact(&op, &Ctx::new(Utc::now(), Actor::Human("bench".into())))
        .expect("init");
    dir
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn measure(s: &mut Session, what: &str, mut f: impl FnMut(&mut Session)) -> (Duration, Duration) {
    for _ in 0..10 {
        f(s);
    }
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            f(s);
            t.elapsed()
        })
        .collect();
    times.sort();
    let (p50, p95) = (percentile(&times, 0.5), percentile(&times, 0.95));
    println!(
        "  {what:<14} p50 {:>8.2} ms   p95 {:>8.2} ms   ({ROUNDS} calls)",
        p50.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
    (p50, p95)
}

fn main() {
    println!("navin mcp round trips over stdio (cargo bench -p navin-bot --bench mcp_latency)");
    for steps in [1000, 5000] {
        let dir = board(steps);
        let mut s = Session::start(dir.path());
        println!("{steps}-step board:");
        let (ping, _) = measure(&mut s, "ping", |s| {
            s.request("ping", serde_json::json!({}));
        });
        let (get, _) = measure(&mut s, "ledger_get", |s| {
            s.call("ledger_get");
        });
        let (next, _) = measure(&mut s, "board_next", |s| {
            s.call("board_next");
        });
        let (digest, _) = measure(&mut s, "ledger_digest", |s| {
            s.call("ledger_digest");
        });
        let ratio = |d: Duration| d.as_secs_f64() / ping.as_secs_f64().max(1e-9);
        println!(
            "  ratios to ping: ledger_get {:.1}x, board_next {:.1}x, ledger_digest {:.1}x",
            ratio(get),
            ratio(next),
            ratio(digest)
        );
        if steps == 1000 {
            let target = Duration::from_millis(20);
            println!(
                "  target p50 < 20 ms on 1k steps: ledger_get {}, board_next {}",
                if get < target { "met" } else { "MISSED" },
                if next < target { "met" } else { "MISSED" }
            );
        }
    }
}
