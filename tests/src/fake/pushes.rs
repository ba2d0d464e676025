//! What GitHub does after a push to a pull request's branch or a merge: the pull request follows its branch, and a merge lands on the base.

use chrono::Utc;

use super::FakeGitHub;

/// A pull request whose branch moved: its number, and its head before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synchronized {
    pub number: u64,
    pub before: String,
    pub after: String,
}

impl FakeGitHub {
    /// Points every open pull request of `owner/repo` at its branch's tip, as GitHub
    /// does on a push (files recomputed); returns those that moved, for the
    /// `pull_request.synchronize` events GitHub would send.
    pub fn sync_pull_heads(&self, owner: &str, repo: &str) -> Vec<Synchronized> {
        let mut model = self.inner.model();
        let Some(r) = model.repo_mut(owner, repo) else {
            return Vec::new();
        };
        let dir = r.git_dir.clone();
        let mut moved = Vec::new();
        for issue in r.issues.values_mut().filter(|i| i.state == "open") {
            let Some(pull) = issue.pull.as_mut() else {
                continue;
            };
            if pull.head_repo.is_some() {
                continue;
            }
            let Ok(Some(tip)) = super::git::ref_target(&dir, &format!("heads/{}", pull.head_ref))
            else {
                continue;
            };
            if tip == pull.head_sha {
                continue;
            }
            if let Ok(files) = super::git::changed_files(&dir, &pull.base_sha, &tip) {
                pull.files = files;
            }
            moved.push(Synchronized {
                number: issue.number,
                before: std::mem::replace(&mut pull.head_sha, tip.clone()),
                after: tip,
            });
            issue.updated_at = Utc::now();
        }
        moved
    }

    /// Merges pull request `number` as the "Merge pull request" button does: a merge
    /// commit of its head on the base branch (refused on a conflict), then closed as merged.
    /// Returns the merge commit.
    pub fn merge_pull(&self, owner: &str, repo: &str, number: u64) -> Result<String, String> {
        let pull = self.pull(owner, repo, number);
        let dir = self.git_dir_path(owner, repo);
        let git = git2::Repository::open_bare(&dir).map_err(|e| e.to_string())?;
        let base_ref = format!("refs/heads/{}", pull.base_ref);
        let base = git
            .find_reference(&base_ref)
            .and_then(|r| r.peel_to_commit())
            .map_err(|e| e.to_string())?;
        let head = git
            .find_commit(git2::Oid::from_str(&pull.head_sha).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        let mut index = git
            .merge_commits(&base, &head, None)
            .map_err(|e| e.to_string())?;
        if index.has_conflicts() {
            return Err(format!(
                "pull request #{number} has conflicts with {}",
                pull.base_ref
            ));
        }
        let tree = git
            .find_tree(index.write_tree_to(&git).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        let sig =
            git2::Signature::now("GitHub", "noreply@github.com").map_err(|e| e.to_string())?;
        let message = format!("Merge pull request #{number} from {}", pull.head_ref);
        let merge = git
            .commit(
                Some(&base_ref),
                &sig,
                &sig,
                &message,
                &tree,
                &[&base, &head],
            )
            .map_err(|e| e.to_string())?;
        self.close(owner, repo, number, true);
        Ok(merge.to_string())
    }
}
