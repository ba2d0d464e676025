//! The seal on Navin's own ledger commits: a keyed MAC over the commit's tree, parents and message that nobody without the key can copy.
//!
//! Anyone who can push to the ledger branch can write a commit whose committer is
//! "Navin" and whose message carries Navin's trailers, so neither tells Navin's commits
//! apart. The seal does: `Navin-Seal: v1 <hex>` as the message's last line, an
//! HMAC-SHA256 under a key only Navin's writers hold (the App's `NAVIN_LEDGER_KEY` or
//! webhook secret, the Action's `ledger-key` secret, a per-repository key in the local
//! git config for the CLI). It covers the tree and the parents, so a seal copied onto
//! other content or another place in the history does not verify, and the rest of the
//! message, so a copied seal cannot vouch for trailers it did not sign (the
//! `Navin-Delivery` ids that stop a delivery being applied twice).
//!
//! Version 2 also covers the repository and the ledger branch ([`SealScope`]): two
//! repositories served by one App share its key, and a fork shares its parent's ledger
//! history, so a commit Navin sealed in one repository would otherwise fast-forward onto
//! the other's ledger. Version 1 seals (written before) still verify, as history.

use git2::{Commit, Oid};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The trailer's name; the value is `v2 <64 hex digits>` (`v1` on older commits).
pub const SEAL_TRAILER: &str = "Navin-Seal";
const VERSION: &str = "v2";
const LEGACY_VERSION: &str = "v1";

/// The repository a GitHub writer (the App, the Action) names in its seals: its numeric
/// id, which survives renames and transfers, so a renamed repository's ledger still
/// verifies. Without an id (an event that carried none), its `owner/name` in lower case.
pub fn github_repository(id: Option<u64>, full_name: &str) -> String {
    match id {
        Some(id) => format!("github:{id}"),
        None => format!("github:{}", full_name.to_ascii_lowercase()),
    }
}

/// Where a sealed commit belongs: the repository (`github:<id>` for GitHub's writers,
/// `local:<id>` for the CLI) and the ledger branch. A seal made for one
/// scope does not verify in another.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SealScope {
    pub repository: String,
    pub branch: String,
}

/// Shorter keys are refused: a guessable key is a forgeable seal.
pub const MIN_KEY_BYTES: usize = 16;

/// The key Navin seals its ledger commits with. Never printed: `Debug` says only that
/// there is one.
#[derive(Clone)]
pub struct SealKey(Vec<u8>);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(redacted)")
    }
}

/// Why a configured key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a ledger key must be at least {MIN_KEY_BYTES} bytes long (it has {0}); generate one with `openssl rand -hex 32`")]
pub struct ShortKey(pub usize);

impl SealKey {
    /// A key from its text as configured (an environment variable, a git config value,
    /// a webhook secret): the bytes of the text itself, surrounding whitespace removed.
    pub fn from_text(text: &str) -> Result<Self, ShortKey> {
        let bytes = text.trim().as_bytes();
        if bytes.len() < MIN_KEY_BYTES {
            return Err(ShortKey(bytes.len()));
        }
        Ok(Self(bytes.to_vec()))
    }

    /// A key derived from another secret the writer holds (the App's webhook secret),
    /// so no second secret has to be configured: a MAC of a fixed label under it, which
    /// gives the seal a key of its own while the secret keeps signing webhooks. `None`
    /// for an empty secret.
    pub fn derived_from(secret: &[u8]) -> Option<Self> {
        if secret.is_empty() {
            return None;
        }
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).ok()?;
        mac.update(b"navin ledger seal key v1");
        Some(Self(mac.finalize().into_bytes().to_vec()))
    }

    /// A fresh random key as 64 hex digits, for a repository that has none yet.
    pub fn generate_text() -> String {
        let bytes: [u8; 32] = rand::random();
        hex::encode(bytes)
    }

    /// The MAC of a commit; `scope` is `None` for a version 1 seal, which named neither
    /// repository nor branch.
    fn mac(
        &self,
        scope: Option<&SealScope>,
        tree: Oid,
        parents: &[Oid],
        message: &str,
    ) -> Hmac<Sha256> {
        let mut mac = self.keyed();
        match scope {
            None => mac.update(b"navin-ledger-seal-v1\0tree "),
            Some(scope) => {
                mac.update(b"navin-ledger-seal-v2\0repository ");
                framed(&mut mac, scope.repository.as_bytes());
                mac.update(b"\0branch ");
                framed(&mut mac, scope.branch.as_bytes());
                mac.update(b"\0tree ");
            }
        }
        mac.update(tree.as_bytes());
        for parent in parents {
            mac.update(b"\0parent ");
            mac.update(parent.as_bytes());
        }
        mac.update(b"\0message ");
        mac.update(message.as_bytes());
        mac
    }

    /// `message` with the seal for a commit of `tree` on `parents` in `scope` appended
    /// as its last trailer line.
    pub fn seal(&self, scope: &SealScope, tree: Oid, parents: &[Oid], message: &str) -> String {
        let mut signed = message.to_owned();
        if !signed.ends_with('\n') {
            signed.push('\n');
        }
        let tag = hex::encode(
            self.mac(Some(scope), tree, parents, &signed)
                .finalize()
                .into_bytes(),
        );
        format!("{signed}{SEAL_TRAILER}: {VERSION} {tag}\n")
    }

    /// A MAC under this key of `label` and `parts` (each length-prefixed), as hex: how
    /// Navin authenticates the notes it keeps beside the ledger (the last vetted tip),
    /// so that whoever can write the git directory cannot make Navin skip a check.
    pub fn tag(&self, label: &str, parts: &[&[u8]]) -> String {
        hex::encode(self.note_mac(label, parts).finalize().into_bytes())
    }

    /// Whether `tag` is [`SealKey::tag`] of the same label and parts (constant time).
    pub fn tag_matches(&self, label: &str, parts: &[&[u8]], tag: &str) -> bool {
        hex::decode(tag).is_ok_and(|tag| self.note_mac(label, parts).verify_slice(&tag).is_ok())
    }

    fn note_mac(&self, label: &str, parts: &[&[u8]]) -> Hmac<Sha256> {
        let mut mac = self.keyed();
        mac.update(label.as_bytes());
        for part in parts {
            framed(&mut mac, part);
        }
        mac
    }

    fn keyed(&self) -> Hmac<Sha256> {
        // `new_from_slice` accepts keys of any length for HMAC; the length was checked.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"))
    }

    /// Whether `commit` carries a seal made with this key for its own tree, parents and
    /// message, in `scope` (compared in constant time). A version 1 seal names no scope
    /// and verifies on tree, parents and message alone: such commits were written
    /// before seals named their repository.
    pub fn verifies(&self, scope: &SealScope, commit: &Commit<'_>) -> bool {
        let Ok(message) = commit.message() else {
            return false;
        };
        let Some((signed, version, tag)) = split_seal(message) else {
            return false;
        };
        let Ok(tag) = hex::decode(tag) else {
            return false;
        };
        let parents: Vec<Oid> = commit.parent_ids().collect();
        let scope = (version == VERSION).then_some(scope);
        self.mac(scope, commit.tree_id(), &parents, signed)
            .verify_slice(&tag)
            .is_ok()
    }
}

/// Feeds `bytes` to `mac` after their length, so no two sequences of fields run together
/// into the same input.
fn framed(mac: &mut Hmac<Sha256>, bytes: &[u8]) {
    mac.update(&(bytes.len() as u64).to_be_bytes());
    mac.update(bytes);
}

/// The signed part of a sealed message, the seal's version and its hex digits: the seal
/// must be the last line, so nothing after it escapes the MAC.
fn split_seal(message: &str) -> Option<(&str, &'static str, &str)> {
    let body = message.strip_suffix('\n').unwrap_or(message);
    let start = body.rfind('\n').map_or(0, |i| i + 1);
    let (signed, last) = body.split_at(start);
    let value = last.strip_prefix(SEAL_TRAILER)?.strip_prefix(": ")?;
    let (version, tag) = [VERSION, LEGACY_VERSION]
        .into_iter()
        .find_map(|v| Some((v, value.strip_prefix(v)?.strip_prefix(' ')?)))?;
    Some((signed, version, tag.trim_end()))
}

/// Whether `message` carries a seal line at all, valid or not (a forged one is named
/// as such).
pub fn has_seal_line(message: &str) -> bool {
    split_seal(message).is_some()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, git2::Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init_bare(dir.path()).unwrap();
        (dir, repo)
    }

    fn commit(repo: &git2::Repository, content: &str, parent: Option<Oid>, message: &str) -> Oid {
        let blob = repo.blob(content.as_bytes()).unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert("f", blob, 0o100644).unwrap();
        let tree = repo.find_tree(tb.write().unwrap()).unwrap();
        let sig = git2::Signature::now("Navin", "navin@users.noreply.github.com").unwrap();
        let parent = parent.map(|p| repo.find_commit(p).unwrap());
        let parents: Vec<&Commit<'_>> = parent.iter().collect();
        repo.commit(None, &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    fn tree_of(repo: &git2::Repository, content: &str) -> Oid {
        let blob = repo.blob(content.as_bytes()).unwrap();
        let mut tb = repo.treebuilder(None).unwrap();
        tb.insert("f", blob, 0o100644).unwrap();
        tb.write().unwrap()
    }

    #[test]
    fn a_sealed_commit_verifies_only_under_its_key_and_only_for_its_own_content() {
        let (_d, repo) = repo();
        let key = SealKey::from_text("a key only navin holds, 32 bytes").unwrap();
        let other = SealKey::from_text("somebody else's key of 32 bytes!").unwrap();
        let root = commit(&repo, "root", None, "root\n");
        let tree = tree_of(&repo, "done");
        let sealed = key.seal(
            &here(),
            tree,
            &[root],
            "navin: done v2\n\nNavin-Version: 2\n",
        );
        let good = commit(&repo, "done", Some(root), &sealed);
        assert!(key.verifies(&here(), &repo.find_commit(good).unwrap()));
        assert!(!other.verifies(&here(), &repo.find_commit(good).unwrap()));

        // The same message (seal included) copied onto other content or another parent.
        let moved = commit(&repo, "forged", Some(root), &sealed);
        assert!(!key.verifies(&here(), &repo.find_commit(moved).unwrap()));
        let reparented = commit(&repo, "done", Some(good), &sealed);
        assert!(!key.verifies(&here(), &repo.find_commit(reparented).unwrap()));

        // A trailer added above the seal, or a line after it.
        let added = sealed.replace(
            "Navin-Version: 2\n",
            "Navin-Version: 2\nNavin-Delivery: x\n",
        );
        let c = commit(&repo, "done", Some(root), &added);
        assert!(!key.verifies(&here(), &repo.find_commit(c).unwrap()));
        let after = format!("{sealed}Navin-Delivery: x\n");
        let c = commit(&repo, "done", Some(root), &after);
        assert!(!key.verifies(&here(), &repo.find_commit(c).unwrap()));
        assert!(!has_seal_line(&after), "the seal must be the last line");
    }

    fn here() -> SealScope {
        SealScope {
            repository: "github:1".into(),
            branch: "navin/ledger".into(),
        }
    }

    #[test]
    fn a_seal_made_for_one_repository_or_branch_does_not_verify_in_another() {
        let (_d, repo) = repo();
        let key = SealKey::from_text("a key only navin holds, 32 bytes").unwrap();
        let root = commit(&repo, "root", None, "root\n");
        let tree = tree_of(&repo, "done");
        let sealed = key.seal(&here(), tree, &[root], "navin: done v2\n");
        let c = repo
            .find_commit(commit(&repo, "done", Some(root), &sealed))
            .unwrap();
        assert!(key.verifies(&here(), &c));
        let fork = SealScope {
            repository: "github:2".into(),
            ..here()
        };
        assert!(
            !key.verifies(&fork, &c),
            "another repository on the same App"
        );
        let branch = SealScope {
            branch: "navin/other".into(),
            ..here()
        };
        assert!(!key.verifies(&branch, &c), "another ledger branch");
        // Scope boundaries cannot be shifted between the two names.
        let shifted = SealScope {
            repository: "github:1\0branch navin".into(),
            branch: "/ledger".into(),
        };
        assert!(!key.verifies(&shifted, &c));
    }

    #[test]
    fn a_version_1_seal_written_before_scopes_still_verifies() {
        let (_d, repo) = repo();
        let key = SealKey::from_text("a key only navin holds, 32 bytes").unwrap();
        let root = commit(&repo, "root", None, "root\n");
        let tree = tree_of(&repo, "done");
        let signed = "navin: done v2\n";
        let tag = hex::encode(key.mac(None, tree, &[root], signed).finalize().into_bytes());
        let message = format!("{signed}{SEAL_TRAILER}: v1 {tag}\n");
        let c = repo
            .find_commit(commit(&repo, "done", Some(root), &message))
            .unwrap();
        assert!(key.verifies(&here(), &c));
        assert!(has_seal_line(&message));
    }

    #[test]
    fn a_short_key_is_refused_and_a_key_is_never_printed() {
        assert_eq!(SealKey::from_text(" short ").unwrap_err(), ShortKey(5));
        let text = SealKey::generate_text();
        assert_eq!(text.len(), 64);
        let key = SealKey::from_text(&text).unwrap();
        assert!(!format!("{key:?}").contains(&text));
        assert!(SealKey::derived_from(b"").is_none());
        let derived = SealKey::derived_from(b"webhook secret").unwrap();
        assert_ne!(
            derived.0,
            b"webhook secret".to_vec(),
            "not the secret itself"
        );
        assert_eq!(derived.0.len(), 32);
    }
}
