//! The check `navin serve` runs once at start: every installed repository's ledger branch protection, logged when anyone but Navin can change it, and cached for the panel.
//!
//! Without it a repository's first panel in ten minutes is the first place an unguarded
//! ledger branch shows, which for a quiet repository can be never. Bounded (the first
//! [`MAX_STARTUP_REPOSITORIES`] repositories), sequential, and best effort: a failure is
//! logged and the sweep goes on or stops, but never fails or delays the server.

use crate::token_scope::{self, Need};
use crate::Engine;
use navin_github::{ops, ApiRequest, GitHubError, InstallationClient};

/// Repositories checked at start, over every installation.
pub const MAX_STARTUP_REPOSITORIES: usize = 100;

/// Pages of installations read at start (100 each).
const MAX_INSTALLATION_PAGES: usize = 10;

#[derive(Debug, serde::Deserialize)]
struct Installation {
    id: u64,
    #[serde(default)]
    suspended_at: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
struct RepositoryPage {
    #[serde(default)]
    repositories: Vec<InstalledRepository>,
}

#[derive(Debug, serde::Deserialize)]
struct InstalledRepository {
    id: u64,
    full_name: String,
}

/// What the start-up check found, for its summary line and tests.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StartupReport {
    /// Repositories whose ledger branch protection was read.
    pub checked: usize,
    /// Those with a warning (logged, and shown on their next panel).
    pub warned: usize,
    /// Repositories skipped: an invalid config, or a read that failed.
    pub skipped: usize,
    /// Whether the listing stopped at [`MAX_STARTUP_REPOSITORIES`].
    pub truncated: bool,
}

impl Engine {
    /// Lists the App's installations and their repositories (at most `max` in all),
    /// reads each one's `.github/navin.yml` ledger branch and its protection, and logs a
    /// warning for each branch anyone but Navin can change. Both answers land in the
    /// caches the events use, so the first panels cost nothing more.
    pub async fn check_ledger_branches_at_start(&self, max: usize) -> StartupReport {
        let mut report = StartupReport::default();
        let installations = match self.installations().await {
            Ok(list) => list,
            Err(e) => {
                tracing::warn!(error = %e, "start-up check: cannot list the App's installations; ledger branch protection is checked at each repository's first panel instead");
                return report;
            }
        };
        'installations: for installation in installations {
            if installation.suspended_at.is_some() {
                continue;
            }
            let granted = self.grants.get(&self.github, installation.id).await;
            let client = self.github.installation_scoped(
                installation.id,
                token_scope::scope(None, Need::Read, granted.as_deref()),
            );
            let admin = match token_scope::administration_scope(None, granted.as_deref()) {
                Some(scope) => Some((
                    self.github.installation_scoped(installation.id, scope),
                    self.me().await,
                )),
                None => None,
            };
            let mut next = Some(ops::installation_repositories());
            while let Some(path) = next.take() {
                let page = match client.get(&path).await {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::warn!(installation = installation.id, error = %e, "start-up check: cannot list the installation's repositories");
                        continue 'installations;
                    }
                };
                let repositories = match page.json::<RepositoryPage>(&path) {
                    Ok(body) => body.repositories,
                    Err(e) => {
                        tracing::warn!(installation = installation.id, error = %e, "start-up check: unreadable repository list");
                        continue 'installations;
                    }
                };
                for repo in repositories {
                    if report.checked + report.skipped >= max {
                        report.truncated = true;
                        break 'installations;
                    }
                    let admin = admin.as_ref().map(|(c, me)| (c, me));
                    self.check_one_at_start(&client, admin, &repo, &mut report)
                        .await;
                }
                next = page.next_page();
            }
        }
        tracing::info!(
            checked = report.checked,
            warned = report.warned,
            skipped = report.skipped,
            truncated = report.truncated,
            "start-up check of ledger branch protection done"
        );
        report
    }

    async fn check_one_at_start(
        &self,
        client: &InstallationClient,
        admin: Option<(&InstallationClient, &navin_domain::rules::protection::Me)>,
        repo: &InstalledRepository,
        report: &mut StartupReport,
    ) {
        let repository = repo.full_name.as_str();
        let config = match self.configs.get(client, repository).await {
            Ok(Ok(config)) => self.with_branch_override(config),
            Ok(Err(invalid)) => {
                tracing::info!(repo = repository, error = %invalid, "start-up check: invalid .github/navin.yml, skipped");
                report.skipped += 1;
                return;
            }
            Err(e) => {
                tracing::info!(repo = repository, error = %e, "start-up check: cannot read .github/navin.yml, skipped");
                report.skipped += 1;
                return;
            }
        };
        let branch = config.ledger_branch.as_str();
        report.checked += 1;
        if let Some(notice) = self
            .protection
            .notice(client, repository, branch, admin)
            .await
        {
            report.warned += 1;
            tracing::warn!(repo = repository, repository_id = repo.id, branch, warning = %notice, "ledger branch protection: anyone but Navin may change the branch, or who may is unknown");
        }
    }

    /// The App's installations, up to [`MAX_INSTALLATION_PAGES`] pages (App JWT).
    async fn installations(&self) -> Result<Vec<Installation>, GitHubError> {
        let mut all = Vec::new();
        let mut next = Some(ops::app_installations());
        let mut pages = 0;
        while let Some(path) = next.take() {
            if pages >= MAX_INSTALLATION_PAGES {
                break;
            }
            pages += 1;
            let response = self
                .github
                .app_request(ApiRequest::get(path.clone()))
                .await?;
            all.extend(response.json::<Vec<Installation>>(&path)?);
            next = response.next_page();
        }
        Ok(all)
    }
}
