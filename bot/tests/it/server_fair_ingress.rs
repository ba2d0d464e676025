//! One client holding many stalled webhook bodies gets `503` past its share of the body
//! slots, while a delivery from another address is still read and acknowledged: the
//! budget is shared per sender, over real loopback TCP from two addresses.

use std::sync::Arc;
use std::time::Duration;

use navin_bot::queue::{ClaimedDelivery, DeliveryHandler, HandlerFuture};
use navin_bot::server::start;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpSocket;

use crate::server_support::{http_client, payload, post_webhook, serve_args};

struct Accept;

impl DeliveryHandler for Accept {
    fn handle<'a>(&'a self, _: &'a ClaimedDelivery) -> HandlerFuture<'a> {
        Box::pin(async { Ok(()) })
    }
}

/// Opens a connection from `from` and sends a webhook's headers and one byte of a
/// 1 KiB body, then nothing more.
async fn stall(from: &str, to: std::net::SocketAddr, n: usize) -> tokio::net::TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(format!("{from}:0").parse().expect("addr"))
        .expect("bind");
    let mut stream = socket.connect(to).await.expect("connect");
    let head = format!(
        "POST /webhook HTTP/1.1\r\nhost: navin\r\nx-github-event: issue_comment\r\nx-github-delivery: hog-{n}\r\ncontent-type: application/json\r\ncontent-length: 1024\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream
}

/// The status line the server answered on `stream` by now, if any.
async fn answered(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_millis(20), stream.read(&mut buf)).await {
        Ok(Ok(n)) if n > 0 => Some(
            String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned(),
        ),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_stalling_many_bodies_is_refused_past_its_share_and_another_sender_is_served() {
    let dir = tempfile::tempdir().expect("tmp");
    let args = serve_args(dir.path(), "http://127.0.0.1:9");
    let server = start(&args, |_| Arc::new(Accept)).await.expect("server");
    let addr = server.local_addr();

    // 160 stalled bodies from 127.0.0.2: its share is an eighth of the 1,024 slots.
    let mut streams = Vec::new();
    for n in 0..160 {
        streams.push(stall("127.0.0.2", addr, n).await);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut held = Vec::new();
    let mut refused = 0;
    for mut stream in streams {
        match answered(&mut stream).await {
            Some(line) => {
                assert!(line.contains("503"), "{line}");
                refused += 1;
            }
            None => held.push(stream),
        }
    }
    assert_eq!(held.len(), 128, "its share is held, no more");
    assert_eq!(refused, 32);

    // GitHub's delivery, from another address, is read and acknowledged meanwhile.
    let body = payload("created", "o/r", 42);
    let status = post_webhook(&http_client(), addr, "issue_comment", "real-1", &body).await;
    assert_eq!(status, Ok(202));
    let metrics = crate::server_support::http_get(addr, "/metrics").await.1;
    assert!(metrics.contains("reason=\"sender_busy\""), "{metrics}");
    drop(held);
    server.shutdown().await.expect("shutdown");
}
