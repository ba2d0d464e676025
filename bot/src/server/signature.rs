//! Webhook signature check: HMAC-SHA256 over the raw body, compared in constant time.

use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The accepted webhook secrets: the current one and, during a rotation, the previous
/// one. Debug output never shows them.
#[derive(Clone)]
pub struct WebhookSecrets(Vec<SecretString>);

impl std::fmt::Debug for WebhookSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookSecrets({} configured)", self.0.len())
    }
}

/// Why a delivery's signature was refused. Carries nothing of the secret or body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("X-Hub-Signature-256 header is missing")]
    Missing,
    #[error("X-Hub-Signature-256 is not `sha256=` followed by 64 hex digits")]
    Malformed,
    #[error("X-Hub-Signature-256 does not match any configured secret")]
    Mismatch,
}

impl WebhookSecrets {
    pub fn new(secrets: Vec<SecretString>) -> Self {
        Self(secrets)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Checks `header` (the value of `X-Hub-Signature-256`) against `body` as received.
    /// `verify_slice` compares in constant time, so timing reveals nothing about how
    /// many leading bytes matched.
    pub fn verify(&self, header: Option<&[u8]>, body: &[u8]) -> Result<(), SignatureError> {
        let header = header.ok_or(SignatureError::Missing)?;
        let hex_digest = header
            .strip_prefix(b"sha256=")
            .ok_or(SignatureError::Malformed)?;
        if hex_digest.len() != 64 {
            return Err(SignatureError::Malformed);
        }
        let mut expected = [0u8; 32];
        hex::decode_to_slice(hex_digest, &mut expected).map_err(|_| SignatureError::Malformed)?;
        // Every secret is tried (no early exit on the first) so the response time
        // does not tell which secret matched.
        let mut matched = false;
        for secret in &self.0 {
            let Ok(mut mac) = HmacSha256::new_from_slice(secret.expose_secret().as_bytes()) else {
                continue;
            };
            mac.update(body);
            matched |= mac.verify_slice(&expected).is_ok();
        }
        if matched {
            Ok(())
        } else {
            Err(SignatureError::Mismatch)
        }
    }
}

/// `sha256=<hex>` for `body` under `secret`: what GitHub sends. Used by tests, benches
/// and local replay tools.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = match HmacSha256::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        // HMAC accepts keys of any length; this arm cannot be reached.
        Err(_) => return String::new(),
    };
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    const VECTOR_SECRET: &str = "It's a Secret to Everybody";
    const VECTOR_BODY: &[u8] = b"Hello, World!";
    const VECTOR_SIGNATURE: &str =
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

    fn secrets(list: &[&str]) -> WebhookSecrets {
        WebhookSecrets::new(list.iter().map(|s| SecretString::from(*s)).collect())
    }

    #[test]
    fn github_test_vector_is_accepted() {
        assert_eq!(sign(VECTOR_SECRET, VECTOR_BODY), VECTOR_SIGNATURE);
        let s = secrets(&[VECTOR_SECRET]);
        assert_eq!(
            s.verify(Some(VECTOR_SIGNATURE.as_bytes()), VECTOR_BODY),
            Ok(())
        );
    }

    #[test]
    fn flipped_body_byte_is_rejected() {
        let s = secrets(&[VECTOR_SECRET]);
        let mut body = VECTOR_BODY.to_vec();
        body[0] ^= 0x01;
        assert_eq!(
            s.verify(Some(VECTOR_SIGNATURE.as_bytes()), &body),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn flipped_signature_digit_is_rejected() {
        let s = secrets(&[VECTOR_SECRET]);
        let mut sig = VECTOR_SIGNATURE.as_bytes().to_vec();
        let last = sig.len() - 1;
        sig[last] = if sig[last] == b'7' { b'8' } else { b'7' };
        assert_eq!(
            s.verify(Some(&sig), VECTOR_BODY),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn reserialized_json_body_is_rejected() {
        // Same JSON value, different bytes: the signature covers bytes, not meaning.
        let s = secrets(&["k"]);
        let raw = br#"{"action": "created",  "n": 1}"#;
        let sig = sign("k", raw);
        let value: serde_json::Value = serde_json::from_slice(raw).unwrap();
        let reserialized = serde_json::to_vec(&value).unwrap();
        assert_ne!(raw.to_vec(), reserialized);
        assert_eq!(s.verify(Some(sig.as_bytes()), raw), Ok(()));
        assert_eq!(
            s.verify(Some(sig.as_bytes()), &reserialized),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn missing_and_malformed_headers_are_told_apart() {
        let s = secrets(&["k"]);
        assert_eq!(s.verify(None, b"x"), Err(SignatureError::Missing));
        assert_eq!(
            s.verify(Some(b"sha1=abcd"), b"x"),
            Err(SignatureError::Malformed)
        );
        assert_eq!(
            s.verify(Some(b"sha256=zz"), b"x"),
            Err(SignatureError::Malformed)
        );
        let not_hex = format!("sha256={}", "g".repeat(64));
        assert_eq!(
            s.verify(Some(not_hex.as_bytes()), b"x"),
            Err(SignatureError::Malformed)
        );
    }

    #[test]
    fn either_rotation_secret_is_accepted() {
        let s = secrets(&["new-secret", "old-secret"]);
        let body = b"{}";
        assert_eq!(
            s.verify(Some(sign("new-secret", body).as_bytes()), body),
            Ok(())
        );
        assert_eq!(
            s.verify(Some(sign("old-secret", body).as_bytes()), body),
            Ok(())
        );
        assert_eq!(
            s.verify(Some(sign("other", body).as_bytes()), body),
            Err(SignatureError::Mismatch)
        );
    }

    #[test]
    fn debug_output_hides_secrets() {
        let printed = format!("{:?}", secrets(&["super-secret-value"]));
        assert!(!printed.contains("super-secret-value"));
    }
}
