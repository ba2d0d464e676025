//! Renderer tests: markers, the mission panel, the plan comment, replies and escaping.

mod fixture;
mod gfm;
mod marker;
mod panel;
mod panel_scale;
mod plan;
mod reply;
mod snapshots;
mod text;
