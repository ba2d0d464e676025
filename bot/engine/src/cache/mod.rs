//! What the engine remembers briefly between events: collaborator roles, each repository's `.github/navin.yml`, and each installation's grant.

pub mod grants;
pub mod permission;
pub mod repo_config;
