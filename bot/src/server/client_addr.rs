//! Who sent a request: the key every per-sender budget is counted by.

use std::net::IpAddr;

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
