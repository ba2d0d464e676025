//! The missions page: one row per readable repository that has a mission (goal, status, badges, progress), and the repositories without one.

use maud::{html, Markup};
use navin_ledger::{Ledger, MissionStatus, TaskStatus};

use super::layout::{badge, page, Chrome};

/// One repository on the page.
#[derive(Debug)]
pub struct MissionRow {
    pub full_name: String,
    /// The mission, none, or why the ledger could not be read.
    pub ledger: Result<Option<Ledger>, String>,
    /// Plans on the branch, and how many wait for approval.
    pub plans: usize,
    pub pending_plans: usize,
}

/// The badges a mission shows beside its status: why it is paused, loops, stalls,
/// replans due and a waiting stage.
pub fn badges(ledger: &Ledger) -> Vec<(String, &'static str)> {
    let m = &ledger.mission;
    let mut out = Vec::new();
    if let Some(reason) = m.pause_reason {
        out.push((format!("paused: {}", reason.as_str()), "paused"));
    }
    if m.progress.loop_detected {
        out.push(("loop".to_owned(), "bad"));
    }
    if m.progress.stall_count > 0 {
        out.push((format!("stalls {}", m.progress.stall_count), "warn"));
    }
    if m.progress.replan_needed {
        out.push(("replan needed".to_owned(), "warn"));
    }
    if !m.missing_info.is_empty() {
        out.push((format!("{} open question(s)", m.missing_info.len()), "warn"));
    }
    out
}

/// Done steps of all, and the width class of the bar (tens of percent).
pub fn progress(ledger: &Ledger) -> (usize, usize, &'static str) {
    let total = ledger.board.tasks.len();
    let done = ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done)
        .count();
    const CLASSES: [&str; 11] = [
        "w0", "w10", "w20", "w30", "w40", "w50", "w60", "w70", "w80", "w90", "w100",
    ];
    let tenth = (done * 10).checked_div(total).unwrap_or(0).min(10);
    (done, total, CLASSES[tenth])
}

fn status_word(status: MissionStatus) -> String {
    status.to_string()
}

pub fn render(chrome: &Chrome<'_>, rows: &[MissionRow], truncated: bool) -> Markup {
    let with: Vec<&MissionRow> = rows
        .iter()
        .filter(|r| !matches!(r.ledger, Ok(None)))
        .collect();
    let without: Vec<&MissionRow> = rows
        .iter()
        .filter(|r| matches!(r.ledger, Ok(None)))
        .collect();
    let body = html! {
        h1 { "Missions" }
        @if with.is_empty() {
            p.muted #no-missions { "No mission yet in the repositories you can read. Start one with " code { "/mission <goal>" } " on an issue." }
        } @else {
            table #missions {
                thead { tr { th { "Repository" } th { "Goal" } th { "Status" } th { "Progress" } th { "Version" } th { "Plans" } } }
                tbody {
                    @for row in &with {
                        tr data-repo=(row.full_name) {
                            td { a href=(chrome.path(&format!("/r/{}", row.full_name))) { (row.full_name) } }
                            @match &row.ledger {
                                Ok(Some(ledger)) => {
                                    @let (done, total, width) = progress(ledger);
                                    td { (super::spans::text(&ledger.mission.goal)) }
                                    td {
                                        (badge(&status_word(ledger.mission.status)))
                                        @for (text, class) in badges(ledger) { span class=(format!("badge {class}")) { (text) } }
                                    }
                                    td { span.progress { span class=(width) {} } " " (done) "/" (total) }
                                    td { "v" (ledger.mission.version) }
                                }
                                Err(problem) => {
                                    td colspan="4" { span.badge.bad { "unreadable" } " " (maud::PreEscaped(crate::dashboard::markdown::inline(problem))) }
                                }
                                Ok(None) => {}
                            }
                            td { (row.plans) @if row.pending_plans > 0 { " (" (row.pending_plans) " pending)" } }
                        }
                    }
                }
            }
        }
        @if !without.is_empty() {
            h2 { "Repositories without a mission" }
            ul #no-mission-repos {
                @for row in &without {
                    li { a href=(chrome.path(&format!("/r/{}", row.full_name))) { (row.full_name) }
                        @if row.plans > 0 { span.muted { " · " (row.plans) " plan(s)" } } }
                }
            }
        }
        @if truncated {
            p.muted { "GitHub listed more repositories than this page reads; the list is cut." }
        }
    };
    page(chrome, "Missions", body)
}
