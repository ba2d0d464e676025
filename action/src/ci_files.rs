//! What CI runs, read from the checkout's workflows: the scripts, local actions and tool configs a workflow invokes, and the instruction files agents read; an agent's diff may not change them unless the plan names them.
//!
//! A workflow runs with the repository's secrets, so whatever it executes is as
//! powerful as the workflow itself: `bash scripts/ci.sh` makes `scripts/ci.sh` a
//! workflow file in all but name, `make test` the Makefile, `npm test` package.json's
//! scripts. Instruction files (AGENTS.md, CLAUDE.md, Copilot's) steer the next agent.

use std::collections::BTreeSet;
use std::path::Path;

/// Files agents read as instructions, anywhere in the tree.
const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];
/// Instruction files at fixed places.
const INSTRUCTION_PATHS: [&str; 2] = [".github/copilot-instructions.md", ".cursorrules"];
/// Instruction directories.
const INSTRUCTION_DIRS: [&str; 1] = [".github/instructions/"];

/// A tool a `run:` step calls, and the files that decide what it runs.
const TOOL_CONFIGS: &[(&str, &[&str])] = &[
    ("make", &["Makefile", "makefile", "GNUmakefile"]),
    ("npm", &["package.json"]),
    ("yarn", &["package.json"]),
    ("pnpm", &["package.json"]),
    (
        "cargo",
        &[".cargo/config.toml", ".cargo/config", "build.rs"],
    ),
    ("tox", &["tox.ini"]),
    ("nox", &["noxfile.py"]),
    ("just", &["justfile", "Justfile"]),
    ("task", &["Taskfile.yml", "Taskfile.yaml"]),
];

/// What CI runs in this checkout: exact files, and directory prefixes (local actions).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CiFiles {
    pub files: BTreeSet<String>,
    pub dirs: BTreeSet<String>,
}

impl CiFiles {
    /// Reads every workflow under `.github/workflows/` in `checkout`. A workflow that
    /// does not parse adds nothing here (its own path is protected anyway).
    pub fn read(checkout: &Path) -> CiFiles {
        let mut out = CiFiles::default();
        let Ok(entries) = std::fs::read_dir(checkout.join(".github/workflows")) else {
            return out;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.extension().is_some_and(|e| e == "yml" || e == "yaml") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(doc) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text) else {
                continue;
            };
            for job in doc["jobs"]
                .as_mapping()
                .into_iter()
                .flatten()
                .map(|(_, j)| j)
            {
                for step in job["steps"].as_sequence().into_iter().flatten() {
                    if let Some(script) = step["run"].as_str() {
                        let dir = step["working-directory"].as_str().unwrap_or("");
                        out.add_script(checkout, dir, script);
                    }
                    if let Some(local) = step["uses"].as_str().and_then(|u| u.strip_prefix("./")) {
                        out.dirs.insert(format!("{}/", local.trim_end_matches('/')));
                    }
                }
            }
        }
        out
    }

    /// The files a script names that exist in the checkout, and the configs of the
    /// tools it calls.
    fn add_script(&mut self, checkout: &Path, dir: &str, script: &str) {
        let base = dir.trim_start_matches("./").trim_end_matches('/');
        let words = script
            .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '`'));
        for word in words {
            let word = word
                .trim_matches(|c| matches!(c, '"' | '\''))
                .trim_start_matches("./");
            if word.is_empty()
                || word.starts_with('-')
                || word.starts_with('$')
                || word.contains("..")
            {
                continue;
            }
            let program = word.rsplit('/').next().unwrap_or(word);
            for (tool, configs) in TOOL_CONFIGS {
                if program == *tool {
                    for c in *configs {
                        self.files.insert(join(base, c));
                    }
                }
            }
            let path = join(base, word);
            if checkout.join(&path).is_file() {
                self.files.insert(path);
            }
        }
    }

    /// Whether CI runs `path`, or an agent reads it as instructions.
    pub fn covers(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.files.contains(path)
            || self.dirs.iter().any(|d| path.starts_with(d.as_str()))
            || INSTRUCTION_FILES.contains(&name)
            || INSTRUCTION_PATHS.contains(&path)
            || INSTRUCTION_DIRS.iter().any(|d| path.starts_with(d))
    }
}

fn join(base: &str, path: &str) -> String {
    if base.is_empty() {
        path.to_owned()
    } else {
        format!("{base}/{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_tool_configs_local_actions_and_instruction_files_a_workflow_reaches_are_covered() {
        let dir = tempfile::tempdir().expect("tmp");
        let d = dir.path();
        std::fs::create_dir_all(d.join(".github/workflows")).expect("dir");
        std::fs::create_dir_all(d.join("scripts")).expect("dir");
        std::fs::create_dir_all(d.join("web")).expect("dir");
        std::fs::write(d.join("scripts/ci.sh"), "cargo test\n").expect("write");
        std::fs::write(d.join("web/check.py"), "print(1)\n").expect("write");
        std::fs::write(
            d.join(".github/workflows/ci.yml"),
            "on: push\njobs:\n  t:\n    steps:\n      - uses: ./tools/setup\n      - run: bash scripts/ci.sh && make lint\n      - run: python check.py\n        working-directory: web\n      - run: npm test\n",
        )
        .expect("workflow");
        let ci = CiFiles::read(d);
        for path in [
            "scripts/ci.sh",
            "Makefile",
            "web/check.py",
            "package.json",
            "tools/setup/action.yml",
            "AGENTS.md",
            "docs/AGENTS.md",
            "CLAUDE.md",
            ".github/copilot-instructions.md",
        ] {
            assert!(
                ci.covers(path),
                "{path} is what CI runs or agents read: {ci:?}"
            );
        }
        for path in ["src/lib.rs", "README.md", "scripts/other.sh", "web/app.py"] {
            assert!(!ci.covers(path), "{path} is not: {ci:?}");
        }
    }
}
