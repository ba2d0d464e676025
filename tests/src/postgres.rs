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
    /// With [`PgServer::start_tls`]: the CA that signed the server's certificate.
    ca: Option<PathBuf>,
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

/// A CA and a server certificate for 127.0.0.1 signed by it, in `dir`; returns the
/// CA's path. The key is 0600, as PostgreSQL demands.
fn make_certificates(dir: &Path) -> Result<PathBuf, PgError> {
    let run = |args: &[&str]| -> Result<(), PgError> {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PgError::Start(format!("openssl: {e}")))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(PgError::Start(format!(
                "openssl {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )))
        }
    };
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n")
        .map_err(|e| PgError::Start(e.to_string()))?;
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=navin test CA",
    ])?;
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ])?;
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ])?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .map_err(|e| PgError::Start(e.to_string()))?;
    Ok(dir.join("ca.crt"))
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
        Self::start_with(false)
    }

    /// [`PgServer::start`] with TLS on: a CA and a server certificate for 127.0.0.1
    /// made by `openssl` for this server only; [`PgServer::ca_file`] is that CA.
    pub fn start_tls() -> Result<Self, PgError> {
        Self::start_with(true)
    }

    pub fn ca_file(&self) -> Option<PathBuf> {
        self.ca.clone()
    }

    fn start_with(tls: bool) -> Result<Self, PgError> {
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
            ca: None,
        };
        let mut extra = Vec::new();
        if tls {
            server.ca = Some(make_certificates(server.dir.path())?);
            let dir = server.dir.path();
            extra = vec![
                "-c".to_owned(),
                "ssl=on".to_owned(),
                "-c".to_owned(),
                format!("ssl_cert_file={}", dir.join("server.crt").display()),
                "-c".to_owned(),
                format!("ssl_key_file={}", dir.join("server.key").display()),
            ];
        }
        if server.as_postgres {
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
        server.spawn(&data, &extra)?;
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

    fn spawn(&mut self, data: &Path, extra: &[String]) -> Result<(), PgError> {
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
            .args(extra)
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

    /// Runs a client tool (`createdb`, `psql`) against this server as `navin`; its
    /// standard output, or an error with its standard error.
    fn client(&self, tool: &str, args: &[&str]) -> Result<String, PgError> {
        let port = self.port.to_string();
        let out = Command::new(self.bin.join(tool))
            .args(["-h", "127.0.0.1", "-p", &port, "-U", "navin"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PgError::Start(format!("{tool}: {e}")))?;
        if !out.status.success() {
            return Err(PgError::Start(format!(
                "{tool} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Creates database `name` and returns its connection string.
    pub fn database(&self, name: &str) -> Result<String, PgError> {
        self.client("createdb", &[name])?;
        Ok(self.url(name))
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://navin@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs SQL through `psql`, for tests that look at or change the tables directly.
    pub fn psql(&self, database: &str, sql: &str) -> Result<String, PgError> {
        self.client(
            "psql",
            &["-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
        )
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
