//! Where related files live: tests by convention, manifests, lockfiles, migrations and the changelog.

use super::lang;
use super::map::RepoMap;
use super::scan::Scanned;
use super::text;

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

/// The project's changelog at the root, if it keeps one.
pub fn changelog(scanned: &Scanned) -> Option<String> {
    scanned
        .files
        .iter()
        .filter(|f| !f.path.contains('/'))
        .map(|f| f.path.as_str())
        .find(|p| {
            let l = p.to_ascii_lowercase();
            ["changelog", "changes", "history", "news"]
                .iter()
                .any(|n| l == *n || l.starts_with(&format!("{n}.")))
        })
        .map(str::to_string)
}

pub fn convention_for(map: &RepoMap, path: &str) -> Option<String> {
    let language = lang::language_of(path)?;
    map.test_conventions
        .iter()
        .find(|c| c.language == language)
        .map(|c| format!("`{}` (e.g. `{}`)", c.pattern, c.example))
}

/// Where a test for `primary` goes by the project's convention, and whether
/// that file already exists. `None` when the language has no convention here.
pub fn test_target(
    scanned: &Scanned,
    map: &RepoMap,
    primary: &str,
    request: &str,
) -> Option<(String, bool)> {
    let language = lang::language_of(primary)?;
    let conv = map
        .test_conventions
        .iter()
        .find(|c| c.language == language)?;
    let dir = lang::parent_dir(primary);
    let stem = lang::stem(primary);
    let ext = lang::extension(lang::file_name(primary)).unwrap_or_default();
    let path = match (language, conv.pattern.as_str()) {
        ("Go", _) => lang::join(dir, &format!("{stem}_test.go")),
        ("Rust", p) if p.starts_with("<crate>/tests") => {
            let krate = map
                .module_of(primary)
                .map(|m| m.path.clone())
                .unwrap_or_else(|| primary.split("/src/").next().unwrap_or("").to_string());
            let krate = if krate == primary {
                String::new()
            } else {
                krate
            };
            lang::join(&krate, &format!("tests/{}.rs", text::slug(request, '_')))
        }
        // Inline Rust tests: the test goes into the file itself.
        ("Rust", _) => return Some((primary.to_string(), true)),
        ("Python", _) => {
            let tdir = lang::parent_dir(&conv.example);
            lang::join(tdir, &format!("test_{stem}.py"))
        }
        (_, p) if p.starts_with("*.test.") => lang::join(dir, &format!("{stem}.test.{ext}")),
        (_, p) if p.starts_with("*.spec.") => lang::join(dir, &format!("{stem}.spec.{ext}")),
        (_, "__tests__/*") => lang::join(dir, &format!("__tests__/{stem}.test.{ext}")),
        ("Java", _) if primary.contains("src/main/java/") => {
            let p = primary.replacen("src/main/java/", "src/test/java/", 1);
            format!("{}/{stem}Test.java", lang::parent_dir(&p))
        }
        ("Ruby", _) => {
            let rel = primary.strip_prefix("lib/").unwrap_or(primary);
            format!("spec/{}_spec.rb", rel.trim_end_matches(".rb"))
        }
        _ => return None,
    };
    let exists = scanned.exists(&path);
    Some((path, exists))
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
pub fn next_migration(scanned: &Scanned, map: &RepoMap, request: &str) -> Option<String> {
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
        text::slug(request, '_'),
        width = digits.len()
    );
    Some(format!("{prefix}{name}"))
}
