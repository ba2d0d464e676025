//! What the engine remembers briefly between events: collaborator roles, each repository's `.github/navin.yml`, each installation's grant, and the replies it sent whom.

pub mod grants;
pub mod permission;
pub mod protection;
pub mod replies;
pub mod repo_config;
