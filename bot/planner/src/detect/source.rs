//! Where the planner reads a repository from: a local directory or an in-memory/callback listing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::detect::history::History;
use crate::PlannerError;

/// One file the source lists: a repository-relative path with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceEntry {
    pub path: String,
    /// Size in bytes when the source knows it without reading the file, so
    /// huge files are skipped before any byte is read.
    pub size: Option<u64>,
}

/// A read-only view of a repository. Two real implementations: [`LocalSource`]
/// (a checkout on disk) and [`MemorySource`] (a path list plus a reader, fed by
/// GitHub's trees/contents API or a git2 tree).
pub trait RepoSource {
    /// Every file in the repository, in any order.
    fn list(&self) -> Result<Vec<SourceEntry>, PlannerError>;
    /// Reads at most `max_bytes` of one listed file; `Ok(None)` when the file
    /// is unavailable (vanished, not a blob). The planner only calls this for
    /// files it decided to scan.
    fn read(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, PlannerError>;
    /// A short label for reports ("local:/path", "git:abc123").
    fn describe(&self) -> String;
    /// Up to `depth` past commits, newest first, where the source has git history;
    /// `None` where it has none (an export, a list of files).
    fn history(&self, depth: usize) -> Option<History> {
        let _ = depth;
        None
    }
}

/// A checkout on disk, walked with the `ignore` crate so `.gitignore`,
/// `.ignore` and `.git/info/exclude` are honoured and `.git` is never listed.
/// It opens files for reading only and never touches git metadata.
#[derive(Debug, Clone)]
pub struct LocalSource {
    root: PathBuf,
}

impl LocalSource {
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, PlannerError> {
        let root = root.into();
        if !root.is_dir() {
            return Err(PlannerError::NotADirectory(root));
        }
        Ok(Self { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl RepoSource for LocalSource {
    /// The history of the checkout's `HEAD`, when `root` is the top of a git work tree.
    fn history(&self, depth: usize) -> Option<History> {
        let repo = git2::Repository::open(&self.root).ok()?;
        let head = repo.head().ok()?.peel_to_commit().ok()?.id();
        History::from_git(&repo, head, depth).ok()
    }

    fn list(&self) -> Result<Vec<SourceEntry>, PlannerError> {
        let walker = ignore::WalkBuilder::new(&self.root)
            .hidden(false)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(false)
            .parents(false)
            .follow_links(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        let mut out = Vec::new();
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                // Unreadable sub-trees are skipped rather than failing the plan.
                Err(_) => continue,
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&self.root) else {
                continue;
            };
            let Some(path) = rel_to_slash(rel) else {
                continue;
            };
            let size = entry.metadata().ok().map(|m| m.len());
            out.push(SourceEntry { path, size });
        }
        Ok(out)
    }

    fn read(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, PlannerError> {
        if path.split('/').any(|c| c == ".." || c.is_empty()) {
            return Err(PlannerError::BadPath(path.to_string()));
        }
        let full = self.root.join(path);
        let file = match File::open(&full) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(PlannerError::Read {
                    path: path.to_string(),
                    source: e,
                })
            }
        };
        let mut buf = Vec::new();
        file.take(max_bytes)
            .read_to_end(&mut buf)
            .map_err(|e| PlannerError::Read {
                path: path.to_string(),
                source: e,
            })?;
        Ok(Some(buf))
    }

    fn describe(&self) -> String {
        format!("local:{}", self.root.display())
    }
}

fn rel_to_slash(rel: &Path) -> Option<String> {
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_str()?.to_string()),
            _ => return None,
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("/"))
    }
}

type Reader<'a> = Box<dyn Fn(&str) -> Option<Vec<u8>> + 'a>;

/// A repository given as paths plus a reader callback. Contents may be held
/// in memory ([`MemorySource::from_files`]) or fetched lazily by the reader
/// (a GitHub contents call, a git2 blob lookup).
pub struct MemorySource<'a> {
    label: String,
    entries: Vec<SourceEntry>,
    reader: Reader<'a>,
}

impl std::fmt::Debug for MemorySource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemorySource")
            .field("label", &self.label)
            .field("entries", &self.entries.len())
            .finish()
    }
}

impl<'a> MemorySource<'a> {
    /// Paths plus a lazy reader. The reader returns the whole file; the
    /// planner truncates to its per-file budget.
    pub fn new(
        label: impl Into<String>,
        entries: Vec<SourceEntry>,
        reader: impl Fn(&str) -> Option<Vec<u8>> + 'a,
    ) -> Self {
        Self {
            label: label.into(),
            entries,
            reader: Box::new(reader),
        }
    }

    /// A fully in-memory repository (tests, small API payloads).
    pub fn from_files<P, C>(
        label: impl Into<String>,
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Self
    where
        P: Into<String>,
        C: Into<Vec<u8>>,
    {
        let map: BTreeMap<String, Vec<u8>> = files
            .into_iter()
            .map(|(p, c)| (p.into(), c.into()))
            .collect();
        let entries = map
            .iter()
            .map(|(p, c)| SourceEntry {
                path: p.clone(),
                size: Some(c.len() as u64),
            })
            .collect();
        Self::new(label, entries, move |p| map.get(p).cloned())
    }

    /// The tree of one commit, read through git2 without a checkout: blobs
    /// are looked up lazily, so only the files the planner scans are inflated.
    pub fn from_git_tree(
        repo: &'a git2::Repository,
        tree: &git2::Tree<'_>,
    ) -> Result<Self, PlannerError> {
        let mut entries = Vec::new();
        let mut ids: BTreeMap<String, git2::Oid> = BTreeMap::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() != Some(git2::ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            // Symlinks (0o120000) and submodules are not source files.
            if entry.filemode() == 0o120000 {
                return git2::TreeWalkResult::Ok;
            }
            let Ok(name) = entry.name() else {
                return git2::TreeWalkResult::Ok;
            };
            let path = format!("{dir}{name}");
            ids.insert(path.clone(), entry.id());
            entries.push(SourceEntry { path, size: None });
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| PlannerError::Git(e.message().to_string()))?;
        // Sizes come from the object database header, which is cheap
        // compared with inflating the blob.
        let odb = repo
            .odb()
            .map_err(|e| PlannerError::Git(e.message().to_string()))?;
        for e in &mut entries {
            if let Some(id) = ids.get(&e.path) {
                if let Ok((size, _)) = odb.read_header(*id) {
                    e.size = Some(size as u64);
                }
            }
        }
        let label = format!("git:{}", tree.id());
        Ok(Self::new(label, entries, move |p| {
            let id = ids.get(p)?;
            let blob = repo.find_blob(*id).ok()?;
            Some(blob.content().to_vec())
        }))
    }
}

impl RepoSource for MemorySource<'_> {
    fn list(&self) -> Result<Vec<SourceEntry>, PlannerError> {
        Ok(self.entries.clone())
    }

    fn read(&self, path: &str, max_bytes: u64) -> Result<Option<Vec<u8>>, PlannerError> {
        Ok((self.reader)(path).map(|mut b| {
            b.truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
            b
        }))
    }

    fn describe(&self) -> String {
        self.label.clone()
    }
}
