//! Whether anyone but Navin can change the ledger branch, read through the branch, rules and (with `administration: read`) protection and ruleset APIs, cached briefly per repository, for the panel's warning.
//!
//! Navin detects a rewritten or forged ledger after the fact (seen records, the tip record,
//! checkpoints, foreign commits); protection stops it before. Whether the branch is
//! guarded at all needs no admin access; who is exempt (force pushes, admins, push
//! restrictions, ruleset bypass actors) needs `administration: read`, which Navin uses
//! only when the installation was granted it. The wording is `rules::protection`'s.

use navin_domain::rules::protection::{
    self, Actor, Classic, Details, Guard, Me, Restrictions, Ruleset, GUARDING_RULES,
};
use navin_github::{ops, GitHubError, InstallationClient};
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, serde::Deserialize)]
struct Branch {
    #[serde(default)]
    protected: bool,
}

#[derive(Debug, serde::Deserialize)]
struct Rule {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    ruleset_id: u64,
}

#[derive(Debug, Default, serde::Deserialize)]
struct Enabled {
    #[serde(default)]
    enabled: bool,
}

#[derive(Debug, serde::Deserialize)]
struct Login {
    #[serde(default)]
    login: String,
}

#[derive(Debug, serde::Deserialize)]
struct Slug {
    #[serde(default)]
    slug: String,
}

#[derive(Debug, serde::Deserialize)]
struct PushAllowance {
    #[serde(default)]
    users: Vec<Login>,
    #[serde(default)]
    teams: Vec<Slug>,
    #[serde(default)]
    apps: Vec<Slug>,
}

#[derive(Debug, serde::Deserialize)]
struct Protection {
    #[serde(default)]
    allow_force_pushes: Enabled,
    #[serde(default)]
    allow_deletions: Enabled,
    #[serde(default)]
    enforce_admins: Enabled,
    #[serde(default)]
    restrictions: Option<PushAllowance>,
}

#[derive(Debug, serde::Deserialize)]
struct BypassActor {
    #[serde(default)]
    actor_type: String,
    #[serde(default)]
    actor_id: Option<u64>,
}

#[derive(Debug, serde::Deserialize)]
struct RulesetBody {
    #[serde(default)]
    bypass_actors: Option<Vec<BypassActor>>,
}

/// (repository, branch) → the warning (or none) and when it was read.
type Seen = HashMap<(String, String), (Option<String>, Instant)>;

/// The panel warning for an unguarded ledger branch, by repository and branch.
#[derive(Debug)]
pub struct ProtectionCache {
    ttl: Duration,
    seen: Mutex<Seen>,
}

impl ProtectionCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The warning to show, or `None` when only Navin can change the branch, it does not
    /// exist yet, or it cannot be read (then the log says why; the panel is not the place
    /// to guess). `admin` is a client carrying `administration` and Navin's identity,
    /// when the installation granted it. A refused or failed admin read (403, 404)
    /// degrades to what the other reads show; it never fails the event.
    pub async fn notice(
        &self,
        client: &InstallationClient,
        repo: &str,
        branch: &str,
        admin: Option<(&InstallationClient, &Me)>,
    ) -> Option<String> {
        let key = (repo.to_ascii_lowercase(), branch.to_owned());
        if let Some((notice, at)) = self.lock().get(&key) {
            if at.elapsed() < self.ttl {
                return notice.clone();
            }
        }
        let notice = match check(client, repo, branch, admin).await {
            Ok(notice) => notice,
            Err(e) => {
                tracing::info!(repo, branch, error = %e, "cannot tell whether the ledger branch is protected");
                None
            }
        };
        self.lock().insert(key, (notice.clone(), Instant::now()));
        notice
    }

    /// Drops every branch of `repo`: the App lost access to it.
    pub fn forget(&self, repo: &str) {
        let repo = repo.to_ascii_lowercase();
        self.lock().retain(|(r, _), _| *r != repo);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

async fn check(
    client: &InstallationClient,
    repo: &str,
    branch: &str,
    admin: Option<(&InstallationClient, &Me)>,
) -> Result<Option<String>, GitHubError> {
    let found: Branch = match client.get_json(&ops::branch(repo, branch)).await {
        Ok(b) => b,
        Err(e) if e.status() == Some(404) => return Ok(None),
        Err(e) => return Err(e),
    };
    let rules: Vec<Rule> = client.get_json(&ops::branch_rules(repo, branch)).await?;
    let guard = Guard {
        classic: found.protected,
        rules: rules.into_iter().map(|r| (r.kind, r.ruleset_id)).collect(),
    };
    let guarded = guard.classic
        || guard
            .rules
            .iter()
            .any(|(k, _)| GUARDING_RULES.contains(&k.as_str()));
    let details = match admin {
        Some((admin, _)) if guarded => Some(details(admin, repo, branch, &guard).await),
        _ => None,
    };
    let me = admin.map(|(_, me)| me.clone()).unwrap_or_default();
    Ok(protection::notice(branch, &guard, details.as_ref(), &me))
}

/// The admin-only reads; each one that fails is left out (logged), not fatal.
async fn details(client: &InstallationClient, repo: &str, branch: &str, guard: &Guard) -> Details {
    let classic = if guard.classic {
        match client
            .get_json::<Protection>(&ops::branch_protection(repo, branch))
            .await
        {
            Ok(p) => Some(Classic {
                allow_force_pushes: p.allow_force_pushes.enabled,
                allow_deletions: p.allow_deletions.enabled,
                enforce_admins: p.enforce_admins.enabled,
                restrictions: p.restrictions.map(|r| Restrictions {
                    users: r.users.into_iter().map(|u| u.login).collect(),
                    teams: r.teams.into_iter().map(|t| t.slug).collect(),
                    apps: r.apps.into_iter().map(|a| a.slug).collect(),
                }),
            }),
            Err(e) => {
                tracing::info!(repo, branch, error = %e, "cannot read the ledger branch's protection settings");
                None
            }
        }
    } else {
        None
    };
    let ids: BTreeSet<u64> = guard
        .rules
        .iter()
        .filter(|(k, _)| GUARDING_RULES.contains(&k.as_str()))
        .map(|(_, id)| *id)
        .collect();
    let mut rulesets = Vec::with_capacity(ids.len());
    for id in ids {
        let actors = match client
            .get_json::<RulesetBody>(&ops::ruleset(repo, id))
            .await
        {
            Ok(body) => body.bypass_actors.map(|list| {
                list.into_iter()
                    .map(|a| Actor {
                        kind: a.actor_type,
                        id: a.actor_id,
                    })
                    .collect()
            }),
            Err(e) => {
                tracing::info!(repo, ruleset = id, error = %e, "cannot read the ruleset guarding the ledger branch");
                None
            }
        };
        rulesets.push(Ruleset { id, actors });
    }
    Details { classic, rulesets }
}
