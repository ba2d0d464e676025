//! Repository reads (contents, git objects), permissions with role_name, pulls and reviews, Actions.

use base64::Engine;
use navin_e2e::fake::PullSpec;
use serde_json::{json, Value};

use crate::common::{message_of, setup, status_of, token_client, OWNER, REPO};

#[tokio::test]
async fn collaborator_permission_reports_role_name_beside_the_legacy_permission() {
    let (fake, inst) = setup();
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    for (login, role, legacy) in [
        ("ada", "admin", "admin"),
        ("max", "maintain", "write"),
        ("wes", "write", "write"),
        ("tia", "triage", "read"),
        ("rex", "read", "read"),
        ("cus", "security-reviewer", "read"),
    ] {
        fake.set_role(OWNER, REPO, login, role);
        let raw: Value = gh
            .get(
                format!("/repos/{OWNER}/{REPO}/collaborators/{login}/permission"),
                None::<&()>,
            )
            .await
            .expect("raw permission");
        assert_eq!(raw["permission"], legacy, "{login}");
        assert_eq!(
            raw["user"]["role_name"], role,
            "the schema requires user.role_name"
        );
    }
    // octocrab's typed `RepoPermission` only parses `admin` among GitHub's documented
    // legacy values (admin/write/read/none): callers must read the raw JSON.
    let typed = gh
        .repos(OWNER, REPO)
        .get_contributor_permission("ada")
        .send()
        .await
        .expect("admin parses");
    assert_eq!(typed.role_name, "admin");
    let err = gh
        .repos(OWNER, REPO)
        .get_contributor_permission("wes")
        .send()
        .await
        .expect_err("octocrab rejects `write`");
    assert!(
        err.to_string().contains("unknown variant")
            || format!("{err:?}").contains("unknown variant"),
        "{err:?}"
    );
    fake.add_user("stranger", navin_e2e::fake::UserKind::User);
    let raw: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/collaborators/stranger/permission"),
            None::<&()>,
        )
        .await
        .expect("stranger");
    assert_eq!(
        raw["permission"], "read",
        "anyone may read a public repository"
    );
    let err = gh
        .get::<Value, _, _>(
            format!("/repos/{OWNER}/{REPO}/collaborators/nobody-at-all/permission"),
            None::<&()>,
        )
        .await
        .expect_err("no such user");
    assert_eq!(status_of(&err), Some(404));
    fake.assert_conformant();
}

#[tokio::test]
async fn contents_reads_nested_paths_at_a_ref_with_base64_content() {
    let (fake, inst) = setup();
    let config = "require_plan_for:\n  - src/**\n";
    let sha = fake.commit_files(
        OWNER,
        REPO,
        "main",
        &[(".github/navin.yml", config)],
        "add config",
    );
    let old = fake.commit_files(
        OWNER,
        REPO,
        "feature",
        &[(".github/navin.yml", "old: true\n")],
        "feature config",
    );
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let items = gh
        .repos(OWNER, REPO)
        .get_content()
        .path(".github/navin.yml")
        .r#ref("main")
        .send()
        .await
        .expect("content");
    let file = &items.items[0];
    assert_eq!(file.decoded_content().as_deref(), Some(config));
    let at_feature = gh
        .repos(OWNER, REPO)
        .get_content()
        .path(".github/navin.yml")
        .r#ref(&old)
        .send()
        .await
        .expect("at sha");
    assert_eq!(
        at_feature.items[0].decoded_content().as_deref(),
        Some("old: true\n")
    );
    let dir = gh
        .repos(OWNER, REPO)
        .get_content()
        .path(".github")
        .send()
        .await
        .expect("dir listing");
    assert_eq!(
        dir.items
            .iter()
            .map(|i| i.name.as_str())
            .collect::<Vec<_>>(),
        vec!["navin.yml"]
    );
    let logged = fake.requests_to("GET", "/repos/*/*/contents/**");
    assert!(
        logged
            .iter()
            .any(|r| r.path.ends_with("/contents/.github/navin.yml")),
        "raw slashes on the wire"
    );
    let err = gh
        .repos(OWNER, REPO)
        .get_content()
        .path("missing.txt")
        .send()
        .await
        .expect_err("missing");
    assert_eq!(status_of(&err), Some(404));
    assert_eq!(fake.branch_sha(OWNER, REPO, "main"), Some(sha));
    fake.assert_conformant();
}

#[tokio::test]
async fn git_refs_trees_and_blobs_read_the_real_repository() {
    let (fake, inst) = setup();
    let sha = fake.commit_files(
        OWNER,
        REPO,
        "navin/ledger",
        &[
            (".navin/board/mission.json", "{\"version\": 1}\n"),
            (".navin/board/board.json", "{}\n"),
        ],
        "navin: init v1 by human:alice",
    );
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let r: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/ref/heads/navin/ledger"),
            None::<&()>,
        )
        .await
        .expect("ref");
    assert_eq!(r["ref"], "refs/heads/navin/ledger");
    assert_eq!(r["object"]["sha"], sha.as_str());
    let commit: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/commits/{sha}"),
            None::<&()>,
        )
        .await
        .expect("commit");
    assert_eq!(commit["message"], "navin: init v1 by human:alice");
    let tree_sha = commit["tree"]["sha"].as_str().expect("tree").to_string();
    let tree: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/trees/{tree_sha}"),
            Some(&[("recursive", "1")]),
        )
        .await
        .expect("tree");
    let paths: Vec<&str> = tree["tree"]
        .as_array()
        .expect("entries")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert!(paths.contains(&".navin/board/mission.json"), "{paths:?}");
    let blob_sha = tree["tree"]
        .as_array()
        .and_then(|t| t.iter().find(|e| e["path"] == ".navin/board/mission.json"))
        .and_then(|e| e["sha"].as_str())
        .expect("blob sha")
        .to_string();
    let blob: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/git/blobs/{blob_sha}"),
            None::<&()>,
        )
        .await
        .expect("blob");
    let text = base64::engine::general_purpose::STANDARD
        .decode(blob["content"].as_str().expect("content").replace('\n', ""))
        .expect("base64");
    assert_eq!(text, b"{\"version\": 1}\n");
    let err = gh
        .get::<Value, _, _>(
            format!("/repos/{OWNER}/{REPO}/git/ref/heads/does-not-exist"),
            None::<&()>,
        )
        .await
        .expect_err("missing ref");
    assert_eq!(status_of(&err), Some(404));
    fake.assert_conformant();
}

#[tokio::test]
async fn ref_update_without_force_refuses_a_non_fast_forward() {
    let (fake, inst) = setup();
    let base = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let ahead = fake.commit_files(OWNER, REPO, "main", &[("a.txt", "a")], "a");
    fake.create_branch(OWNER, REPO, "side", &base);
    let diverged = fake.commit_files(OWNER, REPO, "side", &[("b.txt", "b")], "b");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let route = format!("/repos/{OWNER}/{REPO}/git/refs/heads/main");
    let err = gh
        .patch::<Value, _, _>(&route, Some(&json!({"sha": diverged, "force": false})))
        .await
        .expect_err("not ff");
    assert_eq!(status_of(&err), Some(422));
    assert_eq!(message_of(&err), "Update is not a fast forward");
    assert_eq!(fake.branch_sha(OWNER, REPO, "main"), Some(ahead.clone()));
    let ff = fake.commit_files(OWNER, REPO, "scratch", &[("c.txt", "c")], "c");
    fake.create_branch(OWNER, REPO, "scratch2", &ahead);
    let next = fake.commit_files(OWNER, REPO, "scratch2", &[("d.txt", "d")], "d");
    let moved: Value = gh
        .patch(&route, Some(&json!({"sha": next, "force": false})))
        .await
        .expect("fast forward");
    assert_eq!(moved["object"]["sha"], next.as_str());
    let _ = ff;
    fake.assert_conformant();
}

#[tokio::test]
async fn pulls_list_files_and_reviews_use_rest_spelling() {
    let (fake, inst) = setup();
    fake.set_role(OWNER, REPO, "rita", "write");
    let number = fake.create_pull(
        OWNER,
        REPO,
        PullSpec::new("navin/S3-parser")
            .author("alice")
            .body("Navin-Step: S3")
            .file("src/parser.rs", "fn parse() {}\n"),
    );
    let head = fake.pull(OWNER, REPO, number).head_sha;
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let pr = gh.pulls(OWNER, REPO).get(number).await.expect("pull");
    assert_eq!(pr.head.sha, head);
    assert_eq!(pr.head.ref_field, "navin/S3-parser");
    assert_eq!(pr.body.as_deref(), Some("Navin-Step: S3"));
    let files = gh
        .pulls(OWNER, REPO)
        .list_files(number)
        .await
        .expect("files");
    assert_eq!(files.items[0].filename, "src/parser.rs");
    let open = gh.pulls(OWNER, REPO).list().send().await.expect("list");
    assert_eq!(open.items.len(), 1);
    assert_eq!(
        fake.file_at(OWNER, REPO, &head, "src/parser.rs").as_deref(),
        Some("fn parse() {}\n")
    );

    let rita = token_client(&fake, &fake.user_token("rita"));
    let review: Value = rita
        .post(
            format!("/repos/{OWNER}/{REPO}/pulls/{number}/reviews"),
            Some(&json!({"event": "APPROVE", "commit_id": head})),
        )
        .await
        .expect("approve");
    assert_eq!(review["state"], "APPROVED");
    let alice = token_client(&fake, &fake.user_token("alice"));
    let err = alice
        .post::<_, Value>(
            format!("/repos/{OWNER}/{REPO}/pulls/{number}/reviews"),
            Some(&json!({"event": "APPROVE"})),
        )
        .await
        .expect_err("self approval");
    assert_eq!(status_of(&err), Some(422));

    let reviews = gh
        .pulls(OWNER, REPO)
        .list_reviews(number)
        .send()
        .await
        .expect("reviews");
    assert_eq!(reviews.items.len(), 1);
    assert_eq!(reviews.items[0].commit_id.as_deref(), Some(head.as_str()));
    let id = review["id"].as_u64().expect("id");
    let dismissed: Value = gh
        .put(
            format!("/repos/{OWNER}/{REPO}/pulls/{number}/reviews/{id}/dismissals"),
            Some(&json!({"message": "stale"})),
        )
        .await
        .expect("dismiss");
    assert_eq!(dismissed["state"], "DISMISSED");
    fake.assert_conformant();
}

#[tokio::test]
async fn fork_pull_requests_leave_check_run_pull_requests_empty() {
    let (fake, inst) = setup();
    let own = fake.create_pull(OWNER, REPO, PullSpec::new("feature").file("x.txt", "x"));
    let fork = fake.create_pull(
        OWNER,
        REPO,
        PullSpec::new("patch")
            .file("y.txt", "y")
            .from_fork("mallory/hello"),
    );
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    for (number, expected) in [(own, 1), (fork, 0)] {
        let sha = fake.pull(OWNER, REPO, number).head_sha;
        fake.add_check_run(OWNER, REPO, navin_e2e::fake::CheckRunSpec::new("ci", &sha));
        let runs: Value = gh
            .get(
                format!("/repos/{OWNER}/{REPO}/commits/{sha}/check-runs"),
                None::<&()>,
            )
            .await
            .expect("runs");
        assert_eq!(
            runs["check_runs"][0]["pull_requests"]
                .as_array()
                .map(Vec::len),
            Some(expected)
        );
    }
    fake.assert_conformant();
}

#[tokio::test]
async fn workflow_dispatch_is_recorded_and_runs_are_readable() {
    let (fake, inst) = setup();
    fake.add_workflow(OWNER, REPO, "navin.yml", "Navin");
    let sha = fake.branch_sha(OWNER, REPO, "main").expect("main");
    let run_id = fake.add_workflow_run(OWNER, REPO, "navin.yml", &sha, "success");
    let gh = token_client(&fake, &fake.mint_installation_token(inst));
    let resp = gh
        ._post(
            format!("/repos/{OWNER}/{REPO}/actions/workflows/navin.yml/dispatches"),
            Some(&json!({"ref": "main", "inputs": {"step": "S3"}})),
        )
        .await
        .expect("dispatch");
    assert_eq!(resp.status().as_u16(), 204);
    let d = fake.dispatches();
    assert_eq!(
        (d[0].workflow.as_str(), d[0].git_ref.as_str()),
        ("navin.yml", "main")
    );
    assert_eq!(d[0].inputs["step"], "S3");
    let run: Value = gh
        .get(
            format!("/repos/{OWNER}/{REPO}/actions/runs/{run_id}"),
            None::<&()>,
        )
        .await
        .expect("run");
    assert_eq!(run["conclusion"], "success");
    assert_eq!(run["head_sha"], sha.as_str());
    fake.assert_conformant();
}
