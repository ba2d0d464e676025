//! Every GitHub REST endpoint Navin calls, one function each with a link to GitHub's documentation: paths are built here and nowhere else.
//!
//! Reads return the path (pass it to [`InstallationClient::get_json`] and friends, which
//! add retries, ETags and paging); writes return the [`ApiRequest`]. User-supplied parts
//! (labels, file paths, logins, workflow names) are percent-encoded here, so a caller
//! cannot build a path that reaches another endpoint.
//!
//! [`InstallationClient::get_json`]: crate::InstallationClient::get_json

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::{json, Value};

use crate::ApiRequest;

/// Everything but RFC 3986's unreserved characters is encoded in a path segment or
/// query value.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// One path segment or query value, percent-encoded.
pub fn encode(part: &str) -> String {
    utf8_percent_encode(part, SEGMENT).to_string()
}

/// A repository file path: each segment encoded, the slashes kept.
fn encode_path(path: &str) -> String {
    path.split('/').map(encode).collect::<Vec<_>>().join("/")
}

// --- the App -------------------------------------------------------------------------

/// [Get the authenticated app](https://docs.github.com/rest/apps/apps#get-the-authenticated-app)
pub fn app() -> String {
    "/app".to_owned()
}

/// [Get an installation for the authenticated app](https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app)
/// (App JWT): its `permissions` are what its tokens may be narrowed from.
pub fn installation(id: u64) -> String {
    format!("/app/installations/{id}")
}

/// [List installations for the authenticated app](https://docs.github.com/rest/apps/apps#list-installations-for-the-authenticated-app)
/// (App JWT), a page of 100.
pub fn app_installations() -> String {
    "/app/installations?per_page=100".to_owned()
}

/// [List repositories accessible to the app installation](https://docs.github.com/rest/apps/installations#list-repositories-accessible-to-the-app-installation)
/// (installation token), a page of 100.
pub fn installation_repositories() -> String {
    "/installation/repositories?per_page=100".to_owned()
}

// --- repositories and git data -------------------------------------------------------

/// [Get a repository](https://docs.github.com/rest/repos/repos#get-a-repository)
pub fn repository(repo: &str) -> String {
    format!("/repos/{repo}")
}

/// [Get a tree](https://docs.github.com/rest/git/trees#get-a-tree), recursively.
pub fn tree_recursive(repo: &str, tree_ish: &str) -> String {
    format!(
        "/repos/{repo}/git/trees/{}?recursive=1",
        encode_path(tree_ish)
    )
}

/// [Get a blob](https://docs.github.com/rest/git/blobs#get-a-blob)
pub fn blob(repo: &str, sha: &str) -> String {
    format!("/repos/{repo}/git/blobs/{}", encode(sha))
}

/// [Get repository content](https://docs.github.com/rest/repos/contents#get-repository-content)
/// of one file, at `reference` or the default branch.
pub fn contents(repo: &str, path: &str, reference: Option<&str>) -> String {
    match reference {
        Some(r) => format!(
            "/repos/{repo}/contents/{}?ref={}",
            encode_path(path),
            encode(r)
        ),
        None => format!("/repos/{repo}/contents/{}", encode_path(path)),
    }
}

/// [Get repository permissions for a user](https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user)
pub fn collaborator_permission(repo: &str, login: &str) -> String {
    format!("/repos/{repo}/collaborators/{}/permission", encode(login))
}

// --- issues and comments -------------------------------------------------------------

/// [List repository issues](https://docs.github.com/rest/issues/issues#list-repository-issues)
/// with a label, open and closed, 100 a page.
pub fn issues_labelled(repo: &str, label: &str) -> String {
    format!(
        "/repos/{repo}/issues?state=all&labels={}&per_page=100",
        encode(label)
    )
}

/// [List repository issues](https://docs.github.com/rest/issues/issues#list-repository-issues),
/// open and closed, 100 a page.
pub fn issues_all(repo: &str) -> String {
    format!("/repos/{repo}/issues?state=all&per_page=100")
}

/// [Create an issue](https://docs.github.com/rest/issues/issues#create-an-issue)
pub fn create_issue(repo: &str, title: &str, body: &str, labels: &[String]) -> ApiRequest {
    ApiRequest::post(
        issues(repo),
        json!({ "title": title, "body": body, "labels": labels }),
    )
}

/// The issues collection (the path [`create_issue`] posts to).
pub fn issues(repo: &str) -> String {
    format!("/repos/{repo}/issues")
}

/// [List issue comments](https://docs.github.com/rest/issues/comments#list-issue-comments)
pub fn issue_comments(repo: &str, issue: u64) -> String {
    format!("/repos/{repo}/issues/{issue}/comments")
}

/// [Create an issue comment](https://docs.github.com/rest/issues/comments#create-an-issue-comment)
pub fn create_issue_comment(repo: &str, issue: u64, body: &str) -> ApiRequest {
    ApiRequest::post(issue_comments(repo, issue), json!({ "body": body }))
}

/// [Update an issue comment](https://docs.github.com/rest/issues/comments#update-an-issue-comment)
pub fn update_issue_comment(repo: &str, comment_id: u64, body: &str) -> ApiRequest {
    ApiRequest::patch(
        format!("/repos/{repo}/issues/comments/{comment_id}"),
        json!({ "body": body }),
    )
}

/// [Create reaction for an issue comment](https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment)
pub fn create_comment_reaction(repo: &str, comment_id: u64, content: &str) -> ApiRequest {
    ApiRequest::post(
        format!("/repos/{repo}/issues/comments/{comment_id}/reactions"),
        json!({ "content": content }),
    )
}

// --- branches --------------------------------------------------------------------------

/// [Get a branch](https://docs.github.com/rest/branches/branches#get-a-branch): its
/// `protected` flag needs only read access (the protection settings need admin).
pub fn branch(repo: &str, branch: &str) -> String {
    format!("/repos/{repo}/branches/{}", encode(branch))
}

/// [Get rules for a branch](https://docs.github.com/rest/repos/rules#get-rules-for-a-branch):
/// every active ruleset rule that applies to it.
pub fn branch_rules(repo: &str, branch: &str) -> String {
    format!("/repos/{repo}/rules/branches/{}", encode(branch))
}

/// [Get branch protection](https://docs.github.com/rest/branches/branch-protection#get-branch-protection):
/// force pushes, deletions, admins and push restrictions. Needs `administration: read`;
/// 404 when the branch has no classic protection.
pub fn branch_protection(repo: &str, branch: &str) -> String {
    format!("/repos/{repo}/branches/{}/protection", encode(branch))
}

/// [Get a repository ruleset](https://docs.github.com/rest/repos/rules#get-a-repository-ruleset):
/// its `bypass_actors`, which GitHub lists only to a caller who may edit the ruleset.
pub fn ruleset(repo: &str, id: u64) -> String {
    format!("/repos/{repo}/rulesets/{id}")
}

// --- pull requests ---------------------------------------------------------------------

/// [Get a pull request](https://docs.github.com/rest/pulls/pulls#get-a-pull-request)
pub fn pull_request(repo: &str, number: u64) -> String {
    format!("/repos/{repo}/pulls/{number}")
}

/// [Update a pull request](https://docs.github.com/rest/pulls/pulls#update-a-pull-request)
/// to `state: closed`: the same request again changes nothing.
pub fn close_pull_request(repo: &str, number: u64) -> ApiRequest {
    ApiRequest::patch(
        format!("/repos/{repo}/pulls/{number}"),
        json!({ "state": "closed" }),
    )
}

/// [Merge a pull request](https://docs.github.com/rest/pulls/pulls#merge-a-pull-request)
/// whose head is still `sha` (GitHub answers 409 when it moved, 405 when it cannot be
/// merged), by `method` (`merge`, `squash` or `rebase`).
pub fn merge_pull_request(repo: &str, number: u64, sha: &str, method: &str) -> ApiRequest {
    ApiRequest::put(
        format!("/repos/{repo}/pulls/{number}/merge"),
        json!({ "sha": sha, "merge_method": method }),
    )
}

/// [List pull requests](https://docs.github.com/rest/pulls/pulls#list-pull-requests), open, 100 a page.
pub fn open_pull_requests(repo: &str) -> String {
    format!("/repos/{repo}/pulls?state=open&per_page=100")
}

/// [List reviews for a pull request](https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request)
pub fn pull_request_reviews(repo: &str, number: u64) -> String {
    format!("/repos/{repo}/pulls/{number}/reviews?per_page=100")
}

/// [Get all requested reviewers for a pull request](https://docs.github.com/rest/pulls/review-requests#get-all-requested-reviewers-for-a-pull-request)
pub fn requested_reviewers(repo: &str, number: u64) -> String {
    format!("/repos/{repo}/pulls/{number}/requested_reviewers")
}

/// [Request reviewers for a pull request](https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request):
/// `reviewers` are logins, `team_reviewers` slugs of the repository's organization's teams.
pub fn request_reviewers(
    repo: &str,
    number: u64,
    reviewers: &[String],
    team_reviewers: &[String],
) -> ApiRequest {
    ApiRequest::post(
        format!("/repos/{repo}/pulls/{number}/requested_reviewers"),
        json!({ "reviewers": reviewers, "team_reviewers": team_reviewers }),
    )
}

/// [List pull requests files](https://docs.github.com/rest/pulls/pulls#list-pull-requests-files)
pub fn pull_request_files(repo: &str, number: u64) -> String {
    format!("/repos/{repo}/pulls/{number}/files?per_page=100")
}

// --- checks and actions ----------------------------------------------------------------

/// [List check runs for a Git reference](https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference),
/// every run (`filter=all`, not only the latest per name), 100 a page.
pub fn check_runs_all(repo: &str, sha: &str, page: u32) -> String {
    format!(
        "/repos/{repo}/commits/{}/check-runs?filter=all&per_page=100&page={page}",
        encode(sha)
    )
}

/// [List check runs for a Git reference](https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference)
/// with one name, the latest per name.
pub fn check_runs_named(repo: &str, sha: &str, name: &str) -> String {
    format!(
        "/repos/{repo}/commits/{}/check-runs?check_name={}&filter=latest&per_page=100",
        encode(sha),
        encode(name)
    )
}

/// [List check run annotations](https://docs.github.com/rest/checks/runs#list-check-run-annotations),
/// the first `per_page` of them.
pub fn check_run_annotations(repo: &str, id: u64, per_page: u32) -> String {
    format!("/repos/{repo}/check-runs/{id}/annotations?per_page={per_page}")
}

/// [Create a check run](https://docs.github.com/rest/checks/runs#create-a-check-run)
pub fn create_check_run(repo: &str, body: Value) -> ApiRequest {
    ApiRequest::post(format!("/repos/{repo}/check-runs"), body)
}

/// [Update a check run](https://docs.github.com/rest/checks/runs#update-a-check-run)
pub fn update_check_run(repo: &str, id: u64, body: Value) -> ApiRequest {
    ApiRequest::patch(format!("/repos/{repo}/check-runs/{id}"), body)
}

/// [Get a workflow run](https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run)
pub fn workflow_run(repo: &str, id: u64) -> String {
    format!("/repos/{repo}/actions/runs/{id}")
}

/// [Create a workflow dispatch event](https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event)
pub fn dispatch_workflow(repo: &str, workflow: &str, git_ref: &str, inputs: Value) -> ApiRequest {
    ApiRequest::post(
        format!(
            "/repos/{repo}/actions/workflows/{}/dispatches",
            encode(workflow)
        ),
        json!({ "ref": git_ref, "inputs": inputs }),
    )
}

/// The login GitHub assigns issues to for the Copilot coding agent.
pub const COPILOT_AGENT_LOGIN: &str = "copilot-swe-agent[bot]";

/// [Remove assignees from an issue](https://docs.github.com/rest/issues/assignees#remove-assignees-from-an-issue):
/// the Copilot coding agent. Assigning it again while it is assigned starts no new
/// session, so the next attempt on a step whose pull request was closed unassigns it
/// first.
pub fn unassign_copilot(repo: &str, issue: u64) -> ApiRequest {
    ApiRequest::delete(format!("/repos/{repo}/issues/{issue}/assignees"))
        .json(json!({ "assignees": [COPILOT_AGENT_LOGIN] }))
}

/// [Add assignees to an issue](https://docs.github.com/rest/issues/assignees#add-assignees-to-an-issue)
/// for the Copilot coding agent, with the documented `agent_assignment` settings
/// (target repository, base branch, instructions, model). GitHub accepts this only
/// from a user token.
pub fn assign_to_copilot(
    repo: &str,
    issue: u64,
    base_branch: &str,
    instructions: &str,
    model: Option<&str>,
) -> ApiRequest {
    let mut assignment = json!({
        "target_repo": repo,
        "base_branch": base_branch,
        "custom_instructions": instructions,
    });
    if let Some(model) = model {
        assignment["model"] = json!(model);
    }
    ApiRequest::post(
        format!("/repos/{repo}/issues/{issue}/assignees"),
        json!({ "assignees": [COPILOT_AGENT_LOGIN], "agent_assignment": assignment }),
    )
}

/// [Get an issue](https://docs.github.com/rest/issues/issues#get-an-issue)
pub fn issue(repo: &str, number: u64) -> String {
    format!("/repos/{repo}/issues/{number}")
}

// --- organizations -------------------------------------------------------------------

/// [Get team membership for a user](https://docs.github.com/rest/teams/members#get-team-membership-for-a-user):
/// 200 with `state` (`active` or `pending`) for a member, 404 otherwise.
pub fn team_membership(org: &str, team_slug: &str, username: &str) -> String {
    format!(
        "/orgs/{}/teams/{}/memberships/{}",
        encode(org),
        encode(team_slug),
        encode(username)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_supplied_parts_cannot_leave_their_segment() {
        assert_eq!(
            issues_labelled("o/r", "navin step&x=1"),
            "/repos/o/r/issues?state=all&labels=navin%20step%26x%3D1&per_page=100"
        );
        assert_eq!(
            contents("o/r", "plans/a b.md", Some("feat/x")),
            "/repos/o/r/contents/plans/a%20b.md?ref=feat%2Fx"
        );
        assert_eq!(
            collaborator_permission("o/r", "../../admin"),
            "/repos/o/r/collaborators/..%2F..%2Fadmin/permission"
        );
        assert_eq!(
            check_runs_named("o/r", "abc", "navin/plan"),
            "/repos/o/r/commits/abc/check-runs?check_name=navin%2Fplan&filter=latest&per_page=100"
        );
    }

    #[test]
    fn writes_carry_the_body_github_documents() {
        let r = create_issue_comment("o/r", 3, "hi");
        assert_eq!(r.method, http::Method::POST);
        assert_eq!(r.path, "/repos/o/r/issues/3/comments");
        assert_eq!(r.body, Some(json!({"body": "hi"})));
        let d = dispatch_workflow("o/r", "agent.yml", "main", json!({"step": "S1"}));
        assert_eq!(d.path, "/repos/o/r/actions/workflows/agent.yml/dispatches");
        assert_eq!(
            d.body,
            Some(json!({"ref": "main", "inputs": {"step": "S1"}}))
        );
    }
}
