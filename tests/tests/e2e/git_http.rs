//! Git smart-HTTP through `git http-backend`: clone and push with tokens, rejections, rulesets.

use navin_e2e::fake::GitLayout;
use navin_e2e::FakeGitHub;

use crate::common::{git, git_ok, setup, token_client, OWNER, REPO};

#[tokio::test(flavor = "multi_thread")]
async fn clone_and_push_with_a_token_show_up_in_the_contents_api() {
    let (fake, inst) = setup();
    let token = fake.mint_installation_token(inst);
    let work = tempfile::tempdir().expect("tempdir");
    let url = fake.git_remote_url_with_token(OWNER, REPO, &token);
    git_ok(work.path(), &["clone", "-q", &url, "clone"]);
    let clone = work.path().join("clone");
    assert!(clone.join("README.md").exists());
    std::fs::create_dir_all(clone.join(".navin/board")).expect("mkdir");
    std::fs::write(
        clone.join(".navin/board/mission.json"),
        "{\"version\": 2}\n",
    )
    .expect("write");
    git_ok(&clone, &["add", "."]);
    git_ok(
        &clone,
        &["commit", "-q", "-m", "navin: update v2 by human:alice"],
    );
    git_ok(
        &clone,
        &["push", "-q", "origin", "HEAD:refs/heads/navin/ledger"],
    );
    let local = git_ok(&clone, &["rev-parse", "HEAD"]);
    assert_eq!(
        fake.branch_sha(OWNER, REPO, "navin/ledger"),
        Some(local.clone())
    );

    let gh = token_client(&fake, &token);
    let items = gh
        .repos(OWNER, REPO)
        .get_content()
        .path(".navin/board/mission.json")
        .r#ref("navin/ledger")
        .send()
        .await
        .expect("contents after push");
    assert_eq!(
        items.items[0].decoded_content().as_deref(),
        Some("{\"version\": 2}\n")
    );
    let pushes = fake.requests_to("POST", "/*/*/git-receive-pack");
    assert_eq!(pushes.len(), 1);
    assert_eq!(pushes[0].caller.as_deref(), Some("navin[bot]"));
    fake.assert_conformant();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_tokens_get_401_with_www_authenticate_and_git_fails() {
    let (fake, _) = setup();
    let resp = navin_e2e::http_client()
        .get(format!(
            "{}/info/refs?service=git-upload-pack",
            fake.git_remote_url(OWNER, REPO)
        ))
        .basic_auth("x-access-token", Some("ghs_forged"))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status().as_u16(), 401);
    assert_eq!(resp.headers()["www-authenticate"], "Basic realm=\"GitHub\"");
    let work = tempfile::tempdir().expect("tempdir");
    let out = git(
        work.path(),
        &[
            "clone",
            "-q",
            &fake.git_remote_url_with_token(OWNER, REPO, "ghs_forged"),
            "c",
        ],
    );
    assert!(!out.status.success());
    fake.assert_conformant();
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_token_can_clone_but_not_push() {
    let (fake, _) = setup();
    let token = fake.actions_token(OWNER, REPO, &[("contents", "read")]);
    let work = tempfile::tempdir().expect("tempdir");
    git_ok(
        work.path(),
        &[
            "clone",
            "-q",
            &fake.git_remote_url_with_token(OWNER, REPO, &token),
            "c",
        ],
    );
    let clone = work.path().join("c");
    std::fs::write(clone.join("x.txt"), "x").expect("write");
    git_ok(&clone, &["add", "."]);
    git_ok(&clone, &["commit", "-q", "-m", "x"]);
    let out = git(&clone, &["push", "-q", "origin", "HEAD:main"]);
    assert!(!out.status.success());
    let denied = fake.requests_to("GET", "/*/*/info/refs");
    assert_eq!(denied.last().map(|r| r.status), Some(403));
    fake.assert_conformant();
}

#[tokio::test(flavor = "multi_thread")]
async fn protected_ledger_branch_refuses_force_push_but_accepts_fast_forward() {
    let (fake, inst) = setup();
    fake.commit_files(OWNER, REPO, "navin/ledger", &[("m.json", "1")], "v1");
    fake.protect_branch(OWNER, REPO, "navin/ledger");
    let token = fake.mint_installation_token(inst);
    let work = tempfile::tempdir().expect("tempdir");
    git_ok(
        work.path(),
        &[
            "clone",
            "-q",
            "-b",
            "navin/ledger",
            &fake.git_remote_url_with_token(OWNER, REPO, &token),
            "c",
        ],
    );
    let clone = work.path().join("c");
    std::fs::write(clone.join("m.json"), "2").expect("write");
    git_ok(&clone, &["commit", "-qam", "v2"]);
    git_ok(&clone, &["push", "-q", "origin", "HEAD:navin/ledger"]);
    git_ok(&clone, &["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::write(clone.join("m.json"), "rewritten").expect("write");
    git_ok(&clone, &["commit", "-qam", "rewrite"]);
    let out = git(
        &clone,
        &["push", "-q", "--force", "origin", "HEAD:navin/ledger"],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot force-push"));
    let out = git(&clone, &["push", "-q", "origin", ":navin/ledger"]);
    assert!(!out.status.success(), "deletion is refused too");
    assert_eq!(
        fake.file_at(OWNER, REPO, "navin/ledger", "m.json")
            .as_deref(),
        Some("2")
    );
    fake.assert_conformant();
}

/// Navin pushes refs outside `refs/heads` (checkpoints, the ledger's tip record) in the
/// same push as its branch; GitHub takes them, protected branch or not, and refuses only
/// its own pull request refs.
#[tokio::test(flavor = "multi_thread")]
async fn refs_outside_branches_are_accepted_beside_a_protected_branch_but_pull_refs_are_not() {
    let (fake, inst) = setup();
    fake.commit_files(OWNER, REPO, "navin/ledger", &[("m.json", "1")], "v1");
    fake.protect_branch(OWNER, REPO, "navin/ledger");
    let token = fake.mint_installation_token(inst);
    let work = tempfile::tempdir().expect("tempdir");
    let url = fake.git_remote_url_with_token(OWNER, REPO, &token);
    git_ok(
        work.path(),
        &["clone", "-q", "-b", "navin/ledger", &url, "c"],
    );
    let clone = work.path().join("c");
    let v1 = git_ok(&clone, &["rev-parse", "HEAD"]);
    std::fs::write(clone.join("m.json"), "2").expect("write");
    git_ok(&clone, &["commit", "-qam", "v2"]);
    git_ok(
        &clone,
        &[
            "push",
            "-q",
            "origin",
            "HEAD:navin/ledger",
            &format!("{v1}:refs/navin/tips/navin/ledger"),
            &format!("{v1}:refs/navin/checkpoints/v1"),
        ],
    );
    let dir = fake.git_dir_path(OWNER, REPO);
    let remote = git2::Repository::open_bare(&dir).expect("bare");
    for name in ["refs/navin/tips/navin/ledger", "refs/navin/checkpoints/v1"] {
        assert_eq!(
            remote.refname_to_id(name).map(|o| o.to_string()).ok(),
            Some(v1.clone()),
            "{name}"
        );
    }
    let out = git(&clone, &["push", "-q", "origin", "HEAD:refs/pull/1/head"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("hidden ref"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fake.assert_conformant();
}

#[tokio::test(flavor = "multi_thread")]
async fn git_can_live_under_a_url_prefix() {
    let fake = FakeGitHub::builder()
        .git_layout(GitLayout::Prefix("git".into()))
        .start();
    fake.create_repo(OWNER, REPO);
    let inst = fake.create_installation(OWNER, &[&format!("{OWNER}/{REPO}")]);
    let token = fake.mint_installation_token(inst);
    assert_eq!(
        fake.git_url_template(),
        format!("{}/git/{{owner}}/{{repo}}.git", fake.base_url())
    );
    let work = tempfile::tempdir().expect("tempdir");
    let url = fake.git_remote_url_with_token(OWNER, REPO, &token);
    assert!(url.contains("/git/octo-org/hello.git"));
    git_ok(work.path(), &["clone", "-q", &url, "c"]);
    assert!(work.path().join("c/README.md").exists());
    let root_url = format!(
        "{}/{OWNER}/{REPO}.git/info/refs?service=git-upload-pack",
        fake.base_url()
    );
    let resp = navin_e2e::http_client()
        .get(root_url)
        .bearer_auth(&token)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status().as_u16(), 404, "the root layout is off");
}
