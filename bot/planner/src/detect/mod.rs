//! Detection: reading a repository read-only into files, manifests, commands, imports, symbols and its map.

pub mod codeowners;
pub(crate) mod commands;
pub(crate) mod commit_tree;
pub(crate) mod history;
pub(crate) mod imports;
pub(crate) mod manifests;
pub(crate) mod map;
pub(crate) mod scan;
pub(crate) mod source;
pub(crate) mod symbols;
pub(crate) mod toolchain;
pub(crate) mod workflows;

#[cfg(test)]
mod tests;
