//! Why a store operation failed, typed: rule refusals, corruption, rewritten or foreign history, remotes, git and I/O.

use thiserror::Error;

use crate::error::RuleError;

/// Why a store operation failed.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error(transparent)]
    Rule(#[from] RuleError),
    #[error("the ledger at {commit} is unreadable: {path}: {field}: {message} (left untouched; fix or roll back by hand)")]
    Corrupt {
        commit: String,
        path: String,
        field: String,
        message: String,
    },
    #[error("the ledger branch {branch} was rewritten on {remote}: its tip {remote_tip} does not descend from {seen}, the last tip seen; refusing to write (restore the branch or investigate)")]
    ForcePushed {
        branch: String,
        remote: String,
        seen: String,
        remote_tip: String,
    },
    #[error("the ledger branch {branch} vanished from {remote} (last seen at {seen}); refusing to write or recreate it")]
    BranchVanished {
        branch: String,
        remote: String,
        seen: String,
    },
    #[error("the local ledger branch {branch} and {remote} have diverged; refusing to write")]
    Diverged { branch: String, remote: String },
    #[error("the ledger tip moved from {seen} to {tip}, which does not descend from it: the branch was rewritten; refusing to write")]
    Rewritten { seen: String, tip: String },
    #[error("gave up after {attempts} attempts: other writers kept moving {branch}")]
    Contention { branch: String, attempts: u32 },
    /// The ref stayed locked by a live writer (or one killed moments ago) for every attempt.
    #[error("{branch} is locked by {path}: another navin or git process is writing it; if none is running, delete that file")]
    Locked { branch: String, path: String },
    #[error("remote {remote}: {message}")]
    Remote {
        remote: String,
        message: String,
        /// A network failure that may pass (see [`transient_git_error`]), not a
        /// missing remote or a broken transfer that will fail the same way again.
        transient: bool,
    },
    /// The git server refused us (401, 403 or 404: no credentials, no permission, or a
    /// repository the token cannot see). Retrying will not help.
    #[error("remote {remote} refused the {op}{}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Refused {
        remote: String,
        op: RemoteOp,
        /// The HTTP status, when the transport reported one.
        status: Option<u16>,
    },
    /// A commit Navin did not make (no valid seal, or, without a key, not Navin's
    /// committer and trailers) changes what proves a step: its status, validation,
    /// commands, evidence, run records, attempts or retry budget. The ledger is not built
    /// on until a person looks: `/rollback v<trusted_version>` writes the last state
    /// Navin trusts on top, or a revert of the commit undoes it.
    #[error("the ledger commit {commit} by {by} was not made by Navin{} and {change}, which only Navin records; refusing to build on it ({})", if *sealed_ledger { " (it carries no valid Navin seal)" } else { "" }, recovery(*trusted_version))]
    Foreign {
        commit: String,
        by: String,
        /// What it changed, in words: `marks S1 done`, `changes S1's validation`.
        change: String,
        /// Whether the check was by seal (a key is configured) rather than by the
        /// committer's name and trailers.
        sealed_ledger: bool,
        /// The commit below it (its first parent): vetted, so the last state Navin
        /// trusts; `None` when the refused commit has no parent.
        below: Option<String>,
        /// The mission version at `below`, when it holds a ledger: what `/rollback`
        /// restores.
        trusted_version: Option<u64>,
    },
    /// A writer without a ledger key asked to write a sealed ledger: its unsealed commit
    /// would be refused as forged by every writer that holds the key (the App, the other
    /// jobs), which would then build on nothing. Nothing is written.
    #[error("the ledger branch {branch} is sealed with a ledger key and this writer has none, so what it wrote would be refused as forged; nothing was written. Give every writer the same key: one secret (`openssl rand -hex 32`) as the workflows' `ledger-key` input (a repository secret such as `NAVIN_LEDGER_KEY`) and the App's `NAVIN_LEDGER_KEY`")]
    KeylessOnSealed { branch: String },
    /// The branch's tip does not contain a commit the remote itself says was on it.
    #[error(transparent)]
    Rewound(Box<Rewind>),
    #[error("the ledger branch's history goes from v{previous} to v{version} at {commit}: versions were cut out or rewritten; refusing to build on it (restore the branch)")]
    VersionGap {
        commit: String,
        version: u64,
        previous: u64,
    },
    #[error("{0}")]
    NotFound(String),
    #[error("git: {0}")]
    Git(#[from] git2::Error),
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    #[error("encoding the ledger failed: {0}")]
    Encode(#[from] serde_json::Error),
}

/// A rewind found against the remote's own records: the branch's tip does not contain a
/// checkpoint (`refs/navin/checkpoints/v<N>`) or the tip some writer last recorded
/// (`refs/navin/tips/<branch>`). A clone that never saw the branch finds these too.
#[derive(Debug, Error)]
#[error("the ledger branch {branch} on {remote} was rewound: {}{commit}, recorded in {record}, is not in the history of its tip {tip}{}; refusing to build on it (restore the branch, or delete {record} on the remote if the rewind was deliberate)", version.map(|v| format!("v{v} at ")).unwrap_or_default(), tip_version.map(|v| format!(", which is at v{v}")).unwrap_or_default())]
pub struct Rewind {
    pub branch: String,
    pub remote: String,
    /// The remote ref that records the missing commit.
    pub record: String,
    /// The ledger version at that commit, when it has one.
    pub version: Option<u64>,
    pub commit: String,
    pub tip: String,
    /// The ledger version at the tip, when it has one.
    pub tip_version: Option<u64>,
}

/// Which remote operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteOp {
    Fetch,
    Push,
}

impl std::fmt::Display for RemoteOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RemoteOp::Fetch => "fetch",
            RemoteOp::Push => "push",
        })
    }
}

impl StoreError {
    /// Whether a rule refused the operation (exit 1) rather than the store failing (exit 2).
    pub fn is_rule(&self) -> bool {
        matches!(self, StoreError::Rule(_))
    }

    /// Whether the same operation may succeed if tried again later: other writers, a
    /// lock, the disk, the network. A refused credential, a corrupt or rewritten branch,
    /// a missing object or a rule fails the same way every time, so it is not retried.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Contention { .. } | StoreError::Locked { .. } | StoreError::Io(_) => true,
            StoreError::Remote { transient, .. } => *transient,
            StoreError::Git(e) => transient_git_error(e) || storage_git_error(e),
            _ => false,
        }
    }

    /// Whether the local disk failed the store (no space left, an I/O error of the data
    /// directory), not the data: it passes once the disk is back, however long that
    /// takes, so a caller waits and retries instead of giving up.
    pub fn is_storage(&self) -> bool {
        match self {
            StoreError::Io(_) => true,
            StoreError::Git(e) => storage_git_error(e),
            _ => false,
        }
    }
}

/// A git error of the local disk: one whose words say the disk failed (a full disk
/// fails a write with `ENOSPC`, whose words libgit2 passes on, in any error class; and
/// libgit2 may report it as "no error" when errno was lost). The class alone does not
/// tell: libgit2 reports a refused connection in the operating system's class too, and
/// a network outage is retried within the attempt budget, not without end. A corrupt or
/// missing object is not a disk error either: retrying it for as long as the disk stays
/// broken would hold the repository's later deliveries back for good.
pub fn storage_git_error(e: &git2::Error) -> bool {
    use git2::ErrorCode;
    if matches!(e.code(), ErrorCode::NotFound | ErrorCode::Exists) {
        return false;
    }
    let message = e.message().to_ascii_lowercase();
    let disk_words = [
        "no space left",
        "disk quota",
        "file too large",
        "input/output error",
        "read-only file system",
    ];
    message == "no error" || disk_words.iter().any(|w| message.contains(w))
}

/// Whether a git error is the kind that passes: the network, TLS, HTTP (other than a
/// refusal, which is [`StoreError::Refused`]), the operating system, a lock, or a
/// reference another writer changed under us.
pub fn transient_git_error(e: &git2::Error) -> bool {
    use git2::{ErrorClass, ErrorCode};
    matches!(e.code(), ErrorCode::Locked | ErrorCode::Modified)
        || matches!(
            e.class(),
            ErrorClass::Net | ErrorClass::Http | ErrorClass::Ssl | ErrorClass::Os
        )
}

/// What to do about a refused commit, in the words the error ends with.
fn recovery(trusted_version: Option<u64>) -> String {
    match trusted_version {
        Some(v) => format!(
            "revert it on the branch, or comment `/rollback v{v}` to write v{v}, the last version Navin trusts, on top"
        ),
        None => "revert it on the branch".to_owned(),
    }
}

#[cfg(test)]
mod storage_tests {
    use super::*;

    #[test]
    fn a_full_disk_is_a_storage_error_and_a_missing_object_is_not() {
        use git2::{Error, ErrorClass, ErrorCode};
        let full = Error::new(
            ErrorCode::GenericError,
            ErrorClass::Odb,
            "failed to write object: No space left on device",
        );
        let lost = Error::new(ErrorCode::GenericError, ErrorClass::Os, "no error");
        let missing = Error::new(ErrorCode::NotFound, ErrorClass::Odb, "object not found");
        let refused = Error::new(ErrorCode::GenericError, ErrorClass::Reference, "refusing");
        let corrupt = Error::new(
            ErrorCode::GenericError,
            ErrorClass::Odb,
            "object hash mismatch",
        );
        assert!(!StoreError::Git(corrupt).is_storage());
        assert!(StoreError::Git(full).is_storage());
        assert!(StoreError::Git(lost).is_storage());
        assert!(!StoreError::Git(missing).is_storage());
        let unreachable = || {
            Error::new(
                ErrorCode::GenericError,
                ErrorClass::Os,
                "failed to connect to github.com: Connection refused",
            )
        };
        assert!(!StoreError::Git(unreachable()).is_storage());
        assert!(StoreError::Git(unreachable()).is_transient());
        assert!(!StoreError::Git(refused).is_storage());
        let io = std::io::Error::from_raw_os_error(28);
        assert!(
            StoreError::Io(io).is_storage()
                && StoreError::Io(std::io::Error::from_raw_os_error(28)).is_transient()
        );
    }
}
