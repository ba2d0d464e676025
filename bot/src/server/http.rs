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

use super::client_addr::ClientAddr;
use super::ingress::HEADER_READ_TIMEOUT;

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
