//! The GitHub App manifest flow's last step: `POST /app-manifests/{code}/conversions`, which needs no credentials.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use rand::Rng;
use serde_json::json;

use super::faults::path_matches;
use super::handle::fail;
use super::http::{ApiError, ApiResult};
use super::model::ManifestApp;
use super::render::template;
use super::{FakeGitHub, Inner};

const CONVERSIONS: &str = "/app-manifests/*/conversions";

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new().route("/app-manifests/{code}/conversions", post(convert))
}

/// Requests GitHub serves without authentication (the code is the credential).
pub(super) fn is_public(method: &str, path: &str) -> bool {
    method == "POST" && path_matches(CONVERSIONS, path)
}

fn random_hex(bytes: usize) -> String {
    let mut rng = rand::rng();
    (0..bytes)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

/// A known code converts once, into the App with its credentials; a reused or unknown
/// code is 404, as on GitHub (codes are single-use and expire after an hour).
async fn convert(State(inner): State<Arc<Inner>>, Path(code): Path<String>) -> ApiResult {
    let app = inner
        .model()
        .manifest_codes
        .remove(&code)
        .ok_or_else(ApiError::not_found)?;
    let mut out = template("apps/create-from-manifest");
    out["id"] = json!(app.id);
    out["slug"] = json!(app.slug);
    out["name"] = json!(app.name);
    out["node_id"] = json!(format!("A_kwFake{}", app.id));
    out["html_url"] = json!(format!("{}/apps/{}", inner.base_url, app.slug));
    out["client_id"] = json!(app.client_id);
    out["client_secret"] = json!(app.client_secret);
    out["webhook_secret"] = json!(app.webhook_secret);
    out["pem"] = json!(app.pem);
    Ok((StatusCode::CREATED, axum::Json(out)).into_response())
}

impl FakeGitHub {
    /// What GitHub hands the manifest flow's `redirect_url` once someone has created the
    /// App named `name`: a one-time code, and the App it converts into (with a freshly
    /// generated RSA key), for the test to compare with what the client saved.
    pub fn manifest_code(&self, name: &str) -> ManifestApp {
        let key = crate::keys::AppKey::generate().unwrap_or_else(|e| fail("App key", e));
        let mut model = self.inner.model();
        let id = model.next_id();
        let slug = name.to_ascii_lowercase().replace(' ', "-");
        let app = ManifestApp {
            code: random_hex(10),
            id,
            slug,
            name: name.to_owned(),
            client_id: format!("Iv23li{}", random_hex(7)),
            client_secret: random_hex(20),
            webhook_secret: random_hex(20),
            pem: key.private_pem,
        };
        model.manifest_codes.insert(app.code.clone(), app.clone());
        app
    }
}
