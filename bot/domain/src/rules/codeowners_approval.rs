//! `approval.require_codeowners`: which approvals count when only code owners may approve, GitHub's required-code-owner rule as a pure function (owners, approvers and team-membership answers in, verdict out).
//!
//! Every proposed file that has owners needs an approval from at least one of its
//! owners; files without owners add nothing; an approver who owns none of the
//! proposed files does not count toward `approval.required_approvals`.

use std::collections::{BTreeMap, BTreeSet};

use navin_ledger::plan::record::{FileOwners, PlanRecord, RecordStatus};

/// One owner as CODEOWNERS writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// `@login`.
    User(String),
    /// `@org/team-slug`.
    Team { org: String, slug: String },
    /// An e-mail address: GitHub matches it to an account by its verified e-mails, which
    /// an App cannot read, so it never matches an approver here.
    Email(String),
}

impl Owner {
    pub fn parse(word: &str) -> Owner {
        match word.strip_prefix('@') {
            Some(rest) => match rest.split_once('/') {
                Some((org, slug)) => Owner::Team {
                    org: org.to_owned(),
                    slug: slug.to_owned(),
                },
                None => Owner::User(rest.to_owned()),
            },
            None => Owner::Email(word.to_owned()),
        }
    }
}

/// What GitHub answered to "is `login` a member of `org/slug`?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// 200 with `state: active`.
    Active,
    /// 404, or `state: pending` (an invitation not yet accepted).
    NotMember,
    /// 403: the installation lacks the organization permission `members: read`.
    Refused,
}

/// A team-membership question: (org, team slug, login), lowercase.
pub type Lookup = (String, String, String);

/// The membership questions the verdict needs: every approver against every team that
/// owns a proposed file, unless the approver already owns that file by login.
pub fn lookups(files: &[FileOwners], approvers: &[String]) -> BTreeSet<Lookup> {
    let mut out = BTreeSet::new();
    for file in files {
        let owners: Vec<Owner> = file.owners.iter().map(|o| Owner::parse(o)).collect();
        for login in approvers {
            if owns_by_login(&owners, login) {
                continue;
            }
            for owner in &owners {
                if let Owner::Team { org, slug } = owner {
                    out.insert(key(org, slug, login));
                }
            }
        }
    }
    out
}

fn key(org: &str, slug: &str, login: &str) -> Lookup {
    (
        org.to_ascii_lowercase(),
        slug.to_ascii_lowercase(),
        login.to_ascii_lowercase(),
    )
}

fn owns_by_login(owners: &[Owner], login: &str) -> bool {
    owners
        .iter()
        .any(|o| matches!(o, Owner::User(u) if u.eq_ignore_ascii_case(login)))
}

/// The outcome for one plan text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnersVerdict {
    /// Approvers who own at least one proposed file: only they count.
    pub owners: Vec<String>,
    /// Approvers who own none of the proposed files.
    pub not_owners: Vec<String>,
    /// Owned files no approver owns yet, in plan order, with their owners.
    pub waiting: Vec<FileOwners>,
    /// Teams whose membership GitHub would not show (`@org/team`), so approvals through
    /// them could not count.
    pub refused_teams: Vec<String>,
}

impl OwnersVerdict {
    /// Every owned file has an owner's approval.
    pub fn satisfied(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// Decides who counts and which owned files still wait. `answers` holds GitHub's
/// answer to each of [`lookups`]; a question without an answer counts as not a member.
pub fn verdict(
    files: &[FileOwners],
    approvers: &[String],
    answers: &BTreeMap<Lookup, Membership>,
) -> OwnersVerdict {
    let mut owning: BTreeSet<String> = BTreeSet::new();
    let mut refused: BTreeSet<String> = BTreeSet::new();
    let mut waiting = Vec::new();
    for file in files.iter().filter(|f| !f.owners.is_empty()) {
        let owners: Vec<Owner> = file.owners.iter().map(|o| Owner::parse(o)).collect();
        let mut covered = false;
        for login in approvers {
            let mut owns = owns_by_login(&owners, login);
            for owner in &owners {
                let Owner::Team { org, slug } = owner else {
                    continue;
                };
                if owns {
                    break;
                }
                match answers.get(&key(org, slug, login)) {
                    Some(Membership::Active) => owns = true,
                    Some(Membership::Refused) => {
                        refused.insert(format!("@{org}/{slug}"));
                    }
                    Some(Membership::NotMember) | None => {}
                }
            }
            if owns {
                covered = true;
                owning.insert(login.to_ascii_lowercase());
            }
        }
        if !covered {
            waiting.push(file.clone());
        }
    }
    let (owners, not_owners) = approvers
        .iter()
        .cloned()
        .partition(|l| owning.contains(&l.to_ascii_lowercase()));
    OwnersVerdict {
        owners,
        not_owners,
        waiting,
        refused_teams: refused.into_iter().collect(),
    }
}

/// Keeps `record` pending while owned files wait for an owner's approval (whatever the
/// approval count says) and records which; an approved plan stays approved only with
/// none waiting. Returns whether the record changed.
pub fn hold(record: &mut PlanRecord, waiting: &[FileOwners]) -> bool {
    let mut changed = false;
    if record.waiting_for_owners != waiting {
        record.waiting_for_owners = waiting.to_vec();
        changed = true;
    }
    if !waiting.is_empty() && record.status == RecordStatus::Approved {
        record.status = RecordStatus::Pending;
        changed = true;
    }
    changed
}

/// The waiting files as the check summary and the plan comment say them.
pub fn waiting_note(waiting: &[FileOwners]) -> Option<String> {
    if waiting.is_empty() {
        return None;
    }
    let files: Vec<String> = waiting
        .iter()
        .map(|f| {
            let owners: Vec<String> = f.owners.iter().map(|o| format!("`{o}`")).collect();
            format!("`{}` ({})", f.path, owners.join(", "))
        })
        .collect();
    Some(format!(
        "Waiting for a code owner's approval (`approval.require_codeowners`) of {}",
        files.join(", ")
    ))
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

    fn logins(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| (*s).to_owned()).collect()
    }

    fn files() -> Vec<FileOwners> {
        vec![
            owned("src/greet.rs", &["@Carol"]),
            owned("docs/guide.md", &["@octo-org/docs", "docs@example.com"]),
        ]
    }

    #[test]
    fn each_owned_file_needs_one_of_its_owners_and_a_non_owner_never_counts() {
        let none = BTreeMap::new();
        let v = verdict(&files(), &logins(&["alice"]), &none);
        assert_eq!(v.owners, Vec::<String>::new());
        assert_eq!(v.not_owners, ["alice"]);
        assert_eq!(v.waiting.len(), 2);
        // A login matches case-insensitively; the team's file still waits.
        let v = verdict(&files(), &logins(&["carol", "alice"]), &none);
        assert_eq!(v.owners, ["carol"]);
        assert_eq!(v.not_owners, ["alice"]);
        assert_eq!(v.waiting, [files()[1].clone()]);
        assert!(!v.satisfied());
    }

    #[test]
    fn a_team_owner_counts_through_an_active_membership_only() {
        let approvers = logins(&["carol", "dave"]);
        let asked = lookups(&files(), &approvers);
        // carol owns greet.rs by login, but docs/guide.md needs the team: both are asked.
        assert!(asked.contains(&key("octo-org", "docs", "dave")));
        assert!(asked.contains(&key("octo-org", "docs", "carol")));
        let mut answers: BTreeMap<Lookup, Membership> = asked
            .iter()
            .map(|k| (k.clone(), Membership::NotMember))
            .collect();
        assert!(!verdict(&files(), &approvers, &answers).satisfied());
        answers.insert(key("octo-org", "docs", "dave"), Membership::Active);
        let v = verdict(&files(), &approvers, &answers);
        assert!(v.satisfied(), "{v:?}");
        assert_eq!(v.owners, ["carol", "dave"]);
    }

    #[test]
    fn a_refused_membership_read_does_not_count_and_names_the_team() {
        let approvers = logins(&["dave"]);
        let answers = BTreeMap::from([(key("octo-org", "docs", "dave"), Membership::Refused)]);
        let v = verdict(&files(), &approvers, &answers);
        assert_eq!(v.not_owners, ["dave"]);
        assert_eq!(v.refused_teams, ["@octo-org/docs"]);
        assert_eq!(v.waiting.len(), 2);
    }

    #[test]
    fn files_without_owners_add_no_requirement_and_email_owners_never_match() {
        let v = verdict(&[owned("README.md", &[])], &[], &BTreeMap::new());
        assert!(v.satisfied());
        let mail = [owned("a.go", &["docs@example.com"])];
        let v = verdict(&mail, &logins(&["docs"]), &BTreeMap::new());
        assert!(!v.satisfied());
        assert!(lookups(&mail, &logins(&["docs"])).is_empty());
        let note = waiting_note(&v.waiting).unwrap_or_default();
        assert!(note.contains("`a.go` (`docs@example.com`)"), "{note}");
    }
}
