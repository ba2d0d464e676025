//! Test, lint and format commands implied by manifests, scripts and tool configuration.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::detect::manifests::Manifest;
use crate::detect::scan::Scanned;
use crate::lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RepoCommandKind {
    Test,
    Lint,
    Format,
    Typecheck,
    Build,
}

/// A verification command the project itself declares or implies. Plan mode
/// proposes these; it never runs them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DetectedCommand {
    pub kind: RepoCommandKind,
    pub command: String,
    /// The file that implies it.
    pub source: String,
}

/// Derives verification commands, root manifests first. Commands for nested
/// manifests that a root workspace already covers are not repeated; other
/// nested projects get a `cd <dir> && …` prefix so each runs where it belongs.
pub fn detect(scanned: &Scanned, manifests: &[Manifest]) -> Vec<DetectedCommand> {
    let mut out: Vec<DetectedCommand> = Vec::new();
    let mut seen: BTreeSet<(RepoCommandKind, String)> = BTreeSet::new();
    let mut push = |kind: RepoCommandKind, dir: &str, cmd: &str, source: &str| {
        let command = if dir.is_empty() {
            cmd.to_string()
        } else {
            format!("cd {dir} && {cmd}")
        };
        if seen.insert((kind, command.clone())) {
            out.push(DetectedCommand {
                kind,
                command,
                source: source.to_string(),
            });
        }
    };
    let mut ordered: Vec<&Manifest> = manifests.iter().collect();
    ordered.sort_by_key(|m| (m.path.matches('/').count(), m.path.clone()));
    let covered = |m: &Manifest| -> bool {
        // A nested manifest inside a directory whose ancestor has the same
        // tool (Cargo workspace, npm workspaces, Gradle/Maven multi-module).
        let dir = m.dir();
        !dir.is_empty()
            && manifests.iter().any(|o| {
                o.tool == m.tool
                    && o.path != m.path
                    && (o.dir().is_empty() || dir.starts_with(&format!("{}/", o.dir())))
                    && (!o.workspace_members.is_empty() || o.tool == "Cargo")
            })
    };
    let exists_in = |dir: &str, name: &str| scanned.exists(&lang::join(dir, name));
    let npm_runner = |dir: &str| -> &'static str {
        if exists_in(dir, "pnpm-lock.yaml") || exists_in("", "pnpm-lock.yaml") {
            "pnpm"
        } else if exists_in(dir, "yarn.lock") || exists_in("", "yarn.lock") {
            "yarn"
        } else if exists_in(dir, "bun.lockb") || exists_in("", "bun.lockb") {
            "bun"
        } else {
            "npm"
        }
    };

    for m in ordered {
        // Sample and fixture projects are not what CI verifies.
        let sample = m.path.split('/').any(|c| {
            matches!(
                c,
                "examples"
                    | "example"
                    | "docs"
                    | "fixtures"
                    | "testdata"
                    | "samples"
                    | "benchmarks"
                    | "templates"
            )
        }) || m.path.contains("/tests/");
        if covered(m) || sample {
            continue;
        }
        let dir = m.dir();
        let src = m.path.as_str();
        match m.tool.as_str() {
            "Cargo" => {
                let ws = !m.workspace_members.is_empty();
                push(
                    RepoCommandKind::Test,
                    dir,
                    if ws {
                        "cargo test --workspace"
                    } else {
                        "cargo test"
                    },
                    src,
                );
                push(
                    RepoCommandKind::Lint,
                    dir,
                    if ws {
                        "cargo clippy --workspace --all-targets -- -D warnings"
                    } else {
                        "cargo clippy --all-targets -- -D warnings"
                    },
                    src,
                );
                push(
                    RepoCommandKind::Format,
                    dir,
                    "cargo fmt --all -- --check",
                    src,
                );
            }
            "npm" => {
                let run = npm_runner(dir);
                let script = |name: &str| {
                    m.scripts
                        .get(name)
                        .is_some_and(|s| !s.contains("no test specified"))
                };
                if script("test") {
                    push(RepoCommandKind::Test, dir, &format!("{run} test"), src);
                } else if m.has_dep("vitest") {
                    push(RepoCommandKind::Test, dir, "npx vitest run", src);
                } else if m.has_dep("jest") {
                    push(RepoCommandKind::Test, dir, "npx jest", src);
                }
                for (name, kind) in [
                    ("lint", RepoCommandKind::Lint),
                    ("typecheck", RepoCommandKind::Typecheck),
                    ("type-check", RepoCommandKind::Typecheck),
                    ("check", RepoCommandKind::Lint),
                    ("format:check", RepoCommandKind::Format),
                ] {
                    if script(name) {
                        push(kind, dir, &format!("{run} run {name}"), src);
                    }
                }
                if !script("lint") && (m.has_dep("eslint") || has_eslint_config(scanned, dir)) {
                    push(RepoCommandKind::Lint, dir, "npx eslint .", src);
                }
                if !script("typecheck") && m.has_dep("typescript") {
                    push(RepoCommandKind::Typecheck, dir, "npx tsc --noEmit", src);
                }
            }
            "Go modules" => {
                push(RepoCommandKind::Test, dir, "go test ./...", src);
                push(RepoCommandKind::Lint, dir, "go vet ./...", src);
                if exists_in(dir, ".golangci.yml") || exists_in(dir, ".golangci.yaml") {
                    push(RepoCommandKind::Lint, dir, "golangci-lint run", src);
                }
            }
            "pyproject" | "Poetry" | "setuptools" | "pip requirements" | "Pipenv" => {
                let uses = |tool: &str| {
                    m.has_dep(tool)
                        || m.scripts.contains_key(&format!("tool.{tool}"))
                        || m.scripts.contains_key(&format!("section[tool:{tool}]"))
                        || m.scripts.contains_key(&format!("section[{tool}]"))
                };
                if exists_in(dir, "tox.ini") && !uses("pytest") {
                    push(RepoCommandKind::Test, dir, "tox", "tox.ini");
                } else if uses("pytest")
                    || exists_in(dir, "pytest.ini")
                    || exists_in(dir, "conftest.py")
                    || exists_in(dir, "tests/conftest.py")
                    || has_python_tests(scanned, dir)
                {
                    push(RepoCommandKind::Test, dir, "pytest", src);
                }
                if uses("ruff") || exists_in(dir, "ruff.toml") || exists_in(dir, ".ruff.toml") {
                    push(RepoCommandKind::Lint, dir, "ruff check .", src);
                }
                if uses("flake8") || exists_in(dir, ".flake8") {
                    push(RepoCommandKind::Lint, dir, "flake8", src);
                }
                if uses("mypy") || exists_in(dir, "mypy.ini") {
                    push(RepoCommandKind::Typecheck, dir, "mypy .", src);
                }
                if uses("black") {
                    push(RepoCommandKind::Format, dir, "black --check .", src);
                }
            }
            "Maven" => {
                push(RepoCommandKind::Test, dir, "mvn test", src);
            }
            "Gradle" | "Gradle settings" => {
                let gradle = if exists_in(dir, "gradlew") || exists_in("", "gradlew") {
                    "./gradlew"
                } else {
                    "gradle"
                };
                push(RepoCommandKind::Test, dir, &format!("{gradle} test"), src);
                push(RepoCommandKind::Lint, dir, &format!("{gradle} check"), src);
            }
            "Bundler" => {
                if m.has_dep("rspec") || m.has_dep("rspec-rails") || exists_in(dir, ".rspec") {
                    push(RepoCommandKind::Test, dir, "bundle exec rspec", src);
                } else if m.has_dep("rails") {
                    push(RepoCommandKind::Test, dir, "bin/rails test", src);
                } else {
                    push(RepoCommandKind::Test, dir, "bundle exec rake test", src);
                }
                if m.has_dep("rubocop") {
                    push(RepoCommandKind::Lint, dir, "bundle exec rubocop", src);
                }
            }
            "Composer" => {
                if m.scripts.contains_key("test") {
                    push(RepoCommandKind::Test, dir, "composer test", src);
                } else if m.has_dep("phpunit/phpunit") {
                    push(RepoCommandKind::Test, dir, "vendor/bin/phpunit", src);
                }
                if m.has_dep("phpstan/phpstan") {
                    push(
                        RepoCommandKind::Lint,
                        dir,
                        "vendor/bin/phpstan analyse",
                        src,
                    );
                }
            }
            "Mix" => {
                push(RepoCommandKind::Test, dir, "mix test", src);
                push(
                    RepoCommandKind::Format,
                    dir,
                    "mix format --check-formatted",
                    src,
                );
                if m.has_dep("credo") {
                    push(RepoCommandKind::Lint, dir, "mix credo", src);
                }
            }
            "CMake" if m.scripts.contains_key("ctest") => {
                push(
                    RepoCommandKind::Build,
                    dir,
                    "cmake -S . -B build && cmake --build build",
                    src,
                );
                push(RepoCommandKind::Test, dir, "ctest --test-dir build", src);
            }
            "Make" => {
                for (target, kind) in [
                    ("test", RepoCommandKind::Test),
                    ("check", RepoCommandKind::Test),
                    ("lint", RepoCommandKind::Lint),
                    ("fmt-check", RepoCommandKind::Format),
                ] {
                    if m.scripts.contains_key(target) {
                        push(kind, dir, &format!("make {target}"), src);
                    }
                }
            }
            "pub" => {
                let cmd = if m.has_dep("flutter") {
                    "flutter test"
                } else {
                    "dart test"
                };
                push(RepoCommandKind::Test, dir, cmd, src);
            }
            "MSBuild" => push(RepoCommandKind::Test, dir, "dotnet test", src),
            "Swift Package Manager" => push(RepoCommandKind::Test, dir, "swift test", src),
            "Zig build" => push(RepoCommandKind::Test, dir, "zig build test", src),
            "Deno" => push(RepoCommandKind::Test, dir, "deno test", src),
            _ => {}
        }
    }
    out.sort_by_key(|c| c.kind);
    out
}

fn has_eslint_config(scanned: &Scanned, dir: &str) -> bool {
    [
        "eslint.config.js",
        "eslint.config.mjs",
        "eslint.config.cjs",
        "eslint.config.ts",
        ".eslintrc",
        ".eslintrc.js",
        ".eslintrc.cjs",
        ".eslintrc.json",
        ".eslintrc.yml",
    ]
    .iter()
    .any(|n| scanned.exists(&lang::join(dir, n)))
}

fn has_python_tests(scanned: &Scanned, dir: &str) -> bool {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    scanned
        .files
        .iter()
        .any(|f| f.path.starts_with(&prefix) && f.is_test && f.language == Some("Python"))
}
