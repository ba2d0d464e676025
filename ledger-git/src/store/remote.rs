//! Fetching and pushing the ledger branch without force, with the remote's tip record beside it in the same round trip.

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
    // A fetch that could not write what it received failed on this machine's disk,
    // not on the remote: a storage error, waited out like any other.
    if super::error::storage_git_error(e) {
        return StoreError::Git(git2::Error::new(e.code(), e.class(), e.message()));
    }
    match refusal(e) {
        Some(status) => StoreError::Refused {
            remote: name.to_owned(),
            op,
            status,
        },
        None => StoreError::Remote {
            remote: name.to_owned(),
            message: format!("{op} failed: {}", e.message()),
            transient: super::error::transient_git_error(e),
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

    /// Fetches the remote branch into `scratch` and the remote's tip record
    /// ([`tip_record_ref`]) into `record_scratch` (both forced: they are only landing
    /// spots), and with `checkpoints` the remote's checkpoint refs into
    /// [`incoming_checkpoints`], all in one round trip.
    pub(crate) fn fetch(
        &self,
        repo: &Repository,
        branch: &str,
        scratch: &Scratch<'_>,
        checkpoints: bool,
    ) -> Result<Fetched, StoreError> {
        for name in [scratch.tip, scratch.record] {
            if let Ok(mut r) = repo.find_reference(name) {
                r.delete()?;
            }
        }
        let mut remote = repo
            .find_remote(self.name)
            .map_err(|e| StoreError::Remote {
                remote: self.name.to_string(),
                message: format!("no such remote: {}", e.message()),
                transient: false,
            })?;
        let mut opts = FetchOptions::new();
        opts.remote_callbacks(self.callbacks());
        opts.download_tags(git2::AutotagOption::None);
        opts.update_fetchhead(false);
        let spec = format!("+refs/heads/{branch}:{}", scratch.tip);
        let record = format!("+{}:{}", tip_record_ref(branch), scratch.record);
        let marks = format!(
            "+{}*:{}*",
            CHECKPOINT_PREFIX,
            incoming_checkpoints(self.name)
        );
        let mut specs = vec![spec.as_str(), record.as_str()];
        if checkpoints {
            opts.prune(git2::FetchPrune::On);
            specs.push(marks.as_str());
        }
        remote
            .fetch(&specs, Some(&mut opts), None)
            .map_err(|e| transport_error(self.name, RemoteOp::Fetch, &e))?;
        let found = |name: &str| match repo.refname_to_id(name) {
            Ok(oid) => Ok(Some(oid)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(StoreError::from(e)),
        };
        Ok(Fetched {
            tip: found(scratch.tip)?,
            record: found(scratch.record)?,
        })
    }

    /// Pushes `new` to `refname` expecting the remote at `expected`, and in the same
    /// push moves `record` (the remote's tip record, see [`tip_record_ref`]) forward
    /// when given. Only the first ref decides the outcome: a record the server refuses
    /// alone leaves a landed write landed (logged; the next write records again).
    pub(crate) fn push(
        &self,
        repo: &Repository,
        refname: &str,
        new: Oid,
        expected: Option<Oid>,
        record: Option<RecordMove<'_>>,
    ) -> Result<(), PushError> {
        let remote = repo.find_remote(self.name)?;
        let url = match remote.pushurl() {
            Ok(Some(url)) => url.to_string(),
            _ => remote.url().map(str::to_string).unwrap_or_default(),
        };
        if let Some(path) = local_path(&url) {
            return push_local(repo, &path, refname, new, expected, record.as_ref());
        }
        let mut remote = remote;
        let refused = std::cell::RefCell::new(Vec::<(String, String)>::new());
        {
            let mut cb = self.callbacks();
            // `Ok` from push alone is not success: per-ref rejections arrive here.
            cb.push_update_reference(|name, status| {
                if let Some(msg) = status {
                    refused.borrow_mut().push((name.to_owned(), msg.to_owned()));
                }
                Ok(())
            });
            let mut opts = PushOptions::new();
            opts.remote_callbacks(cb);
            let spec = format!("{new}:{refname}");
            // Without force: libgit2 refuses, before sending anything, a record that
            // would not fast-forward, so the record never moves back.
            let record_spec = record.as_ref().map(|r| format!("{}:{}", r.to, r.refname));
            let mut specs = vec![spec.as_str()];
            specs.extend(record_spec.as_deref());
            if let Err(e) = remote.push(&specs, Some(&mut opts)) {
                return Err(match refusal(&e) {
                    Some(_) => PushError::Failed(transport_error(self.name, RemoteOp::Push, &e)),
                    None => PushError::from(e),
                });
            }
        }
        let refused = refused.into_inner();
        if refused.iter().any(|(name, _)| name == refname) {
            return Err(PushError::Rejected);
        }
        for (name, message) in refused {
            tracing::warn!(record = %name, reason = %message, "the remote refused the ledger's tip record; the write itself landed");
        }
        Ok(())
    }
}

/// Where the remote keeps the newest ledger tip a writer saw there, per branch:
/// `refs/navin/tips/<branch>`. Outside `refs/heads`, so branch rules and protections
/// never apply to it and no plain `git push` of branches moves it.
pub fn tip_record_ref(branch: &str) -> String {
    format!("refs/navin/tips/{branch}")
}

/// Local landing spots of one fetch: the branch tip and the remote's tip record.
pub(crate) struct Scratch<'a> {
    pub tip: &'a str,
    pub record: &'a str,
}

/// What one fetch found on the remote.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fetched {
    /// The branch tip, `None` when the remote has no such branch.
    pub tip: Option<Oid>,
    /// The remote's tip record, `None` before any writer recorded one.
    pub record: Option<Oid>,
}

/// Moves the remote's tip record `refname` from `from` (as last fetched) to `to`.
pub(crate) struct RecordMove<'a> {
    pub refname: &'a str,
    pub from: Option<Oid>,
    pub to: Oid,
}

/// Where checkpoint refs live. Here rather than in `checkpoints.rs` because a first
/// fetch mirrors them, and the checkpoint code already builds on this transport.
pub(crate) const CHECKPOINT_PREFIX: &str = "refs/navin/checkpoints/";

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
/// ourselves, which is what `git receive-pack` does for network remotes; the tip
/// record moves after the branch, only from the value last fetched and only forward,
/// as a non-forced push of it would.
fn push_local(
    repo: &Repository,
    path: &std::path::Path,
    refname: &str,
    new: Oid,
    expected: Option<Oid>,
    record: Option<&RecordMove<'_>>,
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
    if let Some(r) = record {
        let forward = match r.from {
            Some(from) => from == r.to || target.graph_descendant_of(r.to, from)?,
            None => true,
        };
        let moved = match r.from {
            _ if !forward => Ok(()),
            Some(from) => target
                .reference_matching(r.refname, r.to, true, from, msg)
                .map(|_| ()),
            None => target.reference(r.refname, r.to, false, msg).map(|_| ()),
        };
        if let Err(e) = moved {
            tracing::warn!(record = r.refname, error = %e, "the remote refused the ledger's tip record; the write itself landed");
        }
    }
    Ok(())
}
