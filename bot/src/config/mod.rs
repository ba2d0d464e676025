//! Process settings for `navin serve`; the per-repository `.github/navin.yml` is the engine's (`navin_domain::config`).

pub mod serve;

pub use navin_domain::config::{parse_repo_config, RepoConfig, RepoConfigError};
pub use serve::{ConfigError, ServeArgs};
