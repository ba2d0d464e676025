//! Bounded reading of a source: which files to list, which to read, and how much.

use serde::Serialize;

use crate::detect::source::RepoSource;
use crate::lang;
use crate::PlannerError;
use crate::PlannerOptions;

/// What reading the source skipped and why, so a capped scan is visible.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScanStats {
    pub listed: usize,
    pub files: usize,
    pub read_files: usize,
    pub read_bytes: u64,
    pub skipped_vendored: usize,
    pub skipped_binary: usize,
    pub skipped_large: usize,
    pub skipped_budget: usize,
    pub skipped_other: usize,
    /// True when a file-count or byte budget cut the scan short.
    pub truncated: bool,
}

/// One listed file, with its text when it was read.
#[derive(Debug, Clone)]
pub struct ScannedFile {
    pub path: String,
    pub size: Option<u64>,
    pub language: Option<&'static str>,
    /// `None` when the file was skipped (too big, binary, over the total budget).
    pub text: Option<String>,
    pub is_test: bool,
}

/// The files of a repository after filtering, sorted by path.
#[derive(Debug, Clone)]
pub struct Scanned {
    pub source: String,
    pub files: Vec<ScannedFile>,
    pub stats: ScanStats,
}

impl Scanned {
    /// Index of `path` in `files` (which is sorted by path).
    pub fn index_of(&self, path: &str) -> Option<usize> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.index_of(path).is_some()
    }
}

/// Files a repository map needs before anything else, so the byte budget
/// never starves detection.
pub fn is_manifest_name(name: &str) -> bool {
    matches!(
        name,
        "Cargo.toml"
            | "package.json"
            | "pnpm-workspace.yaml"
            | "lerna.json"
            | "go.mod"
            | "go.work"
            | "pyproject.toml"
            | "setup.py"
            | "setup.cfg"
            | "Pipfile"
            | "tox.ini"
            | "pytest.ini"
            | "pom.xml"
            | "build.gradle"
            | "build.gradle.kts"
            | "settings.gradle"
            | "settings.gradle.kts"
            | "Gemfile"
            | "composer.json"
            | "mix.exs"
            | "CMakeLists.txt"
            | "Makefile"
            | "makefile"
            | "GNUmakefile"
            | "Package.swift"
            | "pubspec.yaml"
            | "deno.json"
            | "build.zig"
            | "justfile"
            | "Justfile"
            | "Taskfile.yml"
            | "tsconfig.json"
            | "Dockerfile"
            | "docker-compose.yml"
            | "compose.yaml"
    ) || (name.starts_with("requirements") && name.ends_with(".txt"))
        || name.ends_with(".csproj")
}

/// Lists the source, drops vendored/binary files, and reads text within the
/// per-file and total budgets: manifests and CI files first, then shallow
/// files before deep ones, so a capped read still sees the project's shape.
pub fn scan(source: &dyn RepoSource, opts: &PlannerOptions) -> Result<Scanned, PlannerError> {
    let listed = source.list()?;
    let mut stats = ScanStats {
        listed: listed.len(),
        ..ScanStats::default()
    };
    let mut files: Vec<ScannedFile> = Vec::with_capacity(listed.len());
    for entry in listed {
        let path = entry.path.trim_start_matches("./").to_string();
        if path.is_empty()
            || path.starts_with('/')
            || path.split('/').any(|c| c.is_empty() || c == "..")
        {
            stats.skipped_other += 1;
            continue;
        }
        let components: Vec<&str> = path.split('/').collect();
        if components[..components.len() - 1]
            .iter()
            .any(|c| lang::is_vendored_dir(c))
        {
            stats.skipped_vendored += 1;
            continue;
        }
        if files.len() >= opts.max_files {
            stats.truncated = true;
            continue;
        }
        let language = lang::language_of(&path);
        let is_test = lang::is_test_path(&path);
        files.push(ScannedFile {
            path,
            size: entry.size,
            language,
            text: None,
            is_test,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);

    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| {
        let p = &files[i].path;
        let name = lang::file_name(p);
        let class = if is_manifest_name(name) || lang::ci_system(p).is_some() {
            0
        } else if files[i].language.is_some_and(lang::is_code_language) {
            1
        } else {
            2
        };
        (class, p.matches('/').count(), i)
    });

    let mut total: u64 = 0;
    for i in order {
        let f = &files[i];
        let name = lang::file_name(&f.path);
        let binary_ext = lang::extension(name).is_some_and(|e| lang::is_binary_ext(&e));
        if binary_ext || lang::is_unread_text(name) {
            stats.skipped_binary += 1;
            continue;
        }
        if f.size.is_some_and(|s| s > opts.max_file_bytes) {
            stats.skipped_large += 1;
            continue;
        }
        if total >= opts.max_total_bytes {
            stats.skipped_budget += 1;
            stats.truncated = true;
            continue;
        }
        let Some(mut bytes) = source.read(&f.path, opts.max_file_bytes.saturating_add(1))? else {
            stats.skipped_other += 1;
            continue;
        };
        if bytes.len() as u64 > opts.max_file_bytes {
            // Sources that do not know sizes up front are caught here.
            stats.skipped_large += 1;
            continue;
        }
        let remaining = opts.max_total_bytes - total;
        if bytes.len() as u64 > remaining {
            // The last file read fits the budget only in part.
            bytes.truncate(usize::try_from(remaining).unwrap_or(usize::MAX));
            stats.truncated = true;
        }
        let probe = &bytes[..bytes.len().min(8192)];
        if probe.contains(&0) {
            stats.skipped_binary += 1;
            continue;
        }
        total += bytes.len() as u64;
        stats.read_files += 1;
        let text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        files[i].text = Some(text);
    }
    stats.read_bytes = total;
    stats.files = files.len();
    Ok(Scanned {
        source: source.describe(),
        files,
        stats,
    })
}
