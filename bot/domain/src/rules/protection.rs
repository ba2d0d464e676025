//! Whether anyone but Navin can change the ledger branch, from what GitHub says about its protection: the panel's warning, worded.
//!
//! Classic protection and rulesets stack: a push must pass both, so a hole in one is
//! closed when the other covers it. Without `administration: read` only the fact of
//! protection can be read (`GET /branches/{b}` and `GET /rules/branches/{b}`), not who is
//! exempt, and the warning says so rather than guess.

/// Ruleset rule types that stop a rewrite (`non_fast_forward`) or any push but a bypass
/// actor's (`update`).
pub const GUARDING_RULES: [&str; 2] = ["non_fast_forward", "update"];

/// What the reads without admin access found.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// `GET /branches/{b}`: classic protection is on.
    pub classic: bool,
    /// `GET /rules/branches/{b}`: (rule type, ruleset id) of each active rule.
    pub rules: Vec<(String, u64)>,
}

/// What `GET /branches/{b}/protection` says (needs `administration: read`).
#[derive(Debug, Clone, Default)]
pub struct Classic {
    pub allow_force_pushes: bool,
    pub allow_deletions: bool,
    pub enforce_admins: bool,
    /// Who may push: `None` when anyone with write access may.
    pub restrictions: Option<Restrictions>,
}

/// A classic protection's push allowance: user logins, team and app slugs.
#[derive(Debug, Clone, Default)]
pub struct Restrictions {
    pub users: Vec<String>,
    pub teams: Vec<String>,
    pub apps: Vec<String>,
}

/// One ruleset's bypass list, as `GET /rulesets/{id}` shows it; `actors` is `None`
/// when GitHub withheld it (it shows it only to those who may edit the ruleset).
#[derive(Debug, Clone, Default)]
pub struct Ruleset {
    pub id: u64,
    pub actors: Option<Vec<Actor>>,
}

/// One bypass actor (`actor_type`, `actor_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub kind: String,
    pub id: Option<u64>,
}

/// What admin access added, when Navin has it; each part `None` when its read failed.
#[derive(Debug, Clone, Default)]
pub struct Details {
    pub classic: Option<Classic>,
    pub rulesets: Vec<Ruleset>,
}

/// Navin itself, so its own exemptions are not reported.
#[derive(Debug, Clone, Default)]
pub struct Me {
    pub app_id: Option<u64>,
    pub slug: String,
}

/// The panel's warning about the ledger branch `branch`, or `None` when only Navin can
/// change it (as far as GitHub shows). `details` is `None` without `administration: read`.
pub fn notice(branch: &str, guard: &Guard, details: Option<&Details>, me: &Me) -> Option<String> {
    let ruled = |kind: &str| guard.rules.iter().any(|(k, _)| k == kind);
    let (no_rewrite, no_update) = (ruled("non_fast_forward"), ruled("update"));
    if !guard.classic && !no_rewrite && !no_update {
        return Some(format!(
            "The ledger branch `{branch}` is not protected: anyone who can push to this repository can rewrite or forge the mission's history (Navin refuses what it detects, after the fact). Add a ruleset for `{branch}` that blocks force pushes and deletions and restricts updates, with Navin as the only bypass."
        ));
    }
    let Some(details) = details else {
        return Some(format!(
            "The ledger branch `{branch}` is protected, but who may still push to it or bypass its rules is unknown: Navin cannot read that without the `administration: read` permission. Grant it in the App's settings to let Navin check."
        ));
    };
    let findings = findings(guard, details, me, no_rewrite || no_update, no_update);
    if findings.is_empty() {
        return None;
    }
    Some(format!(
        "The ledger branch `{branch}` is protected, but not only Navin can change it: {}. Anyone named here can rewrite or forge the mission's history (Navin refuses what it detects, after the fact).",
        findings.join("; ")
    ))
}

/// Each way someone other than Navin can still change the branch, worded.
fn findings(
    guard: &Guard,
    details: &Details,
    me: &Me,
    rulesets_guard: bool,
    updates_ruled: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    match (&details.classic, guard.classic) {
        (Some(c), true) => {
            // A ruleset blocking rewrites covers the classic settings it overlaps.
            if c.allow_force_pushes && !rulesets_guard {
                out.push("force pushes allowed".to_owned());
            }
            if c.allow_deletions && !rulesets_guard {
                out.push("deletion allowed".to_owned());
            }
            if !c.enforce_admins && !rulesets_guard {
                out.push("admins not included".to_owned());
            }
            if !updates_ruled {
                match &c.restrictions {
                    None => out.push("anyone with write access may push".to_owned()),
                    Some(r) => {
                        let others = restricted_others(r, me);
                        if !others.is_empty() {
                            out.push(format!("may push: {}", others.join(", ")));
                        }
                    }
                }
            }
        }
        (None, true) => out.push("classic protection settings unreadable".to_owned()),
        _ => {
            if !updates_ruled {
                out.push(
                    "anyone with write access may push (no rule restricts updates)".to_owned(),
                );
            }
        }
    }
    let mut hidden = Vec::new();
    let mut actors: Vec<String> = Vec::new();
    for set in &details.rulesets {
        match &set.actors {
            None => hidden.push(set.id.to_string()),
            Some(list) => {
                for a in list.iter().filter(|a| !is_me(a, me)) {
                    let name = actor_name(a);
                    if !actors.contains(&name) {
                        actors.push(name);
                    }
                }
            }
        }
    }
    if !actors.is_empty() {
        out.push(format!("bypass actors: {}", actors.join(", ")));
    }
    if !hidden.is_empty() {
        out.push(format!(
            "who may bypass ruleset {} is hidden (GitHub shows it only with `administration: write`)",
            hidden.join(", ")
        ));
    }
    out
}

fn is_me(actor: &Actor, me: &Me) -> bool {
    actor.kind == "Integration" && actor.id.is_some() && actor.id == me.app_id
}

fn actor_name(a: &Actor) -> String {
    let id = a.id.map(|n| n.to_string()).unwrap_or_default();
    match a.kind.as_str() {
        "User" => format!("user {id}"),
        "Team" => format!("team {id}"),
        "Integration" => format!("app {id}"),
        "OrganizationAdmin" => "organization admins".to_owned(),
        "RepositoryRole" => format!("repository role {id}"),
        "DeployKey" => "deploy keys".to_owned(),
        other => format!("{other} {id}").trim().to_owned(),
    }
}

fn restricted_others(r: &Restrictions, me: &Me) -> Vec<String> {
    let users = r.users.iter().map(|u| format!("@{u}"));
    let teams = r.teams.iter().map(|t| format!("team {t}"));
    let apps = r
        .apps
        .iter()
        .filter(|a| me.slug.is_empty() || **a != me.slug)
        .map(|a| format!("app {a}"));
    users.chain(teams).chain(apps).collect()
}

#[cfg(test)]
mod tests;
