//! The few REST reads the Action makes, with the job token, mapping 401/403 to what the job's `permissions:` lack.

use std::time::Duration;

use reqwest::blocking::Client;
use serde_json::Value;

use crate::error::ActionError;

/// A GitHub REST client authenticated with the job's token.
pub struct Api {
    base: String,
    token: String,
    http: Client,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api").field("base", &self.base).finish()
    }
}

/// What a GET is for, so a refusal can name the missing permission.
#[derive(Debug, Clone, Copy)]
pub struct Need {
    pub scope: &'static str,
    pub what: &'static str,
}

impl Api {
    pub fn new(base: &str, token: &str) -> Result<Self, ActionError> {
        let http = Client::builder()
            .user_agent(concat!("navin-action/", env!("CARGO_PKG_VERSION")))
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| ActionError::Api {
                method: "GET",
                path: String::new(),
                message: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
            http,
        })
    }

    /// GETs `path` (starting with `/`) as JSON. One retry on a transport
    /// error or a 5xx, since a job that fails on a blip drops its evidence.
    pub fn get(&self, path: &str, need: Need) -> Result<Value, ActionError> {
        let url = format!("{}{path}", self.base);
        let mut last = String::new();
        for attempt in 0..2 {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(500));
            }
            let sent = self
                .http
                .get(&url)
                .bearer_auth(&self.token)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28")
                .send();
            let resp = match sent {
                Ok(r) => r,
                Err(e) => {
                    last = e.without_url().to_string();
                    continue;
                }
            };
            let status = resp.status().as_u16();
            match status {
                200..=299 => {
                    return resp.json::<Value>().map_err(|e| ActionError::Api {
                        method: "GET",
                        path: path.to_string(),
                        message: format!("unreadable JSON: {}", e.without_url()),
                    })
                }
                401 => return Err(ActionError::BadCredentials(need.what.to_string())),
                403 => {
                    let body = resp.text().unwrap_or_default();
                    // A rate limit is a 403 too, but it is not a missing permission.
                    if body.to_ascii_lowercase().contains("rate limit") {
                        return Err(ActionError::Api {
                            method: "GET",
                            path: path.to_string(),
                            message: "rate limited (HTTP 403); try again later".into(),
                        });
                    }
                    return Err(ActionError::Permission {
                        scope: need.scope,
                        what: need.what.to_string(),
                    });
                }
                // GitHub answers 404 rather than 403 for some missing scopes on private repositories.
                404 => {
                    return Err(ActionError::Api {
                        method: "GET",
                        path: path.to_string(),
                        message: format!(
                            "not found (HTTP 404), or the token lacks `{}` to {}",
                            need.scope, need.what
                        ),
                    })
                }
                500..=599 => last = format!("HTTP {status}"),
                _ => {
                    return Err(ActionError::Api {
                        method: "GET",
                        path: path.to_string(),
                        message: format!("HTTP {status}"),
                    })
                }
            }
        }
        Err(ActionError::Api {
            method: "GET",
            path: path.to_string(),
            message: last,
        })
    }
}
