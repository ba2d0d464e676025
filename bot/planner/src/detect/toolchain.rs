//! The programs a repository's own manifests, scripts and detected commands run: what a
//! plan's verification command may call for its step to be run by `navin board verify`.

use navin_ledger::plan::commands::{program_of, Toolchain};

use crate::detect::map::RepoMap;
use crate::detect::scan::Scanned;
use crate::detect::source::RepoSource;
use crate::PlannerError;
use crate::PlannerOptions;

/// Programs each ecosystem's manifest brings with it.
fn ecosystem_programs(ecosystem: &str, tool: &str) -> &'static [&'static str] {
    match (ecosystem, tool) {
        ("rust", _) => &["cargo", "rustc", "rustfmt"],
        ("javascript", t) if t.starts_with("pnpm") => &["pnpm", "npm", "npx", "node"],
        ("javascript", _) => &["npm", "npx", "node", "yarn", "pnpm", "bun"],
        ("deno", _) => &["deno"],
        ("go", _) => &["go", "gofmt"],
        ("python", "Pipenv") => &["pipenv", "python", "python3", "pip"],
        ("python", _) => &["python", "python3", "pip", "uv", "poetry", "hatch"],
        ("java", "Maven") => &["mvn", "java"],
        ("java", _) => &["gradle", "java"],
        ("ruby", _) => &["bundle", "ruby", "rake"],
        ("php", _) => &["composer", "php"],
        ("elixir", _) => &["mix", "elixir"],
        ("c++", _) => &["cmake", "ctest", "make", "ninja"],
        ("make", _) => &["make"],
        ("dart", _) => &["dart", "flutter"],
        ("dotnet", _) => &["dotnet"],
        ("swift", _) => &["swift"],
        ("zig", _) => &["zig"],
        _ => &[],
    }
}

/// Development dependencies whose command-line program has another name.
fn dependency_program(dependency: &str) -> &str {
    match dependency {
        "typescript" => "tsc",
        "@playwright/test" => "playwright",
        other => other,
    }
}

/// Whether a repository file is a script a command may run by its path.
fn is_script(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let top = path.split('/').next().unwrap_or_default();
    path.ends_with(".sh")
        || matches!(name, "gradlew" | "mvnw" | "x.py")
        || (path.contains('/') && matches!(top, "scripts" | "script" | "bin" | "tools" | "ci"))
}

/// The toolchain of a mapped repository: the programs its detected commands run, its
/// manifests' ecosystems and tools, their development dependencies, and its scripts.
pub fn toolchain_of(map: &RepoMap, scanned: &Scanned) -> Toolchain {
    let mut toolchain = Toolchain::default();
    let mut add = |program: &str| {
        let program = program.strip_prefix("./").unwrap_or(program);
        if !program.is_empty() {
            toolchain.programs.insert(program.to_owned());
        }
    };
    for command in &map.commands {
        if let Some(program) = program_of(&command.command) {
            add(program);
        }
    }
    for manifest in &map.manifests {
        for program in ecosystem_programs(&manifest.ecosystem, &manifest.tool) {
            add(program);
        }
        for dependency in manifest
            .dev_dependencies
            .iter()
            .chain(&manifest.dependencies)
        {
            let name = dependency.split_whitespace().next().unwrap_or_default();
            add(dependency_program(name));
        }
        // Scripts a manifest names run through its tool (`npm run lint`), and Makefile
        // targets through `make`: their tools are in already.
    }
    for file in scanned.files.iter().filter(|f| is_script(&f.path)) {
        add(&file.path);
    }
    toolchain
}

/// Scans `source` and returns its toolchain (see [`toolchain_of`]).
pub fn repository_toolchain(
    source: &dyn RepoSource,
    opts: &PlannerOptions,
) -> Result<Toolchain, PlannerError> {
    let scanned = crate::detect::scan::scan(source, opts)?;
    let graph = crate::detect::imports::build_graph(&scanned);
    let map = crate::detect::map::build_map(&scanned, &graph);
    Ok(toolchain_of(&map, &scanned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::source::MemorySource;

    fn toolchain(files: &[(&str, &str)]) -> Toolchain {
        let source = MemorySource::from_files(
            "test",
            files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), (*t).to_owned())),
        );
        repository_toolchain(&source, &PlannerOptions::default())
            .unwrap_or_else(|e| panic!("toolchain: {e}"))
    }

    #[test]
    fn a_python_project_runs_python_and_its_test_dependencies_but_not_cargo() {
        let t = toolchain(&[
            (
                "pyproject.toml",
                "[project]\nname = \"greet\"\n[project.optional-dependencies]\ntest = [\"pytest>=7\"]\n",
            ),
            ("greet/__init__.py", "def hello():\n    return 'hi'\n"),
            ("scripts/check.sh", "#!/bin/sh\npytest\n"),
        ]);
        assert!(t.runs("python3"));
        assert!(t.runs("pytest"), "{:?}", t.programs);
        assert!(t.runs("./scripts/check.sh"));
        assert!(!t.runs("cargo"));
        assert!(!t.runs("existing"));
    }

    #[test]
    fn a_go_module_runs_go_and_a_node_package_runs_npm() {
        let go = toolchain(&[("go.mod", "module example.com/x\n\ngo 1.22\n")]);
        assert!(go.runs("go"));
        assert!(!go.runs("npm"));
        let js = toolchain(&[(
            "package.json",
            r#"{"name":"x","scripts":{"test":"node --test"},"devDependencies":{"typescript":"^5"}}"#,
        )]);
        assert!(
            js.runs("npm") && js.runs("node") && js.runs("tsc"),
            "{:?}",
            js.programs
        );
    }
}
