//! Code owners at the GitHub edge: CODEOWNERS read through the contents API, review requests on plan pull requests (once per plan text), and team-membership answers for `approval.require_codeowners`.

use super::plan_types::PullInfo;
use super::pulls::reviews;
use super::records::update_record;
use super::{EngineError, RepoCtx};
use base64::Engine as _;
use navin_domain::rules::codeowners_approval::{self, Lookup, Membership, OwnersVerdict};
use navin_domain::rules::review_requests::{self, PullState, Targets};
use navin_github::ops;
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::record::{FileOwners, PlanRecord, ReviewRequests};
use navin_ledger::plan::PlanDocument;
use navin_planner::codeowners::{CodeOwners, LOCATIONS};
use serde::Deserialize;
use std::collections::BTreeMap;

/// `GET …/requested_reviewers`.
#[derive(Debug, Default, Deserialize)]
struct Requested {
    #[serde(default)]
    users: Vec<Login>,
    #[serde(default)]
    teams: Vec<Slug>,
}

#[derive(Debug, Deserialize)]
struct Login {
    login: String,
}

#[derive(Debug, Deserialize)]
struct Slug {
    slug: String,
}

/// `GET /orgs/{org}/teams/{team_slug}/memberships/{username}`.
#[derive(Debug, Deserialize)]
struct TeamMembership {
    state: String,
}

/// The owners of `doc`'s proposed files by the CODEOWNERS GitHub would use at
/// `reference` (a pull request's base branch; `None`: the default branch), read
/// through the contents API. Files without owners are left out.
pub(crate) async fn plan_owners(
    cx: &RepoCtx<'_>,
    doc: &PlanDocument,
    reference: Option<&str>,
) -> Result<Vec<FileOwners>, EngineError> {
    let Some(codeowners) = codeowners(cx, reference).await? else {
        return Ok(Vec::new());
    };
    Ok(doc
        .plan()
        .changes
        .iter()
        .map(|c| FileOwners {
            path: c.path.clone(),
            owners: codeowners.owners_of(&c.path).to_vec(),
        })
        .filter(|f| !f.owners.is_empty())
        .collect())
}

/// The first CODEOWNERS of GitHub's three locations at `reference`.
async fn codeowners(
    cx: &RepoCtx<'_>,
    reference: Option<&str>,
) -> Result<Option<CodeOwners>, EngineError> {
    for path in LOCATIONS {
        let file: serde_json::Value = match cx
            .client
            .get_json(&ops::contents(&cx.repo, path, reference))
            .await
        {
            Ok(file) => file,
            Err(e) if e.status() == Some(404) => continue,
            Err(e) => return Err(e.into()),
        };
        // Files over 1 MB come without content; GitHub itself ignores CODEOWNERS over 3 MB.
        let packed: String = file["content"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(packed) else {
            tracing::warn!(repo = %cx.repo, path, "CODEOWNERS came undecodable: not used");
            return Ok(None);
        };
        return Ok(Some(CodeOwners::parse(
            path,
            &String::from_utf8_lossy(&bytes),
        )));
    }
    Ok(None)
}

/// Asks the owners of the plan's proposed files to review its pull request, once
/// per plan text: the record keeps what was asked for which text, so a redelivered
/// webhook or an unchanged text asks nobody again. People already asked, who
/// already reviewed, or who wrote the pull request are left out. A request GitHub
/// refuses (422: not a collaborator) does not fail the plan; the record, and so the
/// plan comment and check, names who could not be asked. Returns the record as
/// stored afterwards.
pub(crate) async fn request_owner_reviews(
    cx: &RepoCtx<'_>,
    record: &PlanRecord,
    doc: &PlanDocument,
    pr: &PullInfo,
) -> Result<Option<PlanRecord>, EngineError> {
    let asked = record.review_requests.as_ref().map(|r| r.hash.as_str());
    if asked == Some(record.hash.as_str()) || !record.pull_request || record.is_approved() {
        return Ok(None);
    }
    let files = plan_owners(cx, doc, Some(&pr.base_ref)).await?;
    if files.is_empty() {
        return Ok(None);
    }
    let requested: Requested = cx
        .client
        .get_json(&ops::requested_reviewers(&cx.repo, pr.number))
        .await?;
    let reviewed: Vec<String> = reviews(cx, pr.number)
        .await?
        .into_iter()
        .filter_map(|r| r.user.map(|u| u.login))
        .collect();
    let users: Vec<String> = requested.users.into_iter().map(|u| u.login).collect();
    let teams: Vec<String> = requested.teams.into_iter().map(|t| t.slug).collect();
    let org = cx.repo.split('/').next().unwrap_or_default();
    let targets = review_requests::targets(
        &files,
        &PullState {
            author: &pr.author,
            org,
            requested_users: &users,
            requested_teams: &teams,
            reviewed: &reviewed,
        },
    );
    let mut outcome = send_review_requests(cx, pr.number, &targets).await?;
    outcome.not_requested.extend(targets.skipped);
    let entry = ReviewRequests {
        hash: record.hash.clone(),
        ..outcome
    };
    let id = record.id.clone();
    let message = commit_message(
        &id,
        "review-requests",
        &Actor::Human(cx.origin.author.clone()),
        "Code owners of the proposed files asked to review.",
        Some(&cx.delivery.id),
    );
    let change = move |old: Option<PlanRecord>, _: &super::plan_types::Seen| {
        let Some(mut record) = old else {
            return Ok(None);
        };
        if record.hash != entry.hash {
            return Ok(None);
        }
        record.review_requests = Some(entry.clone());
        Ok::<_, String>(Some(record))
    };
    match update_record(cx, &id, None, message, None, Box::new(change)).await? {
        Ok(stored) => Ok(stored),
        Err(reason) => Err(EngineError::Internal(reason)),
    }
}

/// Sends the request in one call; when GitHub refuses it (422: one owner is not a
/// collaborator, and GitHub then asks nobody), asks each owner on their own so the
/// others are still asked, and names who could not be.
async fn send_review_requests(
    cx: &RepoCtx<'_>,
    number: u64,
    targets: &Targets,
) -> Result<ReviewRequests, EngineError> {
    let org = cx.repo.split('/').next().unwrap_or_default();
    let mut out = ReviewRequests {
        hash: String::new(),
        requested: Vec::new(),
        not_requested: Vec::new(),
    };
    if targets.is_empty() {
        return Ok(out);
    }
    let shown = |users: &[String], teams: &[String]| -> Vec<String> {
        users
            .iter()
            .map(|u| format!("@{u}"))
            .chain(teams.iter().map(|t| format!("@{org}/{t}")))
            .collect()
    };
    let all = ops::request_reviewers(
        &cx.repo,
        number,
        &targets.reviewers,
        &targets.team_reviewers,
    );
    match cx.client.write_idempotent(all).await {
        Ok(_) => {
            out.requested = shown(&targets.reviewers, &targets.team_reviewers);
            return Ok(out);
        }
        Err(e) if e.status() == Some(422) => {
            tracing::warn!(repo = %cx.repo, pr = number, error = %e, "review request refused: asking each code owner alone");
        }
        // The installation has not accepted `pull_requests: write` yet: the plan stands.
        Err(e) if e.status() == Some(403) => {
            tracing::warn!(repo = %cx.repo, pr = number, error = %e, "review request forbidden: grant pull_requests: write");
            let who = shown(&targets.reviewers, &targets.team_reviewers);
            out.not_requested.push(format!(
                "{}: the App lacks the permission `pull_requests: write` (accept it on the installation's settings page)",
                who.iter().map(|w| format!("`{w}`")).collect::<Vec<_>>().join(", ")
            ));
            return Ok(out);
        }
        Err(e) => return Err(e.into()),
    }
    let one_by_one = targets
        .reviewers
        .iter()
        .map(|u| (vec![u.clone()], Vec::new()))
        .chain(
            targets
                .team_reviewers
                .iter()
                .map(|t| (Vec::new(), vec![t.clone()])),
        );
    for (users, teams) in one_by_one {
        let who = shown(&users, &teams).join("");
        match cx
            .client
            .write_idempotent(ops::request_reviewers(&cx.repo, number, &users, &teams))
            .await
        {
            Ok(_) => out.requested.push(who),
            Err(e) if e.status() == Some(422) => {
                tracing::warn!(repo = %cx.repo, pr = number, %who, error = %e, "review request refused");
                out.not_requested.push(format!(
                    "`{who}`: GitHub refused the review request (422; usually not a collaborator of the repository)"
                ));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// `approval.require_codeowners`: which of `approvers` own the proposed files
/// `files`, and which owned files still wait. Team memberships are asked once each
/// per call (one delivery); a 403 (no `members: read`) is an answer that counts as
/// not a member and is named in the verdict.
pub(crate) async fn owner_verdict(
    cx: &RepoCtx<'_>,
    files: &[FileOwners],
    approvers: &[String],
) -> Result<OwnersVerdict, EngineError> {
    let mut answers: BTreeMap<Lookup, Membership> = BTreeMap::new();
    for lookup in codeowners_approval::lookups(files, approvers) {
        let (org, slug, login) = &lookup;
        let path = ops::team_membership(org, slug, login);
        let answer = match cx.client.get_json::<TeamMembership>(&path).await {
            Ok(m) if m.state == "active" => Membership::Active,
            Ok(_) => Membership::NotMember,
            Err(e) if e.status() == Some(404) => Membership::NotMember,
            Err(e) if e.status() == Some(403) => {
                tracing::warn!(repo = %cx.repo, team = %format!("{org}/{slug}"), error = %e, "team membership unreadable: grant members: read");
                Membership::Refused
            }
            Err(e) => return Err(e.into()),
        };
        answers.insert(lookup, answer);
    }
    Ok(codeowners_approval::verdict(files, approvers, &answers))
}
