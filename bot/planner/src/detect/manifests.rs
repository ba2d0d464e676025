//! Parsing package manifests of the common ecosystems into names, dependencies, scripts and workspaces.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::detect::scan::Scanned;
use crate::lang;

/// One parsed package manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    pub path: String,
    pub ecosystem: String,
    pub tool: String,
    pub name: Option<String>,
    pub dependencies: Vec<String>,
    pub dev_dependencies: Vec<String>,
    pub workspace_members: Vec<String>,
    /// npm/composer scripts, Makefile targets, and marker keys such as
    /// `tool.ruff` (pyproject) that say which tools are configured.
    pub scripts: BTreeMap<String, String>,
    /// Entry files the manifest names (Cargo `[[bin]]`, npm `main`/`bin`, Python scripts).
    pub binaries: Vec<String>,
}

impl Manifest {
    pub fn dir(&self) -> &str {
        lang::parent_dir(&self.path)
    }

    pub fn has_dep(&self, name: &str) -> bool {
        self.dependencies
            .iter()
            .chain(&self.dev_dependencies)
            .any(|d| d == name)
    }
}

/// Parses every manifest the scan read. Unparseable manifests are still
/// reported (with what could be read), since their presence alone says
/// which ecosystem a directory belongs to.
pub fn parse_all(scanned: &Scanned) -> Vec<Manifest> {
    let mut out = Vec::new();
    for f in &scanned.files {
        let name = lang::file_name(&f.path);
        let text = f.text.as_deref().unwrap_or("");
        let parsed = match name {
            "Cargo.toml" => Some(cargo(text)),
            "package.json" => Some(package_json(text)),
            "pnpm-workspace.yaml" => Some(pnpm_workspace(text)),
            "go.mod" => Some(go_mod(text)),
            "go.work" => Some(go_work(text)),
            "pyproject.toml" => Some(pyproject(text)),
            "setup.py" => Some(setup_py(text)),
            "setup.cfg" => Some(setup_cfg(text)),
            "Pipfile" => Some(pipfile(text)),
            "pom.xml" => Some(pom(text)),
            "build.gradle" | "build.gradle.kts" => Some(gradle(text)),
            "settings.gradle" | "settings.gradle.kts" => Some(gradle_settings(text)),
            "Gemfile" => Some(gemfile(text)),
            "composer.json" => Some(composer(text)),
            "mix.exs" => Some(mix(text)),
            "CMakeLists.txt" => Some(cmake(text)),
            "Makefile" | "makefile" | "GNUmakefile" => Some(makefile(text)),
            "Package.swift" => Some(simple("swift", "Swift Package Manager")),
            "pubspec.yaml" => Some(pubspec(text)),
            "deno.json" => Some(simple("deno", "Deno")),
            "build.zig" => Some(simple("zig", "Zig build")),
            _ if name.starts_with("requirements") && name.ends_with(".txt") => {
                Some(requirements(text))
            }
            _ if name.ends_with(".csproj") => Some(csproj(text)),
            _ => None,
        };
        if let Some(mut m) = parsed {
            m.path = f.path.clone();
            m.dependencies.sort();
            m.dependencies.dedup();
            m.dev_dependencies.sort();
            m.dev_dependencies.dedup();
            out.push(m);
        }
    }
    out
}

fn simple(ecosystem: &str, tool: &str) -> Manifest {
    Manifest {
        path: String::new(),
        ecosystem: ecosystem.to_string(),
        tool: tool.to_string(),
        name: None,
        dependencies: Vec::new(),
        dev_dependencies: Vec::new(),
        workspace_members: Vec::new(),
        scripts: BTreeMap::new(),
        binaries: Vec::new(),
    }
}

fn table_keys(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(|v| v.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

fn cargo(text: &str) -> Manifest {
    let mut m = simple("rust", "Cargo");
    let Ok(doc) = text.parse::<toml::Table>() else {
        return m;
    };
    m.name = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .map(str::to_string);
    m.dependencies = table_keys(doc.get("dependencies"));
    m.dev_dependencies = table_keys(doc.get("dev-dependencies"));
    if let Some(ws) = doc.get("workspace") {
        m.workspace_members = ws
            .get("members")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        m.dependencies.extend(table_keys(ws.get("dependencies")));
    }
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        for t in targets.values() {
            m.dependencies.extend(table_keys(t.get("dependencies")));
        }
    }
    if let Some(bins) = doc.get("bin").and_then(|b| b.as_array()) {
        for b in bins {
            if let Some(p) = b.get("path").and_then(|p| p.as_str()) {
                m.binaries.push(p.to_string());
            } else if let Some(n) = b.get("name").and_then(|p| p.as_str()) {
                m.binaries.push(format!("src/bin/{n}.rs"));
            }
        }
    }
    m
}

fn json_keys(v: Option<&serde_json::Value>) -> Vec<String> {
    v.and_then(|v| v.as_object())
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn package_json(text: &str) -> Manifest {
    let mut m = simple("javascript", "npm");
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return m;
    };
    m.name = doc.get("name").and_then(|n| n.as_str()).map(str::to_string);
    m.dependencies = json_keys(doc.get("dependencies"));
    m.dependencies
        .extend(json_keys(doc.get("peerDependencies")));
    m.dev_dependencies = json_keys(doc.get("devDependencies"));
    if let Some(scripts) = doc.get("scripts").and_then(|s| s.as_object()) {
        for (k, v) in scripts {
            if let Some(v) = v.as_str() {
                m.scripts.insert(k.clone(), v.to_string());
            }
        }
    }
    let ws = doc.get("workspaces");
    let ws = ws.and_then(|w| w.get("packages")).or(ws);
    if let Some(arr) = ws.and_then(|w| w.as_array()) {
        m.workspace_members = arr
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect();
    }
    for key in ["main", "module"] {
        if let Some(p) = doc.get(key).and_then(|p| p.as_str()) {
            m.binaries.push(p.trim_start_matches("./").to_string());
        }
    }
    match doc.get("bin") {
        Some(serde_json::Value::String(p)) => {
            m.binaries.push(p.trim_start_matches("./").to_string())
        }
        Some(serde_json::Value::Object(o)) => {
            for v in o.values() {
                if let Some(p) = v.as_str() {
                    m.binaries.push(p.trim_start_matches("./").to_string());
                }
            }
        }
        _ => {}
    }
    m
}

fn pnpm_workspace(text: &str) -> Manifest {
    let mut m = simple("javascript", "pnpm workspace");
    let mut in_packages = false;
    for line in text.lines() {
        let t = line.trim();
        if !line.starts_with(' ') && !line.starts_with('-') {
            in_packages = t.starts_with("packages:");
            continue;
        }
        if in_packages {
            if let Some(item) = t.strip_prefix('-') {
                m.workspace_members.push(unquote(item.trim()).to_string());
            }
        }
    }
    m
}

fn unquote(s: &str) -> &str {
    s.trim_matches(|c| c == '"' || c == '\'')
}

fn go_mod(text: &str) -> Manifest {
    let mut m = simple("go", "Go modules");
    let mut in_require = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("module ") {
            m.name = Some(unquote(rest.trim()).to_string());
        } else if t.starts_with("require (") {
            in_require = true;
        } else if in_require && t == ")" {
            in_require = false;
        } else if let Some(rest) = t.strip_prefix("require ") {
            if let Some(dep) = rest.split_whitespace().next() {
                m.dependencies.push(dep.to_string());
            }
        } else if in_require && !t.is_empty() && !t.starts_with("//") {
            if let Some(dep) = t.split_whitespace().next() {
                m.dependencies.push(dep.to_string());
            }
        }
    }
    m
}

fn go_work(text: &str) -> Manifest {
    let mut m = simple("go", "Go workspace");
    let mut in_use = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("use (") {
            in_use = true;
        } else if in_use && t == ")" {
            in_use = false;
        } else if let Some(rest) = t.strip_prefix("use ") {
            m.workspace_members
                .push(rest.trim().trim_start_matches("./").to_string());
        } else if in_use && !t.is_empty() {
            m.workspace_members
                .push(t.trim_start_matches("./").to_string());
        }
    }
    m
}

/// The distribution name from a PEP 508 requirement (`Django>=4; python_version>"3"`).
pub fn pep508_name(req: &str) -> Option<String> {
    let name: String = req
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    if name.is_empty() {
        None
    } else {
        Some(name.to_ascii_lowercase().replace('_', "-"))
    }
}

fn pyproject(text: &str) -> Manifest {
    let mut m = simple("python", "pyproject");
    let Ok(doc) = text.parse::<toml::Table>() else {
        return m;
    };
    let reqs = |v: Option<&toml::Value>| -> Vec<String> {
        v.and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().and_then(pep508_name))
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(project) = doc.get("project") {
        m.name = project
            .get("name")
            .and_then(|n| n.as_str())
            .map(str::to_string);
        m.dependencies = reqs(project.get("dependencies"));
        if let Some(opt) = project
            .get("optional-dependencies")
            .and_then(|o| o.as_table())
        {
            for v in opt.values() {
                m.dev_dependencies.extend(reqs(Some(v)));
            }
        }
        m.binaries.extend(scripts_targets(project.get("scripts")));
    }
    if let Some(groups) = doc.get("dependency-groups").and_then(|o| o.as_table()) {
        for v in groups.values() {
            m.dev_dependencies.extend(reqs(Some(v)));
        }
    }
    if let Some(tool) = doc.get("tool").and_then(|t| t.as_table()) {
        if let Some(poetry) = tool.get("poetry") {
            m.tool = "Poetry".to_string();
            if m.name.is_none() {
                m.name = poetry
                    .get("name")
                    .and_then(|n| n.as_str())
                    .map(str::to_string);
            }
            m.dependencies.extend(
                table_keys(poetry.get("dependencies"))
                    .into_iter()
                    .filter(|d| d != "python"),
            );
            m.dev_dependencies
                .extend(table_keys(poetry.get("dev-dependencies")));
            if let Some(groups) = poetry.get("group").and_then(|g| g.as_table()) {
                for g in groups.values() {
                    m.dev_dependencies.extend(table_keys(g.get("dependencies")));
                }
            }
        }
        // Tool sections double as evidence of the lint/test setup.
        for key in tool.keys() {
            m.scripts.insert(format!("tool.{key}"), String::new());
        }
    }
    m.dependencies = m
        .dependencies
        .iter()
        .map(|d| d.to_ascii_lowercase())
        .collect();
    m.dev_dependencies = m
        .dev_dependencies
        .iter()
        .map(|d| d.to_ascii_lowercase())
        .collect();
    m
}

/// `name = "pkg.module:func"` entries give the module that runs.
fn scripts_targets(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(|v| v.as_table())
        .map(|t| {
            t.values()
                .filter_map(|v| v.as_str())
                .filter_map(|s| s.split(':').next())
                .map(|m| format!("{}.py", m.replace('.', "/")))
                .collect()
        })
        .unwrap_or_default()
}

fn quoted_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(['"', '\'']) {
        let quote = rest.as_bytes()[start] as char;
        let after = &rest[start + 1..];
        let Some(end) = after.find(quote) else { break };
        out.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    out
}

fn setup_py(text: &str) -> Manifest {
    let mut m = simple("python", "setuptools");
    if let Some(i) = text.find("name=") {
        m.name = quoted_strings(&text[i..text.len().min(i + 120)])
            .into_iter()
            .next();
    }
    if let Some(i) = text.find("install_requires") {
        let rest = &text[i..];
        let end = rest.find(']').unwrap_or(rest.len());
        m.dependencies = quoted_strings(&rest[..end])
            .iter()
            .filter_map(|s| pep508_name(s))
            .collect();
    }
    m
}

fn setup_cfg(text: &str) -> Manifest {
    let mut m = simple("python", "setuptools");
    let mut section = String::new();
    let mut in_requires = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.to_string();
            in_requires = false;
            m.scripts.insert(format!("section{t}"), String::new());
            continue;
        }
        if section == "[metadata]" {
            if let Some(v) = t.strip_prefix("name") {
                if let Some(v) = v.trim_start().strip_prefix('=') {
                    m.name = Some(v.trim().to_string());
                }
            }
        }
        if section == "[options]" {
            if t.starts_with("install_requires") {
                in_requires = true;
                continue;
            }
            if in_requires {
                if line.starts_with(char::is_whitespace) && !t.is_empty() {
                    m.dependencies.extend(pep508_name(t));
                } else if !t.is_empty() {
                    in_requires = false;
                }
            }
        }
    }
    m
}

fn pipfile(text: &str) -> Manifest {
    let mut m = simple("python", "Pipenv");
    if let Ok(doc) = text.parse::<toml::Table>() {
        m.dependencies = table_keys(doc.get("packages"));
        m.dev_dependencies = table_keys(doc.get("dev-packages"));
    }
    m
}

fn requirements(text: &str) -> Manifest {
    let mut m = simple("python", "pip requirements");
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with('-') {
            continue;
        }
        m.dependencies.extend(pep508_name(t));
    }
    m
}

/// Text between `<tag>` and `</tag>` for every occurrence.
fn xml_values<'a>(text: &'a str, tag: &str) -> Vec<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(after[..j].trim());
        rest = &after[j + close.len()..];
    }
    out
}

fn pom(text: &str) -> Manifest {
    let mut m = simple("java", "Maven");
    let ids = xml_values(text, "artifactId");
    // The first artifactId may be the parent's; the project's own follows
    // the parent block.
    let own = match (text.find("</parent>"), text.find("<artifactId>")) {
        (Some(p), Some(a)) if a < p => xml_values(&text[p..], "artifactId").into_iter().next(),
        _ => ids.first().copied(),
    };
    m.name = own.map(str::to_string);
    for dep in xml_values(text, "dependency") {
        let a = xml_values(dep, "artifactId").into_iter().next();
        let g = xml_values(dep, "groupId").into_iter().next();
        if let Some(a) = a {
            m.dependencies.push(match g {
                Some(g) => format!("{g}:{a}"),
                None => a.to_string(),
            });
        }
    }
    m.workspace_members = xml_values(text, "module")
        .into_iter()
        .map(str::to_string)
        .collect();
    m
}

fn gradle(text: &str) -> Manifest {
    let mut m = simple("java", "Gradle");
    for line in text.lines() {
        let t = line.trim();
        let is_dep = [
            "implementation",
            "api",
            "compileOnly",
            "runtimeOnly",
            "testImplementation",
            "kapt",
        ]
        .iter()
        .any(|k| t.starts_with(k));
        if is_dep {
            if let Some(coord) = quoted_strings(t).into_iter().next() {
                let parts: Vec<&str> = coord.split(':').collect();
                if parts.len() >= 2 {
                    let dep = format!("{}:{}", parts[0], parts[1]);
                    if t.starts_with("test") {
                        m.dev_dependencies.push(dep);
                    } else {
                        m.dependencies.push(dep);
                    }
                }
            }
        }
    }
    m
}

fn gradle_settings(text: &str) -> Manifest {
    let mut m = simple("java", "Gradle settings");
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("include") {
            for s in quoted_strings(t) {
                m.workspace_members
                    .push(s.trim_start_matches(':').replace(':', "/"));
            }
        }
        if let Some(rest) = t.strip_prefix("rootProject.name") {
            m.name = quoted_strings(rest).into_iter().next();
        }
    }
    m
}

fn gemfile(text: &str) -> Manifest {
    let mut m = simple("ruby", "Bundler");
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("gem ") {
            if let Some(name) = quoted_strings(rest).into_iter().next() {
                m.dependencies.push(name);
            }
        }
    }
    m
}

fn composer(text: &str) -> Manifest {
    let mut m = simple("php", "Composer");
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return m;
    };
    m.name = doc.get("name").and_then(|n| n.as_str()).map(str::to_string);
    m.dependencies = json_keys(doc.get("require"));
    m.dev_dependencies = json_keys(doc.get("require-dev"));
    if let Some(scripts) = doc.get("scripts").and_then(|s| s.as_object()) {
        for (k, v) in scripts {
            m.scripts
                .insert(k.clone(), v.as_str().unwrap_or("").to_string());
        }
    }
    m
}

fn mix(text: &str) -> Manifest {
    let mut m = simple("elixir", "Mix");
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("app: :") {
            m.name = Some(rest.trim_end_matches(',').trim().to_string());
        }
        if let Some(rest) = t.strip_prefix("{:") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                m.dependencies.push(name);
            }
        }
    }
    m
}

fn cmake(text: &str) -> Manifest {
    let mut m = simple("c++", "CMake");
    for line in text.lines() {
        let t = line.trim();
        let lower = t.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("project(") {
            m.name = rest.split([' ', ')']).next().map(str::to_string);
        }
        if lower.starts_with("find_package(") {
            if let Some(name) = t["find_package(".len()..].split([' ', ')']).next() {
                m.dependencies.push(name.to_string());
            }
        }
        if lower.starts_with("add_subdirectory(") {
            if let Some(name) = t["add_subdirectory(".len()..].split([' ', ')']).next() {
                m.workspace_members.push(name.to_string());
            }
        }
        if lower.starts_with("enable_testing") || lower.starts_with("add_test(") {
            m.scripts.insert("ctest".to_string(), String::new());
        }
    }
    m
}

fn makefile(text: &str) -> Manifest {
    let mut m = simple("make", "Make");
    for line in text.lines() {
        if line.starts_with(['\t', ' ', '#', '.']) {
            continue;
        }
        if let Some((target, rest)) = line.split_once(':') {
            if rest.starts_with('=') || target.contains(['$', '%', '=']) {
                continue;
            }
            for t in target.split_whitespace() {
                m.scripts.insert(t.to_string(), String::new());
            }
        }
    }
    m
}

fn pubspec(text: &str) -> Manifest {
    let mut m = simple("dart", "pub");
    let mut section = "";
    for line in text.lines() {
        if !line.starts_with(' ') {
            let t = line.trim_end();
            section = if t == "dependencies:" {
                "deps"
            } else if t == "dev_dependencies:" {
                "dev"
            } else {
                ""
            };
            if let Some(n) = t.strip_prefix("name:") {
                m.name = Some(n.trim().to_string());
            }
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 2 {
            if let Some((k, _)) = line.trim().split_once(':') {
                match section {
                    "deps" => m.dependencies.push(k.to_string()),
                    "dev" => m.dev_dependencies.push(k.to_string()),
                    _ => {}
                }
            }
        }
    }
    m
}

fn csproj(text: &str) -> Manifest {
    let mut m = simple("dotnet", "MSBuild");
    let mut rest = text;
    while let Some(i) = rest.find("<PackageReference Include=\"") {
        let after = &rest[i + "<PackageReference Include=\"".len()..];
        if let Some(end) = after.find('"') {
            m.dependencies.push(after[..end].to_string());
        }
        rest = after;
    }
    m
}
