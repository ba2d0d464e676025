//! The dashboard's only static files (one stylesheet, one script), built into the binary and served under content-hashed names so they can be cached for good.

use std::sync::OnceLock;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

const CSS: &str = include_str!("assets/dashboard.css");
const JS: &str = include_str!("assets/dashboard.js");

struct Asset {
    name: String,
    body: &'static str,
    content_type: &'static str,
}

fn hashed(stem: &str, ext: &str, body: &'static str, content_type: &'static str) -> Asset {
    let digest = hex::encode(Sha256::digest(body.as_bytes()));
    Asset {
        name: format!("{stem}-{}.{ext}", &digest[..12]),
        body,
        content_type,
    }
}

fn all() -> &'static [Asset; 2] {
    static ASSETS: OnceLock<[Asset; 2]> = OnceLock::new();
    ASSETS.get_or_init(|| {
        [
            hashed("dashboard", "css", CSS, "text/css; charset=utf-8"),
            hashed("dashboard", "js", JS, "text/javascript; charset=utf-8"),
        ]
    })
}

/// The stylesheet's file name (under `<base>/assets/`).
pub fn css_name() -> &'static str {
    &all()[0].name
}

/// The script's file name (under `<base>/assets/`).
pub fn js_name() -> &'static str {
    &all()[1].name
}

pub async fn serve(Path(name): Path<String>) -> Response {
    match all().iter().find(|a| a.name == name) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            asset.body,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
