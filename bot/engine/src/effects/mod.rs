//! Navin's own marks on GitHub, each found before it is written so nothing is posted twice: comments and reactions, the `navin/plan` and `navin/config` checks, the mission panel.

pub mod comments;
pub mod panel;
pub mod plan_check;
