//! Where related files live: manifests, lockfiles, migrations and the changelog.

use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::lang;
use crate::request::Request;
use crate::text;

/// The lockfile that moves with a manifest: beside it, or at the workspace root.
pub fn lockfile_for(scanned: &Scanned, manifest: &str) -> Option<String> {
    let names: &[&str] = match lang::file_name(manifest) {
        "Cargo.toml" => &["Cargo.lock"],
        "package.json" => &[
            "package-lock.json",
            "yarn.lock",
            "pnpm-lock.yaml",
            "bun.lockb",
        ],
        "pyproject.toml" => &["uv.lock", "poetry.lock", "pdm.lock"],
        "Pipfile" => &["Pipfile.lock"],
        "go.mod" => &["go.sum"],
        "Gemfile" => &["Gemfile.lock"],
        "composer.json" => &["composer.lock"],
        "mix.exs" => &["mix.lock"],
        _ => &[],
    };
    let mut dir = lang::parent_dir(manifest).to_string();
    loop {
        if let Some(found) = names
            .iter()
            .map(|n| lang::join(&dir, n))
            .find(|p| scanned.exists(p))
        {
            return Some(found);
        }
        if dir.is_empty() {
            return None;
        }
        dir = lang::parent_dir(&dir).to_string();
    }
}

/// `CHANGELOG.md`, `CHANGES.rst`, `HISTORY`, `NEWS.md` and the like.
pub fn is_changelog_name(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    // `history.rs` is code: only a text document is a changelog.
    let text_doc = |rest: &str| matches!(rest, "md" | "rst" | "txt" | "markdown" | "adoc");
    ["changelog", "changes", "history", "news"]
        .iter()
        .any(|n| l == *n || l.strip_prefix(&format!("{n}.")).is_some_and(text_doc))
}

/// The changelog nearest `anchor`: a package's own (`axum-core/CHANGELOG.md`)
/// before the root's, if the project keeps one.
pub fn changelog(scanned: &Scanned, anchor: &str) -> Option<String> {
    let dir = lang::parent_dir(anchor);
    scanned
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| is_changelog_name(lang::file_name(p)))
        .filter(|p| {
            let d = lang::parent_dir(p);
            d.is_empty() || dir == d || dir.starts_with(&format!("{d}/"))
        })
        .max_by_key(|p| (lang::parent_dir(p).len(), std::cmp::Reverse(*p)))
        .map(str::to_string)
}

pub fn nearest_manifest(map: &RepoMap, anchor: &str) -> Option<String> {
    let language = lang::language_of(anchor);
    let eco = match language {
        Some("Rust") => "rust",
        Some("JavaScript" | "TypeScript" | "Vue" | "Svelte") => "javascript",
        Some("Python") => "python",
        Some("Go") => "go",
        Some("Java" | "Kotlin") => "java",
        Some("Ruby") => "ruby",
        Some("PHP") => "php",
        Some("Elixir") => "elixir",
        _ => "",
    };
    map.dependency_manifests()
        .filter(|m| m.dir().is_empty() || anchor.starts_with(&format!("{}/", m.dir())))
        .filter(|m| eco.is_empty() || m.ecosystem == eco)
        .filter(|m| !m.tool.starts_with("pip requirements") || eco == "python")
        .max_by_key(|m| (m.dir().len(), std::cmp::Reverse(m.path.clone())))
        .map(|m| m.path.clone())
}

/// The next file in the project's migration directory, numbered after the last one.
pub fn next_migration(scanned: &Scanned, map: &RepoMap, request: &Request) -> Option<String> {
    let dir = map.migration_dirs.first()?;
    let prefix = format!("{dir}/");
    let last = scanned
        .files
        .iter()
        .filter(|f| f.path.starts_with(&prefix) && !f.path[prefix.len()..].contains('/'))
        .map(|f| lang::file_name(&f.path))
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .max()?;
    let digits: String = last.chars().take_while(|c| c.is_ascii_digit()).collect();
    let ext = lang::extension(last).unwrap_or_else(|| "sql".to_string());
    let next = digits.parse::<u128>().ok()? + 1;
    let name = format!(
        "{next:0width$}_{}.{ext}",
        text::slug(request.text(), '_'),
        width = digits.len()
    );
    Some(format!("{prefix}{name}"))
}
