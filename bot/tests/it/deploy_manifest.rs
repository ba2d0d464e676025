//! `bot/deploy/app.yml` asks GitHub for exactly what the code uses: every permission an
//! installation token is minted with or a REST call needs, and a subscription to every
//! event `classify` handles, nothing more; a code change that needs more fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use navin_engine::token_scope::{needed, Need};
use navin_engine::{classify, Classification, EventKind};
use navin_github::{ops, Access, Permission};
use serde_json::json;

/// Events GitHub sends every App without a subscription (they cannot be subscribed to).
const SENT_WITHOUT_SUBSCRIPTION: [&str; 2] = ["installation", "installation_repositories"];

fn manifest() -> serde_yaml_ng::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/app.yml");
    let text = std::fs::read_to_string(&path).expect("bot/deploy/app.yml is readable");
    serde_yaml_ng::from_str(&text).expect("app.yml is YAML")
}

fn permissions() -> BTreeMap<String, String> {
    serde_yaml_ng::from_value(manifest()["default_permissions"].clone())
        .expect("default_permissions maps names to levels")
}

fn events() -> BTreeSet<String> {
    serde_yaml_ng::from_value(manifest()["default_events"].clone())
        .expect("default_events lists names")
}

fn rank(level: &str) -> u8 {
    match level {
        "write" => 2,
        "read" => 1,
        _ => 0,
    }
}

/// Every kind of event the engine handles. A new variant stops this match compiling:
/// add it to the list, and its event to app.yml (or to `SENT_WITHOUT_SUBSCRIPTION`).
fn every_kind() -> Vec<EventKind> {
    use EventKind::*;
    let all = [
        IssueComment,
        Issues,
        PullRequest,
        PullRequestReview,
        CheckRun,
        CheckRunAction,
        CheckSuite,
        WorkflowRun,
        Installation,
        InstallationRepositories,
    ];
    for kind in all {
        match kind {
            IssueComment
            | Issues
            | PullRequest
            | PullRequestReview
            | CheckRun
            | CheckRunAction
            | CheckSuite
            | WorkflowRun
            | Installation
            | InstallationRepositories => {}
            // Navin's own clock tick, queued by the server: never a GitHub webhook.
            Sweep => {}
        }
    }
    all.to_vec()
}

const ACTIONS: [&str; 15] = [
    "created",
    "edited",
    "deleted",
    "opened",
    "reopened",
    "synchronize",
    "closed",
    "submitted",
    "dismissed",
    "completed",
    "requested",
    "requested_action",
    "added",
    "removed",
    "suspend",
];

/// The App's permission name for a `Permission` (the REST description's spelling).
fn name(p: Permission) -> String {
    p.scope.as_str().replace('-', "_")
}

#[test]
fn the_app_manifest_has_the_fields_github_reads() {
    let m = manifest();
    for key in ["name", "url", "redirect_url", "public"] {
        assert!(!m[key].is_null(), "app.yml lacks `{key}`");
    }
    let hook = m["hook_attributes"]["url"].as_str().expect("hook url");
    assert!(hook.starts_with("https://") && hook.ends_with("/webhook"));
    assert_eq!(
        m["public"].as_bool(),
        Some(false),
        "a private App by default"
    );
}

#[test]
fn the_app_manifest_grants_every_permission_tokens_are_minted_with_and_no_other() {
    let granted = permissions();
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for need in [Need::Read, Need::Write] {
        for &(name, level) in needed(need) {
            let entry = wanted
                .entry(name.to_owned())
                .or_insert_with(|| level.into());
            if rank(level) > rank(entry) {
                *entry = level.to_owned();
            }
        }
    }
    for (name, level) in &wanted {
        let have = granted.get(name).map(String::as_str).unwrap_or("none");
        assert!(
            rank(have) >= rank(level),
            "token_scope::needed asks for {name}: {level}, app.yml grants {have}"
        );
    }
    // metadata: read is granted to every App, and collaborator roles need it.
    wanted.insert("metadata".into(), "read".into());
    assert_eq!(
        granted, wanted,
        "app.yml grants exactly what the code asks for"
    );
}

#[test]
fn the_app_manifest_grants_what_every_rest_call_navin_makes_needs() {
    let granted = permissions();
    let repo = "o/r";
    let paths = [
        ("GET", ops::repository(repo)),
        ("GET", ops::tree_recursive(repo, "main")),
        ("GET", ops::blob(repo, "abc")),
        ("GET", ops::contents(repo, "a.md", Some("main"))),
        ("GET", ops::collaborator_permission(repo, "alice")),
        ("GET", ops::issues_labelled(repo, "navin")),
        ("GET", ops::issues_all(repo)),
        ("GET", ops::issue_comments(repo, 1)),
        ("GET", ops::issue(repo, 1)),
        ("GET", ops::branch(repo, "main")),
        ("GET", ops::branch_rules(repo, "main")),
        ("GET", ops::pull_request(repo, 1)),
        ("GET", ops::open_pull_requests(repo)),
        ("GET", ops::pull_request_reviews(repo, 1)),
        ("GET", ops::pull_request_files(repo, 1)),
        ("GET", ops::check_runs_all(repo, "abc", 1)),
        ("GET", ops::check_runs_named(repo, "abc", "navin/plan")),
        ("GET", ops::check_run_annotations(repo, 1, 10)),
        ("GET", ops::workflow_run(repo, 1)),
        ("GET", ops::requested_reviewers(repo, 1)),
        ("GET", ops::team_membership("o", "t", "alice")),
    ];
    let writes = [
        ops::create_issue(repo, "t", "b", &[]),
        ops::create_issue_comment(repo, 1, "b"),
        ops::update_issue_comment(repo, 1, "b"),
        ops::create_comment_reaction(repo, 1, "eyes"),
        ops::create_check_run(repo, json!({})),
        ops::update_check_run(repo, 1, json!({})),
        ops::dispatch_workflow(repo, "a.yml", "main", json!({})),
        ops::request_reviewers(repo, 1, &["alice".to_owned()], &[]),
        ops::close_pull_request(repo, 1),
    ];
    let calls = paths
        .into_iter()
        .map(|(m, p)| (m.to_owned(), p))
        .chain(writes.into_iter().map(|r| (r.method.to_string(), r.path)));
    for (method, path) in calls {
        let Some(need) = Permission::needed_for(&method, &path) else {
            continue;
        };
        let level = match need.access {
            Access::Read => "read",
            Access::Write => "write",
        };
        let have = granted
            .get(&name(need))
            .map(String::as_str)
            .unwrap_or("none");
        assert!(
            rank(have) >= rank(level),
            "{method} {path} needs {need}, app.yml grants {have}"
        );
    }
}

#[test]
fn the_app_manifest_subscribes_to_exactly_the_events_navin_handles() {
    let handled: BTreeSet<String> = every_kind()
        .into_iter()
        .inspect(|kind| {
            let handles = ACTIONS
                .iter()
                .any(|a| classify(kind.as_str(), Some(a)) == Classification::Handle(*kind));
            assert!(handles, "classify handles no action of {}", kind.as_str());
        })
        .map(|kind| kind.as_str().to_owned())
        .filter(|name| !SENT_WITHOUT_SUBSCRIPTION.contains(&name.as_str()))
        .collect();
    assert_eq!(events(), handled);
}

#[test]
fn no_webhook_event_outside_the_manifest_is_handled() {
    // GitHub's App webhook events; pull_request_target exists only in Actions.
    let known = [
        "branch_protection_rule",
        "check_run",
        "check_suite",
        "code_scanning_alert",
        "commit_comment",
        "create",
        "delete",
        "deployment",
        "deployment_status",
        "discussion",
        "discussion_comment",
        "fork",
        "gollum",
        "installation",
        "installation_repositories",
        "installation_target",
        "issue_comment",
        "issues",
        "label",
        "member",
        "merge_group",
        "meta",
        "milestone",
        "organization",
        "package",
        "page_build",
        "project",
        "public",
        "pull_request",
        "pull_request_review",
        "pull_request_review_comment",
        "pull_request_review_thread",
        "push",
        "release",
        "repository",
        "repository_dispatch",
        "star",
        "status",
        "team",
        "watch",
        "workflow_dispatch",
        "workflow_job",
        "workflow_run",
    ];
    let subscribed = events();
    for event in known {
        let handled = ACTIONS
            .iter()
            .any(|a| matches!(classify(event, Some(a)), Classification::Handle(_)));
        if handled {
            assert!(
                subscribed.contains(event) || SENT_WITHOUT_SUBSCRIPTION.contains(&event),
                "classify handles `{event}`, which app.yml does not subscribe to"
            );
        }
    }
}

#[test]
fn every_subscribed_event_is_covered_by_a_granted_permission() {
    // GitHub refuses a subscription whose permission the App lacks.
    let granted = permissions();
    for event in events() {
        let permission = match event.as_str() {
            "issue_comment" | "issues" => "issues",
            "pull_request" | "pull_request_review" => "pull_requests",
            "check_run" | "check_suite" => "checks",
            "workflow_run" => "actions",
            other => panic!("which permission does `{other}` need? add it here"),
        };
        assert!(
            granted.contains_key(permission),
            "{event} needs {permission}, which app.yml does not grant"
        );
    }
}
