//! `.github/workflows/release.yml` as GitHub runs it on a tag, for this machine's target:
//! the tag must match the workspace version, the build job packages `navin` and
//! `navin-action` with their SHA-256 files, and what it uploads is what `install.sh`
//! installs. The compiler is a stand-in (a release build takes many minutes per target
//! on a test machine): it checks the command the workflow runs and puts this build's
//! binaries where cargo would.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use navin_e2e::workflow::release::{host_target, Releases};
use navin_e2e::workflow::{Agent, AgentSpend, AgentTask, Outcome, Trigger};
use serde_json::json;

use crate::actions::Actions;
use crate::harness::{workspace, Job, OWNER, REPO};

const CARGO: &str = r#"#!/usr/bin/env bash
# cargo, as the release workflow's build step calls it: checked, and answered with the
# test build's binaries.
set -euo pipefail
want="build --release --locked --target $NAVIN_TEST_TARGET -p navin-bot -p navin-action"
if [ "$*" != "$want" ]; then
  echo "cargo stand-in: the workflow ran \`cargo $*\`, expected \`cargo $want\`" >&2
  exit 2
fi
if [ "${CARGO_PROFILE_RELEASE_STRIP:-}" != symbols ]; then
  echo "cargo stand-in: the release build is not stripped" >&2
  exit 2
fi
out="target/$NAVIN_TEST_TARGET/release"
mkdir -p "$out"
cp "$NAVIN_TEST_BINS/navin" "$NAVIN_TEST_BINS/navin-action" "$out/"
# CARGO_PROFILE_RELEASE_STRIP=symbols: what cargo would hand over is stripped.
strip --strip-all "$out/navin" "$out/navin-action"
"#;

struct NoAgent;
impl Agent for NoAgent {
    fn work(&self, _: &AgentTask) -> Result<AgentSpend, String> {
        Err("no agent in a release".into())
    }
}

/// The repository at a tag: the workspace manifest the version job reads, tagged.
fn tagged(job: &Job, tag: &str) {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("manifest");
    let sha = job
        .fake
        .commit_files(OWNER, REPO, "main", &[("Cargo.toml", &manifest)], "release");
    let git = git2::Repository::open_bare(job.fake.git_dir_path(OWNER, REPO)).expect("git");
    git.reference(
        &format!("refs/tags/{tag}"),
        git2::Oid::from_str(&sha).expect("sha"),
        true,
        "tag",
    )
    .expect("tag");
}

fn push_tag(tag: &str) -> Trigger {
    let mut trigger = Trigger::new(
        "push",
        json!({"ref": format!("refs/tags/{tag}"), "repository": {"full_name": format!("{OWNER}/{REPO}")}}),
        "alice",
    );
    trigger.git_ref = Some(format!("refs/tags/{tag}"));
    trigger
}

fn release_actions() -> (Actions, tempfile::TempDir, String) {
    let tools = tempfile::tempdir().expect("tools");
    let cargo = tools.path().join("cargo");
    std::fs::write(&cargo, CARGO).expect("cargo stand-in");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let text = std::fs::read_to_string(workspace().join(".github/workflows/release.yml"))
        .expect("release.yml");
    let mut actions = Actions::new(Job::for_events(), Vec::new(), Arc::new(NoAgent));
    let bins = Path::new(env!("CARGO_BIN_EXE_navin-action"))
        .parent()
        .expect("the binaries' directory")
        .display()
        .to_string();
    actions
        .runner
        .tool_dir(tools.path())
        .env("NAVIN_TEST_TARGET", host_target())
        .env("NAVIN_TEST_BINS", &bins)
        .only_matrix("target", host_target())
        // `image` needs Docker and `publish` GitHub's releases API, which the fake lacks.
        .only_jobs(&["version", "build"]);
    (actions, tools, text)
}

#[test]
fn a_release_tag_builds_packages_that_install_sh_verifies_and_installs() {
    let (actions, _tools, text) = release_actions();
    let tag = concat!("v", env!("CARGO_PKG_VERSION"));
    tagged(&actions.job, tag);
    let run = actions.runner.run("release.yml", &text, &push_tag(tag));
    assert_eq!(run.job("version").result, Outcome::Success, "{}", run.log());
    let build = run.job("build");
    assert_eq!(build.result, Outcome::Success, "{}", run.log());
    let target = host_target();
    let dist = actions
        .runner
        .artifact(run.id, &format!("dist-{target}"))
        .expect("the build uploaded its dist");
    for bin in ["navin", "navin-action"] {
        let asset = dist.join(format!("{bin}-{target}.tar.gz"));
        assert!(asset.is_file(), "{}", asset.display());
        let check = Command::new("sha256sum")
            .args([
                "--check",
                "--strict",
                &format!("{bin}-{target}.tar.gz.sha256"),
            ])
            .current_dir(&dist)
            .output()
            .expect("sha256sum");
        assert!(check.status.success(), "{check:?}");
    }

    // What the release holds is what the Action's install step installs.
    let releases = Releases::of_files(tag, &dist);
    for bin in ["navin-action", "navin"] {
        let into = tempfile::tempdir().expect("install dir");
        let out = Command::new("bash")
            .arg(workspace().join("action/install.sh"))
            .env("NAVIN_INSTALL_BIN", bin)
            .env("NAVIN_VERSION", tag)
            .env("NAVIN_ACTION_REPOSITORY", format!("{OWNER}/{REPO}"))
            .env("NAVIN_DOWNLOAD_BASE_URL", releases.base_url())
            .env("NAVIN_INSTALL_DIR", into.path().join("bin"))
            .env("RUNNER_TEMP", into.path().join("temp"))
            .env("RUNNER_OS", "Linux")
            .env(
                "RUNNER_ARCH",
                if cfg!(target_arch = "aarch64") {
                    "ARM64"
                } else {
                    "X64"
                },
            )
            .env("NAVIN_ACTION_CARGO", "false")
            .output()
            .expect("install.sh");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && said.contains("verified"),
            "{bin}: {said}"
        );
        assert!(into.path().join("bin").join(bin).is_file(), "{bin}: {said}");
    }
}

#[test]
fn a_tag_that_does_not_match_the_workspace_version_builds_nothing() {
    let (actions, _tools, text) = release_actions();
    tagged(&actions.job, "v9.9.9");
    let run = actions
        .runner
        .run("release.yml", &text, &push_tag("v9.9.9"));
    let version = run.job("version");
    assert_eq!(version.result, Outcome::Failure, "{}", run.log());
    assert!(
        version
            .log()
            .contains("does not match the workspace version"),
        "{}",
        version.log()
    );
    assert_eq!(run.job("build").result, Outcome::Skipped, "{}", run.log());
}
