//! The CLI's ledger seal key, kept in the user's config directory (mode 0600) rather than the repository an agent works in, and the repository id its seals name.
//!
//! The seal tells Navin's ledger commits from anyone else's, so its key must be out of
//! reach of the agents whose work the ledger judges. `.git/config` is not: an agent in
//! the checkout reads it like any file. Keys written there by earlier versions are moved
//! out on first use (the ledgers they sealed still verify).

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use navin_ledger::store::SealKey;

/// Where earlier versions kept the key: the repository's own git config.
pub const LEGACY_KEY_CONFIG: &str = "navin.ledgerkey";
/// The repository's local id (random, not secret): what its seals name and which key
/// file is its own.
pub const REPOSITORY_ID_CONFIG: &str = "navin.repositoryid";

/// The key and the repository name a local writer seals with.
#[derive(Debug, Clone)]
pub struct LocalSeal {
    pub key: SealKey,
    /// `local:<id>`, or NAVIN_REPOSITORY (`github:<id>` to write a ledger the App also
    /// writes, with its key in NAVIN_LEDGER_KEY).
    pub repository: String,
    /// The key file, when the key came from one.
    pub file: Option<PathBuf>,
}

/// Where the CLI keeps its own files: NAVIN_CONFIG_DIR, else `$XDG_CONFIG_HOME/navin`,
/// else `~/.config/navin`.
pub fn config_dir(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    if let Some(dir) = set("NAVIN_CONFIG_DIR") {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = set("XDG_CONFIG_HOME") {
        return Ok(PathBuf::from(dir).join("navin"));
    }
    match set("HOME") {
        Some(home) => Ok(PathBuf::from(home).join(".config").join("navin")),
        None => Err("no place for the ledger key: set NAVIN_CONFIG_DIR (or HOME), or give the key in NAVIN_LEDGER_KEY".to_owned()),
    }
}

/// The seal for the repository at `path`: NAVIN_LEDGER_KEY when set, else the
/// repository's key file under [`config_dir`], created (mode 0600) on first use or
/// moved there from `.git/config`.
pub fn local_seal(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<LocalSeal, String> {
    let repo = git2::Repository::discover(path).map_err(|e| {
        format!(
            "{} is not in a git repository: {}",
            path.display(),
            e.message()
        )
    })?;
    let mut config = repo
        .config()
        .and_then(|c| c.open_level(git2::ConfigLevel::Local))
        .map_err(|e| format!("cannot open the repository's git config: {}", e.message()))?;
    let id = match config.get_string(REPOSITORY_ID_CONFIG) {
        Ok(id) if valid_id(&id) => id,
        _ => {
            let id = hex::encode(rand::random::<[u8; 16]>());
            config
                .set_str(REPOSITORY_ID_CONFIG, &id)
                .map_err(|e| format!("cannot record the repository's id in its git config ({REPOSITORY_ID_CONFIG}): {}", e.message()))?;
            id
        }
    };
    let repository = env("NAVIN_REPOSITORY")
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| format!("local:{id}"));
    if let Some(text) = env("NAVIN_LEDGER_KEY").filter(|k| !k.trim().is_empty()) {
        let key = SealKey::from_text(&text).map_err(|e| format!("NAVIN_LEDGER_KEY: {e}"))?;
        return Ok(LocalSeal {
            key,
            repository,
            file: None,
        });
    }
    let file = config_dir(env)?.join("keys").join(&id);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let text = match config.get_string(LEGACY_KEY_CONFIG) {
                Ok(old) => old,
                Err(_) => SealKey::generate_text(),
            };
            write_key(&file, &text)?;
            // Moved, not copied: a key left in `.git/config` is readable in the checkout.
            if config.get_string(LEGACY_KEY_CONFIG).is_ok() {
                config.remove(LEGACY_KEY_CONFIG).map_err(|e| {
                    format!(
                        "moved the ledger key to {} but cannot remove it from the repository's git config ({LEGACY_KEY_CONFIG}): {}; remove it by hand",
                        file.display(),
                        e.message()
                    )
                })?;
            }
            text
        }
        Err(e) => return Err(format!("reading the ledger key {}: {e}", file.display())),
    };
    let key = SealKey::from_text(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(LocalSeal {
        key,
        repository,
        file: Some(file),
    })
}

/// Ids are ours (hex), so one can name a file; anything else in the config is replaced.
fn valid_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Writes a new key file readable by its owner alone, in a directory only its owner
/// can list; never replaces one (two first uses at once keep the first key).
fn write_key(file: &Path, text: &str) -> Result<(), String> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)))
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file);
    match created {
        Ok(mut f) => f
            .write_all(format!("{text}\n").as_bytes())
            .map_err(|e| format!("writing the ledger key {}: {e}", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("creating the ledger key {}: {e}", file.display())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn env_with(dir: &Path) -> impl Fn(&str) -> Option<String> + '_ {
        move |name| (name == "NAVIN_CONFIG_DIR").then(|| dir.display().to_string())
    }

    #[test]
    fn a_new_key_lives_outside_the_repository_readable_by_its_owner_alone() {
        let repo_dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(repo_dir.path()).unwrap();
        let seal = local_seal(repo_dir.path(), &env_with(home.path())).unwrap();
        let file = seal.file.clone().unwrap();
        assert!(file.starts_with(home.path()));
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let config = repo
            .config()
            .unwrap()
            .open_level(git2::ConfigLevel::Local)
            .unwrap();
        assert!(
            config.get_string(LEGACY_KEY_CONFIG).is_err(),
            "no key in .git/config"
        );
        assert!(seal.repository.starts_with("local:"));
        // The same key, and the same name, next time.
        let again = local_seal(repo_dir.path(), &env_with(home.path())).unwrap();
        assert_eq!(again.file, seal.file);
        assert_eq!(again.repository, seal.repository);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().trim().len(),
            64,
            "a generated key"
        );
    }

    #[test]
    fn a_key_an_earlier_version_kept_in_git_config_is_moved_out() {
        let repo_dir = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(repo_dir.path()).unwrap();
        let old = "0123456789abcdef0123456789abcdef";
        repo.config()
            .unwrap()
            .open_level(git2::ConfigLevel::Local)
            .unwrap()
            .set_str(LEGACY_KEY_CONFIG, old)
            .unwrap();
        let seal = local_seal(repo_dir.path(), &env_with(home.path())).unwrap();
        let file = seal.file.unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap().trim(), old);
        let config = repo
            .config()
            .unwrap()
            .open_level(git2::ConfigLevel::Local)
            .unwrap();
        assert!(config.get_string(LEGACY_KEY_CONFIG).is_err());
    }
}
