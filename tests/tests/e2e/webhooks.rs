//! Webhook fixtures (real payloads, schema-checked), signatures, and the sender's wire format.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use navin_e2e::fake::UserKind;
use navin_e2e::webhook::{fixture_names, signature_sha1, signature_sha256};
use navin_e2e::{Payload, WebhookSender};
use serde_json::{json, Value};

const MANIFEST: &str = include_str!("../../fixtures/webhooks/manifest.json");
const SCHEMAS: &str = include_str!("../../fixtures/webhooks/schemas-subset.json");

fn schema_errors(definition: &str, payload: &Value) -> Vec<String> {
    let mut root: Value = serde_json::from_str(SCHEMAS).expect("schemas parse");
    root["$ref"] = json!(format!("#/definitions/{definition}"));
    let validator = jsonschema::draft7::new(&root).expect("schema compiles");
    validator
        .iter_errors(payload)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn manifest() -> Vec<Value> {
    serde_json::from_str::<Value>(MANIFEST).expect("manifest")["fixtures"]
        .as_array()
        .cloned()
        .expect("fixtures")
}

#[test]
fn signature_matches_githubs_documented_test_vector() {
    assert_eq!(
        signature_sha256(b"It's a Secret to Everybody", b"Hello, World!"),
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    );
    assert_ne!(
        signature_sha256(b"It's a Secret to Everybody", b"Hello, World?"),
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    );
    assert!(signature_sha1(b"It's a Secret to Everybody", b"Hello, World!").starts_with("sha1="));
}

#[test]
fn every_fixture_matches_its_webhook_schema() {
    let entries = manifest();
    assert_eq!(
        entries.len(),
        fixture_names().len(),
        "manifest and embedded fixtures agree"
    );
    for entry in entries {
        let file = entry["file"].as_str().expect("file");
        let name = file.trim_end_matches(".json");
        let payload = Payload::fixture(name);
        assert_eq!(payload.event(), entry["event"].as_str().expect("event"));
        let errors = schema_errors(
            entry["schema_definition"].as_str().expect("definition"),
            payload.json(),
        );
        assert!(
            errors.is_empty(),
            "{file} violates @octokit/webhooks-schemas: {errors:#?}"
        );
    }
}

#[test]
fn derived_fixtures_cover_what_the_examples_lack() {
    assert!(
        Payload::fixture("issue_comment.created.on_pull_request").json()["issue"]["pull_request"]
            .is_object()
    );
    assert!(Payload::fixture("issue_comment.created").json()["issue"]
        .get("pull_request")
        .is_none());
    assert_eq!(
        Payload::fixture("pull_request_review.submitted.approved").json()["review"]["state"],
        "approved"
    );
    assert_eq!(
        Payload::fixture("pull_request_review.submitted.changes_requested").json()["review"]
            ["state"],
        "changes_requested"
    );
    for name in fixture_names().into_iter().filter(|n| *n != "ping") {
        assert!(
            Payload::fixture(name).json()["installation"]["id"].is_u64(),
            "{name} carries installation.id"
        );
    }
}

#[test]
fn builders_patch_every_copy_and_keep_payloads_schema_valid() {
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let sync = Payload::fixture("pull_request.synchronize")
        .repo("octo-org", "hello", 77)
        .number(9)
        .head_sha(sha)
        .installation(5);
    let v = sync.json();
    assert_eq!(
        (
            v["pull_request"]["head"]["sha"].as_str(),
            v["after"].as_str()
        ),
        (Some(sha), Some(sha))
    );
    assert_eq!(
        (v["number"].as_u64(), v["pull_request"]["number"].as_u64()),
        (Some(9), Some(9))
    );
    assert_eq!(v["repository"]["full_name"], "octo-org/hello");
    assert_eq!(v["installation"]["id"], 5);
    assert!(schema_errors("pull_request$synchronize", v).is_empty());

    let comment = Payload::fixture("issue_comment.created")
        .comment_body("/plan add a cache")
        .comment_author("dependabot[bot]", 49699333, UserKind::Bot);
    assert_eq!(comment.json()["comment"]["user"]["type"], "Bot");
    assert_eq!(comment.json()["sender"]["login"], "dependabot[bot]");
    assert_eq!(
        schema_errors("issue_comment$created", comment.json()),
        Vec::<String>::new()
    );

    let check = Payload::fixture("check_run.completed")
        .check_name("test")
        .app_id(15368)
        .conclusion("skipped")
        .head_sha(sha);
    assert_eq!(check.json()["check_run"]["app"]["id"], 15368);
    assert_eq!(check.json()["check_run"]["conclusion"], "skipped");
    assert!(schema_errors("check_run$completed", check.json()).is_empty());

    let review = Payload::fixture("pull_request_review.submitted")
        .review_state("APPROVED")
        .reviewer("rita", 5, UserKind::User);
    assert_eq!(
        review.json()["review"]["state"],
        "approved",
        "webhooks spell review states in lowercase"
    );
    assert!(schema_errors("pull_request_review$submitted", review.json()).is_empty());
}

type Seen = Arc<Mutex<Vec<(HeaderMap, Bytes)>>>;

async fn receiver() -> (String, Seen) {
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let store = seen.clone();
    let app = axum::Router::new().route(
        "/webhook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let store = store.clone();
            async move {
                store.lock().expect("lock").push((headers, body));
                axum::http::StatusCode::ACCEPTED
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/webhook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

#[tokio::test]
async fn sender_signs_the_exact_bytes_and_sets_githubs_headers() {
    let (url, seen) = receiver().await;
    let secret = "It's a Secret to Everybody";
    let sender = WebhookSender::new(&url, secret);
    let payload = Payload::fixture("ping");
    let first = sender.send_payload(&payload).await.expect("send");
    assert_eq!(first.status, 202);
    let again = sender
        .send_with_guid("ping", payload.json(), &first.guid)
        .await
        .expect("redeliver");
    assert_eq!(again.guid, first.guid, "a redelivery keeps its GUID");
    let broken = sender
        .send_request(
            sender
                .request("ping", payload.json())
                .signature("sha256=00"),
        )
        .await
        .expect("send");
    assert_eq!(broken.status, 202);

    let seen = seen.lock().expect("lock");
    let (headers, body) = &seen[0];
    assert_eq!(headers["x-github-event"], "ping");
    assert!(uuid::Uuid::parse_str(headers["x-github-delivery"].to_str().expect("guid")).is_ok());
    assert_eq!(
        headers["x-hub-signature-256"],
        signature_sha256(secret.as_bytes(), body).as_str()
    );
    assert_eq!(
        headers["x-hub-signature"],
        signature_sha1(secret.as_bytes(), body).as_str()
    );
    assert_eq!(headers["content-type"], "application/json");
    assert!(headers["user-agent"]
        .to_str()
        .expect("ua")
        .starts_with("GitHub-Hookshot/"));
    assert_eq!(seen[1].0["x-github-delivery"], headers["x-github-delivery"]);
    assert_eq!(seen[2].0["x-hub-signature-256"], "sha256=00");
}
