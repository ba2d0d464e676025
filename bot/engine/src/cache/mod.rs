//! What the engine remembers briefly between events: collaborator roles and each repository's `.github/navin.yml`.

pub mod permission;
pub mod repo_config;
