//! `action/install.sh`, the Action's install step, against a loopback file server standing in
//! for the GitHub release download, and a stub cargo standing in for the build from source.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

const ASSET: &str = "navin-action-x86_64-unknown-linux-gnu.tar.gz";
/// The workspace version, which install.sh reads from Cargo.toml when no version is asked for.
const VERSION: &str = concat!("v", env!("CARGO_PKG_VERSION"));

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("install.sh")
}

/// Serves files under `root` over plain HTTP on 127.0.0.1; anything else is a 404.
struct FileServer {
    base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FileServer {
    fn start(root: &Path) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (root, seen) = (root.to_path_buf(), Arc::clone(&requests));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                serve(stream, &root, &seen);
            }
        });
        FileServer { base, requests }
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

fn serve(mut stream: TcpStream, root: &Path, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Skip the headers.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned();
    seen.lock().expect("lock").push(path.clone());
    let file = root.join(path.trim_start_matches('/'));
    let (status, body) = match (path.contains(".."), std::fs::read(&file)) {
        (false, Ok(body)) => ("200 OK", body),
        _ => ("404 Not Found", b"Not Found".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}

fn write_executable(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    let status = Command::new("chmod")
        .arg("+x")
        .arg(path)
        .status()
        .expect("chmod");
    assert!(status.success());
}

/// A release directory `<root>/v0.1.0/` holding the tarball and, unless `sha256` says
/// otherwise, its correct `.sha256` line. Returns the tarball's SHA-256.
fn release(root: &Path, sha256: Option<&str>) -> String {
    let dir = root.join(VERSION);
    let stage = root.join("stage");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::create_dir_all(&stage).expect("mkdir");
    write_executable(
        &stage.join("navin-action"),
        "#!/bin/sh\necho \"navin-action from the release $*\"\n",
    );
    let status = Command::new("tar")
        .arg("-czf")
        .arg(dir.join(ASSET))
        .arg("-C")
        .arg(&stage)
        .arg("navin-action")
        .status()
        .expect("tar");
    assert!(status.success());
    let digest = hex::encode(Sha256::digest(
        std::fs::read(dir.join(ASSET)).expect("read"),
    ));
    let line = format!("{}  {ASSET}\n", sha256.unwrap_or(&digest));
    std::fs::write(dir.join(format!("{ASSET}.sha256")), line).expect("write");
    digest
}

/// One run of install.sh in a fresh runner temp directory.
struct Install {
    temp: tempfile::TempDir,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Install {
    fn run(base_url: &str, extra: &[(&str, &str)]) -> Install {
        Install::run_in(tempfile::tempdir().expect("tempdir"), base_url, extra)
    }

    /// A run in `temp`, as a later job sees a runner temp directory whose build cache
    /// was restored.
    fn run_in(temp: tempfile::TempDir, base_url: &str, extra: &[(&str, &str)]) -> Install {
        let t = temp.path();
        // Stands in for cargo: logs its arguments and "builds" a navin-action that says so.
        write_executable(
            &t.join("stub-cargo"),
            &format!(
                "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{log}'\n\
                 exe=navin-action\n\
                 while [ $# -gt 0 ]; do\n\
                 if [ \"$1\" = --target-dir ]; then dir=\"$2\"; fi\n\
                 if [ \"$1\" = -p ] && [ \"$2\" = navin-bot ]; then exe=navin; fi\n\
                 shift\ndone\n\
                 mkdir -p \"$dir/release\"\n\
                 printf '#!/bin/sh\\necho %s built from source\\n' \"$exe\" > \"$dir/release/$exe\"\n\
                 chmod +x \"$dir/release/$exe\"\n",
                log = t.join("cargo.log").display()
            ),
        );
        let mut cmd = Command::new("bash");
        cmd.arg(script())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("RUNNER_TEMP", t)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("GITHUB_OUTPUT", t.join("output"))
            .env("NAVIN_ACTION_REPOSITORY", "octo-org/navin")
            .env("NAVIN_DOWNLOAD_BASE_URL", base_url)
            .env("NAVIN_ACTION_CARGO", t.join("stub-cargo"));
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run install.sh");
        Install {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            temp,
        }
    }

    fn installed(&self) -> PathBuf {
        self.temp.path().join("navin-action/bin/navin-action")
    }

    /// The `path` output the run step reads.
    fn output_path(&self) -> Option<String> {
        let text = std::fs::read_to_string(self.temp.path().join("output")).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("path="))
            .map(str::to_owned)
    }

    fn cargo_calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.temp.path().join("cargo.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn run_installed(&self) -> String {
        let path = self.output_path().expect("path output");
        let out = Command::new(&path)
            .arg("--mode")
            .arg("summary")
            .output()
            .expect("run the installed binary");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn log(&self) -> String {
        format!("stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr)
    }
}

#[test]
fn install_downloads_the_release_whose_checksum_matches_and_the_binary_runs() {
    let root = tempfile::tempdir().expect("tempdir");
    let digest = release(root.path(), None);
    let server = FileServer::start(root.path());

    let run = Install::run(&server.base, &[]);

    assert_eq!(run.code, Some(0), "{}", run.log());
    assert!(
        run.stdout
            .contains(&format!("verified {ASSET}: sha256 {digest}")),
        "{}",
        run.log()
    );
    assert_eq!(
        run.output_path().as_deref(),
        Some(run.installed().to_str().expect("utf-8"))
    );
    assert_eq!(
        run.run_installed().trim(),
        "navin-action from the release --mode summary"
    );
    assert_eq!(
        server.requests(),
        [
            format!("/{VERSION}/{ASSET}"),
            format!("/{VERSION}/{ASSET}.sha256")
        ]
    );
    assert!(
        run.cargo_calls().is_empty(),
        "built although the release matched"
    );
    assert!(!run.stdout.contains("::warning"), "{}", run.log());
}

#[test]
fn install_refuses_a_release_whose_checksum_does_not_match_and_installs_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    let wrong = "0".repeat(64);
    let digest = release(root.path(), Some(&wrong));
    let server = FileServer::start(root.path());

    let run = Install::run(&server.base, &[]);

    assert_eq!(run.code, Some(1), "{}", run.log());
    let error = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::error"))
        .unwrap_or_else(|| panic!("no ::error line\n{}", run.log()));
    assert!(error.contains("SHA-256 mismatch"), "{error}");
    assert!(error.contains(ASSET), "the error names the file: {error}");
    assert!(error.contains(&wrong) && error.contains(&digest), "{error}");
    assert!(
        !run.installed().exists(),
        "a refused download was installed"
    );
    assert_eq!(run.output_path(), None);
    assert!(
        run.cargo_calls().is_empty(),
        "a mismatch is an error, not a reason to build from source"
    );
}

#[test]
fn install_refuses_a_checksum_file_without_a_sha256() {
    let root = tempfile::tempdir().expect("tempdir");
    release(root.path(), Some("<html>sign in</html>"));
    let server = FileServer::start(root.path());

    let run = Install::run(&server.base, &[]);

    assert_eq!(run.code, Some(1), "{}", run.log());
    assert!(
        run.stdout
            .contains(&format!("::error title=navin::{ASSET}.sha256")),
        "{}",
        run.log()
    );
    assert!(!run.installed().exists());
    assert!(run.cargo_calls().is_empty());
}

/// The stub cargo must have been asked for the real default: a locked release build of the
/// action's own package from the workspace next to install.sh.
fn assert_built_from_own_source(run: &Install) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace");
    let calls = run.cargo_calls();
    assert_eq!(calls.len(), 1, "{calls:?}\n{}", run.log());
    let expected = format!(
        "build --release --locked -p navin-action --manifest-path {}/Cargo.toml --target-dir {}/navin-action/target",
        workspace.display(),
        run.temp.path().display()
    );
    assert_eq!(calls[0], expected);
    assert_eq!(run.run_installed().trim(), "navin-action built from source");
}

#[test]
fn install_builds_from_source_with_a_warning_when_the_release_has_no_asset() {
    let root = tempfile::tempdir().expect("tempdir");
    let server = FileServer::start(root.path());

    let run = Install::run(&server.base, &[]);

    assert_eq!(run.code, Some(0), "{}", run.log());
    let warning = run
        .stdout
        .lines()
        .find(|l| l.starts_with("::warning"))
        .unwrap_or_else(|| panic!("no ::warning line\n{}", run.log()));
    assert!(
        warning.contains(ASSET) && warning.contains("building navin-action from source"),
        "{warning}"
    );
    assert_eq!(server.requests(), [format!("/{VERSION}/{ASSET}")]);
    assert_built_from_own_source(&run);
}

#[test]
fn install_builds_from_source_with_a_warning_when_the_release_server_is_unreachable() {
    // A port that was just free: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();

    let run = Install::run(&format!("http://127.0.0.1:{port}"), &[]);

    assert_eq!(run.code, Some(0), "{}", run.log());
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("::warning") && l.contains("building navin-action from source")),
        "{}",
        run.log()
    );
    assert_built_from_own_source(&run);
}

#[test]
fn install_with_build_from_source_downloads_nothing() {
    let root = tempfile::tempdir().expect("tempdir");
    release(root.path(), None);
    let server = FileServer::start(root.path());

    let run = Install::run(&server.base, &[("NAVIN_BUILD_FROM_SOURCE", "true")]);

    assert_eq!(run.code, Some(0), "{}", run.log());
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert_built_from_own_source(&run);
}

#[test]
fn install_refuses_plain_http_downloads_from_another_host() {
    let run = Install::run("http://example.invalid/releases", &[]);

    assert_eq!(run.code, Some(1), "{}", run.log());
    assert!(
        run.stdout.contains("::error") && run.stdout.contains("must use https"),
        "{}",
        run.log()
    );
    assert!(!run.installed().exists());
    assert!(run.cargo_calls().is_empty());
}

#[test]
fn install_refuses_a_version_that_is_not_a_release_tag() {
    let run = Install::run("http://127.0.0.1:9", &[("NAVIN_VERSION", "main; rm -rf /")]);

    assert_eq!(run.code, Some(1), "{}", run.log());
    assert!(
        run.stdout.contains("input 'version' must be a release tag"),
        "{}",
        run.log()
    );
    assert!(run.cargo_calls().is_empty());
}

#[test]
fn install_downloads_the_requested_version_and_the_target_of_the_runner() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("v9.8.7");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let server = FileServer::start(root.path());

    let run = Install::run(
        &server.base,
        &[
            ("NAVIN_VERSION", "v9.8.7"),
            ("RUNNER_OS", "macOS"),
            ("RUNNER_ARCH", "ARM64"),
        ],
    );

    assert_eq!(
        server.requests(),
        ["/v9.8.7/navin-action-aarch64-apple-darwin.tar.gz"]
    );
    // Not released: it builds the pinned source, and says that is not what was asked for.
    assert!(
        run.stdout.contains(&format!(
            "building the action's own source ({VERSION}), not the requested v9.8.7"
        )),
        "{}",
        run.log()
    );
}

/// The outputs install.sh wrote, as `key=value` lines.
fn outputs(run: &Install) -> std::collections::HashMap<String, String> {
    std::fs::read_to_string(run.temp.path().join("output"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn resolving_without_a_release_asks_for_a_build_keyed_by_the_lock_file_and_the_source() {
    let root = tempfile::tempdir().expect("tempdir");
    let server = FileServer::start(root.path());

    let run = Install::run(&server.base, &[("NAVIN_INSTALL_PHASE", "resolve")]);

    assert_eq!(run.code, Some(0), "{}", run.log());
    assert!(
        run.cargo_calls().is_empty(),
        "the build waits for the cache"
    );
    assert!(!run.installed().exists());
    let out = outputs(&run);
    assert_eq!(
        out.get("build").map(String::as_str),
        Some("true"),
        "{out:?}"
    );
    let prefix = out.get("cache-restore-key").expect("a restore key");
    let key = out.get("cache-key").expect("a key");
    assert!(
        prefix.starts_with("navin-action-x86_64-unknown-linux-gnu-"),
        "{prefix}"
    );
    assert!(
        key.starts_with(prefix.as_str()) && key.len() == prefix.len() + 16,
        "{key}"
    );
    let dir = out.get("cache-dir").expect("the cache dir");
    assert_eq!(Path::new(dir), run.temp.path().join("navin-action"));
    // Resolving again gives the same key: nothing in it depends on the run.
    let again = Install::run(&server.base, &[("NAVIN_INSTALL_PHASE", "resolve")]);
    assert_eq!(outputs(&again).get("cache-key"), Some(key));
}

#[test]
fn a_second_job_on_the_same_source_reuses_the_cached_build_without_cargo() {
    let first = Install::run("http://127.0.0.1:9", &[("NAVIN_INSTALL_PHASE", "build")]);
    assert_eq!(first.code, Some(0), "{}", first.log());
    assert_built_from_own_source(&first);

    // The next job restores the cache into its temp dir: no cargo at all.
    let temp = first.temp;
    std::fs::remove_file(temp.path().join("cargo.log")).expect("clear the cargo log");
    std::fs::remove_file(temp.path().join("navin-action/bin/navin-action")).expect("clear");
    let second = Install::run_in(
        temp,
        "http://127.0.0.1:9",
        &[("NAVIN_INSTALL_PHASE", "build")],
    );
    assert_eq!(second.code, Some(0), "{}", second.log());
    assert!(
        second.cargo_calls().is_empty(),
        "{:?}",
        second.cargo_calls()
    );
    assert!(second
        .stdout
        .contains("reused navin-action built from this source"));
    assert_eq!(
        second.run_installed().trim(),
        "navin-action built from source"
    );

    // A cache from other source (a restore-key hit) is built on, not trusted.
    let temp = second.temp;
    std::fs::write(temp.path().join("navin-action/built/source"), "other\n").expect("write");
    let third = Install::run_in(
        temp,
        "http://127.0.0.1:9",
        &[("NAVIN_INSTALL_PHASE", "build")],
    );
    assert_eq!(third.code, Some(0), "{}", third.log());
    assert_eq!(third.cargo_calls().len(), 1, "{}", third.log());
}

#[test]
fn an_agent_job_installs_navin_from_the_release_or_builds_it_when_there_is_none() {
    // No release at all: the agent job still gets `navin`, built from this source.
    let root = tempfile::tempdir().expect("tempdir");
    let server = FileServer::start(root.path());
    let run = Install::run(&server.base, &[("NAVIN_INSTALL_BIN", "navin")]);
    assert_eq!(run.code, Some(0), "{}", run.log());
    let installed = run.temp.path().join("navin/bin/navin");
    assert_eq!(
        run.output_path().as_deref(),
        Some(installed.to_str().expect("utf-8"))
    );
    let calls = run.cargo_calls();
    assert!(
        calls.len() == 1 && calls[0].contains("-p navin-bot"),
        "{calls:?}"
    );
    assert!(
        server
            .requests()
            .contains(&format!("/{VERSION}/navin-x86_64-unknown-linux-gnu.tar.gz")),
        "the release asset of navin is tried first: {:?}",
        server.requests()
    );
    let out = Command::new(&installed).output().expect("run navin");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "navin built from source"
    );

    let bogus = Install::run(&server.base, &[("NAVIN_INSTALL_BIN", "rm")]);
    assert_ne!(bogus.code, Some(0), "only navin and navin-action install");
    assert!(
        bogus.stdout.contains("NAVIN_INSTALL_BIN must be"),
        "{}",
        bogus.log()
    );
}
