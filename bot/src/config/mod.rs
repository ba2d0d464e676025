//! Configuration: process settings for `navin serve` and the per-repository `.github/navin.yml`.

pub mod repo;
pub mod serve;

pub use repo::{parse_repo_config, RepoConfig, RepoConfigError};
pub use serve::{ConfigError, ServeArgs};
