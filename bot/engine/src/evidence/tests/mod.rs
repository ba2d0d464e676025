//! Evidence policy tests: one per rule of DESIGN.md "Evidence", plus step links and payload parsing.

mod decide;
mod fixture;
mod link;
mod message;
mod payloads;
mod verdict;
