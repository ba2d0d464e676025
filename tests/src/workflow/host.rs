//! What a job gives the actions a step runs (its runner, directories and context) and what a step hands back; below both the job and the stand-ins.

use std::collections::BTreeMap;
use std::path::Path;

use serde_yaml_ng::Value as Yaml;

use super::{Runner, Trigger};

/// What one step did: its outcome, output lines and log.
pub(crate) struct Done {
    pub ok: bool,
    pub outputs: BTreeMap<String, String>,
    pub log: String,
}

/// The job a step runs in, as an action sees it.
pub(crate) trait Host {
    fn runner(&self) -> &Runner;
    /// The workflow run's id (artifacts belong to it).
    fn run_id(&self) -> u64;
    fn trigger(&self) -> &Trigger;
    /// `GITHUB_WORKSPACE`.
    fn work(&self) -> &Path;
    /// `RUNNER_TEMP`.
    fn temp(&self) -> &Path;
    fn home(&self) -> &Path;
    /// Whether the job may ask for an OIDC token (`id-token: write`).
    fn id_token(&self) -> bool;
    /// A YAML scalar (an input's default) as text, its expressions evaluated.
    fn expr_text(&self, value: &Yaml) -> String;
    /// A `github` context value as text (`sha`, `ref`, …).
    fn github(&self, key: &str) -> String;
}
