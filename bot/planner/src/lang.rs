//! Path classification: language by extension, vendored and binary files, tests, docs.

/// The language a file is written in, by extension or well-known name.
pub fn language_of(path: &str) -> Option<&'static str> {
    let name = file_name(path);
    match name {
        "Makefile" | "makefile" | "GNUmakefile" => return Some("Makefile"),
        "Dockerfile" => return Some("Dockerfile"),
        "CMakeLists.txt" => return Some("CMake"),
        "Gemfile" | "Rakefile" => return Some("Ruby"),
        _ => {}
    }
    let ext = extension(name)?;
    let lang = match ext.as_str() {
        "rs" => "Rust",
        "go" => "Go",
        "py" | "pyi" => "Python",
        "js" | "mjs" | "cjs" | "jsx" => "JavaScript",
        "ts" | "tsx" | "mts" | "cts" => "TypeScript",
        "java" => "Java",
        "kt" | "kts" => "Kotlin",
        "scala" | "sc" => "Scala",
        "rb" | "rake" => "Ruby",
        "php" => "PHP",
        "ex" | "exs" => "Elixir",
        "erl" | "hrl" => "Erlang",
        "c" | "h" => "C",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "C++",
        "cs" => "C#",
        "fs" | "fsx" => "F#",
        "swift" => "Swift",
        "m" | "mm" => "Objective-C",
        "dart" => "Dart",
        "lua" => "Lua",
        "zig" => "Zig",
        "hs" => "Haskell",
        "ml" | "mli" => "OCaml",
        "clj" | "cljs" | "cljc" => "Clojure",
        "vue" => "Vue",
        "svelte" => "Svelte",
        "sh" | "bash" | "zsh" => "Shell",
        "ps1" => "PowerShell",
        "sql" => "SQL",
        "html" | "htm" => "HTML",
        "css" | "scss" | "sass" | "less" => "CSS",
        "md" | "markdown" | "rst" | "adoc" => "Markdown",
        "toml" => "TOML",
        "yml" | "yaml" => "YAML",
        "json" | "jsonc" => "JSON",
        "xml" => "XML",
        "proto" => "Protobuf",
        "graphql" | "gql" => "GraphQL",
        "tf" | "hcl" => "HCL",
        "nix" => "Nix",
        "r" => "R",
        "jl" => "Julia",
        "pl" | "pm" => "Perl",
        _ => return None,
    };
    Some(lang)
}

/// True for programming languages (not data, markup or configuration), the
/// ones that count toward "languages" and module boundaries.
pub fn is_code_language(lang: &str) -> bool {
    !matches!(
        lang,
        "Markdown"
            | "TOML"
            | "YAML"
            | "JSON"
            | "XML"
            | "HTML"
            | "CSS"
            | "Makefile"
            | "Dockerfile"
            | "CMake"
    )
}

pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

pub fn parent_dir(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[..i],
        None => "",
    }
}

/// The lowercase extension without the dot.
pub fn extension(name: &str) -> Option<String> {
    let i = name.rfind('.')?;
    if i == 0 {
        return None;
    }
    Some(name[i + 1..].to_ascii_lowercase())
}

/// The file name without its last extension.
pub fn stem(path: &str) -> &str {
    let name = file_name(path);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}

/// Joins a directory and a relative path, as repository paths do.
pub fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Directories whose contents are third-party, generated or caches: listed
/// nowhere and never read.
pub fn is_vendored_dir(component: &str) -> bool {
    matches!(
        component,
        ".git"
            | "node_modules"
            | "vendor"
            | "third_party"
            | "third-party"
            | "target"
            | "dist"
            | ".venv"
            | "venv"
            | "__pycache__"
            | ".tox"
            | ".nox"
            | ".mypy_cache"
            | ".pytest_cache"
            | ".ruff_cache"
            | ".next"
            | ".nuxt"
            | ".svelte-kit"
            | "bower_components"
            | "Pods"
            | ".gradle"
            | ".idea"
            | "coverage"
            | ".cache"
            | ".terraform"
            | "_build"
            | "deps"
            | ".dart_tool"
            | ".eggs"
    )
}

/// Extensions of files that are never text worth reading.
pub fn is_binary_ext(ext: &str) -> bool {
    matches!(
        ext,
        "png"
            | "jpg"
            | "jpeg"
            | "gif"
            | "bmp"
            | "ico"
            | "icns"
            | "webp"
            | "svg"
            | "pdf"
            | "zip"
            | "gz"
            | "tgz"
            | "bz2"
            | "xz"
            | "zst"
            | "7z"
            | "rar"
            | "tar"
            | "jar"
            | "war"
            | "class"
            | "so"
            | "dylib"
            | "dll"
            | "exe"
            | "o"
            | "a"
            | "lib"
            | "obj"
            | "bin"
            | "dat"
            | "db"
            | "sqlite"
            | "woff"
            | "woff2"
            | "ttf"
            | "otf"
            | "eot"
            | "mp3"
            | "mp4"
            | "wav"
            | "ogg"
            | "webm"
            | "mov"
            | "avi"
            | "wasm"
            | "pyc"
            | "pyo"
            | "pdb"
            | "psd"
            | "xcf"
            | "parquet"
            | "npy"
            | "pkl"
            | "onnx"
            | "pt"
            | "ckpt"
            | "safetensors"
    )
}

/// Lockfiles and minified bundles: listed but not read, since they are big
/// and say nothing a manifest does not.
pub fn is_unread_text(name: &str) -> bool {
    matches!(
        name,
        "Cargo.lock"
            | "package-lock.json"
            | "yarn.lock"
            | "pnpm-lock.yaml"
            | "poetry.lock"
            | "Pipfile.lock"
            | "composer.lock"
            | "Gemfile.lock"
            | "go.sum"
            | "mix.lock"
            | "uv.lock"
            | "bun.lockb"
    ) || name.ends_with(".min.js")
        || name.ends_with(".min.css")
        || name.ends_with(".map")
}

/// True when the path looks like a test by the conventions of its ecosystem.
pub fn is_test_path(path: &str) -> bool {
    let name = file_name(path);
    let lower = path.to_ascii_lowercase();
    let in_test_dir = lower.split('/').any(|c| {
        matches!(
            c,
            "test" | "tests" | "__tests__" | "spec" | "specs" | "testing" | "testdata" | "e2e"
        )
    }) || lower.contains("/src/test/");
    in_test_dir
        || name.ends_with("_test.go")
        || name.ends_with("_test.rs")
        // In-crate Rust test modules: `tests.rs`, `tests_*.rs`, `*_tests.rs`.
        || name == "tests.rs"
        || (name.starts_with("tests_") && name.ends_with(".rs"))
        || name.ends_with("_tests.rs")
        || name.ends_with("_spec.rb")
        || name.ends_with("_test.rb")
        || name.ends_with("_test.py")
        || name.ends_with("_test.exs")
        || (name.starts_with("test_") && name.ends_with(".py"))
        || name == "conftest.py"
        || name.contains(".test.")
        || name.contains(".spec.")
        || name.ends_with("Test.java")
        || name.ends_with("Tests.java")
        || name.ends_with("Test.kt")
        || name.ends_with("Tests.cs")
        || name.ends_with("Test.php")
}

/// Documentation, changelogs and licences: ranked lower than code because a
/// plan's edits land in code first.
pub fn is_doc_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = file_name(&lower);
    lower.starts_with("docs/")
        || lower.starts_with("doc/")
        || lower.contains("/docs/")
        || matches!(
            extension(name).as_deref(),
            Some("md" | "rst" | "txt" | "adoc" | "markdown")
        )
        || name.starts_with("license")
        || name.starts_with("changelog")
}

/// Paths that touch authentication, secrets or cryptography.
pub fn is_security_sensitive(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "auth",
        "login",
        "session",
        "token",
        "crypto",
        "secret",
        "permission",
        "password",
        "oauth",
        "jwt",
        "acl",
        "security",
        "csrf",
        "signature",
        "credential",
        "webhook",
        "sandbox",
        "tls",
    ];
    WORDS.iter().any(|w| lower.contains(w))
}

/// Paths of schema migrations.
pub fn is_migration_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower
        .split('/')
        .any(|c| matches!(c, "migrations" | "migrate" | "migration" | "alembic"))
}

/// CI configuration files and the system they belong to.
pub fn ci_system(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    if lower.starts_with(".github/workflows/")
        && (lower.ends_with(".yml") || lower.ends_with(".yaml"))
    {
        return Some("GitHub Actions");
    }
    match lower.as_str() {
        ".gitlab-ci.yml" => Some("GitLab CI"),
        ".circleci/config.yml" => Some("CircleCI"),
        ".travis.yml" => Some("Travis CI"),
        "azure-pipelines.yml" => Some("Azure Pipelines"),
        "jenkinsfile" => Some("Jenkins"),
        "bitbucket-pipelines.yml" => Some("Bitbucket Pipelines"),
        ".drone.yml" => Some("Drone"),
        "appveyor.yml" | ".appveyor.yml" => Some("AppVeyor"),
        ".cirrus.yml" => Some("Cirrus CI"),
        "buildkite.yml" => Some("Buildkite"),
        _ if lower.starts_with(".buildkite/") && lower.ends_with(".yml") => Some("Buildkite"),
        _ if lower.starts_with(".woodpecker") => Some("Woodpecker"),
        _ => None,
    }
}
