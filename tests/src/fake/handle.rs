//! Seeding and inspection of repositories, git data, users, installations and tokens on `FakeGitHub`.

use std::collections::BTreeMap;

use chrono::Utc;

use super::auth::{self, default_installation_permissions, new_token, rate_counter};
use super::git;
use super::model::{
    repo_key, BypassActor, ClassicProtection, Installation, Repo, Ruleset, Token, TokenFormat,
    TokenKind, UserKind, GITHUB_ACTIONS_APP_ID,
};
use super::FakeGitHub;

pub(super) fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    panic!("fake GitHub: {what}: {e}")
}

impl FakeGitHub {
    // ---- repositories and git ----------------------------------------------

    /// Creates a public repository with one commit (`README.md`) on `main`; returns that sha.
    pub fn create_repo(&self, owner: &str, name: &str) -> String {
        self.create_repo_with(owner, name, "main", false)
    }

    pub fn create_repo_with(
        &self,
        owner: &str,
        name: &str,
        default_branch: &str,
        private: bool,
    ) -> String {
        let git_dir = self.inner.git_root.join(owner).join(format!("{name}.git"));
        let sha = git::init_bare(&git_dir, default_branch, &format!("# {name}\n"))
            .unwrap_or_else(|e| fail("create repository", e));
        let mut model = self.inner.model();
        model.user(owner);
        let id = model.next_id();
        let mut roles = BTreeMap::new();
        roles.insert(owner.to_string(), "admin".to_string());
        model.repos.insert(
            repo_key(owner, name),
            Repo {
                id,
                owner: owner.into(),
                name: name.into(),
                default_branch: default_branch.into(),
                private,
                git_dir,
                roles,
                issues: BTreeMap::new(),
                next_number: 1,
                workflows: BTreeMap::new(),
                created_at: Utc::now(),
                protected: BTreeMap::new(),
                rulesets: BTreeMap::new(),
            },
        );
        sha
    }

    /// A ruleset rule of `rule_type` (`update`, `non_fast_forward`, …) now applies to `branch`.
    /// The rule joins the branch's ruleset (one per branch, made on first use, with no
    /// bypass actors); returns the ruleset's id.
    pub fn add_branch_rule(&self, owner: &str, repo: &str, branch: &str, rule_type: &str) -> u64 {
        let mut model = self.inner.model();
        let next = model.next_id();
        let Some(r) = model.repo_mut(owner, repo) else {
            fail("unknown repository", format!("{owner}/{repo}"))
        };
        let found = r
            .rulesets
            .values()
            .find(|s| s.branches.iter().any(|b| b == branch))
            .map(|s| s.id);
        let id = found.unwrap_or(next);
        let set = r.rulesets.entry(id).or_insert_with(|| Ruleset {
            id,
            name: format!("protect {branch}"),
            branches: vec![branch.to_owned()],
            rules: Vec::new(),
            bypass_actors: Vec::new(),
        });
        set.rules.push(rule_type.to_owned());
        id
    }

    /// Sets who may bypass ruleset `id`.
    pub fn set_bypass_actors(&self, owner: &str, repo: &str, id: u64, actors: Vec<BypassActor>) {
        let mut model = self.inner.model();
        match model
            .repo_mut(owner, repo)
            .and_then(|r| r.rulesets.get_mut(&id))
        {
            Some(set) => set.bypass_actors = actors,
            None => fail("unknown ruleset", id),
        }
    }

    /// Gives `branch` classic branch protection with these settings (`GET /branches/{b}`
    /// then says `protected`).
    pub fn protect_branch_classic(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        protection: ClassicProtection,
    ) {
        let mut model = self.inner.model();
        match model.repo_mut(owner, repo) {
            Some(r) => {
                r.protected.insert(branch.to_owned(), protection);
            }
            None => fail("unknown repository", format!("{owner}/{repo}")),
        }
    }

    pub(super) fn git_dir(&self, owner: &str, repo: &str) -> std::path::PathBuf {
        match self.inner.model().repo(owner, repo) {
            Some(r) => r.git_dir.clone(),
            None => fail("unknown repository", format!("{owner}/{repo}")),
        }
    }

    pub fn repo_id(&self, owner: &str, repo: &str) -> u64 {
        self.inner
            .model()
            .repo(owner, repo)
            .map(|r| r.id)
            .unwrap_or_else(|| fail("unknown repository", repo))
    }

    /// Commits files on `branch` (created if missing) in the real bare repository; returns the sha.
    pub fn commit_files(
        &self,
        owner: &str,
        repo: &str,
        branch: &str,
        files: &[(&str, &str)],
        message: &str,
    ) -> String {
        let changes: Vec<(&str, Option<&[u8]>)> = files
            .iter()
            .map(|(p, c)| (*p, Some(c.as_bytes())))
            .collect();
        git::commit_files(&self.git_dir(owner, repo), branch, &changes, message)
            .unwrap_or_else(|e| fail("commit files", e))
    }

    /// Creates `branch` at `from` (a branch or sha) if given; returns the branch tip.
    pub fn create_branch(&self, owner: &str, repo: &str, branch: &str, from: &str) -> String {
        let dir = self.git_dir(owner, repo);
        let sha = git::resolve_commit(&dir, from).unwrap_or_else(|e| fail("resolve", e));
        let repo_handle = git2::Repository::open_bare(&dir).unwrap_or_else(|e| fail("open", e));
        let oid = git2::Oid::from_str(&sha).unwrap_or_else(|e| fail("oid", e));
        repo_handle
            .reference(
                &format!("refs/heads/{branch}"),
                oid,
                true,
                "fake github: create branch",
            )
            .unwrap_or_else(|e| fail("create branch", e));
        sha
    }

    /// Tip of a branch, or `None` when it does not exist.
    pub fn branch_sha(&self, owner: &str, repo: &str, branch: &str) -> Option<String> {
        git::ref_target(&self.git_dir(owner, repo), &format!("heads/{branch}"))
            .ok()
            .flatten()
    }

    /// A file's text at a ref (branch, tag or sha), or `None`.
    pub fn file_at(&self, owner: &str, repo: &str, git_ref: &str, path: &str) -> Option<String> {
        let dir = self.git_dir(owner, repo);
        let sha = git::resolve_commit(&dir, git_ref).ok()?;
        match git::read_path(&dir, &sha, path).ok()?? {
            git::PathEntry::File { content, .. } => {
                Some(String::from_utf8_lossy(&content).into_owned())
            }
            git::PathEntry::Dir(_) => None,
        }
    }

    /// Path of the bare repository on disk, for tests that run git themselves.
    pub fn git_dir_path(&self, owner: &str, repo: &str) -> std::path::PathBuf {
        self.git_dir(owner, repo)
    }

    /// Installs a pre-receive hook refusing force pushes and deletions of `branch`, like a
    /// ruleset, and lists those rules (`non_fast_forward`, `deletion`) for the branch.
    pub fn protect_branch(&self, owner: &str, repo: &str, branch: &str) {
        self.add_branch_rule(owner, repo, branch, "non_fast_forward");
        self.add_branch_rule(owner, repo, branch, "deletion");
        let hook = self.git_dir(owner, repo).join("hooks").join("pre-receive");
        let script = format!(
            "#!/bin/sh\nzero=0000000000000000000000000000000000000000\nwhile read old new ref; do\n  \
             if [ \"$ref\" = \"refs/heads/{branch}\" ]; then\n    \
             if [ \"$new\" = \"$zero\" ]; then echo \"GH013: Repository rule violations: cannot delete {branch}\" >&2; exit 1; fi\n    \
             if [ \"$old\" != \"$zero\" ] && ! git merge-base --is-ancestor \"$old\" \"$new\"; then \
             echo \"GH013: Repository rule violations: cannot force-push to {branch}\" >&2; exit 1; fi\n  \
             fi\ndone\nexit 0\n"
        );
        std::fs::write(&hook, script).unwrap_or_else(|e| fail("write hook", e));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755))
                .unwrap_or_else(|e| fail("chmod hook", e));
        }
    }

    // ---- users, roles, installations, tokens -------------------------------

    pub fn add_user(&self, login: &str, kind: UserKind) -> u64 {
        let mut model = self.inner.model();
        let id = model.user(login).id;
        if let Some(user) = model.users.get_mut(login) {
            user.kind = kind;
        }
        id
    }

    pub fn user_id(&self, login: &str) -> u64 {
        self.inner.model().user(login).id
    }

    /// Sets a collaborator's role: admin, maintain, write, triage, read, none, or a custom role name.
    pub fn set_role(&self, owner: &str, repo: &str, login: &str, role: &str) {
        let mut model = self.inner.model();
        model.user(login);
        let Some(r) = model.repo_mut(owner, repo) else {
            fail("unknown repository", repo)
        };
        r.roles.insert(login.into(), role.into());
    }

    /// Creates (or replaces) team `org/slug` with `members` active in it.
    pub fn add_team(&self, org: &str, slug: &str, members: &[&str]) -> u64 {
        let mut model = self.inner.model();
        for m in members {
            model.user(m);
        }
        let id = model.next_id();
        let team = super::model::Team {
            id,
            org: org.to_owned(),
            slug: slug.to_owned(),
            members: members.iter().map(|m| m.to_ascii_lowercase()).collect(),
        };
        model
            .teams
            .insert(format!("{org}/{slug}").to_ascii_lowercase(), team);
        id
    }

    /// Takes permission `name` away from every installation on `account` (an owner
    /// who did not accept a new permission); tokens minted afterwards lack it.
    pub fn revoke_installation_permission(&self, account: &str, name: &str) {
        let mut model = self.inner.model();
        for installation in model.installations.values_mut() {
            if installation.account.eq_ignore_ascii_case(account) {
                installation.permissions.remove(name);
            }
        }
    }

    /// Installs the App on `account` for `repos` (`"owner/name"`) with Navin's default grant.
    pub fn create_installation(&self, account: &str, repos: &[&str]) -> u64 {
        self.create_installation_with(account, repos, &[])
    }

    /// As `create_installation`, with an explicit grant (`[("issues", "write"), ...]`); empty = default.
    pub fn create_installation_with(
        &self,
        account: &str,
        repos: &[&str],
        permissions: &[(&str, &str)],
    ) -> u64 {
        let mut model = self.inner.model();
        model.user(account);
        let id = model.next_id();
        let permissions = if permissions.is_empty() {
            default_installation_permissions()
        } else {
            permissions
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        model.installations.insert(
            id,
            Installation {
                id,
                account: account.into(),
                repos: auth::repo_set(repos.iter().copied()),
                permissions,
                created_at: Utc::now(),
            },
        );
        id
    }

    /// Mints an installation token directly (what the access_tokens endpoint does after the JWT check).
    pub fn mint_installation_token(&self, installation_id: u64) -> String {
        let mut model = self.inner.model();
        let Some(inst) = model.installations.get(&installation_id).cloned() else {
            fail("unknown installation", installation_id)
        };
        let token = new_token("ghs", model.token_format, model.app.id);
        let record = Token {
            token: token.clone(),
            kind: TokenKind::Installation { installation_id },
            login: model.app.bot_login(),
            user_id: model.app.bot_user_id,
            repos: Some(inst.repos.clone()),
            permissions: inst.permissions.clone(),
            expires_at: Utc::now() + chrono::Duration::hours(1),
            app_id: Some(model.app.id),
            rate: rate_counter(model.installation_rate_limit, Utc::now()),
            revoked: false,
        };
        model.tokens.insert(token.clone(), record);
        token
    }

    /// A workflow `GITHUB_TOKEN` for one repository (GitHub Actions' app, 1,000 requests/h).
    pub fn actions_token(&self, owner: &str, repo: &str, permissions: &[(&str, &str)]) -> String {
        let mut model = self.inner.model();
        let token = new_token("ghs", TokenFormat::Classic, GITHUB_ACTIONS_APP_ID);
        let mut perms: BTreeMap<String, String> = permissions
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        perms
            .entry("metadata".into())
            .or_insert_with(|| "read".into());
        let record = Token {
            token: token.clone(),
            kind: TokenKind::Actions,
            login: "github-actions[bot]".into(),
            user_id: 41898282,
            repos: Some(auth::repo_set([format!("{owner}/{repo}").as_str()])),
            permissions: perms,
            expires_at: Utc::now() + chrono::Duration::hours(24),
            app_id: Some(GITHUB_ACTIONS_APP_ID),
            rate: rate_counter(model.actions_rate_limit, Utc::now()),
            revoked: false,
        };
        model.tokens.insert(token.clone(), record);
        token
    }

    /// A person's token: acts as `login` with that person's repository roles.
    pub fn user_token(&self, login: &str) -> String {
        let mut model = self.inner.model();
        let user = model.user(login);
        let token = new_token("ghp", TokenFormat::Classic, 0);
        let record = Token {
            token: token.clone(),
            kind: TokenKind::User,
            login: login.into(),
            user_id: user.id,
            repos: None,
            permissions: BTreeMap::new(),
            expires_at: Utc::now() + chrono::Duration::days(30),
            app_id: None,
            rate: rate_counter(5000, Utc::now()),
            revoked: false,
        };
        model.tokens.insert(token.clone(), record);
        token
    }

    /// Makes a token expired, as if its hour had passed.
    pub fn expire_token(&self, token: &str) {
        if let Some(t) = self.inner.model().tokens.get_mut(token) {
            t.expires_at = Utc::now() - chrono::Duration::seconds(1);
        }
    }

    pub fn tokens(&self) -> Vec<Token> {
        self.inner.model().tokens.values().cloned().collect()
    }

    /// Per-token rate limits for tokens minted from now on.
    pub fn set_rate_limits(&self, installation: u64, actions: u64) {
        let mut model = self.inner.model();
        model.installation_rate_limit = installation;
        model.actions_rate_limit = actions;
    }

    pub fn set_token_format(&self, format: TokenFormat) {
        self.inner.model().token_format = format;
    }
}
