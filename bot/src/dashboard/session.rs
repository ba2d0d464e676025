//! Signed session cookies, the in-memory session table (the user's token never leaves the server), pending sign-ins and CSRF tokens.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use rand::RngCore;
use secrecy::SecretString;
use sha2::{Digest, Sha256};

/// The session cookie's name. `__Host-` would forbid a path, which a dashboard mounted
/// under a prefix needs, so the name carries no prefix; the attributes do the work.
pub const SESSION_COOKIE: &str = "navin_session";
/// Binds a sign-in's `state` to the browser that started it (login CSRF).
pub const LOGIN_COOKIE: &str = "navin_login";

/// How long a signed-in session lasts without a new sign-in (GitHub's user tokens last
/// eight hours too).
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 3600);
/// How long a started sign-in may take on GitHub's side.
pub const LOGIN_TTL: Duration = Duration::from_secs(600);
/// Sessions kept at most; the oldest go first.
const MAX_SESSIONS: usize = 10_000;
/// Sign-ins started and not finished: anyone can start one, so they are bounded in
/// count as well as in age ([`LOGIN_TTL`]); past the bound the busiest client's oldest
/// is dropped.
const MAX_PENDING_LOGINS: usize = 2_000;
/// Sign-ins one client address may have pending; its next drops its own oldest, so a
/// flood from one address never evicts another person's sign-in.
const MAX_PENDING_PER_CLIENT: usize = 16;

/// Who is signed in, and the token GitHub gave us for them.
#[derive(Debug, Clone)]
pub struct UserSession {
    pub login: String,
    pub user_id: u64,
    pub token: SecretString,
    /// Sent back with every form and the editor's requests.
    pub csrf: String,
    pub created: Instant,
}

/// A sign-in started by `/login`, waiting for GitHub's redirect.
#[derive(Debug, Clone)]
pub struct PendingLogin {
    pub verifier: String,
    pub return_to: String,
    pub created: Instant,
    /// Who started it (`None`: an in-process caller with no address).
    pub client: Option<std::net::IpAddr>,
}

/// Sessions and pending sign-ins. One process's memory: several replicas behind a load
/// balancer need sticky sessions (docs/server.md says so).
#[derive(Debug)]
pub struct Sessions {
    key: [u8; 32],
    sessions: Mutex<HashMap<String, UserSession>>,
    pending: Mutex<HashMap<String, PendingLogin>>,
}

type HmacSha256 = Hmac<Sha256>;

/// A random URL-safe token of 32 bytes.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// PKCE's S256 challenge of `verifier` (RFC 7636 §4.2).
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Compares without leaking where two tokens first differ.
pub fn same_token(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

impl Sessions {
    /// `secret` keys the cookie signatures: the App's client secret, so every replica
    /// given the same secret signs alike and nothing else needs configuring.
    pub fn new(secret: &[u8]) -> Self {
        let mut mac =
            <HmacSha256 as Mac>::new_from_slice(secret).unwrap_or_else(|_| unreachable_hmac());
        mac.update(b"navin dashboard session cookie v1");
        let mut key = [0u8; 32];
        key.copy_from_slice(&mac.finalize().into_bytes());
        Self {
            key,
            sessions: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// The MAC of `value` under this server's key (URL-safe base64).
    pub fn sign(&self, value: &str) -> String {
        let mut mac =
            <HmacSha256 as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable_hmac());
        mac.update(value.as_bytes());
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// `<id>.<signature>`: a cookie value that only this key could have made.
    pub fn signed(&self, id: &str) -> String {
        format!("{id}.{}", self.sign(id))
    }

    /// The id inside a signed cookie value, when the signature holds.
    pub fn verify(&self, cookie: &str) -> Option<String> {
        let (id, signature) = cookie.rsplit_once('.')?;
        let mut mac =
            <HmacSha256 as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable_hmac());
        mac.update(id.as_bytes());
        let given = URL_SAFE_NO_PAD.decode(signature).ok()?;
        mac.verify_slice(&given).ok()?;
        Some(id.to_owned())
    }

    /// Starts a sign-in for `client`: returns its `state`. A client at its bound drops
    /// its own oldest sign-in; at the overall bound the busiest client's oldest goes.
    pub fn start_login(
        &self,
        verifier: String,
        return_to: String,
        client: Option<std::net::IpAddr>,
    ) -> String {
        let state = random_token();
        let mut pending = lock(&self.pending);
        pending.retain(|_, p| p.created.elapsed() < LOGIN_TTL);
        let oldest_of = |pending: &HashMap<String, PendingLogin>, who: Option<std::net::IpAddr>| {
            pending
                .iter()
                .filter(|(_, p)| p.client == who)
                .min_by_key(|(_, p)| p.created)
                .map(|(k, _)| k.clone())
        };
        if client.is_some() {
            while pending.values().filter(|p| p.client == client).count() >= MAX_PENDING_PER_CLIENT
            {
                let Some(oldest) = oldest_of(&pending, client) else {
                    break;
                };
                pending.remove(&oldest);
            }
        }
        while pending.len() >= MAX_PENDING_LOGINS {
            let mut counts: HashMap<Option<std::net::IpAddr>, usize> = HashMap::new();
            for p in pending.values() {
                *counts.entry(p.client).or_default() += 1;
            }
            let busiest = counts.into_iter().max_by_key(|(_, n)| *n).map(|(c, _)| c);
            let Some(oldest) = busiest.and_then(|c| oldest_of(&pending, c)) else {
                break;
            };
            pending.remove(&oldest);
        }
        pending.insert(
            state.clone(),
            PendingLogin {
                verifier,
                return_to,
                created: Instant::now(),
                client,
            },
        );
        state
    }

    /// Takes the sign-in `state` names (once), if it has not expired.
    pub fn finish_login(&self, state: &str) -> Option<PendingLogin> {
        lock(&self.pending)
            .remove(state)
            .filter(|p| p.created.elapsed() < LOGIN_TTL)
    }

    /// Records a signed-in user; returns the session id for the cookie.
    pub fn create(&self, login: String, user_id: u64, token: SecretString) -> String {
        let id = random_token();
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, s| s.created.elapsed() < SESSION_TTL);
        if sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.created)
                .map(|(k, _)| k.clone())
            {
                sessions.remove(&oldest);
            }
        }
        sessions.insert(
            id.clone(),
            UserSession {
                login,
                user_id,
                token,
                csrf: random_token(),
                created: Instant::now(),
            },
        );
        id
    }

    pub fn get(&self, id: &str) -> Option<UserSession> {
        lock(&self.sessions)
            .get(id)
            .filter(|s| s.created.elapsed() < SESSION_TTL)
            .cloned()
    }

    pub fn remove(&self, id: &str) {
        lock(&self.sessions).remove(id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// HMAC takes keys of any length, so building one cannot fail.
fn unreachable_hmac() -> HmacSha256 {
    unreachable!("HMAC accepts keys of every length")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn a_signed_cookie_verifies_and_a_tampered_one_does_not() {
        let sessions = Sessions::new(b"client secret");
        let value = sessions.signed("abc");
        assert_eq!(sessions.verify(&value).as_deref(), Some("abc"));
        assert_eq!(sessions.verify(&value.replace("abc", "abd")), None);
        let other = Sessions::new(b"another secret");
        assert_eq!(
            other.verify(&value),
            None,
            "another key's cookie is refused"
        );
        assert_eq!(sessions.verify("abc"), None, "an unsigned value is refused");
    }

    #[test]
    fn a_sign_in_state_is_used_once() {
        let sessions = Sessions::new(b"k");
        let state = sessions.start_login("verifier".into(), "/".into(), None);
        assert!(sessions.finish_login(&state).is_some());
        assert!(sessions.finish_login(&state).is_none());
    }

    #[test]
    fn pending_sign_ins_are_bounded_and_the_oldest_goes_first() {
        let sessions = Sessions::new(b"k");
        let first = sessions.start_login("v0".into(), "/".into(), None);
        let second = sessions.start_login("v1".into(), "/".into(), None);
        for n in 0..MAX_PENDING_LOGINS + 500 {
            sessions.start_login(format!("flood-{n}"), "/".into(), None);
        }
        assert_eq!(lock(&sessions.pending).len(), MAX_PENDING_LOGINS);
        assert!(
            sessions.finish_login(&first).is_none(),
            "the oldest was dropped"
        );
        assert!(sessions.finish_login(&second).is_none());
        let fresh = sessions.start_login("mine".into(), "/".into(), None);
        assert!(
            sessions.finish_login(&fresh).is_some(),
            "a new sign-in still works"
        );
    }

    #[test]
    fn five_thousand_sign_ins_from_one_address_evict_only_that_address_s_own() {
        let sessions = Sessions::new(b"k");
        let ip = |s: &str| Some(s.parse::<std::net::IpAddr>().expect("ip"));
        let alice = sessions.start_login("alice".into(), "/".into(), ip("198.51.100.7"));
        for n in 0..5_000 {
            sessions.start_login(format!("flood-{n}"), "/".into(), ip("203.0.113.9"));
        }
        let flood = lock(&sessions.pending)
            .values()
            .filter(|p| p.client == ip("203.0.113.9"))
            .count();
        assert_eq!(flood, MAX_PENDING_PER_CLIENT);
        assert!(
            sessions.finish_login(&alice).is_some(),
            "alice's sign-in survived the flood"
        );
    }

    #[test]
    fn the_pkce_challenge_is_rfc_7636s_example() {
        // RFC 7636 appendix B.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
