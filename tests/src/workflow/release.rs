//! Navin's release as the test runner downloads it: the binaries under test, stripped and packed as `<bin>-<target>.tar.gz` with a `.sha256`, on a loopback file server.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// A running release server: `GET /<version>/<asset>`.
#[derive(Debug)]
pub struct Releases {
    base: String,
    version: String,
    _dir: tempfile::TempDir,
}

/// The target triple install.sh picks on this machine (from RUNNER_OS/RUNNER_ARCH).
pub fn host_target() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "aarch64-unknown-linux-gnu"
    } else {
        "x86_64-unknown-linux-gnu"
    }
}

fn pack(bin: &Path, name: &str, dir: &Path) -> std::io::Result<()> {
    let stage = tempfile::tempdir()?;
    let staged = stage.path().join(name);
    std::fs::copy(bin, &staged)?;
    // A release is built without debug info; the test build's is most of its size.
    let _ = Command::new("strip")
        .arg("--strip-debug")
        .arg(&staged)
        .status();
    let asset = dir.join(format!("{name}-{}.tar.gz", host_target()));
    // Fast compression: the binaries are large and only cross the loopback.
    let status = Command::new("sh")
        .arg("-c")
        .arg("tar -cf - -C \"$1\" \"$2\" | gzip -1 > \"$3\"")
        .arg("pack")
        .arg(stage.path())
        .arg(name)
        .arg(&asset)
        .status()?;
    if !status.success() {
        return Err(std::io::Error::other("tar failed"));
    }
    let digest = hex::encode(Sha256::digest(std::fs::read(&asset)?));
    let file = asset
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::write(
        dir.join(format!("{file}.sha256")),
        format!("{digest}  {file}\n"),
    )
}

impl Releases {
    /// Packs `binaries` (`(path, name)`: the test build's `navin-action` and `navin`) as
    /// release `version` and serves them.
    pub fn start(version: &str, binaries: &[(&Path, &str)]) -> Releases {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("release dir: {e}"));
        let at = dir.path().join(version);
        std::fs::create_dir_all(&at).unwrap_or_else(|e| panic!("release dir: {e}"));
        for (bin, name) in binaries {
            pack(bin, name, &at).unwrap_or_else(|e| panic!("packing {name}: {e}"));
        }
        Self::serve(version, dir)
    }

    /// Serves the files in `assets` (a release workflow's `dist/`) as release `version`.
    pub fn of_files(version: &str, assets: &Path) -> Releases {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("release dir: {e}"));
        let at = dir.path().join(version);
        std::fs::create_dir_all(&at).unwrap_or_else(|e| panic!("release dir: {e}"));
        for entry in
            std::fs::read_dir(assets).unwrap_or_else(|e| panic!("{}: {e}", assets.display()))
        {
            let path = entry.unwrap_or_else(|e| panic!("entry: {e}")).path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, at.join(name)).unwrap_or_else(|e| panic!("copy: {e}"));
            }
        }
        Self::serve(version, dir)
    }

    fn serve(version: &str, dir: tempfile::TempDir) -> Releases {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
        let base = format!(
            "http://{}",
            listener
                .local_addr()
                .unwrap_or_else(|e| panic!("addr: {e}"))
        );
        let root = dir.path().to_path_buf();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                std::thread::spawn(move || serve(stream, &root));
            }
        });
        Releases {
            base,
            version: version.into(),
            _dir: dir,
        }
    }

    /// What `NAVIN_DOWNLOAD_BASE_URL` points at (before `/<version>/<asset>`).
    pub fn base_url(&self) -> String {
        self.base.clone()
    }

    pub fn version(&self) -> String {
        self.version.clone()
    }
}

fn serve(mut stream: TcpStream, root: &Path) {
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut request = String::new();
    if reader.read_line(&mut request).is_err() {
        return;
    }
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let safe = !path.contains("..");
    let file: PathBuf = root.join(path.trim_start_matches('/'));
    match std::fs::read(&file) {
        Ok(body) if safe && file.is_file() => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
        _ => {
            let _ = write!(
                stream,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    }
}
