//! `contain` mode: an agent's diff checked before the write job pushes it: no change to workflows, local actions, what workflows run, agents' instruction files, Navin's config or git hooks unless the plan names the file.
//!
//! The agent job runs with a read-only token and uploads its work as a patch; the job
//! that holds the push token runs this first. A workflow or local action the agent
//! edited would run with the repository's secrets on the next push, a changed
//! `.github/navin.yml` would rewrite the rules that judge its own step, and a hook
//! would run on the next person's commit: each is refused, naming the files, unless the
//! mission's plan proposes that very file. The paths come from git's own patch parser
//! (git2), so quoted, renamed and binary entries count under every name they carry.

use std::collections::BTreeSet;

use navin_ledger::plan::record::text_path;
use navin_ledger::plan::PlanDocument;

use crate::commands;
use crate::error::ActionError;
use crate::ledger;
use crate::run::Run;

/// Paths an agent's diff may not touch unless the plan names them.
pub fn protected(path: &str, config: &str) -> bool {
    const DIRS: &[&str] = &[
        ".github/workflows/",
        ".github/actions/",
        ".husky/",
        ".githooks/",
        ".git/",
    ];
    const FILES: &[&str] = &[
        ".github/navin.yml",
        ".pre-commit-config.yaml",
        "lefthook.yml",
        ".lefthook.yml",
    ];
    DIRS.iter().any(|d| path.starts_with(d))
        || FILES.contains(&path)
        || path == config.trim_start_matches("./")
}

/// Every path the patch adds, deletes, modifies or renames (under both names).
pub fn patch_paths(patch: &[u8]) -> Result<BTreeSet<String>, String> {
    if patch.iter().all(u8::is_ascii_whitespace) {
        return Ok(BTreeSet::new());
    }
    let diff = git2::Diff::from_buffer(patch).map_err(|e| e.message().to_owned())?;
    let mut paths = BTreeSet::new();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(p) = file.path().and_then(|p| p.to_str()) {
                if p != "/dev/null" {
                    paths.insert(p.to_owned());
                }
            }
        }
    }
    Ok(paths)
}

/// The files the mission's plan proposes (its Proposed Changes), read from the ledger
/// branch. Empty when the mission came from no plan.
fn planned_files(run: &Run<'_>) -> Result<BTreeSet<String>, ActionError> {
    let (access, ledger) = run.read()?;
    let Some(ledger) = ledger else {
        return Ok(BTreeSet::new());
    };
    let Some(id) = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.plan_id.clone())
    else {
        return Ok(BTreeSet::new());
    };
    let path = text_path(&id);
    let Some(bytes) = access
        .store
        .read_file(&path)
        .map_err(|e| ledger::store_error(e, &run.branch))?
    else {
        return Ok(BTreeSet::new());
    };
    let text = String::from_utf8_lossy(&bytes);
    let doc = PlanDocument::parse(&text).map_err(|e| {
        ActionError::Step(format!(
            "the mission's plan {path} on {} does not parse ({e}); nothing is pushed until it is repaired",
            run.branch
        ))
    })?;
    Ok(doc.plan().changes.iter().map(|c| c.path.clone()).collect())
}

pub fn contain(run: &Run<'_>) -> Result<(), ActionError> {
    let path = run.env.patch.as_deref().ok_or_else(|| {
        ActionError::Step("contain mode needs the `patch` input: the agent's diff".into())
    })?;
    let patch = std::fs::read(path)
        .map_err(|e| ActionError::io(format!("reading the patch {}", path.display()), e))?;
    let paths = patch_paths(&patch).map_err(|e| {
        ActionError::Step(format!(
            "{} is not a patch git can read ({e}); nothing is pushed",
            path.display()
        ))
    })?;
    // What the default branch's workflows run (scripts, tool configs, local actions)
    // and the files agents read as instructions, from the checkout this job has.
    let ci = crate::ci_files::CiFiles::read(&run.env.workspace);
    let touched: Vec<&String> = paths
        .iter()
        .filter(|p| protected(p, &run.env.config) || ci.covers(p))
        .collect();
    let planned = if touched.is_empty() {
        BTreeSet::new()
    } else {
        planned_files(run)?
    };
    let refused: Vec<&str> = touched
        .iter()
        .filter(|p| !planned.contains(p.as_str()))
        .map(|p| p.as_str())
        .collect();
    for p in touched.iter().filter(|p| planned.contains(p.as_str())) {
        println!(
            "{}",
            commands::notice(&format!(
                "{p} is protected, and the mission's plan proposes it: allowed"
            ))
        );
    }
    let files: Vec<&str> = paths.iter().map(String::as_str).collect();
    run.outputs(&[("files", files.join("\n")), ("refused", refused.join("\n"))])?;
    if !refused.is_empty() {
        return Err(ActionError::Step(format!(
            "the agent's diff changes {}, which only a plan that names them may change (workflows, local actions and the scripts and tool configs they run execute with the repository's secrets, instruction files steer the next agent, `.github/navin.yml` sets the rules that judge the step, hooks run on people's machines); nothing was pushed. Edit the plan to propose the file, or do that change by hand",
            refused.join(", ")
        )));
    }
    println!(
        "the agent's diff touches {} file(s), none protected",
        paths.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_action_config_and_hook_paths_are_protected_and_source_is_not() {
        for p in [
            ".github/workflows/ci.yml",
            ".github/actions/setup/action.yml",
            ".github/navin.yml",
            ".husky/pre-commit",
            ".githooks/pre-push",
            ".pre-commit-config.yaml",
            "config/navin.yml",
        ] {
            assert!(protected(p, "config/navin.yml"), "{p}");
        }
        for p in [
            "src/lib.rs",
            ".github/CODEOWNERS",
            "docs/workflows/ci.md",
            "workflows/x.yml",
        ] {
            assert!(!protected(p, ".github/navin.yml"), "{p}");
        }
    }

    fn git(dir: &std::path::Path, args: &[&str]) -> Vec<u8> {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    #[test]
    fn patch_paths_read_a_real_agent_diff_with_renames_binary_and_quoted_names() {
        let dir = tempfile::tempdir().expect("tmp");
        let d = dir.path();
        git(d, &["init", "-q"]);
        std::fs::create_dir_all(d.join("src")).expect("mkdir");
        std::fs::create_dir_all(d.join(".github/workflows")).expect("mkdir");
        std::fs::write(d.join("src/old.rs"), "pub fn f() {}\n".repeat(20)).expect("write");
        std::fs::write(d.join(".github/workflows/ci.yml"), "on: push\n").expect("write");
        git(d, &["add", "-A"]);
        git(
            d,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "commit",
                "-qm",
                "base",
            ],
        );
        // What the agent job does: work, then `git add -A` and a binary diff.
        git(d, &["mv", "src/old.rs", "src/new.rs"]);
        std::fs::write(d.join("docs a b.md"), "hi\n").expect("write");
        std::fs::write(d.join("logo.png"), [0u8, 159, 146, 150, 0, 1]).expect("write");
        std::fs::remove_file(d.join(".github/workflows/ci.yml")).expect("rm");
        git(d, &["add", "-A"]);
        let patch = git(d, &["diff", "--cached", "--binary", "-M", "HEAD"]);
        let paths = patch_paths(&patch).expect("a patch");
        let got: Vec<&str> = paths.iter().map(String::as_str).collect();
        assert_eq!(
            got,
            vec![
                ".github/workflows/ci.yml",
                "docs a b.md",
                "logo.png",
                "src/new.rs",
                "src/old.rs"
            ]
        );
        assert!(patch_paths(b"").expect("empty").is_empty());
    }
}
