//! `navin serve` as a child process against the fake GitHub: started, SIGKILLed and
//! started again on the same data directory and port, its log kept for the failure
//! message; and the ledger facts a test counts to prove exactly-once.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use navin_e2e::FakeGitHub;

/// One `navin serve` process and what it takes to start it again as it was.
pub struct ServeProcess {
    child: Option<Child>,
    pub addr: SocketAddr,
    pub log: PathBuf,
    command: Vec<(String, String)>,
    starts: usize,
}

impl ServeProcess {
    /// Starts `navin serve` on a fresh loopback port, aimed at `fake`, with `data_dir`
    /// and `env` (which wins over the defaults here); its log goes to `log`.
    pub fn spawn(
        fake: &FakeGitHub,
        secret: &str,
        data_dir: &Path,
        log: &Path,
        env: &[(&str, &str)],
    ) -> ServeProcess {
        let key = log.with_extension("pem");
        std::fs::write(&key, &fake.app_key().private_pem).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut command: Vec<(String, String)> = [
            ("NAVIN_LISTEN", addr.to_string()),
            ("NAVIN_APP_ID", fake.with_state(|m| m.app.id).to_string()),
            ("NAVIN_PRIVATE_KEY_PATH", key.display().to_string()),
            ("NAVIN_WEBHOOK_SECRET", secret.to_owned()),
            ("NAVIN_API_URL", fake.base_url().to_owned()),
            ("NAVIN_GIT_URL_TEMPLATE", fake.git_url_template()),
            ("NAVIN_DATA_DIR", data_dir.display().to_string()),
            ("NAVIN_WRITE_SPACING_MS", "0".to_owned()),
            ("NAVIN_RECONCILE_INTERVAL_SECS", "0".to_owned()),
            // Counts of done deliveries stay exact: no clock ticks of Navin's own.
            ("NAVIN_SWEEP_INTERVAL_SECS", "0".to_owned()),
            ("NAVIN_SHUTDOWN_GRACE_SECS", "1".to_owned()),
            ("RUST_LOG", "navin_bot=info,warn".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        for (k, v) in env {
            command.retain(|(known, _)| known != k);
            command.push(((*k).to_owned(), (*v).to_owned()));
        }
        let mut process = ServeProcess {
            child: None,
            addr,
            log: log.to_owned(),
            command,
            starts: 0,
        };
        process.start();
        process
    }

    /// Starts the process again (after [`kill`](Self::kill)) with the same settings.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "already running");
        self.starts += 1;
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_navin"))
            .arg("serve")
            .envs(self.command.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(out)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(self.addr).is_err() {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("navin serve exited ({status}): {}", self.log_text());
            }
            assert!(
                Instant::now() < deadline,
                "navin serve did not start: {}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGKILL: no shutdown, no flush, whatever was in flight is cut.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// SIGTERM, as a service manager stops it, and waits for the exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let status = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
            child.wait().unwrap();
        }
    }

    pub fn starts(&self) -> usize {
        self.starts
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            let log = self.log_text();
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!(
                "--- {} (last 40 lines) ---\n{}",
                self.log.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
    }
}

/// The facts added to `repo`'s mission, one per ledger commit that added one, oldest
/// commit first: a fact applied twice or out of order shows here.
pub fn facts_in_commit_order(fake: &FakeGitHub, owner: &str, repo: &str) -> Vec<String> {
    let git = git2::Repository::open_bare(fake.git_dir_path(owner, repo)).unwrap();
    let Ok(tip) = git.refname_to_id("refs/heads/navin/ledger") else {
        return Vec::new();
    };
    let mut walk = git.revwalk().unwrap();
    walk.push(tip).unwrap();
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::REVERSE)
        .unwrap();
    let mut added = Vec::new();
    let mut known = 0;
    for oid in walk {
        let commit = git.find_commit(oid.unwrap()).unwrap();
        assert!(commit.parent_count() <= 1, "the ledger is linear");
        let tree = commit.tree().unwrap();
        let Ok(entry) = tree.get_path(Path::new(".navin/board/mission.json")) else {
            continue;
        };
        let blob = git.find_blob(entry.id()).unwrap();
        let mission: serde_json::Value = serde_json::from_slice(blob.content()).unwrap();
        let facts: Vec<String> = mission["facts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if facts.len() > known {
            added.extend(facts[known..].iter().cloned());
        }
        known = facts.len();
    }
    added
}
