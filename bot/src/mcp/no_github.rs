//! The MCP server's GitHub mode in a build without the `github` feature: it cannot be made, and an Actions job that asks for it is told which build it needs.

use navin_ledger::{Actor, Ledger, Task};

use super::error::ToolError;

/// No value of this type exists: with no GitHub client built in, `board_done` and
/// `ask_user` keep to the ledger, so the branches that would use one are never entered.
#[derive(Debug, Clone)]
pub enum GitHubCi {}

impl GitHubCi {
    /// `Ok(None)` outside Actions. Inside a job that names a repository and a token,
    /// an error: judging CI from recorded runs alone would quietly differ from what the
    /// job asked for.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        let token = get("NAVIN_GITHUB_TOKEN").or_else(|| get("GITHUB_TOKEN"));
        match (get("GITHUB_REPOSITORY"), token) {
            (Some(repo), Some(_)) => Err(format!(
                "GITHUB_REPOSITORY is {repo:?} and a token is set, but this navin was built \
                 without the `github` feature, so board_done cannot read CI from GitHub; \
                 install the default build (`cargo install --locked --path bot`) or unset \
                 GITHUB_REPOSITORY to work on the local ledger"
            )),
            _ => Ok(None),
        }
    }

    pub fn repo(&self) -> &str {
        match *self {}
    }

    pub fn judge(
        &self,
        _handle: &tokio::runtime::Handle,
        _ledger: &Ledger,
        _task: &Task,
    ) -> Result<(Vec<navin_ledger::Operation>, OnGitHub), ToolError> {
        match *self {}
    }

    pub fn ask(
        &self,
        _handle: &tokio::runtime::Handle,
        _ledger: &Ledger,
        _question: &str,
        _op_id: &str,
        _actor: &Actor,
    ) -> bool {
        match *self {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test
mod tests {
    use super::*;

    #[test]
    fn an_actions_job_with_a_token_is_told_this_build_cannot_read_ci() {
        let env = |k: &str| match k {
            "GITHUB_REPOSITORY" => Some("o/r".to_owned()),
            "GITHUB_TOKEN" => Some("t".to_owned()),
            _ => None,
        };
        let err = GitHubCi::from_env(env).unwrap_err();
        assert!(err.contains("`github` feature"), "{err}");
        assert!(GitHubCi::from_env(|_| None).unwrap().is_none());
    }
}

/// The GitHub judgement a `board_done` is written under; none without the `github`
/// feature.
#[derive(Debug, Clone, Copy)]
pub enum OnGitHub {}

impl OnGitHub {
    pub fn ctx(&self, _ctx: navin_ledger::Ctx) -> navin_ledger::Ctx {
        match *self {}
    }
}
