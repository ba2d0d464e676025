//! Detection tests: manifests, frameworks, commands, CI, modules, entry points and the import graph per ecosystem.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use crate::*;

fn map_of(files: &[(&str, &str)]) -> RepoMap {
    let src = MemorySource::from_files(
        "test",
        files.iter().map(|(p, c)| (p.to_string(), c.to_string())),
    );
    map_repository(&src, &PlannerOptions::default()).unwrap()
}

fn commands(map: &RepoMap, kind: RepoCommandKind) -> Vec<String> {
    map.commands
        .iter()
        .filter(|c| c.kind == kind)
        .map(|c| c.command.clone())
        .collect()
}

fn frameworks(map: &RepoMap) -> Vec<String> {
    map.frameworks.iter().map(|f| f.name.clone()).collect()
}

fn module_paths(map: &RepoMap) -> Vec<String> {
    map.modules.iter().map(|m| m.path.clone()).collect()
}

#[test]
fn detects_cargo_workspace_crates_frameworks_and_commands() {
    let map = map_of(&[
        ("Cargo.toml", "[workspace]\nmembers = [\"server\", \"core\"]\n"),
        (
            "server/Cargo.toml",
            "[package]\nname = \"my-server\"\n[dependencies]\naxum = \"0.8\"\ntokio = { version = \"1\" }\nmy-core = { path = \"../core\" }\n",
        ),
        ("server/src/main.rs", "mod routes;\nuse my_core::model::User;\nfn main() {}\n"),
        ("server/src/routes.rs", "use crate::main;\npub fn users() {}\n"),
        ("core/Cargo.toml", "[package]\nname = \"my-core\"\n"),
        ("core/src/lib.rs", "pub mod model;\n#[cfg(test)]\nmod tests {}\n"),
        ("core/src/model.rs", "pub struct User;\n"),
        ("core/tests/model.rs", "#[test] fn t() {}\n"),
        (".github/workflows/ci.yml", "on: push\n"),
    ]);
    assert!(module_paths(&map).contains(&"server".to_string()));
    assert!(module_paths(&map).contains(&"core".to_string()));
    let server = map.modules.iter().find(|m| m.path == "server").unwrap();
    assert_eq!(server.kind, "crate");
    assert_eq!(server.name, "my-server");
    assert_eq!(server.language.as_deref(), Some("Rust"));
    assert!(frameworks(&map).contains(&"axum".to_string()));
    assert!(frameworks(&map).contains(&"Tokio".to_string()));
    assert_eq!(
        commands(&map, RepoCommandKind::Test),
        vec!["cargo test --workspace"]
    );
    assert!(commands(&map, RepoCommandKind::Lint)[0].starts_with("cargo clippy --workspace"));
    assert_eq!(map.ci[0].system, "GitHub Actions");
    let entries: Vec<&str> = map.entry_points.iter().map(|e| e.path.as_str()).collect();
    assert!(entries.contains(&"server/src/main.rs"));
    assert!(entries.contains(&"core/src/lib.rs"));
    // mod routes; + use my_core::model (cross-crate) + pub mod model;
    assert!(map.import_edges >= 3, "edges: {}", map.import_edges);
    assert!(map
        .test_conventions
        .iter()
        .any(|t| t.pattern.starts_with("<crate>/tests")));
}

#[test]
fn detects_npm_workspaces_scripts_and_js_frameworks() {
    let map = map_of(&[
        (
            "package.json",
            r#"{"name":"mono","private":true,"workspaces":["packages/*"],"scripts":{"test":"vitest run","lint":"eslint ."},"devDependencies":{"vitest":"1","eslint":"9","typescript":"5"}}"#,
        ),
        ("pnpm-lock.yaml", "lockfileVersion: 9\n"),
        (
            "packages/web/package.json",
            r#"{"name":"@mono/web","dependencies":{"react":"18","next":"14"},"scripts":{"test":"vitest"}}"#,
        ),
        (
            "packages/web/src/index.tsx",
            "import { App } from './App';\n",
        ),
        ("packages/web/src/App.tsx", "export function App() {}\n"),
        (
            "packages/web/src/App.test.tsx",
            "import { App } from './App';\n",
        ),
        (
            "packages/api/package.json",
            r#"{"name":"@mono/api","dependencies":{"express":"4"},"main":"src/server.js"}"#,
        ),
        (
            "packages/api/src/server.js",
            "const r = require('./routes');\n",
        ),
        ("packages/api/src/routes/index.js", "module.exports = {};\n"),
    ]);
    assert_eq!(commands(&map, RepoCommandKind::Test), vec!["pnpm test"]);
    assert!(commands(&map, RepoCommandKind::Lint).contains(&"pnpm run lint".to_string()));
    assert!(commands(&map, RepoCommandKind::Typecheck).contains(&"npx tsc --noEmit".to_string()));
    let fw = frameworks(&map);
    for name in ["React", "Next.js", "Express"] {
        assert!(fw.contains(&name.to_string()), "{name} missing from {fw:?}");
    }
    assert!(module_paths(&map).contains(&"packages/web".to_string()));
    assert!(map
        .entry_points
        .iter()
        .any(|e| e.path == "packages/api/src/server.js"));
    // './App' resolves to App.tsx and './routes' to routes/index.js.
    assert!(map.import_edges >= 3, "edges: {}", map.import_edges);
    assert!(map
        .test_conventions
        .iter()
        .any(|t| t.pattern.starts_with("*.test.")));
}

#[test]
fn detects_go_module_packages_and_imports() {
    let map = map_of(&[
        ("go.mod", "module example.com/tool\n\ngo 1.22\n\nrequire (\n\tgithub.com/spf13/cobra v1.8.0\n)\n"),
        ("cmd/tool/main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/tool/internal/store\"\n)\n\nfunc main() {}\n"),
        ("internal/store/store.go", "package store\n\nfunc Open() {}\n"),
        ("internal/store/store_test.go", "package store\n"),
        (".golangci.yml", "linters: {}\n"),
    ]);
    assert_eq!(commands(&map, RepoCommandKind::Test), vec!["go test ./..."]);
    assert!(commands(&map, RepoCommandKind::Lint).contains(&"golangci-lint run".to_string()));
    assert!(frameworks(&map).contains(&"Cobra".to_string()));
    assert!(map
        .entry_points
        .iter()
        .any(|e| e.path == "cmd/tool/main.go"));
    assert_eq!(map.import_edges, 1);
    assert!(map
        .test_conventions
        .iter()
        .any(|t| t.pattern.starts_with("*_test.go")));
    assert_eq!(map.modules[0].kind, "go module");
}

#[test]
fn detects_python_project_tools_and_relative_imports() {
    let map = map_of(&[
        (
            "pyproject.toml",
            "[project]\nname = \"svc\"\ndependencies = [\"fastapi>=0.110\", \"SQLAlchemy[asyncio]~=2.0\"]\n[project.optional-dependencies]\ndev = [\"pytest\"]\n[tool.ruff]\nline-length = 100\n[tool.mypy]\nstrict = true\n",
        ),
        ("src/svc/__init__.py", ""),
        ("src/svc/main.py", "from .db import session\nfrom svc.models import User\n"),
        ("src/svc/db.py", "import sqlalchemy\n"),
        ("src/svc/models.py", "class User: pass\n"),
        ("tests/test_models.py", "from svc.models import User\n"),
        ("alembic/versions/0001_init.py", "def upgrade(): pass\n"),
    ]);
    assert_eq!(commands(&map, RepoCommandKind::Test), vec!["pytest"]);
    assert!(commands(&map, RepoCommandKind::Lint).contains(&"ruff check .".to_string()));
    assert!(commands(&map, RepoCommandKind::Typecheck).contains(&"mypy .".to_string()));
    let fw = frameworks(&map);
    assert!(
        fw.contains(&"FastAPI".to_string()) && fw.contains(&"SQLAlchemy".to_string()),
        "{fw:?}"
    );
    assert!(module_paths(&map).contains(&"src/svc".to_string()));
    assert_eq!(map.migration_dirs, vec!["alembic/versions"]);
    // .db, svc.models from main.py and svc.models from the test.
    assert_eq!(map.import_edges, 3);
}

#[test]
fn detects_jvm_ruby_php_elixir_and_native_build_files() {
    let map = map_of(&[
        (
            "pom.xml",
            "<project><artifactId>shop</artifactId><modules><module>api</module></modules><dependencies><dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency></dependencies></project>",
        ),
        ("api/src/main/java/shop/App.java", "@SpringBootApplication\npublic class App { public static void main(String[] a) {} }\n"),
        ("Gemfile", "source 'https://rubygems.org'\ngem 'rails', '~> 7.1'\ngem 'rspec-rails'\n"),
        ("composer.json", r#"{"name":"acme/site","require":{"laravel/framework":"^11"},"require-dev":{"phpunit/phpunit":"^10"}}"#),
        ("mix.exs", "defmodule App.MixProject do\n  def project do\n    [app: :app]\n  end\n  defp deps do\n    [\n      {:phoenix, \"~> 1.7\"},\n    ]\n  end\nend\n"),
        ("CMakeLists.txt", "project(engine CXX)\nenable_testing()\nadd_test(NAME unit COMMAND unit)\n"),
        ("Makefile", "all: build\ntest:\n\tctest\nlint:\n\tclang-tidy\n"),
    ]);
    let fw = frameworks(&map);
    for name in ["Spring Boot", "Ruby on Rails", "Laravel", "Phoenix"] {
        assert!(fw.contains(&name.to_string()), "{name} missing from {fw:?}");
    }
    let tests = commands(&map, RepoCommandKind::Test);
    for cmd in [
        "mvn test",
        "bundle exec rspec",
        "vendor/bin/phpunit",
        "mix test",
        "ctest --test-dir build",
        "make test",
    ] {
        assert!(
            tests.contains(&cmd.to_string()),
            "{cmd} missing from {tests:?}"
        );
    }
    assert!(commands(&map, RepoCommandKind::Lint).contains(&"make lint".to_string()));
    assert!(map
        .entry_points
        .iter()
        .any(|e| e.path.ends_with("App.java") && e.kind.contains("Spring")));
}

#[test]
fn skips_vendored_binary_and_oversized_files_but_still_lists_large_ones() {
    let big = "x".repeat(2000);
    let src = MemorySource::from_files(
        "t",
        vec![
            ("src/app.js".to_string(), b"console.log(1)\n".to_vec()),
            (
                "node_modules/left-pad/index.js".to_string(),
                b"module.exports = 1\n".to_vec(),
            ),
            ("assets/logo.png".to_string(), vec![0x89, b'P', b'N', b'G']),
            ("data/blob.dat2".to_string(), vec![1, 0, 2, 0]),
            ("src/huge.js".to_string(), big.into_bytes()),
        ],
    );
    let opts = PlannerOptions {
        max_file_bytes: 1000,
        ..PlannerOptions::default()
    };
    let map = map_repository(&src, &opts).unwrap();
    assert_eq!(map.stats.skipped_vendored, 1);
    assert_eq!(map.stats.skipped_large, 1);
    // The .png by extension, the NUL-containing file by content.
    assert_eq!(map.stats.skipped_binary, 2);
    assert_eq!(map.stats.read_files, 1);
    assert_eq!(
        map.stats.files, 4,
        "large and binary files stay listed for path ranking"
    );
}

#[test]
fn total_byte_budget_reads_manifests_first_and_marks_the_scan_partial() {
    let mut files: Vec<(String, String)> = (0..50)
        .map(|i| (format!("src/f{i:02}.rs"), "x".repeat(100)))
        .collect();
    files.push((
        "Cargo.toml".to_string(),
        "[package]\nname = \"budget\"\n".to_string(),
    ));
    let src = MemorySource::from_files("t", files);
    let opts = PlannerOptions {
        max_total_bytes: 1000,
        ..PlannerOptions::default()
    };
    let map = map_repository(&src, &opts).unwrap();
    assert!(map.stats.truncated);
    assert!(map.stats.read_bytes <= 1000);
    assert_eq!(map.manifests[0].name.as_deref(), Some("budget"));
}

#[test]
fn local_source_honours_gitignore_and_never_lists_git_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join("build/out.js"), "x").unwrap();
    std::fs::write(root.join("debug.log"), "x").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    let src = LocalSource::new(root).unwrap();
    let mut listed: Vec<String> = src.list().unwrap().into_iter().map(|e| e.path).collect();
    listed.sort();
    assert_eq!(listed, vec![".gitignore", "src/lib.rs"]);
    assert_eq!(src.read("src/lib.rs", 3).unwrap().unwrap(), b"pub");
    assert!(matches!(
        src.read("../etc/passwd", 10),
        Err(PlannerError::BadPath(_))
    ));
}

#[test]
fn local_source_rejects_a_path_that_is_not_a_directory() {
    let err = LocalSource::new("/definitely/not/here").unwrap_err();
    assert!(err.to_string().contains("/definitely/not/here"));
}

#[test]
fn git_tree_source_reads_a_commit_without_a_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let repo = git2::Repository::init_bare(dir.path()).unwrap();
    let blob = repo.blob(b"fn main() {}\n").unwrap();
    let mut src_tree = repo.treebuilder(None).unwrap();
    src_tree.insert("main.rs", blob, 0o100644).unwrap();
    let src_id = src_tree.write().unwrap();
    let manifest = repo.blob(b"[package]\nname = \"bare\"\n").unwrap();
    let mut root = repo.treebuilder(None).unwrap();
    root.insert("src", src_id, 0o040000).unwrap();
    root.insert("Cargo.toml", manifest, 0o100644).unwrap();
    let tree = repo.find_tree(root.write().unwrap()).unwrap();
    let source = MemorySource::from_git_tree(&repo, &tree).unwrap();
    let map = map_repository(&source, &PlannerOptions::default()).unwrap();
    assert_eq!(map.manifests[0].name.as_deref(), Some("bare"));
    assert!(map.entry_points.iter().any(|e| e.path == "src/main.rs"));
    assert!(map.source.starts_with("git:"));
}
