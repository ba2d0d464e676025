//! Real webhook payloads (from `@octokit/webhooks-examples`) with builders that patch them.

use serde_json::{json, Value};

use crate::fake::UserKind;

macro_rules! fixtures {
    ($($name:literal),* $(,)?) => {
        const FIXTURES: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../../fixtures/webhooks/", $name, ".json")))),*
        ];
    };
}

fixtures!(
    "ping",
    "issue_comment.created",
    "issue_comment.created.on_pull_request",
    "issue_comment.edited",
    "issues.opened",
    "pull_request.opened",
    "pull_request.synchronize",
    "pull_request.closed",
    "pull_request.ready_for_review",
    "pull_request_review.submitted",
    "pull_request_review.submitted.approved",
    "pull_request_review.submitted.changes_requested",
    "pull_request_review.dismissed",
    "check_run.completed",
    "check_run.requested_action",
    "check_suite.completed",
    "workflow_run.completed",
    "installation.created",
    "installation_repositories.added",
    "installation_repositories.removed",
);

/// Names accepted by `Payload::fixture`.
pub fn fixture_names() -> Vec<&'static str> {
    FIXTURES.iter().map(|(n, _)| *n).collect()
}

/// A webhook payload and its event name, patched through builder methods.
///
/// Setters touch every place GitHub repeats a value (e.g. `head_sha` sets the PR
/// head, the check run's and the workflow run's), and only places that exist.
#[derive(Debug, Clone)]
pub struct Payload {
    event: String,
    value: Value,
}

fn set_if_present(value: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = value.pointer_mut(pointer) {
        *slot = new;
    }
}

fn user_json(login: &str, id: u64, kind: UserKind) -> Value {
    let raw = login;
    let login = &crate::fake::http::encode_segment(login);
    json!({
        "login": raw, "id": id, "node_id": format!("U_{id}"),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"), "gravatar_id": "",
        "url": format!("https://api.github.com/users/{login}"), "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("https://api.github.com/users/{login}/followers"),
        "following_url": format!("https://api.github.com/users/{login}/following{{/other_user}}"),
        "gists_url": format!("https://api.github.com/users/{login}/gists{{/gist_id}}"),
        "starred_url": format!("https://api.github.com/users/{login}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("https://api.github.com/users/{login}/subscriptions"),
        "organizations_url": format!("https://api.github.com/users/{login}/orgs"),
        "repos_url": format!("https://api.github.com/users/{login}/repos"),
        "events_url": format!("https://api.github.com/users/{login}/events{{/privacy}}"),
        "received_events_url": format!("https://api.github.com/users/{login}/received_events"),
        "type": kind.as_str(), "site_admin": false,
    })
}

impl Payload {
    /// A copy of a committed fixture, e.g. `"issue_comment.created"`; the event is the part before the first dot.
    pub fn fixture(name: &str) -> Payload {
        let Some((_, text)) = FIXTURES.iter().find(|(n, _)| *n == name) else {
            panic!("no webhook fixture {name:?}; known: {:?}", fixture_names())
        };
        let value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("fixture {name} does not parse: {e}"));
        Payload {
            event: name.split('.').next().unwrap_or(name).to_string(),
            value,
        }
    }

    pub fn new(event: &str, value: Value) -> Payload {
        Payload {
            event: event.into(),
            value,
        }
    }

    pub fn event(&self) -> &str {
        &self.event
    }

    pub fn json(&self) -> &Value {
        &self.value
    }

    pub fn into_json(self) -> Value {
        self.value
    }

    /// Sets any JSON pointer (creating nothing: the path must exist).
    pub fn set(mut self, pointer: &str, new: Value) -> Self {
        match self.value.pointer_mut(pointer) {
            Some(slot) => *slot = new,
            None => panic!("payload for {} has no {pointer}", self.event),
        }
        self
    }

    pub fn action(self, action: &str) -> Self {
        self.set("/action", json!(action))
    }

    pub fn comment_body(mut self, body: &str) -> Self {
        set_if_present(&mut self.value, "/comment/body", json!(body));
        self
    }

    pub fn comment_id(mut self, id: u64) -> Self {
        set_if_present(&mut self.value, "/comment/id", json!(id));
        self
    }

    /// Comment author (also the sender, who wrote it).
    pub fn comment_author(mut self, login: &str, id: u64, kind: UserKind) -> Self {
        set_if_present(&mut self.value, "/comment/user", user_json(login, id, kind));
        self.sender(login, id, kind)
    }

    pub fn sender(mut self, login: &str, id: u64, kind: UserKind) -> Self {
        set_if_present(&mut self.value, "/sender", user_json(login, id, kind));
        self
    }

    /// Repository owner/name/full_name/id everywhere the payload names the repository.
    /// The repository's default branch, as GitHub sends it in `repository` (the examples
    /// say `master`); payloads without a repository are left alone.
    pub fn default_branch(mut self, branch: &str) -> Self {
        set_if_present(&mut self.value, "/repository/default_branch", json!(branch));
        self
    }

    pub fn repo(mut self, owner: &str, name: &str, id: u64) -> Self {
        let full = format!("{owner}/{name}");
        for base in [
            "/repository",
            "/pull_request/base/repo",
            "/pull_request/head/repo",
        ] {
            if self.value.pointer(base).is_some_and(Value::is_object) {
                set_if_present(&mut self.value, &format!("{base}/name"), json!(name));
                set_if_present(&mut self.value, &format!("{base}/full_name"), json!(full));
                set_if_present(&mut self.value, &format!("{base}/id"), json!(id));
                set_if_present(
                    &mut self.value,
                    &format!("{base}/owner/login"),
                    json!(owner),
                );
                set_if_present(
                    &mut self.value,
                    &format!("{base}/html_url"),
                    json!(format!("https://github.com/{full}")),
                );
                set_if_present(
                    &mut self.value,
                    &format!("{base}/url"),
                    json!(format!("https://api.github.com/repos/{full}")),
                );
            }
        }
        self
    }

    pub fn installation(mut self, id: u64) -> Self {
        match self.value.get_mut("installation") {
            Some(inst) if inst.is_object() => inst["id"] = json!(id),
            _ => {
                self.value["installation"] = json!({ "id": id, "node_id": format!("MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u{id}") })
            }
        }
        self
    }

    /// Issue number (also the PR number on PR events and PR comments).
    pub fn number(mut self, n: u64) -> Self {
        for p in ["/issue/number", "/number", "/pull_request/number"] {
            set_if_present(&mut self.value, p, json!(n));
        }
        self
    }

    pub fn issue_title(mut self, title: &str) -> Self {
        set_if_present(&mut self.value, "/issue/title", json!(title));
        set_if_present(&mut self.value, "/pull_request/title", json!(title));
        self
    }

    pub fn issue_body(mut self, body: &str) -> Self {
        set_if_present(&mut self.value, "/issue/body", json!(body));
        set_if_present(&mut self.value, "/pull_request/body", json!(body));
        self
    }

    /// Marks an `issue_comment`'s issue as a pull request (or not).
    pub fn on_pull_request(mut self, yes: bool) -> Self {
        let n = self
            .value
            .pointer("/issue/number")
            .cloned()
            .unwrap_or(json!(1));
        if let Some(issue) = self.value.get_mut("issue").and_then(Value::as_object_mut) {
            if yes {
                issue.insert(
                    "pull_request".into(),
                    json!({ "url": format!("https://api.github.com/repos/o/r/pulls/{n}"),
                            "html_url": format!("https://github.com/o/r/pull/{n}"),
                            "diff_url": format!("https://github.com/o/r/pull/{n}.diff"),
                            "patch_url": format!("https://github.com/o/r/pull/{n}.patch"), "merged_at": null }),
                );
            } else {
                issue.remove("pull_request");
            }
        }
        self
    }

    /// Author of the issue or pull request.
    pub fn issue_author(mut self, login: &str, id: u64, kind: UserKind) -> Self {
        set_if_present(&mut self.value, "/issue/user", user_json(login, id, kind));
        set_if_present(
            &mut self.value,
            "/pull_request/user",
            user_json(login, id, kind),
        );
        self
    }

    /// Head commit everywhere: PR head, synchronize `after`, review commit, check run/suite, workflow run.
    pub fn head_sha(mut self, sha: &str) -> Self {
        for p in [
            "/pull_request/head/sha",
            "/after",
            "/review/commit_id",
            "/check_run/head_sha",
            "/check_run/check_suite/head_sha",
            "/check_suite/head_sha",
            "/workflow_run/head_sha",
        ] {
            set_if_present(&mut self.value, p, json!(sha));
        }
        self
    }

    pub fn head_ref(mut self, git_ref: &str) -> Self {
        for p in [
            "/pull_request/head/ref",
            "/check_run/check_suite/head_branch",
            "/check_suite/head_branch",
            "/workflow_run/head_branch",
        ] {
            set_if_present(&mut self.value, p, json!(git_ref));
        }
        self
    }

    pub fn merged(mut self, merged: bool) -> Self {
        set_if_present(&mut self.value, "/pull_request/merged", json!(merged));
        self
    }

    pub fn check_name(mut self, name: &str) -> Self {
        set_if_present(&mut self.value, "/check_run/name", json!(name));
        set_if_present(&mut self.value, "/workflow_run/name", json!(name));
        self
    }

    pub fn check_run_id(mut self, id: u64) -> Self {
        set_if_present(&mut self.value, "/check_run/id", json!(id));
        set_if_present(&mut self.value, "/workflow_run/id", json!(id));
        self
    }

    /// The app that owns the check run/suite (`app.id`; slug may be absent in real payloads).
    pub fn app_id(mut self, id: u64) -> Self {
        for p in [
            "/check_run/app/id",
            "/check_run/check_suite/app/id",
            "/check_suite/app/id",
        ] {
            set_if_present(&mut self.value, p, json!(id));
        }
        self
    }

    pub fn conclusion(mut self, conclusion: &str) -> Self {
        for p in [
            "/check_run/conclusion",
            "/check_suite/conclusion",
            "/workflow_run/conclusion",
        ] {
            set_if_present(&mut self.value, p, json!(conclusion));
        }
        self
    }

    /// Webhook spelling (`approved`, `changes_requested`, `commented`, `dismissed`).
    pub fn review_state(mut self, state: &str) -> Self {
        set_if_present(
            &mut self.value,
            "/review/state",
            json!(state.to_ascii_lowercase()),
        );
        self
    }

    pub fn review_id(mut self, id: u64) -> Self {
        set_if_present(&mut self.value, "/review/id", json!(id));
        self
    }

    /// Reviewer (also the sender).
    pub fn reviewer(mut self, login: &str, id: u64, kind: UserKind) -> Self {
        set_if_present(&mut self.value, "/review/user", user_json(login, id, kind));
        self.sender(login, id, kind)
    }
}
