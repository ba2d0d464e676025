//! A private PostgreSQL server for one test: `initdb` into a temporary directory, a free
//! loopback port, stopped when dropped. Uses Debian's `postgresql` package (`.ci/run`
//! installs it); `NAVIN_PG_BIN` points elsewhere. PostgreSQL refuses to run as root, so
//! under root the server runs as the `postgres` user.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server; every database made by [`PgServer::database`] lives in it.
#[derive(Debug)]
pub struct PgServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
    as_postgres: bool,
}

/// Why no server could be started; the message says what to install.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error(
        "no PostgreSQL server binaries: install Debian's postgresql package \
         (apt-get install postgresql), or set NAVIN_PG_BIN to the directory holding initdb"
    )]
    NotInstalled,
    #[error("{0}")]
    Start(String),
}

fn bin_dir() -> Result<PathBuf, PgError> {
    if let Ok(dir) = std::env::var("NAVIN_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|_| PgError::NotInstalled)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or(PgError::NotInstalled)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(55432)
}

impl PgServer {
    /// Starts a fresh server and waits until it accepts connections.
    pub fn start() -> Result<Self, PgError> {
        let bin = bin_dir()?;
        let dir = tempfile::Builder::new()
            .prefix("navin-pg-")
            .tempdir()
            .map_err(|e| PgError::Start(e.to_string()))?;
        let as_postgres = is_root();
        let mut server = Self {
            bin,
            dir,
            port: free_port(),
            child: None,
            as_postgres,
        };
        if as_postgres {
            let chown = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(server.dir.path())
                .status()
                .map_err(|e| PgError::Start(format!("chown: {e}")))?;
            if !chown.success() {
                return Err(PgError::Start("chown of the data directory failed".into()));
            }
        }
        let data = server.dir.path().join("data");
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "navin", "--auth=trust", "-E", "UTF8", "--no-sync"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PgError::Start(format!("initdb: {e}")))?;
        if !out.status.success() {
            return Err(PgError::Start(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        server.spawn(&data)?;
        Ok(server)
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            // setpriv execs in place (runuser would fork), so killing the child kills
            // the server itself.
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=postgres",
                "--regid=postgres",
                "--init-groups",
                "--",
            ])
            .arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn spawn(&mut self, data: &Path) -> Result<(), PgError> {
        let log = std::fs::File::create(self.dir.path().join("server.log"))
            .map_err(|e| PgError::Start(e.to_string()))?;
        let log2 = log.try_clone().map_err(|e| PgError::Start(e.to_string()))?;
        // Output goes to a file: an inherited pipe would keep a test runner's output
        // open if the server ever outlived the test.
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(data)
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-k")
            .arg(self.dir.path())
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=200",
            ])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|e| PgError::Start(format!("postgres: {e}")))?;
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                let log =
                    std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
                return Err(PgError::Start(format!("postgres did not start: {log}")));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Creates database `name` and returns its connection string.
    pub fn database(&self, name: &str) -> Result<String, PgError> {
        let out = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "navin",
                name,
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PgError::Start(format!("createdb: {e}")))?;
        if !out.status.success() {
            return Err(PgError::Start(format!(
                "createdb {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(self.url(name))
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://navin@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs SQL through `psql`, for tests that look at or change the tables directly.
    pub fn psql(&self, database: &str, sql: &str) -> Result<String, PgError> {
        let out = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "navin",
            ])
            .args(["-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PgError::Start(format!("psql: {e}")))?;
        if !out.status.success() {
            return Err(PgError::Start(format!(
                "psql: {}",
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
