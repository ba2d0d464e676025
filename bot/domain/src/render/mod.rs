//! Markdown for Navin's GitHub comments: the mission panel, the plan comment and short replies, each pure and size-bounded.

mod attempts;
mod brief;
mod fold;
mod marker;
mod mermaid;
mod panel;
pub mod plan_check;
mod plan_comment;
mod plan_summary;
pub mod reply;
mod repo;
mod table;
pub mod text;

#[cfg(test)]
mod tests;

pub use attempts::{previous_attempts, Workplace};
pub use brief::{context_paths, step_branch, step_brief, step_marker, BriefOptions};
pub use marker::{parse_marker, Marker, ReplyKind, PANEL_FORMAT};
pub use mermaid::{label as mermaid_label, MAX_GRAPH_EDGES, MAX_GRAPH_NODES};
pub use panel::{mission_panel, PanelContext, PanelLink};
pub use plan_comment::{
    owner_notes, plan_comment, plan_status, PlanApproval, PlanCommentInfo, PlanStatus, FOLD_PLAN_AT,
};
pub use repo::RepoRef;
pub use table::FOLD_AT;
pub use text::{COMMENT_BUDGET, COMMENT_LIMIT};
