//! Pure decisions with no I/O: when a step's next attempt is due, which reviews approve a plan, what a click on the check's "Approve plan" button approves, which approvals count when only code owners may approve, whose review a plan pull request asks for, what the repository's plan settings require, what `navin/config` says about a pull request's `.github/navin.yml`, what an installation event asks for, whether anyone but Navin can change the ledger branch, how a task list or a plan becomes mission steps, who may change a mission, and how non-trivial a request reads.

pub mod approvals;
pub mod attempts;
pub mod classify;
pub mod codeowners_approval;
pub mod config_check;
pub mod drift;
pub mod installation;
pub mod plan_button;
pub mod plan_file;
pub mod plan_policy;
pub mod protection;
pub mod review_requests;
pub mod steps;
