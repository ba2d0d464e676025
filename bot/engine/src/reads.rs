//! Reads of the GitHub state evidence is judged by, shared by the engine and `navin mcp`: every check run on a commit.

use navin_github::{ops, GitHubError, InstallationClient};

use crate::evidence::{CheckObservation, CheckRunList};

/// Pages of check runs read per commit (100 each): more than any real CI reports.
const MAX_CHECK_PAGES: u32 = 10;

/// Every check run on `sha` in `repo` as the API has it now (not as a webhook said).
pub async fn check_runs(
    client: &InstallationClient,
    repo: &str,
    sha: &str,
) -> Result<Vec<CheckObservation>, GitHubError> {
    let mut out = Vec::new();
    for page in 1..=MAX_CHECK_PAGES {
        let path = ops::check_runs_all(repo, sha, page);
        let list: CheckRunList = client.get_json(&path).await?;
        let got = list.check_runs.len();
        out.extend(list.check_runs.iter().map(CheckObservation::from_check_run));
        if got < 100 || out.len() as u64 >= list.total_count {
            break;
        }
    }
    Ok(out)
}
