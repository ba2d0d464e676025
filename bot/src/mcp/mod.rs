//! `navin mcp`: the board tools over the Model Context Protocol (stdio, rmcp).
//!
//! One server per agent session. In plan mode only the read tools are listed, and a
//! write tool called anyway answers with a structured error (`isError`, a code and a
//! sentence) instead of doing nothing. The actor is `--actor`, or `subagent:<client
//! name>` from the client's `initialize`; the ledger's rules decide what it may do.

mod calls;
mod error;
#[cfg(feature = "github")]
mod github;
#[cfg(not(feature = "github"))]
#[path = "no_github.rs"]
mod github;
pub mod journal;
mod tools;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use navin_ledger::store::Store;
use navin_ledger::Actor;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

pub use calls::brief;
pub use error::ToolError;
pub use github::GitHubCi;
pub use tools::{ToolSpec, TOOLS};

/// Which tools are live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Read tools only (plan mode: a plan is composed from reads, nothing is written).
    Plan,
    /// Every tool.
    Agent,
}

/// How long an `op_id` is remembered: a retry within this many days of the first call
/// applies nothing twice, however many writes came between (the commit log says).
pub const OP_ID_LOOKBACK_DAYS: i64 = 8;

/// The resource URI of the digest.
const DIGEST_URI: &str = "navin://digest";

/// The server: a store, a mode and the session's identity.
#[derive(Debug, Clone)]
pub struct NavinMcp {
    store: Arc<Store>,
    repo: PathBuf,
    mode: Mode,
    /// `--actor`, when given; otherwise taken from the client's name at the first call.
    fixed_actor: Option<Actor>,
    actor: Arc<OnceLock<Actor>>,
    /// Distinguishes this session's request ids from another session's in op ids.
    session: String,
    /// Inside GitHub Actions: where `board_done` reads CI evidence.
    github: Option<Arc<GitHubCi>>,
    /// Op ids of writes since then are found in the commit log.
    retry_since: chrono::DateTime<chrono::Utc>,
    /// `--journal`: every write that landed, as a line `progress` mode can replay on
    /// the real ledger (the agent job's own ledger stays in its checkout).
    journal: Option<Arc<journal::Journal>>,
}

impl NavinMcp {
    pub fn new(store: Store, repo: PathBuf, mode: Mode, actor: Option<Actor>) -> Self {
        let session = format!("{:016x}", rand::random::<u64>());
        Self {
            store: Arc::new(store),
            repo,
            mode,
            fixed_actor: actor,
            actor: Arc::new(OnceLock::new()),
            session,
            github: None,
            journal: None,
            retry_since: chrono::Utc::now() - chrono::Duration::days(OP_ID_LOOKBACK_DAYS),
        }
    }

    /// `board_done` judges test, lint and verify steps by their linked head's check
    /// runs on GitHub, read through `github`.
    pub fn with_github(mut self, github: GitHubCi) -> Self {
        self.github = Some(Arc::new(github));
        self
    }

    pub fn with_journal(mut self, journal: journal::Journal) -> Self {
        self.journal = Some(Arc::new(journal));
        self
    }

    fn actor(&self, context: &RequestContext<RoleServer>) -> Actor {
        if let Some(a) = &self.fixed_actor {
            return a.clone();
        }
        self.actor
            .get_or_init(|| {
                let name = context
                    .peer
                    .peer_info()
                    .map(|info| info.client_info.name.clone())
                    .unwrap_or_default();
                agent_for_client(&name)
            })
            .clone()
    }

    fn live(&self, spec: &ToolSpec) -> bool {
        self.mode == Mode::Agent || spec.read_only
    }

    fn tool(spec: &ToolSpec) -> Tool {
        let mut tool = Tool::new(spec.name, spec.description, spec.input_schema());
        tool.annotations = Some(
            ToolAnnotations::new()
                .read_only(spec.read_only)
                .destructive(false)
                .idempotent(spec.read_only)
                .open_world(false),
        );
        tool
    }
}

/// `subagent:<name>` for an MCP client called `name` (`claude-code`, `codex-mcp-client`,
/// …), with characters an actor name cannot hold dropped.
pub fn agent_for_client(name: &str) -> Actor {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let clean = clean.trim_matches('-');
    format!("subagent:{}", if clean.is_empty() { "mcp" } else { clean })
        .parse()
        .unwrap_or_else(|_| Actor::Subagent("mcp".to_owned()))
}

fn ok_result(value: serde_json::Value, text: String) -> CallToolResult {
    let mut r = CallToolResult::structured(value);
    r.content = vec![ContentBlock::text(text)];
    r
}

fn error_result(err: &ToolError) -> CallToolResult {
    let mut r = CallToolResult::structured_error(serde_json::json!({ "error": err.to_json() }));
    r.content = vec![ContentBlock::text(err.text())];
    r
}

/// The short text beside a result: the digest for writes, a line for reads.
fn summary(tool: &str, value: &serde_json::Value) -> String {
    let s = |k: &str| {
        value
            .get(k)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned()
    };
    match tool {
        "board_digest" | "ledger_digest" => s("text"),
        "board_brief" => s("brief"),
        "board_next" => {
            let ids: Vec<&str> = value
                .get("ready")
                .and_then(|r| r.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.get("id").and_then(|i| i.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            if ids.is_empty() {
                "no step is ready".to_owned()
            } else {
                format!("ready: {}", ids.join(", "))
            }
        }
        "ledger_get" => {
            let goal = value
                .pointer("/mission/goal")
                .and_then(|g| g.as_str())
                .unwrap_or_default();
            let version = value
                .pointer("/mission/version")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            format!("mission v{version}: {goal} (full ledger in structured content)")
        }
        "plan_get" => format!("plan {} (record in structured content)", s("plan_id")),
        _ if value.get("recorded").and_then(|v| v.as_bool()) == Some(false) => s("message"),
        _ if value.get("already_applied").and_then(|v| v.as_bool()) == Some(true) => {
            let version = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
            format!("already applied (v{version}); nothing changed")
        }
        _ => {
            let version = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
            format!("v{version}: {}\n\n{}", s("reason"), s("digest"))
        }
    }
}

impl ServerHandler for NavinMcp {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        let mode = match self.mode {
            Mode::Plan => "plan mode: read tools only",
            Mode::Agent => "agent mode: every tool",
        };
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("navin", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Navin's mission ledger and board ({mode}). Every turn: read board_digest (or the {DIGEST_URI} resource); if it says PAUSED, wait for a human. Ask a person with ask_user rather than guess. Pick a step from board_next, read board_brief, work, report with ledger_progress, prove it with `navin board verify STEP` (or CI), then board_done. You never hand in evidence."
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = TOOLS
            .iter()
            .filter(|t| self.live(t))
            .map(Self::tool)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        ToolSpec::find(name)
            .filter(|t| self.live(t))
            .map(Self::tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let Some(spec) = ToolSpec::find(&name) else {
            return Ok(error_result(&ToolError::unknown_tool(&name)).into());
        };
        if !self.live(spec) {
            return Ok(error_result(&ToolError::plan_mode(&name)).into());
        }
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let actor = self.actor(&context);
        let request_key = format!(
            "{}:{}",
            self.session,
            serde_json::to_string(&context.id.clone().into_json_value()).unwrap_or_default()
        );
        let store = self.store.clone();
        let repo = self.repo.clone();
        let spec = *spec;
        let github = self.github.clone();
        let journal = self.journal.clone();
        let handle = tokio::runtime::Handle::current();
        let retry_since = self.retry_since;
        // git2 is blocking: keep it off the protocol's reactor.
        let outcome = tokio::task::spawn_blocking(move || {
            let desk = calls::Desk {
                store: &store,
                actor: &actor,
                repo: &repo,
                github: github.as_deref().map(|g| (g, handle)),
                retry_since,
            };
            let key = calls::op_key(spec.name, &args, &request_key);
            let journaled = (!spec.read_only).then(|| args.clone());
            let outcome = desk.call(&spec, args, &request_key);
            if let (Some(journal), Some(args), Ok(value)) = (&journal, journaled, &outcome) {
                if value.get("already_applied").and_then(|v| v.as_bool()) != Some(true) {
                    journal.record(spec.name, &args, &key, &actor);
                }
            }
            outcome
        })
        .await
        .map_err(|e| McpError::internal_error(format!("{name} did not finish: {e}"), None))?;
        Ok(match outcome {
            Ok(value) => {
                let text = summary(&name, &value);
                ok_result(value, text)
            }
            Err(err) => error_result(&err),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let digest = Resource::new(DIGEST_URI, "digest")
            .with_title("Mission digest")
            .with_description("The board digest an agent reads at the top of every turn")
            .with_mime_type("text/plain");
        Ok(ListResourcesResult::with_all_items(vec![digest]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != DIGEST_URI {
            return Err(McpError::resource_not_found(
                format!(
                    "no resource {}; the one resource is {DIGEST_URI}",
                    request.uri
                ),
                None,
            ));
        }
        let store = self.store.clone();
        let text = tokio::task::spawn_blocking(move || match store.read() {
            Ok(Some(s)) => Ok(navin_ledger::digest::digest(&s.ledger).text),
            Ok(None) => Ok(
                "There is no mission on this ledger yet: wait for a human to start one.".to_owned(),
            ),
            Err(e) => Err(e.to_string()),
        })
        .await
        .map_err(|e| McpError::internal_error(e.to_string(), None))?
        .map_err(|e| McpError::internal_error(e, None))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, DIGEST_URI).with_mime_type("text/plain")
        ])
        .into())
    }
}

/// Serves the server `build` makes (inside the runtime, so it may hold HTTP clients) on
/// stdin/stdout until the client closes them.
pub fn serve_stdio(build: impl FnOnce() -> Result<NavinMcp, String>) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let server = {
        let _inside = runtime.enter();
        build()?
    };
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("the MCP handshake failed: {e}"))?;
        running
            .waiting()
            .await
            .map_err(|e| format!("the MCP session ended abnormally: {e}"))?;
        Ok(())
    })
}
