//! The repository map: languages, manifests, modules, entry points, frameworks, commands and CI.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::detect::commands::{self, DetectedCommand, RepoCommandKind};
use crate::detect::imports::Graph;
use crate::detect::manifests::{self, Manifest};
use crate::detect::scan::{ScanStats, Scanned};
use crate::lang;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LanguageStat {
    pub language: String,
    pub files: usize,
    pub bytes: u64,
}

/// A module boundary: a crate, package, Go module, or a top-level source directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Module {
    pub name: String,
    /// Directory, `""` for the repository root.
    pub path: String,
    pub kind: String,
    pub language: Option<String>,
    pub files: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryPoint {
    pub path: String,
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Framework {
    pub name: String,
    pub category: String,
    /// The manifest that declares it.
    pub evidence: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CiConfig {
    pub path: String,
    pub system: String,
}

/// How the project names its tests, so new tests follow suit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TestConvention {
    pub language: String,
    pub pattern: String,
    pub files: usize,
    pub example: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HubFile {
    pub path: String,
    pub imported_by: usize,
}

/// Everything the planner learned about a repository without a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoMap {
    pub source: String,
    pub stats: ScanStats,
    pub languages: Vec<LanguageStat>,
    pub manifests: Vec<Manifest>,
    pub modules: Vec<Module>,
    pub entry_points: Vec<EntryPoint>,
    pub frameworks: Vec<Framework>,
    pub commands: Vec<DetectedCommand>,
    pub ci: Vec<CiConfig>,
    pub test_conventions: Vec<TestConvention>,
    /// Directories holding schema migrations.
    pub migration_dirs: Vec<String>,
    pub import_edges: usize,
    /// The files most other files import: changes there ripple widest.
    pub most_imported: Vec<HubFile>,
}

impl RepoMap {
    /// The innermost module containing `path`.
    pub fn module_of(&self, path: &str) -> Option<&Module> {
        self.modules
            .iter()
            .filter(|m| m.path.is_empty() || path.starts_with(&format!("{}/", m.path)))
            .max_by_key(|m| m.path.len())
    }

    pub fn commands_of(&self, kind: RepoCommandKind) -> Vec<&DetectedCommand> {
        self.commands.iter().filter(|c| c.kind == kind).collect()
    }

    /// Manifests that declare dependencies (not Makefiles or workspace lists).
    pub fn dependency_manifests(&self) -> impl Iterator<Item = &Manifest> {
        self.manifests.iter().filter(|m| {
            !matches!(
                m.tool.as_str(),
                "Make" | "pnpm workspace" | "Go workspace" | "Gradle settings"
            )
        })
    }
}

pub fn build_map(scanned: &Scanned, graph: &Graph) -> RepoMap {
    let manifests = manifests::parse_all(scanned);
    let modules = modules(scanned, &manifests);
    // What the repository's own CI runs comes first: the project already trusts it.
    let mut commands = crate::detect::workflows::detect(scanned);
    for implied in commands::detect(scanned, &manifests) {
        if !commands
            .iter()
            .any(|c| c.kind == implied.kind && c.command == implied.command)
        {
            commands.push(implied);
        }
    }
    let ci = scanned
        .files
        .iter()
        .filter_map(|f| {
            lang::ci_system(&f.path).map(|s| CiConfig {
                path: f.path.clone(),
                system: s.to_string(),
            })
        })
        .collect();
    let mut hubs: Vec<HubFile> = graph
        .imported_by
        .iter()
        .enumerate()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(i, v)| HubFile {
            path: scanned.files[i].path.clone(),
            imported_by: v.len(),
        })
        .collect();
    hubs.sort_by(|a, b| b.imported_by.cmp(&a.imported_by).then(a.path.cmp(&b.path)));
    hubs.truncate(10);
    RepoMap {
        source: scanned.source.clone(),
        stats: scanned.stats.clone(),
        languages: languages(scanned),
        frameworks: frameworks(&manifests),
        entry_points: entry_points(scanned, &manifests),
        test_conventions: test_conventions(scanned),
        migration_dirs: migration_dirs(scanned),
        manifests,
        modules,
        commands,
        ci,
        import_edges: graph.edge_count(),
        most_imported: hubs,
    }
}

fn languages(scanned: &Scanned) -> Vec<LanguageStat> {
    let mut by: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for f in &scanned.files {
        if let Some(l) = f.language {
            let e = by.entry(l).or_default();
            e.0 += 1;
            e.1 += f.size.unwrap_or(0);
        }
    }
    let mut out: Vec<LanguageStat> = by
        .into_iter()
        .map(|(l, (files, bytes))| LanguageStat {
            language: l.to_string(),
            files,
            bytes,
        })
        .collect();
    out.sort_by(|a, b| b.files.cmp(&a.files).then(a.language.cmp(&b.language)));
    out
}

fn dominant_language(scanned: &Scanned, dir: &str) -> Option<String> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    for f in scanned.files.iter().filter(|f| f.path.starts_with(&prefix)) {
        if let Some(l) = f.language.filter(|l| lang::is_code_language(l)) {
            *by.entry(l).or_default() += 1;
        }
    }
    by.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(l, _)| l.to_string())
}

fn modules(scanned: &Scanned, manifests: &[crate::Manifest]) -> Vec<Module> {
    let mut found: BTreeMap<String, Module> = BTreeMap::new();
    fn add(found: &mut BTreeMap<String, Module>, path: &str, name: String, kind: &str) {
        found.entry(path.to_string()).or_insert(Module {
            name,
            path: path.to_string(),
            kind: kind.to_string(),
            language: None,
            files: 0,
        });
    }
    for m in manifests {
        let dir = m.dir();
        let fallback = || {
            if dir.is_empty() {
                "(root)".to_string()
            } else {
                lang::file_name(dir).to_string()
            }
        };
        let kind = match (m.ecosystem.as_str(), m.tool.as_str()) {
            ("rust", _) if m.name.is_some() => "crate",
            ("javascript", "npm") => "npm package",
            ("go", "Go modules") => "go module",
            ("python", "pyproject" | "Poetry" | "setuptools") => "python project",
            ("java", "Maven" | "Gradle") => "jvm module",
            ("ruby", _)
            | ("php", _)
            | ("elixir", _)
            | ("dart", _)
            | ("dotnet", _)
            | ("swift", _) => "application",
            _ => continue,
        };
        add(
            &mut found,
            dir,
            m.name.clone().unwrap_or_else(fallback),
            kind,
        );
    }
    // Python import packages: a directory with __init__.py whose parent has none.
    for f in &scanned.files {
        if lang::file_name(&f.path) == "__init__.py" {
            let dir = lang::parent_dir(&f.path);
            let parent = lang::parent_dir(dir);
            if !dir.is_empty()
                && !scanned.exists(&lang::join(parent, "__init__.py"))
                && !lang::is_test_path(dir)
            {
                add(
                    &mut found,
                    dir,
                    lang::file_name(dir).to_string(),
                    "python package",
                );
            }
        }
    }
    let non_root = found.keys().filter(|k| !k.is_empty()).count();
    if non_root == 0 {
        // No package boundaries: fall back to top-level source directories,
        // one level deeper when everything sits under one directory (`src/`).
        let mut top: BTreeMap<String, usize> = BTreeMap::new();
        for f in &scanned.files {
            if f.language.is_some_and(lang::is_code_language) && f.path.contains('/') {
                let d = f.path.split('/').next().unwrap_or("");
                *top.entry(d.to_string()).or_default() += 1;
            }
        }
        let mut dirs: Vec<String> = top.keys().cloned().collect();
        if dirs.len() == 1 {
            let only = dirs[0].clone();
            let mut sub: BTreeSet<String> = BTreeSet::new();
            for f in &scanned.files {
                if let Some(rest) = f.path.strip_prefix(&format!("{only}/")) {
                    if let Some((d, _)) = rest.split_once('/') {
                        if f.language.is_some_and(lang::is_code_language) {
                            sub.insert(format!("{only}/{d}"));
                        }
                    }
                }
            }
            dirs.extend(sub);
        }
        for d in dirs {
            add(&mut found, &d, d.clone(), "directory");
        }
    }
    let mut out: Vec<Module> = found.into_values().collect();
    for m in &mut out {
        let prefix = format!("{}/", m.path);
        m.files = scanned
            .files
            .iter()
            .filter(|f| m.path.is_empty() || f.path.starts_with(&prefix))
            .count();
        m.language = dominant_language(scanned, &m.path);
    }
    out.retain(|m| m.files > 0);
    out
}

/// Dependency names mapped to the framework they reveal.
pub(crate) const FRAMEWORKS: &[(&str, &str, &str)] = &[
    ("axum", "axum", "web server"),
    ("actix-web", "Actix Web", "web server"),
    ("rocket", "Rocket", "web server"),
    ("warp", "warp", "web server"),
    ("hyper", "hyper", "HTTP"),
    ("tokio", "Tokio", "async runtime"),
    ("async-std", "async-std", "async runtime"),
    ("tonic", "tonic", "gRPC"),
    ("clap", "clap", "CLI"),
    ("diesel", "Diesel", "ORM"),
    ("sqlx", "SQLx", "database"),
    ("sea-orm", "SeaORM", "ORM"),
    ("rusqlite", "rusqlite", "database"),
    ("tauri", "Tauri", "desktop app"),
    ("bevy", "Bevy", "game engine"),
    ("leptos", "Leptos", "web UI"),
    ("yew", "Yew", "web UI"),
    ("reqwest", "reqwest", "HTTP client"),
    ("octocrab", "octocrab", "GitHub API client"),
    ("git2", "git2", "git"),
    ("react", "React", "web UI"),
    ("next", "Next.js", "web framework"),
    ("vue", "Vue", "web UI"),
    ("nuxt", "Nuxt", "web framework"),
    ("svelte", "Svelte", "web UI"),
    ("@sveltejs/kit", "SvelteKit", "web framework"),
    ("@angular/core", "Angular", "web UI"),
    ("express", "Express", "web server"),
    ("fastify", "Fastify", "web server"),
    ("koa", "Koa", "web server"),
    ("@nestjs/core", "NestJS", "web server"),
    ("@hapi/hapi", "hapi", "web server"),
    ("hono", "Hono", "web server"),
    ("electron", "Electron", "desktop app"),
    ("react-native", "React Native", "mobile app"),
    ("prisma", "Prisma", "ORM"),
    ("@prisma/client", "Prisma", "ORM"),
    ("typeorm", "TypeORM", "ORM"),
    ("sequelize", "Sequelize", "ORM"),
    ("mongoose", "Mongoose", "database"),
    ("graphql", "GraphQL", "API"),
    ("jest", "Jest", "test runner"),
    ("vitest", "Vitest", "test runner"),
    ("mocha", "Mocha", "test runner"),
    ("django", "Django", "web framework"),
    ("flask", "Flask", "web framework"),
    ("fastapi", "FastAPI", "web framework"),
    ("starlette", "Starlette", "web framework"),
    ("tornado", "Tornado", "web framework"),
    ("aiohttp", "aiohttp", "web framework"),
    ("sqlalchemy", "SQLAlchemy", "ORM"),
    ("alembic", "Alembic", "migrations"),
    ("celery", "Celery", "task queue"),
    ("pydantic", "pydantic", "validation"),
    ("click", "Click", "CLI"),
    ("typer", "Typer", "CLI"),
    ("pytest", "pytest", "test runner"),
    ("numpy", "NumPy", "numerics"),
    ("pandas", "pandas", "data frames"),
    ("torch", "PyTorch", "machine learning"),
    ("github.com/gin-gonic/gin", "Gin", "web server"),
    ("github.com/labstack/echo/v4", "Echo", "web server"),
    ("github.com/gofiber/fiber/v2", "Fiber", "web server"),
    ("github.com/go-chi/chi/v5", "chi", "web server"),
    ("github.com/gorilla/mux", "gorilla/mux", "web server"),
    ("google.golang.org/grpc", "gRPC", "RPC"),
    ("github.com/spf13/cobra", "Cobra", "CLI"),
    ("github.com/urfave/cli/v2", "urfave/cli", "CLI"),
    ("gorm.io/gorm", "GORM", "ORM"),
    (
        "org.springframework.boot:spring-boot-starter-web",
        "Spring Boot",
        "web server",
    ),
    (
        "org.springframework.boot:spring-boot-starter",
        "Spring Boot",
        "application framework",
    ),
    (
        "io.quarkus:quarkus-core",
        "Quarkus",
        "application framework",
    ),
    (
        "io.micronaut:micronaut-runtime",
        "Micronaut",
        "application framework",
    ),
    ("org.junit.jupiter:junit-jupiter", "JUnit 5", "test runner"),
    ("junit:junit", "JUnit 4", "test runner"),
    ("rails", "Ruby on Rails", "web framework"),
    ("sinatra", "Sinatra", "web framework"),
    ("rspec", "RSpec", "test runner"),
    ("sidekiq", "Sidekiq", "task queue"),
    ("laravel/framework", "Laravel", "web framework"),
    ("symfony/framework-bundle", "Symfony", "web framework"),
    ("phpunit/phpunit", "PHPUnit", "test runner"),
    ("phoenix", "Phoenix", "web framework"),
    ("ecto", "Ecto", "database"),
    ("flutter", "Flutter", "mobile app"),
];

fn frameworks(manifests: &[Manifest]) -> Vec<Framework> {
    let mut out: Vec<Framework> = Vec::new();
    for m in manifests {
        for (dep, name, category) in FRAMEWORKS {
            let hit = m.has_dep(dep)
                || (m.ecosystem == "go"
                    && m.dependencies
                        .iter()
                        .any(|d| d.starts_with(dep.trim_end_matches("/v2"))))
                || (m.ecosystem == "java" && m.dependencies.iter().any(|d| d.starts_with(dep)));
            if hit && !out.iter().any(|f| f.name == *name) {
                out.push(Framework {
                    name: name.to_string(),
                    category: category.to_string(),
                    evidence: m.path.clone(),
                });
            }
        }
        if m.ecosystem == "dotnet"
            && m.dependencies
                .iter()
                .any(|d| d.starts_with("Microsoft.AspNetCore"))
        {
            out.push(Framework {
                name: "ASP.NET Core".to_string(),
                category: "web framework".to_string(),
                evidence: m.path.clone(),
            });
        }
    }
    out
}

fn entry_points(scanned: &Scanned, manifests: &[Manifest]) -> Vec<EntryPoint> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for m in manifests {
        for b in &m.binaries {
            let p = lang::join(m.dir(), b);
            if scanned.exists(&p) {
                out.entry(p).or_insert_with(|| format!("{} entry", m.tool));
            }
        }
        if m.ecosystem == "rust" && m.name.is_some() {
            for (rel, kind) in [("src/main.rs", "binary"), ("src/lib.rs", "library root")] {
                let p = lang::join(m.dir(), rel);
                if scanned.exists(&p) {
                    out.entry(p).or_insert_with(|| kind.to_string());
                }
            }
        }
    }
    for f in &scanned.files {
        let p = &f.path;
        let name = lang::file_name(p);
        let text = f.text.as_deref().unwrap_or("");
        let kind = match name {
            _ if f.is_test => None,
            "main.go" if text.contains("package main") => Some("Go main package"),
            "__main__.py" => Some("python -m entry"),
            "manage.py" => Some("Django management"),
            "wsgi.py" | "asgi.py" => Some("web server entry"),
            "app.py" | "main.py" if p.matches('/').count() <= 2 => Some("application module"),
            "config.ru" => Some("Rack entry"),
            "index.js" | "index.ts" | "server.js" | "server.ts" | "main.ts" | "main.js"
            | "main.tsx"
                if p.matches('/').count() <= 2 =>
            {
                Some("script entry")
            }
            _ if p.contains("/src/bin/") && name.ends_with(".rs") => Some("binary"),
            _ if name.ends_with(".java") && text.contains("@SpringBootApplication") => {
                Some("Spring Boot application")
            }
            _ if name.ends_with(".java") && text.contains("public static void main(") => {
                Some("Java main")
            }
            _ => None,
        };
        if let Some(k) = kind {
            out.entry(p.clone()).or_insert_with(|| k.to_string());
        }
    }
    let mut v: Vec<EntryPoint> = out
        .into_iter()
        .map(|(path, kind)| EntryPoint { path, kind })
        .collect();
    v.truncate(40);
    v
}

fn test_conventions(scanned: &Scanned) -> Vec<TestConvention> {
    let mut by: BTreeMap<(String, String), (usize, String)> = BTreeMap::new();
    for f in scanned.files.iter().filter(|f| f.is_test) {
        let Some(language) = f.language.filter(|l| lang::is_code_language(l)) else {
            continue;
        };
        let name = lang::file_name(&f.path);
        let pattern = if name.ends_with("_test.go") {
            "*_test.go beside the code".to_string()
        } else if language == "Rust" && f.path.contains("tests/") {
            "<crate>/tests/*.rs".to_string()
        } else if language == "Python" && (name.starts_with("test_") || name.ends_with("_test.py"))
        {
            let dir = f
                .path
                .split('/')
                .find(|c| matches!(*c, "tests" | "test"))
                .unwrap_or("tests");
            format!("{dir}/test_*.py")
        } else if name.contains(".test.") {
            "*.test.<ext> beside the code".to_string()
        } else if name.contains(".spec.") {
            "*.spec.<ext> beside the code".to_string()
        } else if f.path.contains("__tests__/") {
            "__tests__/*".to_string()
        } else if name.ends_with("_spec.rb") {
            "spec/**/*_spec.rb".to_string()
        } else if name.ends_with("Test.java") || name.ends_with("Tests.java") {
            "src/test/java/**/*Test.java".to_string()
        } else {
            continue;
        };
        let e = by
            .entry((language.to_string(), pattern))
            .or_insert((0, f.path.clone()));
        e.0 += 1;
    }
    // Inline Rust unit tests are a convention too.
    let inline = scanned
        .files
        .iter()
        .filter(|f| {
            f.language == Some("Rust")
                && f.text
                    .as_deref()
                    .is_some_and(|t| t.contains("#[cfg(test)]"))
        })
        .map(|f| f.path.clone())
        .collect::<Vec<_>>();
    if let Some(first) = inline.first() {
        by.insert(
            (
                "Rust".to_string(),
                "#[cfg(test)] mod tests inside the file".to_string(),
            ),
            (inline.len(), first.clone()),
        );
    }
    let mut out: Vec<TestConvention> = by
        .into_iter()
        .map(|((language, pattern), (files, example))| TestConvention {
            language,
            pattern,
            files,
            example,
        })
        .collect();
    out.sort_by(|a, b| b.files.cmp(&a.files).then(a.pattern.cmp(&b.pattern)));
    out
}

fn migration_dirs(scanned: &Scanned) -> Vec<String> {
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    for f in &scanned.files {
        if lang::is_migration_path(&f.path) && !f.is_test {
            let ext = lang::extension(lang::file_name(&f.path));
            if matches!(
                ext.as_deref(),
                Some("sql" | "py" | "rb" | "ts" | "js" | "go" | "exs" | "php")
            ) {
                dirs.insert(lang::parent_dir(&f.path).to_string());
            }
        }
    }
    dirs.into_iter().collect()
}
