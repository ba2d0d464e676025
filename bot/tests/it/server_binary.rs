//! The `navin serve` binary itself: configured from the environment, it acknowledges a
//! signed delivery, exits cleanly on SIGTERM, and keeps the queue for the next start.
#![allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]

use crate::server_support;

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use server_support::{http_client, payload, post_webhook, rsa_keys, SECRET};

fn spawn_serve(dir: &std::path::Path) -> (Child, SocketAddr) {
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
    let (mut child, addr) = spawn_serve(dir.path());
    let client = http_client();
    let body = payload("created", "o/r", 1);
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
    let (mut again, addr) = spawn_serve(dir.path());
    assert_eq!(
        post_webhook(&http_client(), addr, "issue_comment", "bin-1", &body).await,
        Ok(202)
    );
    sigterm(&again);
    assert!(again.wait().unwrap().success());
}

/// `GET http://addr/path`: status and body.
async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let request = hyper::Request::get(format!("http://{addr}{path}"))
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    let response = http_client().request(request).await.unwrap();
    let status = response.status().as_u16();
    let body = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_turns_503_naming_the_failure_once_github_cannot_be_reached() {
    let dir = tempfile::tempdir().unwrap();
    // NAVIN_API_URL points at port 9 on loopback, where nothing listens.
    let (mut child, addr) = spawn_serve(dir.path());
    assert_eq!(get(addr, "/readyz").await, (200, "ready\n".to_owned()));
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
        let (status, reason) = get(addr, "/readyz").await;
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
