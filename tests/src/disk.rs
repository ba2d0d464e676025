//! A small real filesystem (tmpfs) that a test fills to the last byte and frees again,
//! so a full disk is met by the server as the kernel reports it (ENOSPC), not as an
//! error a test made up.
//!
//! Mounting needs root or passwordless sudo, as CI machines and GitHub's runners have;
//! without either the test fails naming what is missing rather than passing untested.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted tmpfs of a fixed size; unmounted (lazily, so open files cannot block it)
/// when dropped.
#[derive(Debug)]
pub struct SmallDisk {
    dir: PathBuf,
    filler: PathBuf,
}

impl SmallDisk {
    /// Mounts a tmpfs of `bytes` on `dir` (created if missing).
    pub fn mount(dir: &Path, bytes: u64) -> SmallDisk {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        let size = format!("size={}k,mode=0700", bytes.div_ceil(1024));
        let status = privileged()
            .args(["mount", "-t", "tmpfs", "-o", &size, "tmpfs"])
            .arg(dir)
            .status()
            .unwrap_or_else(|e| panic!("running mount: {e}"));
        assert!(
            status.success(),
            "mounting a {bytes}-byte tmpfs on {} failed ({status}): the full-disk tests need \
             root or passwordless sudo",
            dir.display()
        );
        SmallDisk {
            dir: dir.to_owned(),
            filler: dir.join(".filler"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes a filler file until the kernel answers "no space left on device"; returns
    /// the bytes it took.
    pub fn fill(&self) -> u64 {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.filler)
            .unwrap_or_else(|e| panic!("opening {}: {e}", self.filler.display()));
        let mut written = 0u64;
        // Big chunks first, then pages, so nothing is left over for a small write.
        for chunk in [1 << 20, 4096, 512] {
            let block = vec![0u8; chunk];
            loop {
                match file.write(&block) {
                    Ok(0) => break,
                    Ok(n) => written += n as u64,
                    Err(e) if e.raw_os_error() == Some(28) => break,
                    Err(e) => panic!("filling {}: {e}", self.dir.display()),
                }
            }
        }
        let _ = file.flush();
        written
    }

    /// Removes the filler: the space is back.
    pub fn free(&self) {
        match std::fs::remove_file(&self.filler) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("freeing {}: {e}", self.dir.display()),
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = privileged().args(["umount", "-l"]).arg(&self.dir).status();
    }
}

/// `mount` as root, or through `sudo -n` for a user with passwordless sudo.
fn privileged() -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    if root {
        let mut c = Command::new("env");
        c.arg("--");
        c
    } else {
        let mut c = Command::new("sudo");
        c.arg("-n");
        c
    }
}
