//! Fetching and pushing the ledger branch without force, and detecting rewritten remotes.

use std::path::PathBuf;

use git2::{ErrorClass, ErrorCode, FetchOptions, Oid, PushOptions, RemoteCallbacks, Repository};

use super::{RemoteOp, StoreError};

/// Why a push did not land. `Rejected` means someone else moved the branch
/// first: re-read and re-apply.
pub(crate) enum PushError {
    Rejected,
    Failed(StoreError),
}

impl From<git2::Error> for PushError {
    fn from(e: git2::Error) -> Self {
        match e.code() {
            ErrorCode::NotFastForward
            | ErrorCode::Modified
            | ErrorCode::Locked
            | ErrorCode::Exists => PushError::Rejected,
            _ => PushError::Failed(StoreError::Git(e)),
        }
    }
}

/// Whether the git server refused the transfer, and with which HTTP status: an
/// authentication failure (`ErrorCode::Auth`, libgit2's answer to a 401 it cannot
/// satisfy) or an HTTP-class error with a 401/403/404 status. libgit2 exposes that
/// status only in its message (`unexpected http status code: 403`); this is the one
/// place it is read, so everything above branches on [`StoreError::Refused`].
pub(crate) fn refusal(e: &git2::Error) -> Option<Option<u16>> {
    if e.code() == ErrorCode::Auth {
        return Some(Some(401));
    }
    if e.class() != ErrorClass::Http {
        return None;
    }
    let status = e
        .message()
        .rsplit(|c: char| !c.is_ascii_digit())
        .find_map(|word| word.parse::<u16>().ok().filter(|n| (100..600).contains(n)));
    match status {
        Some(s @ (401 | 403 | 404)) => Some(Some(s)),
        _ => None,
    }
}

/// A transport error of `op`, typed when the server refused us.
fn transport_error(name: &str, op: RemoteOp, e: &git2::Error) -> StoreError {
    match refusal(e) {
        Some(status) => StoreError::Refused {
            remote: name.to_owned(),
            op,
            status,
        },
        None => StoreError::Remote {
            remote: name.to_owned(),
            message: format!("{op} failed: {}", e.message()),
        },
    }
}

/// A configured remote and how to reach it.
pub(crate) struct RemoteTarget<'a> {
    pub name: &'a str,
    pub token: Option<&'a str>,
}

impl RemoteTarget<'_> {
    fn callbacks(&self) -> RemoteCallbacks<'_> {
        let mut cb = RemoteCallbacks::new();
        if let Some(token) = self.token {
            // GitHub accepts installation tokens and GITHUB_TOKEN as the password
            // of the `x-access-token` user over HTTPS.
            cb.credentials(move |_url, _user, _allowed| {
                git2::Cred::userpass_plaintext("x-access-token", token)
            });
        }
        cb
    }

    /// Fetches the remote branch into `scratch` (forced: it is only a landing spot),
    /// and with `checkpoints` the remote's checkpoint refs into
    /// [`incoming_checkpoints`] in the same round trip. Returns the remote tip, or None
    /// when the remote has no such branch.
    pub(crate) fn fetch(
        &self,
        repo: &Repository,
        branch: &str,
        scratch: &str,
        checkpoints: bool,
    ) -> Result<Option<Oid>, StoreError> {
        if let Ok(mut r) = repo.find_reference(scratch) {
            r.delete()?;
        }
        let mut remote = repo
            .find_remote(self.name)
            .map_err(|e| StoreError::Remote {
                remote: self.name.to_string(),
                message: format!("no such remote: {}", e.message()),
            })?;
        let mut opts = FetchOptions::new();
        opts.remote_callbacks(self.callbacks());
        opts.download_tags(git2::AutotagOption::None);
        opts.update_fetchhead(false);
        let spec = format!("+refs/heads/{branch}:{scratch}");
        let marks = format!(
            "+{}*:{}*",
            super::checkpoints::CHECKPOINT_PREFIX,
            incoming_checkpoints(self.name)
        );
        let mut specs = vec![spec.as_str()];
        if checkpoints {
            opts.prune(git2::FetchPrune::On);
            specs.push(marks.as_str());
        }
        remote
            .fetch(&specs, Some(&mut opts), None)
            .map_err(|e| transport_error(self.name, RemoteOp::Fetch, &e))?;
        match repo.refname_to_id(scratch) {
            Ok(oid) => Ok(Some(oid)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Pushes `new` to `refs/heads/<branch>` expecting the remote at `expected`.
    pub(crate) fn push(
        &self,
        repo: &Repository,
        refname: &str,
        new: Oid,
        expected: Option<Oid>,
    ) -> Result<(), PushError> {
        let remote = repo.find_remote(self.name)?;
        let url = match remote.pushurl() {
            Ok(Some(url)) => url.to_string(),
            _ => remote.url().map(str::to_string).unwrap_or_default(),
        };
        if let Some(path) = local_path(&url) {
            return push_local(repo, &path, refname, new, expected);
        }
        let mut remote = remote;
        let rejected = std::cell::RefCell::new(None::<String>);
        // `name: message` of the first refused ref; only its presence matters to the caller.
        {
            let mut cb = self.callbacks();
            // `Ok` from push alone is not success: per-ref rejections arrive here.
            cb.push_update_reference(|name, status| {
                if let Some(msg) = status {
                    *rejected.borrow_mut() = Some(format!("{name}: {msg}"));
                }
                Ok(())
            });
            let mut opts = PushOptions::new();
            opts.remote_callbacks(cb);
            let spec = format!("{new}:{refname}");
            if let Err(e) = remote.push(&[spec.as_str()], Some(&mut opts)) {
                return Err(match refusal(&e) {
                    Some(_) => PushError::Failed(transport_error(self.name, RemoteOp::Push, &e)),
                    None => PushError::from(e),
                });
            }
        }
        match rejected.into_inner() {
            Some(_) => Err(PushError::Rejected),
            None => Ok(()),
        }
    }
}

/// Where the checkpoint refs of remote `name` land on a first fetch.
pub(crate) fn incoming_checkpoints(name: &str) -> String {
    format!("refs/navin/incoming-checkpoints/{name}/")
}

/// A remote URL that names a repository on this machine.
fn local_path(url: &str) -> Option<PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        return Some(PathBuf::from(rest));
    }
    if url.contains("://") || url.contains('@') && url.contains(':') {
        return None;
    }
    Some(PathBuf::from(url))
}

/// libgit2's local transport updates the remote ref without checking its old
/// value, so two concurrent pushes could both "succeed" and one be lost. For a
/// repository on this machine we copy the objects and compare-and-swap the ref
/// ourselves, which is what `git receive-pack` does for network remotes.
fn push_local(
    repo: &Repository,
    path: &std::path::Path,
    refname: &str,
    new: Oid,
    expected: Option<Oid>,
) -> Result<(), PushError> {
    let target = Repository::open(path)?;
    let mut walk = repo.revwalk()?;
    walk.push(new)?;
    if let Some(old) = expected {
        walk.hide(old)?;
    }
    let mut pack = repo.packbuilder()?;
    pack.insert_walk(&mut walk)?;
    let odb = target.odb()?;
    let mut writer = odb.packwriter()?;
    let mut io_error = None;
    pack.foreach(
        |chunk| match std::io::Write::write_all(&mut writer, chunk) {
            Ok(()) => true,
            Err(e) => {
                io_error = Some(e);
                false
            }
        },
    )?;
    if let Some(e) = io_error {
        return Err(PushError::Failed(StoreError::Io(e)));
    }
    writer.commit()?;
    let msg = "navin: push";
    match expected {
        Some(old) => target.reference_matching(refname, new, true, old, msg)?,
        None => target.reference(refname, new, false, msg)?,
    };
    Ok(())
}
