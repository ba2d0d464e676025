//! Renders model objects as GitHub's JSON, starting from the REST description's own examples.
//!
//! Each response starts from the first 2xx example of its operation in
//! `@octokit/openapi` (fixtures/openapi/response-examples.json), so every field a
//! client may expect is present; the fake then overwrites the fields it models and
//! rewrites github.com URLs to point at itself.

use std::sync::OnceLock;

use base64::Engine;
use serde_json::{json, Value};

use super::http::ts;
use super::model::{
    AppInfo, CheckRun, CheckSuite, Comment, HookDelivery, Installation, Issue, Model, Repo, Review,
    WorkflowRun, GITHUB_ACTIONS_APP_ID,
};

static EXAMPLES: OnceLock<Value> = OnceLock::new();

fn examples() -> &'static Value {
    EXAMPLES.get_or_init(|| {
        let text = include_str!("../../fixtures/openapi/response-examples.json");
        serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.get("examples").cloned())
            .unwrap_or(Value::Null)
    })
}

/// A fresh copy of an operation's example response (an object, or the first item of a list).
pub fn template(operation_id: &str) -> Value {
    let value = examples()
        .get(operation_id)
        .cloned()
        .unwrap_or_else(|| json!({}));
    match value {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        other => other,
    }
}

fn node_id(kind: &str, id: u64) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{kind}{id}"))
}

/// Renders objects for one response; `base` is the fake's URL (`http://127.0.0.1:PORT`).
#[derive(Debug)]
pub struct Renderer<'a> {
    pub base: &'a str,
    pub model: &'a Model,
}

impl Renderer<'_> {
    /// Points example URLs at the fake and at this repository.
    fn rebase(&self, value: &mut Value, full_name: Option<&str>) {
        let base = self.base;
        let rewrite = |s: &str| -> String {
            let mut out = s.to_string();
            if let Some(full) = full_name {
                for (from, to) in [
                    (
                        "https://api.github.com/repos/octocat/Hello-World",
                        format!("{base}/repos/{full}"),
                    ),
                    (
                        "https://github.com/octocat/Hello-World",
                        format!("{base}/{full}"),
                    ),
                    (
                        "https://api.github.com/repos/github/hello-world",
                        format!("{base}/repos/{full}"),
                    ),
                    (
                        "https://github.com/github/hello-world",
                        format!("{base}/{full}"),
                    ),
                    (
                        "https://api.github.com/repos/octo-org/octo-repo",
                        format!("{base}/repos/{full}"),
                    ),
                    (
                        "https://github.com/octo-org/octo-repo",
                        format!("{base}/{full}"),
                    ),
                ] {
                    out = out.replace(from, &to);
                }
            }
            out.replace("https://api.github.com", base)
                .replace("https://github.com", base)
        };
        walk_strings(value, &rewrite);
    }

    pub fn user(&self, login: &str) -> Value {
        let mut user = template("issues/get-comment")["user"].clone();
        // GitHub percent-encodes logins like `navin[bot]` inside URLs.
        let encoded = super::http::encode_segment(login);
        walk_strings(&mut user, &|s: &str| s.replace("octocat", &encoded));
        let (id, kind) = match self.model.users.get(login) {
            Some(u) => (u.id, u.kind.as_str()),
            None => (0, "User"),
        };
        user["login"] = json!(login);
        user["id"] = json!(id);
        user["node_id"] = json!(node_id("04:User", id));
        user["type"] = json!(kind);
        user["site_admin"] = json!(false);
        user["avatar_url"] = json!(format!("{}/avatars/{}", self.base, id));
        self.rebase(&mut user, None);
        user
    }

    /// `GET /user`: the signed-in person's own profile (GitHub's private view).
    pub fn authenticated_user(&self, login: &str) -> Value {
        let mut me = template("users/get-authenticated");
        let encoded = super::http::encode_segment(login);
        walk_strings(&mut me, &|s: &str| s.replace("octocat", &encoded));
        let public = self.user(login);
        for key in ["login", "id", "node_id", "type", "site_admin", "avatar_url"] {
            me[key] = public[key].clone();
        }
        me["name"] = json!(login);
        me["email"] = Value::Null;
        me["twitter_username"] = Value::Null;
        me["user_view_type"] = json!("private");
        self.rebase(&mut me, None);
        me
    }

    pub fn repo(&self, repo: &Repo) -> Value {
        let mut r = template("repos/get");
        let full = repo.full_name();
        for key in ["parent", "source", "template_repository", "organization"] {
            if let Some(obj) = r.as_object_mut() {
                obj.remove(key);
            }
        }
        r["id"] = json!(repo.id);
        r["node_id"] = json!(node_id("010:Repository", repo.id));
        r["name"] = json!(repo.name);
        r["full_name"] = json!(full);
        r["owner"] = self.user(&repo.owner);
        r["private"] = json!(repo.private);
        r["visibility"] = json!(if repo.private { "private" } else { "public" });
        r["default_branch"] = json!(repo.default_branch);
        r["fork"] = json!(false);
        r["license"] = Value::Null;
        r["language"] = Value::Null;
        r["archived"] = json!(false);
        r["created_at"] = json!(ts(repo.created_at));
        r["clone_url"] = json!(format!("{}/{}.git", self.base, full));
        let open = repo.issues.values().filter(|i| i.state == "open").count();
        r["open_issues_count"] = json!(open);
        r["open_issues"] = json!(open);
        self.rebase(&mut r, Some(&full));
        r
    }

    /// The short repository shape used inside installation-token responses.
    pub fn repo_min(&self, repo: &Repo) -> Value {
        let mut r = template("apps/create-installation-access-token")["repositories"][0].clone();
        let full = repo.full_name();
        r["id"] = json!(repo.id);
        r["node_id"] = json!(node_id("010:Repository", repo.id));
        r["name"] = json!(repo.name);
        r["full_name"] = json!(full);
        r["owner"] = self.user(&repo.owner);
        r["private"] = json!(repo.private);
        r["default_branch"] = json!(repo.default_branch);
        self.rebase(&mut r, Some(&full));
        r
    }

    pub fn app(&self, app_id: u64) -> Value {
        let mut a = template("apps/get-authenticated");
        let app: AppInfo = if app_id == self.model.app.id {
            self.model.app.clone()
        } else if app_id == GITHUB_ACTIONS_APP_ID {
            AppInfo {
                id: app_id,
                client_id: "Iv1.actions".into(),
                slug: "github-actions".into(),
                name: "GitHub Actions".into(),
                owner: "github".into(),
                public_key_pem: String::new(),
                bot_user_id: 41898282,
                client_secret: String::new(),
                callback_urls: Vec::new(),
            }
        } else {
            AppInfo {
                id: app_id,
                client_id: format!("Iv1.app{app_id}"),
                slug: format!("app-{app_id}"),
                name: format!("App {app_id}"),
                owner: "someone".into(),
                public_key_pem: String::new(),
                bot_user_id: 0,
                client_secret: String::new(),
                callback_urls: Vec::new(),
            }
        };
        a["id"] = json!(app.id);
        a["slug"] = json!(app.slug);
        a["client_id"] = json!(app.client_id);
        a["node_id"] = json!(node_id("03:App", app.id));
        a["name"] = json!(app.name);
        a["owner"] = self.user(&app.owner);
        a["html_url"] = json!(format!("{}/apps/{}", self.base, app.slug));
        if let Some(obj) = a.as_object_mut() {
            obj.remove("client_secret");
            obj.remove("webhook_secret");
            obj.remove("pem");
        }
        self.rebase(&mut a, None);
        a
    }

    pub fn installation(&self, inst: &Installation) -> Value {
        let mut i = template("apps/get-installation");
        i["id"] = json!(inst.id);
        i["account"] = self.user(&inst.account);
        i["app_id"] = json!(self.model.app.id);
        i["app_slug"] = json!(self.model.app.slug);
        i["client_id"] = json!(self.model.app.client_id);
        i["target_id"] = i["account"]["id"].clone();
        i["target_type"] = i["account"]["type"].clone();
        i["permissions"] = json!(inst.permissions);
        i["repository_selection"] = json!("selected");
        i["created_at"] = json!(ts(inst.created_at));
        i["updated_at"] = json!(ts(inst.created_at));
        i["suspended_at"] = Value::Null;
        i["suspended_by"] = Value::Null;
        i["access_tokens_url"] = json!(format!(
            "{}/app/installations/{}/access_tokens",
            self.base, inst.id
        ));
        i["repositories_url"] = json!(format!("{}/installation/repositories", self.base));
        i["html_url"] = json!(format!("{}/settings/installations/{}", self.base, inst.id));
        self.rebase(&mut i, None);
        i
    }

    fn association(&self, repo: &str, login: &str) -> &'static str {
        let role = self
            .model
            .repos
            .get(&repo.to_ascii_lowercase())
            .and_then(|r| r.roles.get(login));
        match (role.map(String::as_str), repo.split('/').next()) {
            (_, Some(owner)) if owner.eq_ignore_ascii_case(login) => "OWNER",
            (Some("admin" | "maintain" | "write" | "triage"), _) => "COLLABORATOR",
            (Some(_), _) => "CONTRIBUTOR",
            _ => "NONE",
        }
    }

    pub fn issue(&self, repo: &Repo, issue: &Issue) -> Value {
        let full = repo.full_name();
        let mut i = template("issues/get");
        let n = issue.number;
        i["id"] = json!(issue.id);
        i["node_id"] = json!(node_id("05:Issue", issue.id));
        i["number"] = json!(n);
        i["title"] = json!(issue.title);
        i["body"] = json!(issue.body);
        i["user"] = self.user(&issue.author);
        i["state"] = json!(issue.state);
        i["state_reason"] = if issue.state == "closed" {
            json!("completed")
        } else {
            Value::Null
        };
        i["locked"] = json!(false);
        i["labels"] = json!(issue
            .labels
            .iter()
            .map(|l| self.label(&full, l))
            .collect::<Vec<_>>());
        let assignees: Vec<Value> = issue.assignees.iter().map(|a| self.user(a)).collect();
        i["assignee"] = assignees.first().cloned().unwrap_or(Value::Null);
        i["assignees"] = json!(assignees);
        i["milestone"] = Value::Null;
        i["closed_by"] = Value::Null;
        i["comments"] = json!(self
            .model
            .comments
            .values()
            .filter(|c| c.repo.eq_ignore_ascii_case(&full) && c.issue_number == n)
            .count());
        i["created_at"] = json!(ts(issue.created_at));
        i["updated_at"] = json!(ts(issue.updated_at));
        i["closed_at"] = json!(issue.closed_at.map(ts));
        i["author_association"] = json!(self.association(&full, &issue.author));
        i["url"] = json!(format!("{}/repos/{}/issues/{}", self.base, full, n));
        i["html_url"] = json!(format!("{}/{}/issues/{}", self.base, full, n));
        if let Some(obj) = i.as_object_mut() {
            obj.remove("pinned_comment");
            match &issue.pull {
                Some(pull) => {
                    obj.insert(
                        "pull_request".into(),
                        json!({
                            "url": format!("{}/repos/{}/pulls/{}", self.base, full, n),
                            "html_url": format!("{}/{}/pull/{}", self.base, full, n),
                            "diff_url": format!("{}/{}/pull/{}.diff", self.base, full, n),
                            "patch_url": format!("{}/{}/pull/{}.patch", self.base, full, n),
                            "merged_at": pull.merged_at.map(ts),
                        }),
                    );
                }
                None => {
                    obj.remove("pull_request");
                }
            }
        }
        self.rebase(&mut i, Some(&full));
        walk_strings(&mut i, &|s: &str| s.replace("/1347", &format!("/{n}")));
        i
    }

    pub fn label(&self, full: &str, name: &str) -> Value {
        json!({
            "id": name.len() as u64 + 1,
            "node_id": node_id("05:Label", name.len() as u64),
            "url": format!("{}/repos/{}/labels/{}", self.base, full, super::http::encode(name)),
            "name": name,
            "description": null,
            "color": "ededed",
            "default": false,
        })
    }

    pub fn comment(&self, c: &Comment) -> Value {
        let mut v = template("issues/get-comment");
        if let Some(obj) = v.as_object_mut() {
            obj.remove("pin");
            obj.remove("minimized");
        }
        v["id"] = json!(c.id);
        v["node_id"] = json!(node_id("012:IssueComment", c.id));
        v["body"] = json!(c.body);
        v["user"] = self.user(&c.author);
        v["created_at"] = json!(ts(c.created_at));
        v["updated_at"] = json!(ts(c.updated_at));
        v["author_association"] = json!(self.association(&c.repo, &c.author));
        v["url"] = json!(format!(
            "{}/repos/{}/issues/comments/{}",
            self.base, c.repo, c.id
        ));
        v["html_url"] = json!(format!(
            "{}/{}/issues/{}#issuecomment-{}",
            self.base, c.repo, c.issue_number, c.id
        ));
        v["issue_url"] = json!(format!(
            "{}/repos/{}/issues/{}",
            self.base, c.repo, c.issue_number
        ));
        let mut counts = serde_json::Map::new();
        for key in [
            "+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket",
        ] {
            counts.insert(
                key.into(),
                json!(c.reactions.iter().filter(|r| r.content == key).count()),
            );
        }
        counts.insert("total_count".into(), json!(c.reactions.len()));
        counts.insert(
            "url".into(),
            json!(format!(
                "{}/repos/{}/issues/comments/{}/reactions",
                self.base, c.repo, c.id
            )),
        );
        v["reactions"] = Value::Object(counts);
        v
    }

    pub fn reaction(&self, r: &super::model::Reaction) -> Value {
        let mut v = template("reactions/create-for-issue-comment");
        v["id"] = json!(r.id);
        v["node_id"] = json!(node_id("08:Reaction", r.id));
        v["user"] = self.user(&r.user);
        v["content"] = json!(r.content);
        v["created_at"] = json!(ts(r.created_at));
        v
    }

    fn pull_ref(
        &self,
        repo: &Repo,
        full: &str,
        git_ref: &str,
        sha: &str,
        template_side: &Value,
    ) -> Value {
        let mut side = template_side.clone();
        let owner = full.split('/').next().unwrap_or_default();
        side["label"] = json!(format!("{owner}:{git_ref}"));
        side["ref"] = json!(git_ref);
        side["sha"] = json!(sha);
        side["user"] = self.user(owner);
        side["repo"] = match self.model.repos.get(&full.to_ascii_lowercase()) {
            Some(r) => self.repo(r),
            None => self.repo(repo),
        };
        side
    }

    /// Teams of `org` by slug, in the `team` shape (unknown slugs are left out).
    pub fn teams(&self, org: &str, slugs: &[String]) -> Value {
        let tpl = template("pulls/list-requested-reviewers")["teams"][0].clone();
        let teams: Vec<Value> = slugs
            .iter()
            .filter_map(|slug| {
                self.model
                    .teams
                    .get(&format!("{org}/{slug}").to_ascii_lowercase())
            })
            .map(|team| {
                let mut t = tpl.clone();
                let base = self.base;
                t["id"] = json!(team.id);
                t["node_id"] = json!(node_id("04:Team", team.id));
                t["name"] = json!(team.slug);
                t["slug"] = json!(team.slug);
                t["url"] = json!(format!("{base}/orgs/{}/teams/{}", team.org, team.slug));
                t["html_url"] = json!(format!("{base}/orgs/{}/teams/{}", team.org, team.slug));
                t["members_url"] = json!(format!(
                    "{base}/orgs/{}/teams/{}/members{{/member}}",
                    team.org, team.slug
                ));
                t["repositories_url"] = json!(format!(
                    "{base}/orgs/{}/teams/{}/repos",
                    team.org, team.slug
                ));
                // The schema requires `type`, which GitHub's own example lacks.
                t["type"] = json!("organization");
                t
            })
            .collect();
        json!(teams)
    }

    /// Full pull request (`GET /pulls/{n}`); `simple` gives the list shape.
    pub fn pull(&self, repo: &Repo, issue: &Issue, simple: bool) -> Value {
        let Some(pull) = &issue.pull else {
            return Value::Null;
        };
        let full = repo.full_name();
        let n = issue.number;
        let mut p = if simple {
            template("pulls/list")
        } else {
            template("pulls/get")
        };
        let head_full = pull.head_repo.clone().unwrap_or_else(|| full.clone());
        let head_tpl = p["head"].clone();
        let base_tpl = p["base"].clone();
        p["head"] = self.pull_ref(repo, &head_full, &pull.head_ref, &pull.head_sha, &head_tpl);
        p["base"] = self.pull_ref(repo, &full, &pull.base_ref, &pull.base_sha, &base_tpl);
        p["id"] = json!(pull.id);
        p["node_id"] = json!(node_id("011:PullRequest", pull.id));
        p["number"] = json!(n);
        p["title"] = json!(issue.title);
        p["body"] = json!(issue.body);
        p["user"] = self.user(&issue.author);
        p["state"] = json!(issue.state);
        p["locked"] = json!(false);
        p["draft"] = json!(pull.draft);
        p["labels"] = json!(issue
            .labels
            .iter()
            .map(|l| self.label(&full, l))
            .collect::<Vec<_>>());
        p["assignee"] = Value::Null;
        p["assignees"] = json!([]);
        p["requested_reviewers"] = json!(pull
            .requested_reviewers
            .iter()
            .map(|l| self.user(l))
            .collect::<Vec<_>>());
        p["requested_teams"] = self.teams(&repo.owner, &pull.requested_teams);
        p["milestone"] = Value::Null;
        p["auto_merge"] = Value::Null;
        p["active_lock_reason"] = Value::Null;
        p["created_at"] = json!(ts(issue.created_at));
        p["updated_at"] = json!(ts(issue.updated_at));
        p["closed_at"] = json!(issue.closed_at.map(ts));
        p["merged_at"] = json!(pull.merged_at.map(ts));
        p["merge_commit_sha"] = Value::Null;
        p["author_association"] = json!(self.association(&full, &issue.author));
        if !simple {
            p["merged"] = json!(pull.merged_at.is_some());
            p["merged_by"] = Value::Null;
            p["mergeable"] = Value::Null;
            p["rebaseable"] = Value::Null;
            p["mergeable_state"] = json!("unknown");
            p["changed_files"] = json!(pull.files.len());
            p["additions"] = json!(pull.files.iter().map(|f| f.additions).sum::<u64>());
            p["deletions"] = json!(pull.files.iter().map(|f| f.deletions).sum::<u64>());
            p["commits"] = json!(1);
            p["comments"] = json!(self
                .model
                .comments
                .values()
                .filter(|c| c.repo.eq_ignore_ascii_case(&full) && c.issue_number == n)
                .count());
            p["review_comments"] = json!(0);
        }
        self.rebase(&mut p, Some(&full));
        walk_strings(&mut p, &|s: &str| s.replace("/1347", &format!("/{n}")));
        p
    }

    pub fn review(&self, r: &Review) -> Value {
        let mut v = template("pulls/list-reviews");
        v["id"] = json!(r.id);
        v["node_id"] = json!(node_id("017:PullRequestReview", r.id));
        v["user"] = self.user(&r.user);
        v["body"] = json!(r.body);
        v["state"] = json!(r.state);
        v["commit_id"] = json!(r.commit_id);
        v["submitted_at"] = json!(ts(r.submitted_at));
        v["author_association"] = json!(self.association(&r.repo, &r.user));
        v["html_url"] = json!(format!(
            "{}/{}/pull/{}#pullrequestreview-{}",
            self.base, r.repo, r.pull_number, r.id
        ));
        v["pull_request_url"] = json!(format!(
            "{}/repos/{}/pulls/{}",
            self.base, r.repo, r.pull_number
        ));
        self.rebase(&mut v, Some(&r.repo));
        v
    }

    pub fn check_run(&self, run: &CheckRun) -> Value {
        let mut v = template("checks/get");
        v["id"] = json!(run.id);
        v["node_id"] = json!(node_id("08:CheckRun", run.id));
        v["head_sha"] = json!(run.head_sha);
        v["external_id"] = json!(run.external_id.clone().unwrap_or_default());
        v["url"] = json!(format!(
            "{}/repos/{}/check-runs/{}",
            self.base, run.repo, run.id
        ));
        v["html_url"] = json!(format!("{}/{}/runs/{}", self.base, run.repo, run.id));
        v["details_url"] = json!(run.details_url);
        v["status"] = json!(run.status);
        v["conclusion"] = json!(run.conclusion);
        v["started_at"] = json!(ts(run.started_at));
        v["completed_at"] = json!(run.completed_at.map(ts));
        v["name"] = json!(run.name);
        v["check_suite"] = json!({ "id": run.check_suite_id });
        v["app"] = self.app(run.app_id);
        let mut output = json!({
            "title": null, "summary": null, "text": null, "annotations_count": 0,
            "annotations_url": format!("{}/repos/{}/check-runs/{}/annotations", self.base, run.repo, run.id),
        });
        for key in ["title", "summary", "text"] {
            if let Some(value) = run.output.get(key) {
                output[key] = value.clone();
            }
        }
        output["annotations_count"] = json!(self.annotations(run).len());
        v["output"] = output;
        v["pull_requests"] = json!(self.pull_refs_for_sha(&run.repo, &run.head_sha));
        v
    }

    /// A run's annotations as `GET /repos/{o}/{r}/check-runs/{id}/annotations` lists them
    /// (GitHub stores those sent in `output.annotations`; the rest of `output` has none).
    pub fn annotations(&self, run: &CheckRun) -> Vec<Value> {
        let blob = format!("{}/{}/blob/{}", self.base, run.repo, run.head_sha);
        run.output
            .get("annotations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|a| {
                let path = a.get("path").and_then(Value::as_str).unwrap_or_default();
                json!({
                    "path": path,
                    "start_line": a.get("start_line").cloned().unwrap_or(json!(1)),
                    "end_line": a.get("end_line").cloned().unwrap_or(json!(1)),
                    "start_column": a.get("start_column").cloned().unwrap_or(Value::Null),
                    "end_column": a.get("end_column").cloned().unwrap_or(Value::Null),
                    "annotation_level": a.get("annotation_level").cloned().unwrap_or(json!("notice")),
                    "title": a.get("title").cloned().unwrap_or(Value::Null),
                    "message": a.get("message").cloned().unwrap_or(json!("")),
                    "raw_details": a.get("raw_details").cloned().unwrap_or(Value::Null),
                    "blob_href": format!("{blob}/{path}"),
                })
            })
            .collect()
    }

    /// Minimal PR references GitHub attaches to check runs/suites; empty for fork PRs.
    fn pull_refs_for_sha(&self, full: &str, sha: &str) -> Vec<Value> {
        let Some(repo) = self.model.repos.get(&full.to_ascii_lowercase()) else {
            return vec![];
        };
        let repo_ref = json!({ "id": repo.id, "url": format!("{}/repos/{}", self.base, full), "name": repo.name });
        repo.issues
            .values()
            .filter_map(|i| i.pull.as_ref().map(|p| (i, p)))
            .filter(|(i, p)| p.head_sha == sha && p.head_repo.is_none() && i.state == "open")
            .map(|(i, p)| {
                json!({
                    "id": p.id,
                    "number": i.number,
                    "url": format!("{}/repos/{}/pulls/{}", self.base, full, i.number),
                    "head": { "ref": p.head_ref, "sha": p.head_sha, "repo": repo_ref },
                    "base": { "ref": p.base_ref, "sha": p.base_sha, "repo": repo_ref },
                })
            })
            .collect()
    }

    pub fn check_suite(&self, suite: &CheckSuite) -> Value {
        let mut v = template("checks/get-suite");
        v["id"] = json!(suite.id);
        v["node_id"] = json!(node_id("010:CheckSuite", suite.id));
        v["head_sha"] = json!(suite.head_sha);
        v["head_branch"] = json!(suite.head_branch);
        v["status"] = json!(suite.status);
        v["conclusion"] = json!(suite.conclusion);
        v["app"] = self.app(suite.app_id);
        v["url"] = json!(format!(
            "{}/repos/{}/check-suites/{}",
            self.base, suite.repo, suite.id
        ));
        v["created_at"] = json!(ts(suite.created_at));
        v["updated_at"] = json!(ts(suite.created_at));
        v["latest_check_runs_count"] = json!(self
            .model
            .check_runs
            .values()
            .filter(|r| r.check_suite_id == suite.id)
            .count());
        v["pull_requests"] = json!(self.pull_refs_for_sha(&suite.repo, &suite.head_sha));
        if let Some(repo) = self.model.repos.get(&suite.repo.to_ascii_lowercase()) {
            v["repository"] = self.repo_min(repo);
        }
        self.rebase(&mut v, Some(&suite.repo));
        v
    }

    pub fn workflow_run(&self, run: &WorkflowRun) -> Value {
        let mut v = template("actions/get-workflow-run");
        v["id"] = json!(run.id);
        v["node_id"] = json!(node_id("011:WorkflowRun", run.id));
        v["name"] = json!(run.name);
        v["head_sha"] = json!(run.head_sha);
        v["head_branch"] = json!(run.head_branch);
        v["event"] = json!(run.event);
        v["status"] = json!(run.status);
        v["conclusion"] = json!(run.conclusion);
        v["workflow_id"] = json!(run.workflow_id);
        v["run_number"] = json!(run.run_number);
        v["created_at"] = json!(ts(run.created_at));
        v["updated_at"] = json!(ts(run.updated_at));
        v["url"] = json!(format!(
            "{}/repos/{}/actions/runs/{}",
            self.base, run.repo, run.id
        ));
        v["html_url"] = json!(format!(
            "{}/{}/actions/runs/{}",
            self.base, run.repo, run.id
        ));
        v["pull_requests"] = json!(self.pull_refs_for_sha(&run.repo, &run.head_sha));
        if let Some(repo) = self.model.repos.get(&run.repo.to_ascii_lowercase()) {
            v["repository"] = self.repo_min(repo);
            v["head_repository"] = self.repo_min(repo);
        }
        self.rebase(&mut v, Some(&run.repo));
        v
    }

    pub fn delivery(&self, d: &HookDelivery) -> Value {
        let mut v = template("apps/list-webhook-deliveries");
        v["id"] = json!(d.id);
        v["guid"] = json!(d.guid);
        v["delivered_at"] = json!(ts(d.delivered_at));
        v["redelivery"] = json!(d.redelivery);
        v["duration"] = json!(d.duration);
        v["status"] = json!(d.status);
        v["status_code"] = json!(d.status_code);
        v["event"] = json!(d.event);
        v["action"] = json!(d.action);
        v["installation_id"] = json!(d.installation_id);
        v["repository_id"] = json!(d.repository_id);
        if let Some(obj) = v.as_object_mut() {
            obj.remove("throttled_at");
        }
        v
    }
}

/// Applies `f` to every string in a JSON value.
pub fn walk_strings(value: &mut Value, f: &dyn Fn(&str) -> String) {
    match value {
        Value::String(s) => *s = f(s),
        Value::Array(items) => items.iter_mut().for_each(|v| walk_strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| walk_strings(v, f)),
        _ => {}
    }
}
