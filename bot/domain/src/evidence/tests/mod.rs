//! Evidence policy tests: one per rule of docs/engine.md "Links and evidence", plus step links and payload parsing.

mod decide;
mod fingerprint;
mod fixture;
mod link;
mod message;
mod payloads;
mod verdict;
