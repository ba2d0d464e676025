//! Why the engine could not finish an event, typed to the edge: each front end decides from the variant (retry, fail, tell a person, name a permission), never from the message.

use navin_domain::event::{NoInstallation, PayloadError};
use navin_github::{GitHubError, Permission};
use navin_ledger::store::StoreError;
use navin_ledger::RuleError;

/// Rule refusals are not errors: they become replies. What is left is one of these.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The payload does not hold what its event promises.
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// The event is well-formed JSON but cannot be acted on (no installation, a head
    /// that is not a commit id): it never will be.
    #[error("{0}")]
    Invalid(String),
    /// A bug or a lost task: logged, never shown with detail.
    #[error("{0}")]
    Internal(String),
}

/// Whether a failed event is worth another attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// GitHub 5xx, rate limits, a lost compare-and-swap race, a network blip.
    Later,
    /// The local disk failed (full, or an I/O error of the data directory): it passes
    /// once the disk is back, so it is retried for as long as that takes, without
    /// spending the delivery's attempts, and nobody is told to try again.
    Storage,
    /// A malformed payload, a refused credential, a bug: the same input fails again.
    Never,
}

impl From<NoInstallation> for EngineError {
    fn from(e: NoInstallation) -> Self {
        EngineError::Invalid(e.to_string())
    }
}

impl EngineError {
    pub fn retry(&self) -> Retry {
        if matches!(self, EngineError::Store(e) if e.is_storage()) {
            return Retry::Storage;
        }
        let later = match self {
            EngineError::GitHub(e) => e.is_transient(),
            // A refused push, a missing object or a broken branch fail the same way
            // again: say so instead of retrying.
            EngineError::Store(e) => e.is_transient(),
            EngineError::Payload(_) | EngineError::Invalid(_) | EngineError::Internal(_) => false,
        };
        if later {
            Retry::Later
        } else {
            Retry::Never
        }
    }

    pub fn is_transient(&self) -> bool {
        self.retry() != Retry::Never
    }

    /// The job-token or App permission whose absence caused this error, when GitHub (or
    /// its git server) refused the call for lack of it.
    pub fn missing_permission(&self) -> Option<Permission> {
        match self {
            EngineError::GitHub(e) => e.missing_permission(),
            EngineError::Store(StoreError::Refused { .. }) => Some(Permission::CONTENTS_WRITE),
            _ => None,
        }
    }

    /// The ledger is sealed and this writer has no key ([`StoreError::KeylessOnSealed`]).
    pub fn needs_ledger_key(&self) -> bool {
        matches!(self, EngineError::Store(StoreError::KeylessOnSealed { .. }))
    }

    /// Errors a person should be told about (a broken or rewritten ledger branch, a
    /// refused push) rather than retried: the message names what is wrong and holds no
    /// secret. Rule refusals are worded by the caller.
    pub(crate) fn refusal(&self) -> Option<LedgerRefusal> {
        match self {
            EngineError::Store(StoreError::Rule(rule)) => Some(LedgerRefusal::Rule(rule.clone())),
            EngineError::Store(
                e @ (StoreError::Corrupt { .. }
                | StoreError::ForcePushed { .. }
                | StoreError::BranchVanished { .. }
                | StoreError::Diverged { .. }
                | StoreError::Rewritten { .. }
                | StoreError::Foreign { .. }
                | StoreError::KeylessOnSealed { .. }
                | StoreError::Rewound(_)
                | StoreError::VersionGap { .. }),
            ) => Some(LedgerRefusal::Branch(e.to_string())),
            EngineError::Store(StoreError::Refused { .. }) => Some(LedgerRefusal::WriteRefused),
            _ => None,
        }
    }
}

/// Why the ledger changed nothing, typed: a rule that refused the operation, a ledger
/// branch Navin will not build on, or a git server that refused Navin's credentials.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LedgerRefusal {
    Rule(RuleError),
    /// The branch's state (corrupt, rewound, forged…), in the store's own words, which
    /// name the commit and what to do.
    Branch(String),
    WriteRefused,
}

impl std::fmt::Display for LedgerRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LedgerRefusal::Rule(rule) => match github_hint(rule) {
                Some(hint) => write!(f, "{rule}. {hint}"),
                None => write!(f, "{rule}"),
            },
            LedgerRefusal::Branch(why) => f.write_str(why),
            LedgerRefusal::WriteRefused => f.write_str(
                "Navin may not write the ledger branch: the git server refused its credentials. \
                 Check that the App (or the workflow's token) has `contents: write` on this repository.",
            ),
        }
    }
}

/// What to comment instead, for the rules whose fix is another slash command.
fn github_hint(rule: &RuleError) -> Option<&'static str> {
    match rule {
        RuleError::NoMission | RuleError::Finished { .. } => {
            Some("Start one with `/mission GOAL`.")
        }
        RuleError::MissionLive { .. } => Some("Use `/mission --replace GOAL` to replace it."),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;
    use navin_ledger::store::RemoteOp;

    #[test]
    fn a_refused_push_or_a_missing_object_is_reported_not_retried_and_a_network_blip_is_retried() {
        let refused = EngineError::Store(StoreError::Refused {
            remote: "origin".into(),
            op: RemoteOp::Push,
            status: Some(403),
        });
        assert_eq!(refused.retry(), Retry::Never);
        assert_eq!(refused.refusal(), Some(LedgerRefusal::WriteRefused));
        assert!(refused
            .refusal()
            .unwrap()
            .to_string()
            .contains("contents: write"));
        assert_eq!(
            refused.missing_permission(),
            Some(Permission::CONTENTS_WRITE)
        );
        let blip = EngineError::Store(StoreError::Remote {
            remote: "origin".into(),
            message: "failed to connect: connection reset by peer".into(),
            transient: true,
        });
        assert_eq!(blip.retry(), Retry::Later);
        let net = git2::Error::new(
            git2::ErrorCode::GenericError,
            git2::ErrorClass::Net,
            "failed to connect",
        );
        assert_eq!(
            EngineError::Store(StoreError::Git(net)).retry(),
            Retry::Later
        );
        // A missing object or a corrupt pack fails the same way on every retry.
        for class in [
            git2::ErrorClass::Odb,
            git2::ErrorClass::Object,
            git2::ErrorClass::Reference,
        ] {
            let broken = git2::Error::new(git2::ErrorCode::NotFound, class, "object not found");
            assert_eq!(
                EngineError::Store(StoreError::Git(broken)).retry(),
                Retry::Never
            );
        }
        let gone = EngineError::Store(StoreError::Remote {
            remote: "origin".into(),
            message: "no such remote: origin".into(),
            transient: false,
        });
        assert_eq!(gone.retry(), Retry::Never);
        assert!(blip.refusal().is_none());
        assert!(blip.missing_permission().is_none());
    }

    #[test]
    fn rule_refusals_name_the_slash_command_to_use_not_the_cli() {
        let e = EngineError::Store(StoreError::Rule(RuleError::NoMission));
        assert_eq!(e.refusal(), Some(LedgerRefusal::Rule(RuleError::NoMission)));
        let text = e.refusal().unwrap().to_string();
        assert!(text.contains("/mission GOAL"), "{text}");
        assert!(!text.contains("ledger init"), "{text}");
    }

    #[test]
    fn a_malformed_payload_is_never_retried() {
        let e = EngineError::Payload(PayloadError {
            event: "check_run",
            path: "check_run.head_sha".into(),
            message: "invalid type".into(),
        });
        assert_eq!(e.retry(), Retry::Never);
        assert!(e.to_string().contains("check_run.head_sha"));
    }
}
