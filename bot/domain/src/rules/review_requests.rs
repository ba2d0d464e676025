//! Whose review a plan pull request asks for: the code owners of its proposed files, minus the author, bots and agents, e-mail owners, other organizations' teams, and anyone already asked or who already reviewed.

use std::collections::BTreeSet;

use navin_ledger::plan::record::FileOwners;

use super::codeowners_approval::Owner;

/// The request to send (`reviewers` logins, `team_reviewers` slugs) and the owners left
/// out with why, for the plan comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    pub reviewers: Vec<String>,
    pub team_reviewers: Vec<String>,
    pub skipped: Vec<String>,
}

impl Targets {
    pub fn is_empty(&self) -> bool {
        self.reviewers.is_empty() && self.team_reviewers.is_empty()
    }
}

/// What the pull request already has: its author, the logins and team slugs already
/// requested, and the logins who already reviewed it.
#[derive(Debug, Clone, Default)]
pub struct PullState<'a> {
    pub author: &'a str,
    /// The repository's owner: only its teams can be requested.
    pub org: &'a str,
    pub requested_users: &'a [String],
    pub requested_teams: &'a [String],
    pub reviewed: &'a [String],
}

/// A login GitHub gives to an App or to the Copilot coding agent: they are not asked.
fn is_bot_or_agent(login: &str) -> bool {
    let lower = login.to_ascii_lowercase();
    lower.ends_with("[bot]") || lower == "copilot"
}

/// The owners of `files` to request, deduplicated in first-seen order.
pub fn targets(files: &[FileOwners], pr: &PullState<'_>) -> Targets {
    let has = |list: &[String], name: &str| list.iter().any(|l| l.eq_ignore_ascii_case(name));
    let mut seen = BTreeSet::new();
    let mut out = Targets::default();
    for word in files.iter().flat_map(|f| f.owners.iter()) {
        if !seen.insert(word.to_ascii_lowercase()) {
            continue;
        }
        match Owner::parse(word) {
            Owner::User(login) => {
                if login.eq_ignore_ascii_case(pr.author) {
                    // GitHub answers 422: an author cannot review their own pull request.
                    continue;
                }
                if is_bot_or_agent(&login)
                    || has(pr.requested_users, &login)
                    || has(pr.reviewed, &login)
                {
                    continue;
                }
                out.reviewers.push(login);
            }
            Owner::Team { org, slug } => {
                if !org.eq_ignore_ascii_case(pr.org) {
                    out.skipped.push(format!(
                        "`{word}` is a team of another organization than the repository's"
                    ));
                } else if !has(pr.requested_teams, &slug) {
                    out.team_reviewers.push(slug);
                }
            }
            Owner::Email(_) => out.skipped.push(format!(
                "`{word}` is an e-mail address, which a review request cannot name"
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(path: &str, owners: &[&str]) -> FileOwners {
        FileOwners {
            path: path.to_owned(),
            owners: owners.iter().map(|o| (*o).to_owned()).collect(),
        }
    }

    #[test]
    fn owners_are_asked_once_and_the_author_bots_and_e_mails_never() {
        let files = [
            owned("src/a.rs", &["@dave", "@carol", "@octo-org/docs"]),
            owned(
                "src/b.rs",
                &["@Dave", "@ci[bot]", "@Copilot", "x@example.com"],
            ),
            owned("docs/c.md", &["@other-org/team"]),
        ];
        let t = targets(
            &files,
            &PullState {
                author: "Carol",
                org: "Octo-Org",
                ..PullState::default()
            },
        );
        assert_eq!(t.reviewers, ["dave"]);
        assert_eq!(t.team_reviewers, ["docs"]);
        assert_eq!(t.skipped.len(), 2, "{:?}", t.skipped);
    }

    #[test]
    fn people_already_asked_or_who_reviewed_are_not_asked_again() {
        let files = [owned("a", &["@dave", "@erin", "@octo-org/docs"])];
        let requested = vec!["DAVE".to_owned()];
        let reviewed = vec!["erin".to_owned()];
        let teams = vec!["docs".to_owned()];
        let t = targets(
            &files,
            &PullState {
                author: "carol",
                org: "octo-org",
                requested_users: &requested,
                requested_teams: &teams,
                reviewed: &reviewed,
            },
        );
        assert!(t.is_empty(), "{t:?}");
    }
}
