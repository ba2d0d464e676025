//! The `navin serve` binary itself: configured from the environment, it acknowledges a
//! signed delivery, exits cleanly on SIGTERM, and keeps the queue for the next start.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::server_support;

use axum::http::Request;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use server_support::{http_client, http_get, post_webhook, rsa_keys, SECRET};

fn spawn_serve(dir: &std::path::Path) -> (Child, SocketAddr) {
    spawn_serve_with(dir, &[])
}

fn spawn_serve_with(dir: &std::path::Path, env: &[(&str, &str)]) -> (Child, SocketAddr) {
    let key = dir.join("key.pem");
    std::fs::write(&key, &rsa_keys().private_pem).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_navin"))
        .arg("serve")
        .env("NAVIN_LISTEN", addr.to_string())
        .env("NAVIN_APP_ID", "1")
        .env("NAVIN_PRIVATE_KEY_PATH", &key)
        .env("NAVIN_WEBHOOK_SECRET", SECRET)
        .env("NAVIN_API_URL", "http://127.0.0.1:9")
        .env("NAVIN_DATA_DIR", dir.join("data"))
        .env("NAVIN_RECONCILE_INTERVAL_SECS", "0")
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(addr).is_err() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("navin serve did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child, addr)
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_binary_acknowledges_and_exits_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    // In-flight work gets a second to finish: the test is about the exit, not GitHub.
    let quick = [("NAVIN_SHUTDOWN_GRACE_SECS", "1")];
    let (mut child, addr) = spawn_serve_with(dir.path(), &quick);
    let client = http_client();
    // A delivery the engine can parse: GitHub (port 9 on loopback) does not answer, so
    // it stays queued for a retry and the second copy is a duplicate, however fast the
    // worker is. (A payload the engine refuses fails at once, and a failed delivery
    // sent again is queued again, as GitHub's redeliveries need.)
    let body = serde_json::to_vec(
        navin_e2e::Payload::fixture("issue_comment.created")
            .comment_body("/status")
            .repo("o", "r", 7)
            .installation(1)
            .json(),
    )
    .unwrap();
    assert_eq!(
        post_webhook(&client, addr, "issue_comment", "bin-1", &body).await,
        Ok(202)
    );
    assert_eq!(
        post_webhook(&client, addr, "issue_comment", "bin-1", &body).await,
        Ok(202)
    );
    sigterm(&child);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("navin serve ignored SIGTERM");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "exit status {status}");
    let logs = {
        use std::io::Read;
        let mut text = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    };
    assert!(logs.contains("delivery queued"), "{logs}");
    assert!(logs.contains("duplicate delivery ignored"), "{logs}");
    assert!(logs.contains("navin webhook server stopped"), "{logs}");
    assert!(!logs.contains(SECRET), "secret in logs");

    // The same data directory serves again (the lock was released at exit).
    let (mut again, addr) = spawn_serve_with(dir.path(), &quick);
    assert_eq!(
        post_webhook(&http_client(), addr, "issue_comment", "bin-1", &body).await,
        Ok(202)
    );
    sigterm(&again);
    assert!(again.wait().unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_turns_503_naming_the_failure_once_github_cannot_be_reached() {
    let dir = tempfile::tempdir().unwrap();
    // NAVIN_API_URL points at port 9 on loopback, where nothing listens.
    let (mut child, addr) = spawn_serve(dir.path());
    assert_eq!(http_get(addr, "/readyz").await, (200, "ready\n".to_owned()));
    let body = serde_json::to_vec(
        navin_e2e::Payload::fixture("issue_comment.created")
            .comment_body("/status")
            .repo("o", "r", 7)
            .installation(1)
            .json(),
    )
    .unwrap();
    assert_eq!(
        post_webhook(&http_client(), addr, "issue_comment", "unready-1", &body).await,
        Ok(202)
    );
    // The engine's first GitHub call fails after the client's own retries (~15 s).
    let deadline = Instant::now() + Duration::from_secs(90);
    let (status, reason) = loop {
        let (status, reason) = http_get(addr, "/readyz").await;
        if status != 200 || Instant::now() > deadline {
            break (status, reason);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let _ = child.kill();
    let _ = child.wait();
    let logs = {
        use std::io::Read;
        let mut text = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut text);
        text
    };
    assert_eq!(status, 503, "{reason}\n{logs}");
    assert!(reason.starts_with("github: last "), "{reason}");
    assert!(reason.contains(" failed "), "{reason}");
    assert!(reason.contains("Connection refused"), "{reason}");
    assert_eq!(reason.lines().count(), 1, "{reason}");
}

fn stop_and_read_logs(mut child: Child) -> String {
    sigterm(&child);
    let _ = child.wait();
    use std::io::Read;
    let mut text = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_delivery_fields_and_clip_untrusted_values() {
    let dir = tempfile::tempdir().unwrap();
    let (child, addr) = spawn_serve_with(dir.path(), &[("NAVIN_LOG_FORMAT", "json")]);
    let repository = format!("o/{}\nforged line", "r".repeat(5000));
    let body = serde_json::to_vec(
        navin_e2e::Payload::fixture("issue_comment.created")
            .comment_body("just a comment, no command")
            .repo("o", "r", 7)
            .set("/repository/full_name", serde_json::json!(repository))
            .installation(1)
            .json(),
    )
    .unwrap();
    assert_eq!(
        post_webhook(&http_client(), addr, "issue_comment", "json-1", &body).await,
        Ok(202)
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let metrics = loop {
        let (_, metrics) = http_get(addr, "/metrics").await;
        let attempts = metrics
            .lines()
            .any(|l| l.starts_with("navin_delivery_attempts_total{"));
        if attempts || Instant::now() > deadline {
            break metrics;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let logs = stop_and_read_logs(child);
    let lines: Vec<serde_json::Value> = logs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let line = |message: &str| {
        lines
            .iter()
            .find(|l| l["message"] == message)
            .unwrap_or_else(|| panic!("no {message:?} line in {logs}"))
    };
    let queued = line("delivery queued");
    assert_eq!(queued["delivery"], "json-1");
    assert_eq!(queued["event"], "issue_comment");
    assert_eq!(queued["outcome"], "queued");
    let logged_repo = queued["repository"].as_str().unwrap();
    assert!(logged_repo.chars().count() < 600, "{logged_repo}");
    assert!(logged_repo.ends_with("more bytes)"), "{logged_repo}");
    let handled = line("delivery handled");
    assert_eq!(handled["delivery"], "json-1");
    assert_eq!(handled["event"], "issue_comment");
    assert_eq!(handled["attempt"], 1);
    assert!(handled["outcome"].is_string(), "{handled}");
    assert!(handled["repository"].as_str().unwrap().len() < 1600);
    assert!(!logs.contains(SECRET), "secret in logs");

    let version = env!("CARGO_PKG_VERSION");
    let build = metrics
        .lines()
        .find(|l| l.starts_with("navin_build_info{"))
        .unwrap_or_else(|| panic!("no navin_build_info in {metrics}"));
    assert!(build.contains(&format!("version=\"{version}\"")), "{build}");
    assert!(build.contains("commit=\""), "{build}");
    assert!(build.ends_with(" 1"), "{build}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_answer_only_the_bearer_token_when_one_is_configured() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("metrics-token");
    std::fs::write(&token_file, "scrape-me-0123456789\n").unwrap();
    let (child, addr) = spawn_serve_with(
        dir.path(),
        &[("NAVIN_METRICS_TOKEN_FILE", token_file.to_str().unwrap())],
    );
    let ask = |auth: Option<&'static str>| async move {
        let mut request = Request::get(format!("http://{addr}/metrics"));
        if let Some(value) = auth {
            request = request.header("authorization", value);
        }
        let request = request
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap();
        let response = http_client().request(request).await.unwrap();
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .map(|v| v.to_str().unwrap().to_owned());
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .unwrap()
            .to_bytes();
        (
            status,
            challenge,
            String::from_utf8_lossy(&body).into_owned(),
        )
    };
    let (status, challenge, body) = ask(None).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.is_some_and(|c| c.starts_with("Bearer")));
    assert!(!body.contains("navin_"), "{body}");
    assert_eq!(ask(Some("Bearer wrong-token")).await.0, 401);
    assert_eq!(
        ask(Some("scrape-me-0123456789")).await.0,
        401,
        "the scheme is needed"
    );
    let (status, _, body) = ask(Some("Bearer scrape-me-0123456789")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("navin_"), "{body}");
    // The other endpoints stay open for probes.
    assert_eq!(http_get(addr, "/healthz").await.0, 200);
    let logs = stop_and_read_logs(child);
    assert!(
        !logs.contains("scrape-me-0123456789"),
        "the token is never logged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_finishes_its_headers_is_disconnected_and_deliveries_still_land() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let (mut child, addr) = spawn_serve(dir.path());
    // Fifty connections that send half a request line's headers and then nothing.
    let mut slow: Vec<std::net::TcpStream> = (0..50)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(b"POST /webhook HTTP/1.1\r\nHost: navin\r\nX-GitHub-Event: iss")
                .unwrap();
            s
        })
        .collect();
    // A real delivery is answered meanwhile.
    let client = http_client();
    let body = server_support::payload("created", "o/r", 1);
    let status = post_webhook(&client, addr, "issue_comment", "guid-amid-slow", &body).await;
    assert_eq!(status, Ok(202));
    // Each slow one is closed by the server at the header deadline (10 s), not held.
    let started = Instant::now();
    for s in &mut slow {
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = [0u8; 256];
        let read = s.read(&mut buf);
        assert!(
            matches!(read, Ok(0))
                || matches!(&read, Ok(n) if buf[..*n].starts_with(b"HTTP/1.1 408"))
                || read
                    .as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "{read:?}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    sigterm(&child);
    let _ = child.wait();
}
