//! GitHub App JWTs (RS256), used to list deliveries and mint installation tokens.

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use secrecy::SecretString;
use serde::{Deserialize, Serialize};

/// GitHub rejects a JWT whose `exp` is more than 10 minutes ahead.
pub const MAX_LIFETIME_SECS: i64 = 600;
/// `iat` is backdated to absorb clock drift between us and GitHub.
pub const CLOCK_DRIFT_SECS: i64 = 60;

/// The claims GitHub reads from an App JWT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppClaims {
    pub iat: i64,
    pub exp: i64,
    /// App id or client id.
    pub iss: String,
}

/// Claims for a JWT issued at `now` (Unix seconds): `iat = now - 60`, and `exp` at the
/// 10-minute limit counted from `iat` so it stays within bounds even with drift.
pub fn app_claims(issuer: &str, now: i64) -> AppClaims {
    let iat = now - CLOCK_DRIFT_SECS;
    AppClaims {
        iat,
        exp: iat + MAX_LIFETIME_SECS,
        iss: issuer.to_owned(),
    }
}

/// The App's private key, parsed once at start. Debug output never shows it.
#[derive(Clone)]
pub struct AppKey(EncodingKey);

impl std::fmt::Debug for AppKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppKey(RS256, redacted)")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum JwtError {
    #[error("private key is not an RSA PEM key (PKCS#1 or PKCS#8): {0}")]
    BadKey(String),
    #[error("cannot sign the app JWT: {0}")]
    Sign(String),
}

impl AppKey {
    pub fn from_pem(pem: &[u8]) -> Result<Self, JwtError> {
        // The jsonwebtoken error says what kind of parse failed; it never echoes the key.
        EncodingKey::from_rsa_pem(pem)
            .map(Self)
            .map_err(|e| JwtError::BadKey(e.to_string()))
    }

    /// A signed App JWT for `issuer` at `now` (Unix seconds).
    pub fn sign(&self, issuer: &str, now: i64) -> Result<SecretString, JwtError> {
        let claims = app_claims(issuer, now);
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &self.0)
            .map(SecretString::from)
            .map_err(|e| JwtError::Sign(e.to_string()))
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    #[test]
    fn claims_backdate_iat_and_stay_within_ten_minutes() {
        let now = 1_700_000_000;
        let c = app_claims("Iv23client", now);
        assert_eq!(c.iat, now - 60);
        assert!(c.exp <= now + 600);
        assert!(c.exp > now);
        assert_eq!(c.iss, "Iv23client");
    }

    #[test]
    fn garbage_key_is_refused_without_echoing_it() {
        let err = AppKey::from_pem(b"not-a-key-SENTINEL").unwrap_err();
        assert!(!err.to_string().contains("SENTINEL"));
    }
}
