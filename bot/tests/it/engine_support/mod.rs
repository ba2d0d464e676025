//! Shared set-up for the engine's end-to-end tests and the `api_requests` bench: a fake
//! GitHub holding a small Rust repository, and the real server with the engine as its
//! handler (the tests drive it through `crate::world::World`).

use std::path::Path;
use std::time::Duration;

use navin_bot::config::ServeArgs;
use navin_bot::server::{start, RunningServer};
use navin_e2e::{FakeGitHub, Scenario, WebhookSender};
use navin_engine::{Engine, EngineConfig};

pub use navin_e2e::hello::{OWNER, REPO};
pub const SECRET: &str = "engine-e2e-secret";
pub const WAIT: Duration = Duration::from_secs(15);

/// The server and scenario [`world`] starts, for the `api_requests` bench.
#[allow(
    dead_code,
    reason = "the api_requests bench uses it; the tests use World"
)]
pub struct Harness {
    pub sc: Scenario,
    pub _server: RunningServer,
    pub _dir: tempfile::TempDir,
}

pub fn serve_args(fake: &FakeGitHub, data_dir: &Path) -> ServeArgs {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }
    let key_path = data_dir.join("app-key.pem");
    std::fs::write(&key_path, &fake.app_key().private_pem).unwrap();
    let app_id = fake.with_state(|m| m.app.id).to_string();
    let template = fake.git_url_template();
    let data = data_dir.join("data");
    Cli::try_parse_from([
        "navin",
        "--listen",
        "127.0.0.1:0",
        "--app-id",
        &app_id,
        "--private-key-path",
        key_path.to_str().unwrap(),
        "--webhook-secret",
        SECRET,
        "--api-url",
        fake.base_url(),
        "--git-url-template",
        &template,
        "--data-dir",
        data.to_str().unwrap(),
        "--write-spacing-ms",
        "0",
        "--reconcile-interval-secs",
        "0",
        // Clock ticks only where a test asks for them (World::with_sweeps): a tick in the
        // middle of a request count would be counted.
        "--sweep-interval-secs",
        "0",
        "--shutdown-grace-secs",
        "1",
    ])
    .unwrap()
    .serve
}

/// The seeded repository (see [`navin_e2e::hello`]), shared with the engine's own world.
pub fn seeded_fake() -> FakeGitHub {
    navin_e2e::hello::seeded()
}

/// [`seeded_fake`] with the engine serving webhooks.
#[allow(
    dead_code,
    reason = "the api_requests bench uses it; the tests use World"
)]
pub async fn world() -> Harness {
    world_with(|_| {}).await
}

/// [`world`] with the engine's settings changed by `configure` (the operator's planner).
#[allow(dead_code, reason = "the benches use it; the tests use World")]
pub async fn world_with(configure: impl FnOnce(&mut EngineConfig)) -> Harness {
    crate::server_support::LogCapture::global();
    let fake = seeded_fake();
    let dir = tempfile::tempdir().unwrap();
    let args = serve_args(&fake, dir.path());
    let mut config = EngineConfig::new(args.data_dir.clone());
    configure(&mut config);
    let server = start(&args, move |github| {
        std::sync::Arc::new(navin_bot::queue::EngineHandler::new(Engine::new(
            github.clone(),
            config,
        )))
    })
    .await
    .unwrap();
    let url = format!("http://{}/webhook", server.local_addr());
    let sc = Scenario::new(fake, WebhookSender::new(url, SECRET)).wait(WAIT);
    Harness {
        sc,
        _server: server,
        _dir: dir,
    }
}

/// Waits until the server's queue has handled the delivery; a failed delivery fails the test.
#[allow(
    dead_code,
    reason = "the api_requests bench uses it; the tests use World"
)]
pub async fn processed(server: &RunningServer, guid: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(status) = server.queue().status(guid).await.unwrap() {
            match status.state.as_str() {
                "done" => return,
                "failed" => panic!("delivery {guid} failed: {:?}", status.last_error),
                _ => {}
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "delivery {guid} was not handled"
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}
