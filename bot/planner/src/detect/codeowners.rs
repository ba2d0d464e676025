//! CODEOWNERS as GitHub reads it: the first of `.github/`, the root and `docs/`, the last matching line wins, and a line without owners leaves a path unowned.
//!
//! Patterns follow GitHub's documented rules: gitignore-style globs without
//! `!` negation or `[ ]` ranges; a pattern with no `/` (or only a trailing
//! one) matches at any depth; a leading or inner `/` anchors it at the root;
//! a trailing `/` or a plain name also covers everything below a directory;
//! `docs/*` covers `docs/a.md` but not `docs/sub/b.md`.

use globset::{GlobBuilder, GlobMatcher};

use crate::RepoSource;

/// Where GitHub looks, in order; the first file found is the only one used.
pub const LOCATIONS: [&str; 3] = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"];

/// GitHub ignores CODEOWNERS files over 3 MB.
const MAX_BYTES: u64 = 3 * 1024 * 1024;

#[derive(Debug)]
struct Rule {
    matchers: Vec<GlobMatcher>,
    owners: Vec<String>,
}

/// A parsed CODEOWNERS file.
#[derive(Debug)]
pub struct CodeOwners {
    /// Which file it came from.
    pub path: String,
    rules: Vec<Rule>,
    /// Lines GitHub would skip as invalid, with their numbers.
    pub skipped: Vec<usize>,
}

impl CodeOwners {
    /// The CODEOWNERS of `source`, if it has one.
    pub fn from_source(source: &dyn RepoSource) -> Option<Self> {
        LOCATIONS.iter().find_map(|path| {
            let bytes = source.read(path, MAX_BYTES + 1).ok().flatten()?;
            if bytes.len() as u64 > MAX_BYTES {
                return None;
            }
            Some(Self::parse(path, &String::from_utf8_lossy(&bytes)))
        })
    }

    pub fn parse(path: &str, text: &str) -> Self {
        let mut rules = Vec::new();
        let mut skipped = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = strip_comment(raw);
            let mut words = line.split_whitespace();
            let Some(pattern) = words.next() else {
                continue;
            };
            let owners: Vec<String> = words.map(str::to_owned).collect();
            match matchers(pattern) {
                Some(matchers) => rules.push(Rule { matchers, owners }),
                None => skipped.push(i + 1),
            }
        }
        Self {
            path: path.to_owned(),
            rules,
            skipped,
        }
    }

    /// The owners of `file` (`@user`, `@org/team` or an e-mail), from the last
    /// matching line; empty when no line matches or the last one names nobody.
    pub fn owners_of(&self, file: &str) -> &[String] {
        let file = file.trim_start_matches('/');
        self.rules
            .iter()
            .rev()
            .find(|r| r.matchers.iter().any(|m| m.is_match(file)))
            .map_or(&[], |r| r.owners.as_slice())
    }
}

/// The line without its comment: `#` starts one unless escaped as `\#`.
fn strip_comment(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'#') => {
                out.push('#');
                chars.next();
            }
            '#' => break,
            _ => out.push(c),
        }
    }
    out
}

/// The globs one pattern stands for, or `None` for a pattern GitHub rejects.
fn matchers(pattern: &str) -> Option<Vec<GlobMatcher>> {
    if pattern.starts_with('!') || pattern.contains('[') || pattern.contains(']') {
        return None;
    }
    let dir_only = pattern.ends_with('/');
    let trimmed = pattern.trim_end_matches('/');
    let anchored = trimmed.starts_with('/') || trimmed.trim_start_matches('/').contains('/');
    let body = trimmed.trim_start_matches('/');
    if body.is_empty() {
        // `/` alone: the whole repository.
        return glob("**").map(|g| vec![g]);
    }
    let base = if anchored || body.starts_with("**/") {
        body.to_owned()
    } else {
        format!("**/{body}")
    };
    let last = body.rsplit('/').next().unwrap_or(body);
    let mut out = Vec::new();
    if !dir_only {
        out.push(glob(&base)?);
    }
    // A directory's name covers everything below it; `docs/*` stays one level deep.
    if dir_only || !last.contains('*') {
        out.push(glob(&format!("{base}/**"))?);
    }
    Some(out)
}

fn glob(pattern: &str) -> Option<GlobMatcher> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GitHub's documented example file ("About code owners"), comments trimmed.
    const EXAMPLE: &str = "\
# These owners will be the default owners for everything in the repo.
*       @global-owner1 @global-owner2
*.js    @js-owner #This is an inline comment.
*.go docs@example.com
*.txt @octo-org/octocats
/build/logs/ @doctocat
docs/*  docs@example.com
apps/ @octocat
/docs/ @doctocat
/scripts/ @doctocat @octocat
**/logs @octocat
/apps/ @octocat
/apps/github
/apps/ @octocat
/apps/github @doctocat
";

    fn owners(co: &CodeOwners, path: &str) -> Vec<String> {
        co.owners_of(path).to_vec()
    }

    #[test]
    fn the_documented_example_resolves_as_github_describes() {
        let co = CodeOwners::parse(".github/CODEOWNERS", EXAMPLE);
        assert!(co.skipped.is_empty(), "{:?}", co.skipped);
        assert_eq!(
            owners(&co, "README.md"),
            ["@global-owner1", "@global-owner2"]
        );
        assert_eq!(
            owners(&co, "src/app.js"),
            ["@js-owner"],
            "the inline comment is not an owner"
        );
        assert_eq!(owners(&co, "main.go"), ["docs@example.com"]);
        assert_eq!(owners(&co, "notes/a.txt"), ["@octo-org/octocats"]);
        // `/build/logs/` names @doctocat, but the later `**/logs` line wins there.
        assert_eq!(owners(&co, "build/logs/today.log"), ["@octocat"]);
        let logs = CodeOwners::parse("CODEOWNERS", "/build/logs/ @doctocat\n");
        assert_eq!(owners(&logs, "build/logs/deep/today.log"), ["@doctocat"]);
        assert!(
            owners(&logs, "src/build/logs/x.log").is_empty(),
            "anchored at the root"
        );
        // `/docs/` comes after `docs/*`, so it wins at the root's docs at any depth.
        assert_eq!(owners(&co, "docs/getting-started.md"), ["@doctocat"]);
        assert_eq!(
            owners(&co, "docs/build-app/troubleshooting.md"),
            ["@doctocat"]
        );
        // `docs/*` alone covers one level only.
        let only = CodeOwners::parse("CODEOWNERS", "docs/*  docs@example.com\n");
        assert_eq!(
            owners(&only, "docs/getting-started.md"),
            ["docs@example.com"]
        );
        assert!(owners(&only, "docs/build-app/troubleshooting.md").is_empty());
        assert_eq!(owners(&co, "scripts/deploy.sh"), ["@doctocat", "@octocat"]);
        assert_eq!(
            owners(&co, "deep/down/logs/x.txt"),
            ["@octocat"],
            "**/logs beats *.txt"
        );
        assert_eq!(
            owners(&co, "apps/github/x.rb"),
            ["@doctocat"],
            "the last line wins"
        );
        assert_eq!(owners(&co, "apps/web/x.rb"), ["@octocat"]);
        // `apps/` (unanchored) covers an apps directory anywhere.
        let anywhere = CodeOwners::parse("CODEOWNERS", "apps/ @octocat\n");
        assert_eq!(owners(&anywhere, "lib/apps/x.rb"), ["@octocat"]);
    }

    #[test]
    fn a_line_without_owners_unowns_and_invalid_lines_are_skipped() {
        let co = CodeOwners::parse(
            "CODEOWNERS",
            "* @all\n/vendor/\n!keep @x\n[ab].rs @y\n\\#notes @hash\n",
        );
        assert!(owners(&co, "vendor/lib.c").is_empty());
        assert_eq!(owners(&co, "src/main.rs"), ["@all"]);
        assert_eq!(co.skipped, vec![3, 4]);
        assert_eq!(owners(&co, "#notes"), ["@hash"]);
    }

    #[test]
    fn the_first_location_found_is_the_only_one_read() {
        let src = crate::MemorySource::from_files(
            "t",
            [
                ("CODEOWNERS", "* @root\n"),
                (".github/CODEOWNERS", "* @github\n"),
                ("docs/CODEOWNERS", "* @docs\n"),
            ],
        );
        let co = CodeOwners::from_source(&src).expect("found");
        assert_eq!(co.path, ".github/CODEOWNERS");
        assert_eq!(owners(&co, "x"), ["@github"]);
        let none = crate::MemorySource::from_files("t", [("README.md", "hi")]);
        assert!(CodeOwners::from_source(&none).is_none());
    }
}
