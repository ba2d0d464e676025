//! Serving HTTP/1.1 connections with a deadline on each request's headers, which
//! `axum::serve` does not offer, and a graceful drain on shutdown.
//!
//! A client that opens a connection and trickles its headers would otherwise hold a task
//! and a socket forever; with [`HEADER_READ_TIMEOUT`] hyper closes it.

use std::future::Future;
use std::net::IpAddr;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt as _;

use super::ingress::HEADER_READ_TIMEOUT;

/// Who sent a request, as far as the server can tell: the connection's peer, or, when
/// the peer is a trusted proxy, the nearest address it names in `X-Forwarded-For` that
/// is not itself a trusted proxy. Budgets shared by senders are keyed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// The sender of a request from `peer` carrying `forwarded` (`X-Forwarded-For`).
    pub fn of(peer: IpAddr, forwarded: Option<&str>, trusted: &[IpAddr]) -> ClientAddr {
        if !trusted.contains(&peer) {
            return ClientAddr(peer);
        }
        // Right to left: each proxy appends the address it saw, so the last entry not
        // a proxy of ours is the first one nobody in between could have made up.
        let named = forwarded
            .into_iter()
            .flat_map(|v| v.rsplit(','))
            .filter_map(|a| a.trim().parse::<IpAddr>().ok())
            .find(|a| !trusted.contains(a));
        ClientAddr(named.unwrap_or(peer))
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then waits for the
/// connections' requests in flight to finish. Every request carries its [`ClientAddr`].
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    trusted_proxies: Vec<IpAddr>,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let trusted: std::sync::Arc<[IpAddr]> = trusted_proxies.into();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a moment, keep serving.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let trusted = std::sync::Arc::clone(&trusted);
        let service = app
            .clone()
            .map_request(move |req: hyper::Request<Incoming>| {
                let mut req = req.map(axum::body::Body::new);
                let forwarded = req
                    .headers()
                    .get("x-forwarded-for")
                    .and_then(|v| v.to_str().ok());
                let client = ClientAddr::of(peer.ip(), forwarded, &trusted);
                req.extensions_mut().insert(client);
                req
            });
        let connection =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // A client that went away or timed out is not the server's error.
            let _ = connection.await;
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_trusted_proxy_may_name_the_sender() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        let proxy = [ip("127.0.0.1")];
        // Straight from a sender: the header is the sender's own word, not believed.
        assert_eq!(
            ClientAddr::of(ip("203.0.113.9"), Some("1.2.3.4"), &proxy).0,
            ip("203.0.113.9")
        );
        // Through the proxy: the address it appended.
        assert_eq!(
            ClientAddr::of(ip("127.0.0.1"), Some("1.2.3.4, 198.51.100.7"), &proxy).0,
            ip("198.51.100.7")
        );
        // No usable header: the proxy itself.
        assert_eq!(
            ClientAddr::of(ip("127.0.0.1"), Some("garbage"), &proxy).0,
            ip("127.0.0.1")
        );
        assert_eq!(
            ClientAddr::of(ip("127.0.0.1"), None, &[]).0,
            ip("127.0.0.1")
        );
    }
}
