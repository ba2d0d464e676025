//! A bare MCP client for tests that need to kill the server or point it at the fake
//! GitHub: newline-delimited JSON-RPC 2.0 over the child's stdio, as the spec's stdio
//! transport defines it. The conformance test uses the official Python SDK instead.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// One `navin mcp` process and its protocol lines.
pub struct McpClient {
    pub child: Child,
    /// The server's stderr (its log), shown when it stops answering.
    log: tempfile::NamedTempFile,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl McpClient {
    /// Spawns `navin mcp ARGS` in `dir` with `env` on top of a clean git config, and
    /// completes the handshake as client `name`.
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)], name: &str) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_navin"));
        cmd.arg("mcp")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("NAVIN_ACTOR")
            .env_remove("GITHUB_REPOSITORY")
            .env_remove("GITHUB_TOKEN")
            .env_remove("NAVIN_GITHUB_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let log = tempfile::NamedTempFile::new().expect("a log file");
        cmd.stderr(log.reopen().expect("the log file"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("navin mcp runs");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut client = Self {
            child,
            log,
            stdin,
            lines,
            next_id: 0,
        };
        let id = client.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": name, "version": "1" },
            }),
        );
        let init = client.reply(id);
        assert_eq!(
            init.pointer("/result/serverInfo/name"),
            Some(&json!("navin")),
            "{init}"
        );
        client.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        client
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to navin mcp");
        self.stdin.flush().expect("flush to navin mcp");
    }

    /// Sends a request without waiting for its answer; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    /// Fires a `tools/call`; returns its request id.
    pub fn call(&mut self, tool: &str, arguments: Value) -> u64 {
        self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )
    }

    /// Calls `tool` and waits for its result (`result` of the response).
    pub fn call_tool(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.call(tool, arguments);
        let reply = self.reply(id);
        reply
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{tool}: not a tool result: {reply}"))
    }

    /// The response to request `id` (other lines are skipped), within 20 s.
    pub fn reply(&self, id: u64) -> Value {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|e| {
                let log = std::fs::read_to_string(self.log.path()).unwrap_or_default();
                panic!("no answer to request {id} from navin mcp: {e}\n{log}")
            });
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("navin mcp wrote a line that is not JSON ({e}): {line}")
            });
            if message["id"] == id {
                return message;
            }
        }
    }

    /// SIGKILL, then reap.
    pub fn kill(mut self) {
        self.child.kill().expect("kill navin mcp");
        self.child.wait().expect("reap navin mcp");
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
