//! The GitHub App (and job-token) permission a REST call needs, so a 403 can say which one to grant.

use std::fmt;

/// A permission area, as a workflow's `permissions:` and an App's settings name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    Issues,
    PullRequests,
    Checks,
    Contents,
    Actions,
    /// The organization permission `members` (team membership reads).
    Members,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Issues => "issues",
            Scope::PullRequests => "pull-requests",
            Scope::Checks => "checks",
            Scope::Contents => "contents",
            Scope::Actions => "actions",
            Scope::Members => "members",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
}

/// One permission: `issues: write`, `checks: read`, …
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permission {
    pub scope: Scope,
    pub access: Access,
}

impl Permission {
    pub const ISSUES_WRITE: Permission = Permission::write(Scope::Issues);
    pub const CONTENTS_WRITE: Permission = Permission::write(Scope::Contents);
    pub const CHECKS_WRITE: Permission = Permission::write(Scope::Checks);

    pub const fn read(scope: Scope) -> Self {
        Self {
            scope,
            access: Access::Read,
        }
    }

    pub const fn write(scope: Scope) -> Self {
        Self {
            scope,
            access: Access::Write,
        }
    }

    /// What a person gets done with it, for error messages.
    pub fn purpose(self) -> &'static str {
        match (self.scope, self.access) {
            (Scope::Issues, Access::Write) => "comment and react on issues",
            (Scope::Issues, Access::Read) => "read issues and their comments",
            (Scope::PullRequests, Access::Write) => "write to pull requests",
            (Scope::PullRequests, Access::Read) => "read pull requests",
            (Scope::Checks, Access::Write) => "write check runs",
            (Scope::Checks, Access::Read) => "read check runs",
            (Scope::Contents, Access::Write) => "write repository contents",
            (Scope::Contents, Access::Read) => "read repository contents",
            (Scope::Actions, Access::Write) => "change workflow runs",
            (Scope::Actions, Access::Read) => "read workflow runs",
            (Scope::Members, Access::Write) => "change the organization's teams",
            (Scope::Members, Access::Read) => "read the organization's team memberships",
        }
    }

    /// The permission a repository REST call needs, from its method and path
    /// (`/repos/{owner}/{repo}/<area>/…`); `None` for calls no repository permission
    /// governs (`/app`, collaborator permission, which needs only metadata).
    pub fn needed_for(method: &str, path: &str) -> Option<Permission> {
        let write = !matches!(method, "GET" | "HEAD");
        let parts: Vec<&str> = path
            .split('?')
            .next()
            .unwrap_or_default()
            .trim_start_matches('/')
            .split('/')
            .collect();
        // ["orgs", org, "teams", ...]: the organization permission `members`.
        if parts.first() == Some(&"orgs") && parts.get(2) == Some(&"teams") {
            let members = Scope::Members;
            return Some(if write {
                Permission::write(members)
            } else {
                Permission::read(members)
            });
        }
        // ["repos", owner, repo, area, ...]
        if parts.first() != Some(&"repos") {
            return None;
        }
        let area = *parts.get(3)?;
        let checks = parts.iter().any(|s| s.starts_with("check-"));
        let scope = match area {
            "issues" => Scope::Issues,
            // Merging writes the base branch: GitHub asks for `contents: write`.
            "pulls" if parts.get(5) == Some(&"merge") => Scope::Contents,
            "pulls" => Scope::PullRequests,
            "check-runs" | "check-suites" => Scope::Checks,
            "commits" if checks => return Some(Permission::read(Scope::Checks)),
            "contents" | "git" | "commits" => Scope::Contents,
            "actions" => Scope::Actions,
            _ => return None,
        };
        Some(if write {
            Permission::write(scope)
        } else {
            Permission::read(scope)
        })
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let access = match self.access {
            Access::Read => "read",
            Access::Write => "write",
        };
        write!(f, "{}: {access}", self.scope.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needed(method: &str, path: &str) -> Option<String> {
        Permission::needed_for(method, path).map(|p| p.to_string())
    }

    #[test]
    fn refused_calls_name_the_permission_by_area_and_method() {
        let cases = [
            (
                "POST",
                "/repos/o/r/issues/3/comments",
                Some("issues: write"),
            ),
            (
                "PATCH",
                "/repos/o/r/issues/comments/9",
                Some("issues: write"),
            ),
            ("POST", "/repos/o/r/check-runs", Some("checks: write")),
            (
                "GET",
                "/repos/o/r/commits/abc/check-runs?filter=all",
                Some("checks: read"),
            ),
            ("GET", "/repos/o/r/pulls/2", Some("pull-requests: read")),
            ("PATCH", "/repos/o/r/pulls/2", Some("pull-requests: write")),
            ("PUT", "/repos/o/r/pulls/2/merge", Some("contents: write")),
            (
                "GET",
                "/repos/o/r/git/trees/main?recursive=1",
                Some("contents: read"),
            ),
            (
                "POST",
                "/repos/o/r/actions/workflows/a.yml/dispatches",
                Some("actions: write"),
            ),
            ("GET", "/repos/o/r/collaborators/a/permission", None),
            (
                "POST",
                "/repos/o/r/pulls/2/requested_reviewers",
                Some("pull-requests: write"),
            ),
            (
                "GET",
                "/orgs/o/teams/t/memberships/a",
                Some("members: read"),
            ),
            ("GET", "/app", None),
        ];
        for (method, path, want) in cases {
            assert_eq!(needed(method, path).as_deref(), want, "{method} {path}");
        }
    }
}
