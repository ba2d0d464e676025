//! What a signed-in person may see: the repositories GitHub lists for their token across the App's installations, with their role on each, kept a minute.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use navin_github::{ApiRequest, GitHubApp, GitHubError};
use secrecy::SecretString;
use serde::Deserialize;

/// How long a person's repository list is trusted. Write actions re-check the role
/// with the same lookup the slash commands use, so a lost grant bites at once there.
const ACCESS_TTL: Duration = Duration::from_secs(60);
/// Pages read per listing (100 entries each).
const MAX_PAGES: usize = 10;

/// A person's role on a repository, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Read,
    Triage,
    Write,
    Maintain,
    Admin,
}

impl Role {
    /// From the `permissions` object GitHub puts on each repository a user token lists.
    fn from_permissions(p: &Permissions) -> Role {
        if p.admin {
            Role::Admin
        } else if p.maintain {
            Role::Maintain
        } else if p.push {
            Role::Write
        } else if p.triage {
            Role::Triage
        } else {
            Role::Read
        }
    }

    /// From the collaborator-permission endpoint's `role_name` (the commands' lookup).
    pub fn from_role_name(name: &str) -> Option<Role> {
        match name {
            "admin" => Some(Role::Admin),
            "maintain" => Some(Role::Maintain),
            "write" => Some(Role::Write),
            "triage" => Some(Role::Triage),
            "read" => Some(Role::Read),
            _ => None,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Triage => "triage",
            Role::Write => "write",
            Role::Maintain => "maintain",
            Role::Admin => "admin",
        }
    }
}

/// One repository the person can read, through one of the App's installations.
#[derive(Debug, Clone)]
pub struct RepoAccess {
    pub installation: u64,
    pub id: u64,
    pub full_name: String,
    pub default_branch: Option<String>,
    pub html_url: Option<String>,
    pub role: Role,
}

impl RepoAccess {
    /// The engine's typed repository.
    pub fn repository(&self) -> navin_domain::event::Repository {
        navin_domain::event::Repository {
            full_name: self.full_name.clone(),
            id: Some(self.id),
            default_branch: self.default_branch.clone(),
            html_url: self.html_url.clone(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct Permissions {
    #[serde(default)]
    admin: bool,
    #[serde(default)]
    maintain: bool,
    #[serde(default)]
    push: bool,
    #[serde(default)]
    triage: bool,
}

#[derive(Debug, Deserialize)]
struct InstallationList {
    installations: Vec<InstallationEntry>,
}

#[derive(Debug, Deserialize)]
struct InstallationEntry {
    id: u64,
}

#[derive(Debug, Deserialize)]
struct RepositoryList {
    repositories: Vec<RepositoryEntry>,
}

#[derive(Debug, Deserialize)]
struct RepositoryEntry {
    id: u64,
    full_name: String,
    #[serde(default)]
    default_branch: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
    #[serde(default)]
    permissions: Permissions,
}

/// Everything one person can read, as GitHub listed it.
#[derive(Debug, Clone, Default)]
pub struct AccessList {
    pub repos: Vec<RepoAccess>,
    /// More existed than [`MAX_PAGES`] pages: the page says the list is cut.
    pub truncated: bool,
}

impl AccessList {
    /// The repository by `owner/name` (GitHub names compare case-insensitively).
    pub fn find(&self, owner: &str, name: &str) -> Option<&RepoAccess> {
        let wanted = format!("{owner}/{name}");
        self.repos
            .iter()
            .find(|r| r.full_name.eq_ignore_ascii_case(&wanted))
    }
}

/// Lists per user id, refreshed after [`ACCESS_TTL`].
#[derive(Debug, Default)]
pub struct AccessCache(Mutex<HashMap<u64, (AccessList, Instant)>>);

impl AccessCache {
    pub async fn get(
        &self,
        github: &GitHubApp,
        user_id: u64,
        token: &SecretString,
    ) -> Result<AccessList, GitHubError> {
        if let Some((list, at)) = self.lock().get(&user_id) {
            if at.elapsed() < ACCESS_TTL {
                return Ok(list.clone());
            }
        }
        let list = fetch(github, token).await?;
        self.lock().insert(user_id, (list.clone(), Instant::now()));
        Ok(list)
    }

    /// Drops a person's list (sign-out), so the next sign-in asks GitHub again.
    pub fn forget(&self, user_id: u64) {
        self.lock().remove(&user_id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (AccessList, Instant)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `GET /user/installations`, then each installation's repositories the person can
/// access (both documented under "List app installations accessible to the user
/// access token").
async fn fetch(github: &GitHubApp, token: &SecretString) -> Result<AccessList, GitHubError> {
    let mut list = AccessList::default();
    let (pages, cut) =
        paged::<InstallationList>(github, token, "/user/installations?per_page=100".to_owned())
            .await?;
    list.truncated |= cut;
    let installations: Vec<u64> = pages
        .into_iter()
        .flat_map(|p| p.installations)
        .map(|i| i.id)
        .collect();
    for installation in installations {
        let first = format!("/user/installations/{installation}/repositories?per_page=100");
        let (pages, cut) = paged::<RepositoryList>(github, token, first).await?;
        list.truncated |= cut;
        list.repos.extend(
            pages
                .into_iter()
                .flat_map(|p| p.repositories)
                .map(|r| RepoAccess {
                    installation,
                    id: r.id,
                    role: Role::from_permissions(&r.permissions),
                    full_name: r.full_name,
                    default_branch: r.default_branch,
                    html_url: r.html_url,
                }),
        );
    }
    list.repos.sort_by(|a, b| {
        a.full_name
            .to_ascii_lowercase()
            .cmp(&b.full_name.to_ascii_lowercase())
    });
    Ok(list)
}

/// Up to [`MAX_PAGES`] pages from `first` on, following `Link: rel="next"`; and whether
/// more were left unread.
async fn paged<T: serde::de::DeserializeOwned>(
    github: &GitHubApp,
    token: &SecretString,
    first: String,
) -> Result<(Vec<T>, bool), GitHubError> {
    let mut out = Vec::new();
    let mut next = Some(first);
    while let Some(path) = next.take() {
        if out.len() == MAX_PAGES {
            return Ok((out, true));
        }
        let response = github
            .user_request(token, ApiRequest::get(path.clone()))
            .await?;
        out.push(response.json(&path)?);
        next = response.next_page();
    }
    Ok((out, false))
}
