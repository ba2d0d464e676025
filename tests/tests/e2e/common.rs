//! Shared setup: a fake with one repository and installation, and clients pointed at it.

use std::path::Path;
use std::process::{Command, Output};

use navin_e2e::FakeGitHub;
use octocrab::Octocrab;

pub const OWNER: &str = "octo-org";
pub const REPO: &str = "hello";

/// A fake with `octo-org/hello` and the App installed on it.
pub fn setup() -> (FakeGitHub, u64) {
    let fake = FakeGitHub::start();
    fake.create_repo(OWNER, REPO);
    let installation = fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    (fake, installation)
}

/// octocrab authenticated with a bearer token (installation, `GITHUB_TOKEN` or personal).
pub fn token_client(fake: &FakeGitHub, token: &str) -> Octocrab {
    Octocrab::builder()
        .base_uri(fake.base_url())
        .expect("base uri")
        .personal_token(token.to_string())
        .build()
        .expect("octocrab client")
}

/// octocrab authenticated as the App with the fake's generated private key.
pub fn app_client(fake: &FakeGitHub) -> Octocrab {
    let key = octocrab::EncodingKey::from_rsa_pem(fake.app_key().private_pem.as_bytes())
        .expect("rsa key");
    let app_id = fake.with_state(|m| m.app.id);
    Octocrab::builder()
        .base_uri(fake.base_url())
        .expect("base uri")
        .app(octocrab::models::AppId(app_id), key)
        .build()
        .expect("octocrab app client")
}

/// Runs git hermetically (no user or system config).
pub fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "Tester")
        .env("GIT_AUTHOR_EMAIL", "tester@example.invalid")
        .env("GIT_COMMITTER_NAME", "Tester")
        .env("GIT_COMMITTER_EMAIL", "tester@example.invalid")
        .output()
        .expect("run git")
}

pub fn git_ok(dir: &Path, args: &[&str]) -> String {
    let out = git(dir, args);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Status code of an octocrab error, if GitHub answered.
pub fn status_of(err: &octocrab::Error) -> Option<u16> {
    match err {
        octocrab::Error::GitHub { source, .. } => Some(source.status_code.as_u16()),
        _ => None,
    }
}

pub fn message_of(err: &octocrab::Error) -> String {
    match err {
        octocrab::Error::GitHub { source, .. } => source.message.clone(),
        other => other.to_string(),
    }
}
