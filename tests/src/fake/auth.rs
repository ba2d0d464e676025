//! Who is calling: App JWTs (RS256), installation and `GITHUB_TOKEN`-style tokens, and their grants.

use std::collections::{BTreeMap, BTreeSet};

use axum::http::{HeaderMap, StatusCode};
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use rand::distr::{Alphanumeric, SampleString};
use rsa::pkcs1v15::{Signature, VerifyingKey};
use rsa::pkcs8::DecodePublicKey;
use rsa::signature::Verifier;
use rsa::RsaPublicKey;
use serde_json::Value;
use sha2::Sha256;

use super::http::ApiError;
use super::model::{Model, RateCounter, Repo, Token, TokenFormat, TokenKind};

/// The authenticated caller of one request.
#[derive(Debug, Clone)]
pub enum Caller {
    /// A valid App JWT.
    App { app_id: u64 },
    /// A known, unexpired token.
    Token(Box<Token>),
}

impl Caller {
    pub fn login(&self, model: &Model) -> String {
        match self {
            Caller::App { .. } => model.app.bot_login(),
            Caller::Token(t) => t.login.clone(),
        }
    }

    pub fn require_app(&self) -> Result<u64, ApiError> {
        match self {
            Caller::App { app_id } => Ok(*app_id),
            Caller::Token(_) => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "A JSON web token could not be decoded",
            )),
        }
    }

    pub fn token(&self) -> Result<&Token, ApiError> {
        match self {
            Caller::Token(t) => Ok(t),
            Caller::App { .. } => Err(ApiError::forbidden_integration()),
        }
    }

    /// A token acting as a person (`/user`): installation tokens and the App are refused
    /// as GitHub refuses them, with 403 "Resource not accessible by integration".
    pub fn person(&self) -> Result<&Token, ApiError> {
        match self {
            Caller::Token(t) if t.kind.is_person() => Ok(t),
            _ => Err(ApiError::forbidden_integration()),
        }
    }

    /// A GitHub App user access token (`ghu_`), which `/user/installations*` require:
    /// a personal access token gets GitHub's 403 naming the missing App authorization.
    pub fn user_access(&self) -> Result<&Token, ApiError> {
        let token = self.person()?;
        if token.kind != TokenKind::UserAccess {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "You must authenticate with an access token authorized to a GitHub App in order to list installations",
            ));
        }
        Ok(token)
    }

    /// App id stamped on check runs this caller creates.
    pub fn app_id(&self) -> Option<u64> {
        match self {
            Caller::App { app_id } => Some(*app_id),
            Caller::Token(t) => t.app_id,
        }
    }
}

/// Why a JWT was refused; the message GitHub gives is close to these.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JwtError {
    #[error("A JSON web token could not be decoded")]
    Malformed,
    #[error("the JWT algorithm must be RS256")]
    Algorithm,
    #[error(
        "A JSON web token could not be decoded: signature does not match the app's public key"
    )]
    Signature,
    #[error("'Issuer' claim ('iss') must be the App's id or client id")]
    Issuer,
    #[error("'Expiration time' claim ('exp') is too far in the future")]
    TooLong,
    #[error("'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires")]
    Expired,
    #[error("'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued")]
    IssuedInFuture,
}

/// Verifies an App JWT against the configured public key and GitHub's claim rules.
pub fn verify_jwt(
    jwt: &str,
    public_key_pem: &str,
    app_id: u64,
    client_id: &str,
    now: DateTime<Utc>,
) -> Result<(), JwtError> {
    let parts: Vec<&str> = jwt.split('.').collect();
    let [header_b64, claims_b64, sig_b64] = parts.as_slice() else {
        return Err(JwtError::Malformed);
    };
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: Value = b64
        .decode(header_b64)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or(JwtError::Malformed)?;
    if header.get("alg").and_then(Value::as_str) != Some("RS256") {
        return Err(JwtError::Algorithm);
    }
    let claims: Value = b64
        .decode(claims_b64)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or(JwtError::Malformed)?;
    let signature = b64.decode(sig_b64).map_err(|_| JwtError::Malformed)?;
    let key = RsaPublicKey::from_public_key_pem(public_key_pem).map_err(|_| JwtError::Signature)?;
    let signature = Signature::try_from(signature.as_slice()).map_err(|_| JwtError::Signature)?;
    let signed = format!("{header_b64}.{claims_b64}");
    VerifyingKey::<Sha256>::new(key)
        .verify(signed.as_bytes(), &signature)
        .map_err(|_| JwtError::Signature)?;

    let iss_ok = match claims.get("iss") {
        Some(Value::Number(n)) => n.as_u64() == Some(app_id),
        Some(Value::String(s)) => s == client_id || s.parse::<u64>().ok() == Some(app_id),
        _ => false,
    };
    if !iss_ok {
        return Err(JwtError::Issuer);
    }
    let now = now.timestamp();
    let iat = claims
        .get("iat")
        .and_then(Value::as_i64)
        .ok_or(JwtError::IssuedInFuture)?;
    let exp = claims
        .get("exp")
        .and_then(Value::as_i64)
        .ok_or(JwtError::Expired)?;
    // GitHub tolerates a little clock drift on iat; exp may be at most 10 minutes ahead.
    if iat > now + 60 {
        return Err(JwtError::IssuedInFuture);
    }
    if exp <= now {
        return Err(JwtError::Expired);
    }
    if exp > now + 600 || exp - iat > 660 {
        return Err(JwtError::TooLong);
    }
    Ok(())
}

/// A new opaque token in the requested spelling.
pub fn new_token(prefix: &str, format: TokenFormat, app_id: u64) -> String {
    let mut rng = rand::rng();
    match format {
        TokenFormat::Classic => format!("{prefix}_{}", Alphanumeric.sample_string(&mut rng, 36)),
        TokenFormat::Stateless => {
            // `ghs_APPID_<JWT-like>`, about 520 characters; clients must treat it as opaque.
            let body = Alphanumeric.sample_string(&mut rng, 500);
            format!(
                "{prefix}_{app_id}_{}.{}.{}",
                &body[..36],
                &body[36..436],
                &body[436..]
            )
        }
    }
}

/// Extracts the credential from `Authorization: Bearer|token <x>` or HTTP Basic (password part).
pub fn credential(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("authorization")?.to_str().ok()?.trim();
    let (scheme, rest) = value.split_once(' ')?;
    match scheme.to_ascii_lowercase().as_str() {
        "bearer" | "token" => Some(rest.trim().to_string()),
        "basic" => {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(rest.trim())
                .ok()?;
            let text = String::from_utf8(decoded).ok()?;
            text.split_once(':').map(|(_, pass)| pass.to_string())
        }
        _ => None,
    }
}

/// Authenticates a credential: a JWT for the App, or a known token.
pub fn authenticate(
    model: &Model,
    credential: &str,
    now: DateTime<Utc>,
) -> Result<Caller, ApiError> {
    if let Some(token) = model.tokens.get(credential) {
        if token.revoked || token.expires_at <= now {
            return Err(ApiError::bad_credentials());
        }
        return Ok(Caller::Token(Box::new(token.clone())));
    }
    if credential.starts_with("eyJ") && credential.matches('.').count() == 2 {
        let app = &model.app;
        return match verify_jwt(credential, &app.public_key_pem, app.id, &app.client_id, now) {
            Ok(()) => Ok(Caller::App { app_id: app.id }),
            Err(e) => Err(ApiError::new(StatusCode::UNAUTHORIZED, e.to_string())),
        };
    }
    Err(ApiError::bad_credentials())
}

/// Permission level order used by GitHub App grants.
fn level(value: &str) -> u8 {
    match value {
        "admin" => 3,
        "write" => 2,
        "read" => 1,
        _ => 0,
    }
}

/// The (permission, level) a REST request needs, from its path and method.
pub fn needed_permission(rest_of_repo_path: &str, method: &str) -> (&'static str, &'static str) {
    let write = if method == "GET" || method == "HEAD" {
        "read"
    } else {
        "write"
    };
    let first = rest_of_repo_path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    let category = match first {
        "issues" => "issues",
        "pulls" => "pull_requests",
        "check-runs" | "check-suites" => "checks",
        "actions" => "actions",
        "contents" | "git" => "contents",
        "commits" if rest_of_repo_path.contains("/check-") => "checks",
        "commits" => "contents",
        _ => "metadata",
    };
    if category == "metadata" {
        ("metadata", "read")
    } else {
        (category, write)
    }
}

/// A person's role on a repository: the seeded one, else `read` on a public repository
/// (anyone may read it) and `none` on a private one.
pub fn user_role(repo: &Repo, login: &str) -> String {
    repo.roles.get(login).cloned().unwrap_or_else(|| {
        if repo.private {
            "none".into()
        } else {
            "read".into()
        }
    })
}

/// A role seeded for the person (not `none`): what GitHub calls explicit permission, which
/// `/user/installations*` list. Reading a public repository as anyone may is not explicit.
pub fn explicit_role<'r>(repo: &'r Repo, login: &str) -> Option<&'r str> {
    repo.roles
        .get(login)
        .map(String::as_str)
        .filter(|role| *role != "none")
}

/// A role's legacy permission (`admin`, `write`, `read`, `none`) and the `permissions`
/// flags GitHub reports with it; the collaborator-permission endpoint and the user's
/// repository listings both use this, so one `set_role` seeds both.
pub fn role_access(role: &str) -> (&'static str, Value) {
    let permission = match role {
        "admin" => "admin",
        "maintain" | "write" => "write",
        "triage" | "read" => "read",
        "none" => "none",
        _ => "read",
    };
    let flags = serde_json::json!({
        "admin": permission == "admin",
        "maintain": role == "maintain" || permission == "admin",
        "push": permission == "admin" || permission == "write",
        "triage": role == "triage" || permission == "admin" || permission == "write",
        "pull": permission != "none",
    });
    (permission, flags)
}

/// The grant level a person's role gives for `permission`; 404 for a private repository
/// the person cannot see.
fn person_level(repo: &Repo, login: &str, permission: &str) -> Result<&'static str, ApiError> {
    let role = repo.roles.get(login).map(String::as_str).unwrap_or("");
    if matches!(role, "" | "none") && repo.private {
        return Err(ApiError::not_found());
    }
    Ok(match role {
        "admin" | "maintain" | "write" => "write",
        // Anyone who can read may comment and review.
        _ if matches!(permission, "issues" | "pull_requests") => "write",
        _ => "read",
    })
}

/// Checks that a token may use `repo` with `permission` at `needed` level.
///
/// Like GitHub: a repository outside the token's reach is 404, a missing grant 403. A user
/// access token reaches only repositories where the App is installed, with the lesser of
/// the person's and the installation's grant, so `model` is needed for the installation.
pub fn authorize_repo(
    model: &Model,
    token: &Token,
    repo: &Repo,
    permission: &str,
    needed: &str,
) -> Result<(), ApiError> {
    let full = repo.full_name().to_ascii_lowercase();
    if let Some(repos) = &token.repos {
        if !repos.iter().any(|r| r.eq_ignore_ascii_case(&full)) {
            return Err(ApiError::not_found());
        }
    }
    // A user access token sees a repository only where the App is installed and the
    // person can see it; its grant there is the lesser of the two.
    let installed_grant = match token.kind {
        TokenKind::UserAccess => {
            let installation = model
                .installations
                .values()
                .find(|i| i.repos.contains(&full))
                .ok_or_else(ApiError::not_found)?;
            person_level(repo, &token.login, permission)?;
            Some(&installation.permissions)
        }
        _ => None,
    };
    if permission == "metadata" {
        return Ok(());
    }
    let granted = match (&token.kind, installed_grant) {
        (TokenKind::User, _) => person_level(repo, &token.login, permission)?,
        (TokenKind::UserAccess, Some(grant)) => {
            let person = person_level(repo, &token.login, permission)?;
            let app = grant.get(permission).map(String::as_str).unwrap_or("");
            if level(app) < level(person) {
                app
            } else {
                person
            }
        }
        _ => token
            .permissions
            .get(permission)
            .map(String::as_str)
            .unwrap_or(""),
    };
    if level(granted) < level(needed) {
        return Err(ApiError::forbidden_integration());
    }
    Ok(())
}

/// Restricts requested permissions to the installation's grant (422 when asking for more).
pub fn narrow_permissions(
    granted: &BTreeMap<String, String>,
    requested: Option<&serde_json::Map<String, Value>>,
) -> Result<BTreeMap<String, String>, ApiError> {
    let Some(requested) = requested else {
        return Ok(granted.clone());
    };
    let mut out = BTreeMap::new();
    for (name, value) in requested {
        let want = value.as_str().unwrap_or_default();
        let have = granted.get(name).map(String::as_str).unwrap_or("");
        if level(want) == 0 || level(want) > level(have) {
            return Err(ApiError::unprocessable(
                "The permissions requested are not granted to this installation.",
            ));
        }
        out.insert(name.clone(), want.to_string());
    }
    out.entry("metadata".into())
        .or_insert_with(|| "read".into());
    Ok(out)
}

/// A new counter for a one-hour window starting now.
pub fn rate_counter(limit: u64, now: DateTime<Utc>) -> RateCounter {
    RateCounter {
        limit,
        used: 0,
        reset: (now + Duration::hours(1)).timestamp(),
    }
}

/// Default grant of a fresh installation: what Navin needs.
pub fn default_installation_permissions() -> BTreeMap<String, String> {
    [
        ("actions", "write"),
        ("checks", "write"),
        ("contents", "write"),
        ("issues", "write"),
        ("members", "read"),
        ("metadata", "read"),
        ("pull_requests", "write"),
        ("statuses", "write"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

pub fn repo_set<'a>(names: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    names.into_iter().map(|n| n.to_ascii_lowercase()).collect()
}
