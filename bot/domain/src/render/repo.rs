//! Where a repository and its ledger branch live on the web, for links in comments.

/// A repository on a GitHub host, with the branch holding Navin's ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRef {
    /// `owner/name`.
    pub full_name: String,
    /// The web base, e.g. `https://github.com` (or a GitHub Enterprise host).
    pub html_base: String,
    /// The ledger branch, `navin/ledger` unless configured otherwise.
    pub ledger_branch: String,
}

impl RepoRef {
    /// A repository on `html_base` using the default ledger branch.
    pub fn new(full_name: impl Into<String>, html_base: impl Into<String>) -> Self {
        Self {
            full_name: full_name.into(),
            html_base: html_base.into(),
            ledger_branch: "navin/ledger".to_owned(),
        }
    }

    /// The web page of `path` on the ledger branch.
    pub fn ledger_blob_url(&self, path: &str) -> String {
        format!(
            "{}/{}/blob/{}/{}",
            self.html_base.trim_end_matches('/'),
            self.full_name,
            self.ledger_branch,
            path.trim_start_matches('/')
        )
    }

    /// The web page of the folder `path` on the ledger branch.
    pub fn ledger_tree_url(&self, path: &str) -> String {
        format!(
            "{}/{}/tree/{}/{}",
            self.html_base.trim_end_matches('/'),
            self.full_name,
            self.ledger_branch,
            path.trim_start_matches('/')
        )
    }

    /// The web page of pull request `number`.
    pub fn issue_url(&self, number: u64) -> String {
        format!(
            "{}/{}/issues/{number}",
            self.html_base.trim_end_matches('/'),
            self.full_name
        )
    }

    pub fn pull_url(&self, number: u64) -> String {
        format!(
            "{}/{}/pull/{number}",
            self.html_base.trim_end_matches('/'),
            self.full_name
        )
    }
}
