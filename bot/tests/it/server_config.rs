//! `navin serve` refuses a bad setting at start: exit 2, one line naming the setting,
//! its value (unless it may hold a credential) and what is expected.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::server_support::{rsa_keys, SECRET};

/// Runs `navin serve` with a valid configuration plus `extra`; returns exit code and stderr.
fn serve_with(extra: &[(&str, &str)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key.pem");
    std::fs::write(&key, &rsa_keys().private_pem).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_navin"));
    cmd.arg("serve")
        .env("NAVIN_LISTEN", "127.0.0.1:0")
        .env("NAVIN_APP_ID", "1")
        .env("NAVIN_PRIVATE_KEY_PATH", &key)
        .env("NAVIN_WEBHOOK_SECRET", SECRET)
        .env("NAVIN_DATA_DIR", dir.path().join("data"))
        .env("NAVIN_RECONCILE_INTERVAL_SECS", "0")
        .env_remove("NAVIN_LLM_BASE_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("navin serve started with {extra:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused(extra: &[(&str, &str)], names: &[&str]) {
    let (code, stderr) = serve_with(extra);
    assert_eq!(code, Some(2), "{extra:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{extra:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for name in names {
        assert!(stderr.contains(name), "{name} missing: {stderr}");
    }
}

#[test]
fn an_api_url_that_is_not_a_url_stops_the_server_naming_it() {
    assert_refused(
        &[("NAVIN_API_URL", "notaurl")],
        &["NAVIN_API_URL", "`notaurl`", "expected an http(s) URL"],
    );
    assert_refused(
        &[("NAVIN_API_URL", "ftp://example.com")],
        &["NAVIN_API_URL", "ftp://example.com"],
    );
}

#[test]
fn a_git_url_template_without_the_repository_stops_the_server() {
    assert_refused(
        &[("NAVIN_GIT_URL_TEMPLATE", "https://github.com/fixed.git")],
        &["NAVIN_GIT_URL_TEMPLATE", "{owner}"],
    );
    assert_refused(
        &[("NAVIN_GIT_URL_TEMPLATE", "github.com/{owner}/{repo}")],
        &["NAVIN_GIT_URL_TEMPLATE", "github.com/{owner}/{repo}"],
    );
}

#[test]
fn zero_workers_attempts_or_body_bytes_stop_the_server() {
    assert_refused(&[("NAVIN_WORKERS", "0")], &["NAVIN_WORKERS", "at least 1"]);
    assert_refused(
        &[("NAVIN_MAX_ATTEMPTS", "0")],
        &["NAVIN_MAX_ATTEMPTS", "at least 1"],
    );
    assert_refused(
        &[("NAVIN_MAX_BODY_BYTES", "0")],
        &["NAVIN_MAX_BODY_BYTES", "at least 1"],
    );
}

#[test]
fn a_queue_lease_under_three_seconds_stops_the_server() {
    assert_refused(
        &[("NAVIN_QUEUE_LEASE_SECS", "1")],
        &["NAVIN_QUEUE_LEASE_SECS", "at least 3"],
    );
}

#[test]
fn a_bad_llm_base_url_is_named_without_its_value() {
    let url = "htps//user:sekrit@llm.example";
    assert_refused(
        &[("NAVIN_LLM_BASE_URL", url)],
        &["NAVIN_LLM_BASE_URL", "value not shown"],
    );
    let (_, stderr) = serve_with(&[("NAVIN_LLM_BASE_URL", url)]);
    assert!(!stderr.contains("sekrit"), "{stderr}");
}
