//! Sends signed webhook deliveries to the bot under test, the way GitHub's hookshot does.

mod payload;

pub use payload::{fixture_names, Payload};

use hmac::{Hmac, Mac};
use serde_json::Value;
use sha1::Sha1;
use sha2::Sha256;

/// `sha256=<hex>` over exactly these bytes (`X-Hub-Signature-256`).
pub fn signature_sha256(secret: &[u8], body: &[u8]) -> String {
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of any length"),
    };
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// `sha1=<hex>` (`X-Hub-Signature`, still sent by GitHub beside the sha256 one).
pub fn signature_sha1(secret: &[u8], body: &[u8]) -> String {
    let mut mac = match Hmac::<Sha1>::new_from_slice(secret) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC accepts keys of any length"),
    };
    mac.update(body);
    format!("sha1={}", hex::encode(mac.finalize().into_bytes()))
}

/// How the bot answered one delivery.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub guid: String,
    pub status: u16,
    pub body: String,
    pub elapsed: std::time::Duration,
}

/// A delivery to send; start from `WebhookSender::request` and break it on purpose if needed.
#[derive(Debug, Clone)]
pub struct WebhookRequest {
    pub event: Option<String>,
    pub guid: Option<String>,
    pub body: Vec<u8>,
    /// `None`: sign correctly; `Some(None)`: no signature header; `Some(Some(v))`: send `v`.
    pub signature_256: Option<Option<String>>,
    pub method: String,
    pub extra_headers: Vec<(String, String)>,
}

impl WebhookRequest {
    pub fn without_event(mut self) -> Self {
        self.event = None;
        self
    }
    pub fn without_guid(mut self) -> Self {
        self.guid = None;
        self
    }
    pub fn without_signature(mut self) -> Self {
        self.signature_256 = Some(None);
        self
    }
    pub fn signature(mut self, value: &str) -> Self {
        self.signature_256 = Some(Some(value.to_string()));
        self
    }
    pub fn method(mut self, method: &str) -> Self {
        self.method = method.to_string();
        self
    }
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.extra_headers.push((name.into(), value.into()));
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("delivering webhook to {url}: {source}")]
    Http { url: String, source: reqwest::Error },
}

/// Delivers webhooks to one URL with one secret.
#[derive(Debug, Clone)]
pub struct WebhookSender {
    url: String,
    secret: String,
    client: reqwest::Client,
    hook_id: u64,
}

impl WebhookSender {
    pub fn new(target_url: impl Into<String>, secret: impl Into<String>) -> Self {
        WebhookSender {
            url: target_url.into(),
            secret: secret.into(),
            client: crate::http_client(),
            hook_id: 1,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Serializes once; the signature covers exactly the bytes sent.
    pub fn request(&self, event: &str, payload: &Value) -> WebhookRequest {
        WebhookRequest {
            event: Some(event.into()),
            guid: Some(uuid::Uuid::new_v4().to_string()),
            body: serde_json::to_vec(payload).unwrap_or_default(),
            signature_256: None,
            method: "POST".into(),
            extra_headers: vec![],
        }
    }

    /// Sends `payload` as `event` with a fresh delivery GUID.
    pub async fn send(&self, event: &str, payload: &Value) -> Result<Delivery, WebhookError> {
        self.send_request(self.request(event, payload)).await
    }

    /// Sends a built fixture (its event name comes from the fixture).
    pub async fn send_payload(&self, payload: &Payload) -> Result<Delivery, WebhookError> {
        self.send(payload.event(), payload.json()).await
    }

    /// Sends with a given GUID, as a redelivery does (same GUID as the original).
    pub async fn send_with_guid(
        &self,
        event: &str,
        payload: &Value,
        guid: &str,
    ) -> Result<Delivery, WebhookError> {
        let mut req = self.request(event, payload);
        req.guid = Some(guid.into());
        self.send_request(req).await
    }

    pub async fn send_request(&self, req: WebhookRequest) -> Result<Delivery, WebhookError> {
        let secret = self.secret.as_bytes();
        let method =
            reqwest::Method::from_bytes(req.method.as_bytes()).unwrap_or(reqwest::Method::POST);
        let mut builder = self
            .client
            .request(method, &self.url)
            .header("content-type", "application/json")
            .header("user-agent", "GitHub-Hookshot/fake")
            .header("x-github-hook-id", self.hook_id.to_string())
            .header("x-hub-signature", signature_sha1(secret, &req.body));
        if let Some(event) = &req.event {
            builder = builder.header("x-github-event", event);
        }
        if let Some(guid) = &req.guid {
            builder = builder.header("x-github-delivery", guid);
        }
        match &req.signature_256 {
            None => {
                builder = builder.header("x-hub-signature-256", signature_sha256(secret, &req.body))
            }
            Some(Some(v)) => builder = builder.header("x-hub-signature-256", v),
            Some(None) => {}
        }
        if let Ok(payload) = serde_json::from_slice::<Value>(&req.body) {
            if let Some(id) = payload["installation"]["id"].as_u64() {
                builder = builder
                    .header("x-github-hook-installation-target-type", "integration")
                    .header("x-github-hook-installation-target-id", id.to_string());
            }
        }
        for (k, v) in &req.extra_headers {
            builder = builder.header(k, v);
        }
        let started = std::time::Instant::now();
        let response =
            builder
                .body(req.body)
                .send()
                .await
                .map_err(|source| WebhookError::Http {
                    url: self.url.clone(),
                    source,
                })?;
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        Ok(Delivery {
            guid: req.guid.unwrap_or_default(),
            status,
            body,
            elapsed: started.elapsed(),
        })
    }
}
