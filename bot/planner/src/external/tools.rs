//! The planner's read-only tools (read_file, list_dir, grep, glob, find_symbol, repo_map) over one commit's git objects.
//!
//! Nothing here can write: every tool reads blobs of the planned commit
//! through [`CommitTree`]. Paths are checked before any lookup, so a call
//! for `../x`, `/etc/passwd` or `.git/config` is refused by name rather
//! than resolved. Every answer is clipped to the per-call budget and says
//! so, letting the model narrow the call instead of silently losing text.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::detect::commit_tree::CommitTree;
use crate::detect::symbols::{definitions, Symbol};
use crate::lang::{is_binary_ext, language_of};
use crate::RepoSource;

/// Files larger than this are not searched or indexed (still listed and readable in part).
const MAX_SCAN_BYTES: u64 = 256 * 1024;
/// grep and glob stop listing after this many hits.
const MAX_HITS: usize = 200;
/// One grep hit shows at most this much of its line.
const MAX_HIT_CHARS: usize = 200;
/// Searching stops after reading this much, so grep on a huge tree ends.
const MAX_SEARCH_BYTES: u64 = 64 * 1024 * 1024;
/// `read_file` inflates at most this much of one blob (a line range deep in a
/// generated file still works; a multi-gigabyte blob cannot fill memory).
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// The tool names, as the model calls them.
pub(crate) const TOOL_NAMES: [&str; 6] = [
    "read_file",
    "list_dir",
    "grep",
    "glob",
    "find_symbol",
    "repo_map",
];

/// The `tools` array of a chat-completions request (OpenAI function tools).
pub(crate) fn definitions_json() -> Value {
    let path =
        json!({"type": "string", "description": "Repository-relative path with / separators"});
    json!([
        function("read_file", "Read a file of the planned commit, optionally a line range (1-based, inclusive).", json!({
            "type": "object",
            "properties": {
                "path": path,
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1}
            },
            "required": ["path"],
            "additionalProperties": false
        })),
        function("list_dir", "List the files and directories directly inside a directory (\"\" or omitted for the root).", json!({
            "type": "object",
            "properties": {"path": path},
            "additionalProperties": false
        })),
        function("grep", "Search file contents with a regular expression (Rust regex syntax); optional glob limits the files searched.", json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "glob": {"type": "string", "description": "e.g. src/**/*.rs"},
                "case_insensitive": {"type": "boolean"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })),
        function("glob", "List the files whose paths match a glob such as **/*.rs or src/cli/*.", json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}},
            "required": ["pattern"],
            "additionalProperties": false
        })),
        function("find_symbol", "Find where a function, type, module, command or --flag is defined (exact name first, then names containing it).", json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": false
        })),
        function("repo_map", "The repository map: languages, manifests, modules, commands, CI and the files ranked for the request.", json!({
            "type": "object",
            "properties": {},
            "additionalProperties": false
        })),
    ])
}

fn function(name: &str, description: &str, parameters: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "description": description, "parameters": parameters}})
}

/// What one call gave back: the text for the model, and whether it was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolAnswer {
    pub text: String,
    pub error: Option<String>,
}

impl ToolAnswer {
    fn ok(text: String) -> Self {
        Self { text, error: None }
    }

    fn refused(reason: String) -> Self {
        Self {
            text: format!("error: {reason}"),
            error: Some(reason),
        }
    }
}

/// The tools bound to one commit and one repository map.
pub(crate) struct Toolbox<'a> {
    tree: &'a CommitTree,
    repo_map: String,
    max_result_bytes: usize,
    symbols: OnceLock<Vec<(String, Symbol)>>,
}

#[derive(Deserialize)]
struct ReadArgs {
    path: String,
    start_line: Option<usize>,
    end_line: Option<usize>,
}

#[derive(Deserialize)]
struct DirArgs {
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
struct GrepArgs {
    pattern: String,
    glob: Option<String>,
    #[serde(default)]
    case_insensitive: bool,
}

#[derive(Deserialize)]
struct GlobArgs {
    pattern: String,
}

#[derive(Deserialize)]
struct SymbolArgs {
    name: String,
}

fn args<T: for<'de> Deserialize<'de>>(tool: &str, raw: &str) -> Result<T, ToolAnswer> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    serde_json::from_str(raw).map_err(|e| {
        ToolAnswer::refused(format!(
            "{tool}: the arguments are not valid JSON for this tool ({e})"
        ))
    })
}

/// A repository-relative path, or why it is refused. `.git` is refused
/// too: the tree holds no such entry, and the model should hear why.
pub(crate) fn checked_path(raw: &str) -> Result<String, String> {
    let trimmed = raw.trim().trim_start_matches("./").trim_end_matches('/');
    if trimmed.starts_with('/') || trimmed.contains('\\') || trimmed.contains(':') {
        return Err(format!(
            "{raw:?} is outside the repository; use a repository-relative path"
        ));
    }
    let mut parts = Vec::new();
    for part in trimmed.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(format!(
                    "{raw:?} is outside the repository; use a repository-relative path"
                ))
            }
            ".git" => return Err(format!("{raw:?} is git metadata, which no tool reads")),
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

impl<'a> Toolbox<'a> {
    pub(crate) fn new(tree: &'a CommitTree, repo_map: String, max_result_bytes: usize) -> Self {
        Self {
            tree,
            repo_map,
            max_result_bytes,
            symbols: OnceLock::new(),
        }
    }

    /// Runs one call. Unknown tools and bad arguments are answers, not
    /// failures: the model reads the refusal and tries again.
    pub(crate) fn call(&self, name: &str, arguments: &str) -> ToolAnswer {
        let answer = match name {
            "read_file" => args(name, arguments).map(|a| self.read_file(a)),
            "list_dir" => args(name, arguments).map(|a| self.list_dir(a)),
            "grep" => args(name, arguments).map(|a| self.grep(a)),
            "glob" => args(name, arguments).map(|a| self.glob(a)),
            "find_symbol" => args(name, arguments).map(|a| self.find_symbol(a)),
            "repo_map" => Ok(ToolAnswer::ok(self.repo_map.clone())),
            other => Err(ToolAnswer::refused(format!(
                "there is no tool {other:?}; the tools are {}",
                TOOL_NAMES.join(", ")
            ))),
        };
        let mut answer = answer.unwrap_or_else(|refusal| refusal);
        answer.text = clip(answer.text, self.max_result_bytes);
        answer
    }

    fn read_file(&self, a: ReadArgs) -> ToolAnswer {
        let path = match checked_path(&a.path) {
            Ok(p) if p.is_empty() => {
                return ToolAnswer::refused("read_file needs a file path".to_owned())
            }
            Ok(p) => p,
            Err(reason) => return ToolAnswer::refused(reason),
        };
        if !self.tree.contains(&path) {
            let hint = if self.tree.is_dir(&path) {
                "it is a directory; use list_dir"
            } else {
                "use glob or list_dir to find the right path"
            };
            return ToolAnswer::refused(format!("{path} is not a file in this commit; {hint}"));
        }
        let bytes = match self.tree.read(&path, MAX_READ_BYTES) {
            Ok(Some(b)) => b,
            Ok(None) => return ToolAnswer::refused(format!("{path} could not be read")),
            Err(e) => return ToolAnswer::refused(format!("{path}: {e}")),
        };
        if bytes.contains(&0)
            || crate::lang::extension(crate::lang::file_name(&path))
                .is_some_and(|e| is_binary_ext(&e))
        {
            return ToolAnswer::refused(format!("{path} is a binary file ({} bytes)", bytes.len()));
        }
        let text = String::from_utf8_lossy(&bytes);
        let total = text.lines().count();
        let start = a.start_line.unwrap_or(1).max(1);
        let end = a.end_line.unwrap_or(total).min(total);
        if start > total.max(1) {
            return ToolAnswer::refused(format!(
                "{path} has {total} lines; start_line {start} is past the end"
            ));
        }
        if end < start && total > 0 {
            return ToolAnswer::refused(format!(
                "end_line {end} is before start_line {start}; ask for start_line <= end_line"
            ));
        }
        let mut out = format!("{path} (lines {start}-{end} of {total})\n");
        for (i, line) in text
            .lines()
            .enumerate()
            .skip(start - 1)
            .take(end + 1 - start)
        {
            out.push_str(&format!("{:>5}  {line}\n", i + 1));
        }
        ToolAnswer::ok(out)
    }

    fn list_dir(&self, a: DirArgs) -> ToolAnswer {
        let dir = match checked_path(a.path.as_deref().unwrap_or("")) {
            Ok(p) => p,
            Err(reason) => return ToolAnswer::refused(reason),
        };
        if !self.tree.is_dir(&dir) {
            return ToolAnswer::refused(format!("{dir} is not a directory in this commit"));
        }
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut dirs = std::collections::BTreeSet::new();
        let mut files = Vec::new();
        for e in self.tree.entries() {
            let Some(rest) = e.path.strip_prefix(&prefix) else {
                continue;
            };
            match rest.split_once('/') {
                Some((sub, _)) => {
                    dirs.insert(format!("{sub}/"));
                }
                None => files.push(format!("{rest} ({} bytes)", e.size.unwrap_or(0))),
            }
        }
        files.sort();
        let shown = if dir.is_empty() { "." } else { dir.as_str() };
        let mut out = format!(
            "{shown}: {} directories, {} files\n",
            dirs.len(),
            files.len()
        );
        for line in dirs.into_iter().chain(files) {
            out.push_str(&line);
            out.push('\n');
        }
        ToolAnswer::ok(out)
    }

    fn matcher(pattern: &str) -> Result<globset::GlobMatcher, ToolAnswer> {
        globset::GlobBuilder::new(pattern.trim())
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher())
            .map_err(|e| ToolAnswer::refused(format!("{pattern:?} is not a valid glob ({e})")))
    }

    fn glob(&self, a: GlobArgs) -> ToolAnswer {
        let m = match Self::matcher(&a.pattern) {
            Ok(m) => m,
            Err(refusal) => return refusal,
        };
        let hits: Vec<&str> = self
            .tree
            .entries()
            .iter()
            .map(|e| e.path.as_str())
            .filter(|p| m.is_match(p))
            .collect();
        let mut out = format!("{} files match {}\n", hits.len(), a.pattern);
        for p in hits.iter().take(MAX_HITS) {
            out.push_str(p);
            out.push('\n');
        }
        if hits.len() > MAX_HITS {
            out.push_str(&format!(
                "… {} more; narrow the pattern\n",
                hits.len() - MAX_HITS
            ));
        }
        ToolAnswer::ok(out)
    }

    /// Text files worth searching, in path order.
    fn searchable(&self) -> impl Iterator<Item = &crate::SourceEntry> {
        self.tree.entries().iter().filter(|e| {
            e.size.is_some_and(|s| s <= MAX_SCAN_BYTES)
                && !crate::lang::extension(crate::lang::file_name(&e.path))
                    .is_some_and(|x| is_binary_ext(&x))
        })
    }

    fn grep(&self, a: GrepArgs) -> ToolAnswer {
        let re = match regex::RegexBuilder::new(&a.pattern)
            .case_insensitive(a.case_insensitive)
            .size_limit(1 << 20)
            .build()
        {
            Ok(re) => re,
            Err(e) => {
                return ToolAnswer::refused(format!(
                    "{:?} is not a valid regular expression ({e})",
                    a.pattern
                ))
            }
        };
        let only = match a.glob.as_deref().map(Self::matcher).transpose() {
            Ok(m) => m,
            Err(refusal) => return refusal,
        };
        let (mut hits, mut count, mut read) = (Vec::new(), 0usize, 0u64);
        let mut files = 0usize;
        for e in self.searchable() {
            if only.as_ref().is_some_and(|m| !m.is_match(&e.path)) {
                continue;
            }
            if read > MAX_SEARCH_BYTES {
                hits.push("… search stopped: too much text; narrow it with glob".to_owned());
                break;
            }
            let Ok(Some(bytes)) = self.tree.read(&e.path, MAX_SCAN_BYTES) else {
                continue;
            };
            read += bytes.len() as u64;
            if bytes.contains(&0) {
                continue;
            }
            files += 1;
            let text = String::from_utf8_lossy(&bytes);
            for (i, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    count += 1;
                    if hits.len() < MAX_HITS {
                        let shown: String = line.trim().chars().take(MAX_HIT_CHARS).collect();
                        hits.push(format!("{}:{}: {shown}", e.path, i + 1));
                    }
                }
            }
        }
        let mut out = format!("{count} matching lines in {files} files searched\n");
        for h in &hits {
            out.push_str(h);
            out.push('\n');
        }
        if count > MAX_HITS {
            out.push_str(&format!(
                "… {} more; narrow the pattern or the glob\n",
                count - MAX_HITS
            ));
        }
        ToolAnswer::ok(out)
    }

    /// Every definition of the commit, built on first use.
    fn symbol_index(&self) -> &[(String, Symbol)] {
        self.symbols.get_or_init(|| {
            let mut all = Vec::new();
            for e in self.searchable() {
                if language_of(&e.path).is_none() {
                    continue;
                }
                let Ok(Some(bytes)) = self.tree.read(&e.path, MAX_SCAN_BYTES) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&bytes);
                all.extend(
                    definitions(&e.path, &text)
                        .into_iter()
                        .map(|s| (e.path.clone(), s)),
                );
            }
            all
        })
    }

    fn find_symbol(&self, a: SymbolArgs) -> ToolAnswer {
        let wanted = a.name.trim();
        if wanted.is_empty() {
            return ToolAnswer::refused("find_symbol needs a name".to_owned());
        }
        let lower = wanted.to_lowercase();
        let index = self.symbol_index();
        let exact: Vec<&(String, Symbol)> = index
            .iter()
            .filter(|(_, s)| s.name.to_lowercase() == lower)
            .collect();
        let (label, hits) = if exact.is_empty() {
            let near: Vec<&(String, Symbol)> = index
                .iter()
                .filter(|(_, s)| s.name.to_lowercase().contains(&lower))
                .collect();
            ("names containing", near)
        } else {
            ("definitions of", exact)
        };
        if hits.is_empty() {
            return ToolAnswer::ok(format!("no definition named like {wanted:?}; try grep"));
        }
        let mut out = format!("{} {label} {wanted:?}\n", hits.len());
        for (path, s) in hits.iter().take(MAX_HITS) {
            out.push_str(&format!("{path}:{} {} {}\n", s.line, s.kind, s.name));
        }
        ToolAnswer::ok(out)
    }
}

/// At most `max` bytes of `text`, cut at a line end when one is near, with a note.
fn clip(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text[..end]
        .rfind('\n')
        .filter(|i| *i > end / 2)
        .map_or(end, |i| i + 1);
    format!(
        "{}… [clipped: {} more bytes; ask for a line range or narrow the search]\n",
        &text[..cut],
        text.len() - cut
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, CommitTree) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\nfn b() {}\n").unwrap();
        std::fs::write(dir.path().join("logo.png"), [0u8, 1, 2]).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(std::path::Path::new("src/a.rs")).unwrap();
        index.add_path(std::path::Path::new("logo.png")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("T", "t@example.com").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[])
            .unwrap();
        drop(tree);
        let t = CommitTree::open(dir.path(), "HEAD").unwrap();
        (dir, t)
    }

    #[test]
    fn hostile_arguments_are_refused_by_name_and_never_panic() {
        let (_dir, t) = tree();
        let tools = Toolbox::new(&t, "map".into(), 4096);
        let refused = [
            (
                "read_file",
                r#"{"path":"src/a.rs","start_line":18446744073709551615}"#,
            ),
            (
                "read_file",
                r#"{"path":"src/a.rs","start_line":2,"end_line":1}"#,
            ),
            ("read_file", r#"{"path":"src/a.rs","start_line":-1}"#),
            ("read_file", r#"{"path":"logo.png"}"#),
            ("read_file", r#"{"path":"src"}"#),
            ("read_file", r#"{"path":"C:\\Windows\\win.ini"}"#),
            ("read_file", "not json"),
            ("list_dir", r#"{"path":"../.."}"#),
            ("grep", r#"{"pattern":"(unclosed"}"#),
            ("grep", r#"{"pattern":"a","glob":"[z-a]"}"#),
            ("glob", r#"{"pattern":"{a,"}"#),
            ("find_symbol", r#"{"name":"   "}"#),
            ("rm_rf", "{}"),
        ];
        for (tool, args) in refused {
            let answer = tools.call(tool, args);
            assert!(answer.error.is_some(), "{tool} {args}: {answer:?}");
            assert!(answer.text.starts_with("error: "), "{answer:?}");
        }
        let ok = tools.call("read_file", r#"{"path":"./src/a.rs","start_line":2}"#);
        assert_eq!(ok.error, None);
        assert!(ok.text.contains("    2  fn b() {}"), "{}", ok.text);
        assert!(tools.call("list_dir", "").text.contains("src/"));
        assert!(tools
            .call("find_symbol", r#"{"name":"a"}"#)
            .text
            .contains("src/a.rs:1 fn a"));
    }
}
