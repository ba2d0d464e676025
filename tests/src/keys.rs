//! Test-time RSA keys for the GitHub App, generated with the `openssl` CLI and never stored.

use std::process::Command;
use std::sync::OnceLock;

use base64::Engine;
use rsa::pkcs1v15::SigningKey;
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::RsaPrivateKey;
use serde_json::{json, Value};
use sha2::Sha256;

/// An App's key pair in PEM form: the private key for the bot, the public key for the fake.
#[derive(Clone)]
pub struct AppKey {
    pub private_pem: String,
    pub public_pem: String,
}

impl std::fmt::Debug for AppKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppKey")
            .field("private_pem", &"<redacted>")
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("running openssl: {0}")]
    Openssl(String),
    #[error("parsing the generated private key: {0}")]
    Parse(String),
}

fn openssl(args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, KeyError> {
    use std::io::Write;
    let mut child = Command::new("openssl")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| KeyError::Openssl(e.to_string()))?;
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(data)
            .map_err(|e| KeyError::Openssl(e.to_string()))?;
    }
    drop(child.stdin.take());
    let out = child
        .wait_with_output()
        .map_err(|e| KeyError::Openssl(e.to_string()))?;
    if !out.status.success() {
        return Err(KeyError::Openssl(
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ));
    }
    Ok(out.stdout)
}

impl AppKey {
    /// A fresh 2048-bit RSA key pair.
    pub fn generate() -> Result<AppKey, KeyError> {
        let private = openssl(
            &[
                "genpkey",
                "-algorithm",
                "RSA",
                "-pkeyopt",
                "rsa_keygen_bits:2048",
            ],
            None,
        )?;
        let public = openssl(&["pkey", "-pubout"], Some(&private))?;
        Ok(AppKey {
            private_pem: String::from_utf8_lossy(&private).into_owned(),
            public_pem: String::from_utf8_lossy(&public).into_owned(),
        })
    }

    /// One key pair per test process, generated on first use (key generation takes ~100 ms).
    pub fn shared() -> &'static AppKey {
        static KEY: OnceLock<AppKey> = OnceLock::new();
        KEY.get_or_init(|| match AppKey::generate() {
            Ok(key) => key,
            Err(e) => panic!("cannot generate the test App key (is openssl installed?): {e}"),
        })
    }

    /// Signs an RS256 JWT with these claims, as an App would.
    pub fn sign_jwt(&self, claims: &Value) -> Result<String, KeyError> {
        let key = RsaPrivateKey::from_pkcs8_pem(&self.private_pem)
            .map_err(|e| KeyError::Parse(e.to_string()))?;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let header = b64.encode(json!({"alg": "RS256", "typ": "JWT"}).to_string());
        let body = b64.encode(claims.to_string());
        let signing_input = format!("{header}.{body}");
        let signature = SigningKey::<Sha256>::new(key).sign(signing_input.as_bytes());
        Ok(format!(
            "{signing_input}.{}",
            b64.encode(signature.to_bytes())
        ))
    }

    /// A JWT GitHub accepts: `iat = now - 60`, `exp = now + 540`, `iss = app_id`.
    pub fn app_jwt(
        &self,
        app_id: u64,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<String, KeyError> {
        let now = now.timestamp();
        self.sign_jwt(&json!({ "iat": now - 60, "exp": now + 540, "iss": app_id }))
    }
}
