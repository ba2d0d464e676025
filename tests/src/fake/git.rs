//! Real bare git repositories behind the fake: seeding commits, object reads, and `git http-backend`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use axum::body::Body;
use axum::http::{HeaderMap, Response, StatusCode};
use git2::{ObjectType, Oid, Repository, Signature};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Errors of the git side of the fake, naming the repository or object involved.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("git repository {path}: {source}")]
    Repo { path: PathBuf, source: git2::Error },
    #[error("ref or object {what} not found in {path}")]
    NotFound { what: String, path: PathBuf },
    #[error("git http-backend: {0}")]
    Backend(String),
}

fn open(path: &Path) -> Result<Repository, GitError> {
    Repository::open_bare(path).map_err(|source| GitError::Repo {
        path: path.to_path_buf(),
        source,
    })
}

fn wrap(path: &Path) -> impl Fn(git2::Error) -> GitError + '_ {
    move |source| GitError::Repo {
        path: path.to_path_buf(),
        source,
    }
}

/// Creates a bare repository whose `default_branch` holds one commit with `README.md`.
pub fn init_bare(path: &Path, default_branch: &str, readme: &str) -> Result<String, GitError> {
    let repo = Repository::init_bare(path).map_err(wrap(path))?;
    repo.set_head(&format!("refs/heads/{default_branch}"))
        .map_err(wrap(path))?;
    drop(repo);
    commit_files(
        path,
        default_branch,
        &[("README.md", Some(readme.as_bytes()))],
        "Initial commit",
    )
}

/// Commits file changes on `branch` (created if missing); `None` content deletes the path.
pub fn commit_files(
    path: &Path,
    branch: &str,
    files: &[(&str, Option<&[u8]>)],
    message: &str,
) -> Result<String, GitError> {
    let repo = open(path)?;
    let refname = format!("refs/heads/{branch}");
    let parent = repo
        .find_reference(&refname)
        .ok()
        .and_then(|r| r.peel_to_commit().ok());
    let mut index = git2::Index::new().map_err(wrap(path))?;
    if let Some(parent) = &parent {
        let tree = parent.tree().map_err(wrap(path))?;
        index.read_tree(&tree).map_err(wrap(path))?;
    }
    for (file, content) in files {
        match content {
            Some(bytes) => {
                let oid = repo.blob(bytes).map_err(wrap(path))?;
                let entry = git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: 0o100644,
                    uid: 0,
                    gid: 0,
                    file_size: bytes.len() as u32,
                    id: oid,
                    flags: 0,
                    flags_extended: 0,
                    path: file.as_bytes().to_vec(),
                };
                index.add(&entry).map_err(wrap(path))?;
            }
            None => index.remove_path(Path::new(file)).map_err(wrap(path))?,
        }
    }
    let tree_id = index.write_tree_to(&repo).map_err(wrap(path))?;
    let tree = repo.find_tree(tree_id).map_err(wrap(path))?;
    let sig = Signature::now("Fake GitHub", "fake@github.invalid").map_err(wrap(path))?;
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    let oid = repo
        .commit(Some(&refname), &sig, &sig, message, &tree, &parents)
        .map_err(wrap(path))?;
    Ok(oid.to_string())
}

/// Resolves a branch, tag, full ref or commit sha to a commit id.
pub fn resolve_commit(path: &Path, rev: &str) -> Result<String, GitError> {
    let repo = open(path)?;
    let candidates = [
        format!("refs/heads/{rev}"),
        format!("refs/tags/{rev}"),
        rev.to_string(),
    ];
    for candidate in candidates {
        if let Ok(obj) = repo.revparse_single(&candidate) {
            if let Ok(commit) = obj.peel_to_commit() {
                return Ok(commit.id().to_string());
            }
        }
    }
    Err(GitError::NotFound {
        what: rev.to_string(),
        path: path.to_path_buf(),
    })
}

/// What `head` changes against `base`, file by file, as a pull request's files list
/// shows it: status, added and deleted lines, and a unified patch of the added lines.
pub fn changed_files(
    path: &Path,
    base: &str,
    head: &str,
) -> Result<Vec<super::model::PullFile>, GitError> {
    let repo = open(path)?;
    let tree = |sha: &str| -> Result<git2::Tree<'_>, GitError> {
        let oid = git2::Oid::from_str(sha).map_err(wrap(path))?;
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(wrap(path))
    };
    let (old, new) = (tree(base)?, tree(head)?);
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .map_err(wrap(path))?;
    let mut files = Vec::new();
    for delta in diff.deltas() {
        let file = delta.new_file().path().or_else(|| delta.old_file().path());
        let name = file
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let status = match delta.status() {
            git2::Delta::Added => "added",
            git2::Delta::Deleted => "removed",
            _ => "modified",
        };
        let content = repo
            .find_blob(delta.new_file().id())
            .ok()
            .map(|b| String::from_utf8_lossy(b.content()).into_owned());
        let lines = content.as_deref().map_or(0, |c| c.lines().count() as u64);
        files.push(super::model::PullFile {
            filename: name,
            status: status.into(),
            additions: lines,
            deletions: u64::from(status == "removed"),
            patch: content.map(|c| {
                let body: Vec<String> = c.lines().map(|l| format!("+{l}")).collect();
                format!("@@ -0,0 +1,{lines} @@\n{}", body.join("\n"))
            }),
        });
    }
    Ok(files)
}

/// The sha a ref (`heads/main`) points at, if it exists.
pub fn ref_target(path: &Path, short_ref: &str) -> Result<Option<String>, GitError> {
    let repo = open(path)?;
    let found = repo
        .find_reference(&format!("refs/{short_ref}"))
        .ok()
        .and_then(|r| r.target());
    Ok(found.map(|o| o.to_string()))
}

/// Moves a branch; without `force` the new commit must descend from the current tip.
pub fn update_ref(
    path: &Path,
    short_ref: &str,
    sha: &str,
    force: bool,
) -> Result<UpdateOutcome, GitError> {
    let repo = open(path)?;
    let refname = format!("refs/{short_ref}");
    let Ok(new) = Oid::from_str(sha) else {
        return Ok(UpdateOutcome::UnknownObject);
    };
    if repo.find_commit(new).is_err() {
        return Ok(UpdateOutcome::UnknownObject);
    }
    let Some(current) = repo.find_reference(&refname).ok().and_then(|r| r.target()) else {
        return Ok(UpdateOutcome::NoSuchRef);
    };
    let fast_forward =
        current == new || repo.graph_descendant_of(new, current).map_err(wrap(path))?;
    if !fast_forward && !force {
        return Ok(UpdateOutcome::NotFastForward);
    }
    repo.reference_matching(&refname, new, true, current, "fake github: update ref")
        .map_err(wrap(path))?;
    Ok(UpdateOutcome::Updated)
}

/// Merges commit `head` into `branch` as GitHub's merge button does: a real three-way
/// merge, committed as a merge commit (two parents) or a squash (one parent, `branch`'s
/// tip). `None` when the merge conflicts; nothing moves then.
pub fn merge_into(
    path: &Path,
    branch: &str,
    head: &str,
    message: &str,
    squash: bool,
) -> Result<Option<String>, GitError> {
    let repo = open(path)?;
    let refname = format!("refs/heads/{branch}");
    let base = repo
        .find_reference(&refname)
        .and_then(|r| r.peel_to_commit())
        .map_err(wrap(path))?;
    let head = Oid::from_str(head)
        .and_then(|oid| repo.find_commit(oid))
        .map_err(wrap(path))?;
    let mut index = repo.merge_commits(&base, &head, None).map_err(wrap(path))?;
    if index.has_conflicts() {
        return Ok(None);
    }
    let tree = index.write_tree_to(&repo).map_err(wrap(path))?;
    let tree = repo.find_tree(tree).map_err(wrap(path))?;
    let sig = Signature::now("GitHub", "noreply@github.com").map_err(wrap(path))?;
    let parents: Vec<&git2::Commit<'_>> = if squash {
        vec![&base]
    } else {
        vec![&base, &head]
    };
    let oid = repo
        .commit(Some(&refname), &sig, &sig, message, &tree, &parents)
        .map_err(wrap(path))?;
    Ok(Some(oid.to_string()))
}

#[derive(Debug, PartialEq, Eq)]
pub enum UpdateOutcome {
    Updated,
    NotFastForward,
    NoSuchRef,
    UnknownObject,
}

/// What sits at a path in a commit's tree.
#[derive(Debug)]
pub enum PathEntry {
    File { sha: String, content: Vec<u8> },
    Dir(Vec<DirEntry>),
}

#[derive(Debug)]
pub struct DirEntry {
    pub name: String,
    pub sha: String,
    pub kind: &'static str,
    pub size: usize,
}

pub fn read_path(path: &Path, commit_sha: &str, file: &str) -> Result<Option<PathEntry>, GitError> {
    let repo = open(path)?;
    let oid = Oid::from_str(commit_sha).map_err(wrap(path))?;
    let tree = repo
        .find_commit(oid)
        .and_then(|c| c.tree())
        .map_err(wrap(path))?;
    let trimmed = file.trim_matches('/');
    let object = if trimmed.is_empty() {
        tree.into_object()
    } else {
        match tree.get_path(Path::new(trimmed)) {
            Ok(entry) => entry.to_object(&repo).map_err(wrap(path))?,
            Err(_) => return Ok(None),
        }
    };
    match object.kind() {
        Some(ObjectType::Blob) => {
            let blob = object.peel_to_blob().map_err(wrap(path))?;
            Ok(Some(PathEntry::File {
                sha: blob.id().to_string(),
                content: blob.content().to_vec(),
            }))
        }
        Some(ObjectType::Tree) => {
            let tree = object.peel_to_tree().map_err(wrap(path))?;
            let mut entries = Vec::new();
            for entry in tree.iter() {
                let (kind, size) = match entry.kind() {
                    Some(ObjectType::Blob) => (
                        "file",
                        repo.find_blob(entry.id())
                            .map(|b| b.size())
                            .unwrap_or_default(),
                    ),
                    _ => ("dir", 0),
                };
                entries.push(DirEntry {
                    name: entry.name().unwrap_or_default().to_string(),
                    sha: entry.id().to_string(),
                    kind,
                    size,
                });
            }
            Ok(Some(PathEntry::Dir(entries)))
        }
        _ => Ok(None),
    }
}

/// One entry of `GET /git/trees/{sha}`.
#[derive(Debug)]
pub struct TreeItem {
    pub path: String,
    pub mode: String,
    pub kind: &'static str,
    pub sha: String,
    pub size: Option<usize>,
}

/// Lists a tree (a tree sha, or a commit-ish that peels to one), optionally recursively.
pub fn list_tree(
    path: &Path,
    rev: &str,
    recursive: bool,
) -> Result<Option<(String, Vec<TreeItem>)>, GitError> {
    let repo = open(path)?;
    let tree = match repo.revparse_single(rev).and_then(|o| o.peel_to_tree()) {
        Ok(tree) => tree,
        Err(_) => return Ok(None),
    };
    let mut items = Vec::new();
    let mut walk_err = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let kind = match entry.kind() {
            Some(ObjectType::Tree) => "tree",
            Some(ObjectType::Commit) => "commit",
            _ => "blob",
        };
        let size = if kind == "blob" {
            repo.find_blob(entry.id()).ok().map(|b| b.size())
        } else {
            None
        };
        items.push(TreeItem {
            path: format!("{dir}{}", entry.name().unwrap_or_default()),
            mode: format!("{:06o}", entry.filemode()),
            kind,
            sha: entry.id().to_string(),
            size,
        });
        if recursive {
            git2::TreeWalkResult::Ok
        } else {
            git2::TreeWalkResult::Skip
        }
    })
    .map_err(|e| walk_err = Some(e))
    .ok();
    if let Some(e) = walk_err {
        return Err(GitError::Repo {
            path: path.to_path_buf(),
            source: e,
        });
    }
    Ok(Some((tree.id().to_string(), items)))
}

pub fn read_blob(path: &Path, sha: &str) -> Result<Option<Vec<u8>>, GitError> {
    let repo = open(path)?;
    let Ok(oid) = Oid::from_str(sha) else {
        return Ok(None);
    };
    Ok(repo.find_blob(oid).ok().map(|b| b.content().to_vec()))
}

/// The parts of a commit GitHub's commit endpoints report.
#[derive(Debug)]
pub struct CommitInfo {
    pub sha: String,
    pub tree: String,
    pub parents: Vec<String>,
    pub message: String,
    pub author_name: String,
    pub author_email: String,
    pub time: i64,
}

pub fn read_commit(path: &Path, rev: &str) -> Result<Option<CommitInfo>, GitError> {
    let repo = open(path)?;
    let Ok(commit) = repo.revparse_single(rev).and_then(|o| o.peel_to_commit()) else {
        return Ok(None);
    };
    let author = commit.author();
    Ok(Some(CommitInfo {
        sha: commit.id().to_string(),
        tree: commit.tree_id().to_string(),
        parents: commit.parent_ids().map(|p| p.to_string()).collect(),
        message: commit.message().unwrap_or_default().to_string(),
        author_name: author.name().unwrap_or_default().to_string(),
        author_email: author.email().unwrap_or_default().to_string(),
        time: commit.time().seconds(),
    }))
}

/// Runs the real `git http-backend` CGI for one smart-HTTP request.
///
/// `path_info` is `/{owner}/{repo}.git/...` relative to `project_root`; git's config
/// is kept hermetic and `receive-pack` is enabled so authenticated pushes work.
pub async fn http_backend(
    project_root: &Path,
    method: &str,
    path_info: &str,
    query: &str,
    headers: &HeaderMap,
    remote_user: &str,
    body: Vec<u8>,
) -> Result<Response<Body>, GitError> {
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_COUNT", "3")
        .env("GIT_CONFIG_KEY_0", "http.receivepack")
        .env("GIT_CONFIG_VALUE_0", "true")
        // GitHub serves any commit reachable from its refs by id (a pull
        // request's head through refs/pull/*), which `actions/checkout` and
        // Navin's `/plan` fetch rely on.
        .env("GIT_CONFIG_KEY_1", "uploadpack.allowReachableSHA1InWant")
        .env("GIT_CONFIG_VALUE_1", "true")
        // GitHub accepts pushes to refs of any name (Navin's `refs/navin/*` beside
        // branches and tags) but refuses updates of its own pull request refs
        // ("deny updating a hidden ref").
        .env("GIT_CONFIG_KEY_2", "receive.hideRefs")
        .env("GIT_CONFIG_VALUE_2", "refs/pull")
        .env("GIT_PROJECT_ROOT", project_root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REQUEST_METHOD", method)
        .env("PATH_INFO", path_info)
        .env("QUERY_STRING", query)
        .env("REMOTE_USER", remote_user)
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("GATEWAY_INTERFACE", "CGI/1.1")
        .env("SERVER_PROTOCOL", "HTTP/1.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(ct) = headers.get("content-type").and_then(|v| v.to_str().ok()) {
        cmd.env("CONTENT_TYPE", ct);
    }
    for (name, value) in headers {
        if let Ok(value) = value.to_str() {
            let key = format!(
                "HTTP_{}",
                name.as_str().to_ascii_uppercase().replace('-', "_")
            );
            if key != "HTTP_AUTHORIZATION" && key != "HTTP_PROXY" {
                cmd.env(key, value);
            }
        }
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| GitError::Backend(format!("spawn git http-backend: {e}")))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| GitError::Backend("no stdin".into()))?;
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&body).await;
        drop(stdin);
    });
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| GitError::Backend("no stdout".into()))?;
    let mut out = Vec::new();
    stdout
        .read_to_end(&mut out)
        .await
        .map_err(|e| GitError::Backend(format!("read output: {e}")))?;
    let _ = writer.await;
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| GitError::Backend(format!("wait: {e}")))?;
    if out.is_empty() && !output.status.success() {
        return Err(GitError::Backend(
            String::from_utf8_lossy(&output.stderr).into_owned(),
        ));
    }
    parse_cgi(&out)
}

/// Splits CGI output into status, headers and body.
fn parse_cgi(out: &[u8]) -> Result<Response<Body>, GitError> {
    let split = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, 4))
        .or_else(|| out.windows(2).position(|w| w == b"\n\n").map(|p| (p, 2)))
        .ok_or_else(|| GitError::Backend("CGI output has no header block".into()))?;
    let head = String::from_utf8_lossy(&out[..split.0]);
    let body = out[split.0 + split.1..].to_vec();
    let mut builder = Response::builder().status(StatusCode::OK);
    for line in head.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("status") {
            let code = value
                .split_whitespace()
                .next()
                .and_then(|c| c.parse::<u16>().ok())
                .unwrap_or(500);
            builder = builder.status(code);
        } else {
            builder = builder.header(name.trim(), value);
        }
    }
    builder
        .body(Body::from(body))
        .map_err(|e| GitError::Backend(format!("bad CGI header: {e}")))
}
