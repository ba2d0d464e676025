//! Read-only views for the dashboard: a repository's mission and plans at one ledger tip, and a person's role, through the same clients and caches as events.

use crate::features::blocking;
use crate::features::board::store;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Delivery, Engine, EngineError, Inbound, Report};
use navin_domain::event::Repository;
use navin_ledger::plan::record::PlanRecord;
use navin_ledger::plan::PlanDocument;
use navin_ledger::store::StoreError;
use navin_ledger::Ledger;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One plan as the branch holds it: its record and canonical text, or why it could not
/// be read (reported on the page, never hidden).
#[derive(Debug, Clone)]
pub struct PlanEntry {
    pub id: String,
    pub record: Result<PlanRecord, String>,
    /// The canonical markdown; empty when the file is missing.
    pub text: String,
}

impl PlanEntry {
    /// The parsed document, when the text is a valid plan.
    pub fn document(&self) -> Option<PlanDocument> {
        PlanDocument::parse(&self.text).ok()
    }
}

/// A repository's ledger branch at one tip.
#[derive(Debug)]
pub struct RepoView {
    pub repository: String,
    pub ledger_branch: String,
    pub commit: Option<String>,
    /// The mission, none, or the reason the ledger cannot be read (a damaged file, a
    /// rewound branch): shown as such, the branch is never rewritten by a reader.
    pub ledger: Result<Option<Ledger>, String>,
    /// When `ledger` is a refused commit: the state below it, the last Navin trusts,
    /// shown read-only beside the refusal.
    pub trusted: Option<Ledger>,
    pub plans: Vec<PlanEntry>,
}

impl RepoView {
    pub fn plan(&self, id: &str) -> Option<&PlanEntry> {
        self.plans.iter().find(|p| p.id == id)
    }
}

/// When each repository's ledger clone was last fetched for a view, so a page that lists
/// a hundred repositories does not cost a hundred fetches each time it is opened.
#[derive(Debug, Default)]
pub(crate) struct FetchTimes(Mutex<HashMap<String, Instant>>);

impl FetchTimes {
    fn due(&self, repo: &str, max_age: Duration) -> bool {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.get(&repo.to_ascii_lowercase())
            .is_none_or(|at| at.elapsed() >= max_age)
    }

    fn mark(&self, repo: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(repo.to_ascii_lowercase(), Instant::now());
    }
}

fn view_cx(what: &str) -> Inbound {
    Inbound {
        delivery: Delivery::new(format!("dashboard-{what}"), 1),
        report: Report::default(),
    }
}

impl Engine {
    /// The repository's ledger branch: mission and every plan, read at one tip. The local
    /// clone is fetched when its last fetch for a view is older than `max_age` (events
    /// fetch it too); otherwise the view costs no network.
    pub async fn repository_view(
        &self,
        installation: u64,
        repository: &Repository,
        max_age: Duration,
    ) -> Result<RepoView, EngineError> {
        let inbound = view_cx("view");
        let cx = RepoCtx::open(
            self,
            &inbound,
            Need::View,
            installation,
            repository,
            EventOrigin::new(0, ""),
        )
        .await?;
        let store = store(&cx).await?;
        let fetch = self.fetch_times.due(&repository.full_name, max_age);
        let view = blocking(move || store.view(fetch)).await?;
        if fetch {
            self.fetch_times.mark(&repository.full_name);
        }
        Ok(RepoView {
            repository: repository.full_name.clone(),
            ledger_branch: cx.repo_config().ledger_branch.clone(),
            commit: view.commit,
            ledger: view.ledger.map_err(|e: StoreError| e.to_string()),
            trusted: view.trusted,
            plans: plan_entries(view.plan_files),
        })
    }

    /// The person's role on the repository (`admin`, `maintain`, `write`, `triage`,
    /// `read` or `none`), by the same cached lookup the slash commands use.
    pub async fn role_of(
        &self,
        installation: u64,
        repository: &Repository,
        login: &str,
        user_id: u64,
    ) -> Result<String, EngineError> {
        let inbound = view_cx("role");
        let cx = RepoCtx::open(
            self,
            &inbound,
            Need::View,
            installation,
            repository,
            EventOrigin::new(0, login),
        )
        .await?;
        Ok(self
            .permissions
            .role(&cx.client, &repository.full_name, login, Some(user_id))
            .await?)
    }
}

/// Pairs each `<id>.json` with its `<id>.md`.
fn plan_entries(files: Vec<(String, Vec<u8>)>) -> Vec<PlanEntry> {
    let mut texts: HashMap<String, String> = HashMap::new();
    let mut records = Vec::new();
    for (name, bytes) in files {
        if let Some(id) = name.strip_suffix(".md") {
            texts.insert(id.to_owned(), String::from_utf8_lossy(&bytes).into_owned());
        } else if let Some(id) = name.strip_suffix(".json") {
            if id == "auto-accept" {
                continue;
            }
            let record = serde_json::from_slice::<PlanRecord>(&bytes)
                .map_err(|e| format!(".navin/plans/{name} does not parse: {e}"));
            records.push((id.to_owned(), record));
        }
    }
    records
        .into_iter()
        .map(|(id, record)| PlanEntry {
            text: texts.remove(&id).unwrap_or_default(),
            id,
            record,
        })
        .collect()
}
