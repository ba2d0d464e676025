//! A repository's page: its mission (badges, progress, the step graph and a steps table readable without script, checks, evidence, attempts, history, checkpoints) and its plans.

use maud::{html, Markup};
use navin_engine::view::RepoView;
use navin_ledger::plan::record::RecordStatus;
use navin_ledger::{Ledger, MissionStatus, TaskStatus};

use super::actions::{blocked_why, Acts, Form};
use super::layout::{badge, page, raw, Chrome};
use super::missions::{badges, progress};
use crate::dashboard::dag;

/// Links into the repository on GitHub.
#[derive(Debug, Clone)]
pub struct GitHubLinks {
    /// `https://github.com/owner/name` (or the GHES equivalent).
    pub repo_url: String,
}

impl GitHubLinks {
    pub fn pull(&self, n: u64) -> String {
        format!("{}/pull/{n}", self.repo_url)
    }
    pub fn issue(&self, n: u64) -> String {
        format!("{}/issues/{n}", self.repo_url)
    }
}

/// What an action just did, shown above the mission: `ok` false for a refusal.
#[derive(Debug, Clone)]
pub struct Flash {
    pub text: String,
    pub ok: bool,
}

/// The page; `acts` is set for people who may act on it (writers: the forms), and
/// `flash` says what their last action did.
pub fn render(
    chrome: &Chrome<'_>,
    view: &RepoView,
    links: &GitHubLinks,
    acts: Option<Acts<'_>>,
    flash: Option<&Flash>,
) -> Markup {
    let body = html! {
        h1 { (view.repository) }
        @if let Some(flash) = flash {
            div #flash class=(if flash.ok { "flash" } else { "flash bad" }) { (maud::PreEscaped(crate::dashboard::markdown::inline(&flash.text))) }
        }
        p.muted {
            a href=(links.repo_url) { "On GitHub" }
            " · ledger branch " code { (view.ledger_branch) }
            @if let Some(commit) = &view.commit { " at " code { (commit.get(..10).unwrap_or(commit)) } }
        }
        @match &view.ledger {
            Err(problem) => {
                div.flash.bad #ledger-problem {
                    strong { "The ledger branch cannot be read. " }
                    (maud::PreEscaped(crate::dashboard::markdown::inline(problem)))
                    " Navin does not write on top of it until a writer restores it."
                }
                // What Navin last trusted, shown read-only: no action acts on it.
                @if let Some(trusted) = &view.trusted {
                    p.muted #trusted-state { "As Navin last trusted it (v" (trusted.mission.version) "), read-only:" }
                    (mission(chrome, &view.repository, trusted, links, None))
                }
            }
            Ok(None) => { p.muted #no-mission { "No mission in this repository. Start one with " code { "/mission <goal>" } " on an issue." } }
            Ok(Some(ledger)) => { (mission(chrome, &view.repository, ledger, links, acts)) }
        }
        h2 { "Plans" }
        @if view.plans.is_empty() {
            p.muted { "No plan yet. Ask for one with " code { "/plan <request>" } " on an issue or pull request." }
        } @else {
            table #plans {
                thead { tr { th { "Plan" } th { "Status" } th { "Approvals" } th { "Request" } th { "Updated" } @if acts.is_some() { th { "Decide" } } } }
                tbody {
                    @for entry in &view.plans {
                        tr {
                            td { a href=(chrome.path(&format!("/r/{}/plans/{}", view.repository, entry.id))) { (entry.id) } }
                            @match &entry.record {
                                Ok(record) => {
                                    td { (badge(record.status.word())) }
                                    td { (record.approver_count()) }
                                    td { (super::spans::text(&clip(&record.request, 120))) }
                                    td { (record.updated_at.format("%Y-%m-%d %H:%M UTC")) }
                                    @if let Some(acts) = acts { td { (decide(chrome, acts, &entry.id, record.status, links)) } }
                                }
                                Err(problem) => { td colspan="4" { span.badge.bad { "unreadable" } " " (maud::PreEscaped(crate::dashboard::markdown::inline(problem))) } }
                            }
                        }
                    }
                }
            }
        }
    };
    page(chrome, &view.repository, body)
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// Whether a plan status counts as waiting for people.
pub fn is_pending(status: RecordStatus) -> bool {
    status == RecordStatus::Pending
}

/// Approve and reject for a pending plan on an issue; a pull request's plan is approved
/// by a review on GitHub, so it gets a link there instead.
fn decide(
    chrome: &Chrome<'_>,
    acts: Acts<'_>,
    id: &str,
    status: RecordStatus,
    links: &GitHubLinks,
) -> Markup {
    if !is_pending(status) {
        return html! {};
    }
    if let Some(n) = id.strip_prefix("pr-").and_then(|n| n.parse::<u64>().ok()) {
        return html! { a href=(format!("{}/files", links.pull(n))) { "Review on GitHub" } };
    }
    let approve = format!("approve-{id}");
    let reject = format!("reject-{id}");
    let plan = [("plan", id)];
    html! {
        (acts.form(chrome, &Form { key: &approve, action: "approve", hidden: &plan, text: None, label: "Approve", primary: true }))
        " "
        (acts.form(chrome, &Form { key: &reject, action: "reject", hidden: &plan, text: Some(("what to change (optional)", false)), label: "Reject", primary: false }))
    }
}

/// Pause or resume, and `/continue` when a finished stage waits for a person.
fn mission_acts(chrome: &Chrome<'_>, acts: Acts<'_>, ledger: &Ledger) -> Markup {
    let status = ledger.mission.status;
    let live = matches!(status, MissionStatus::Running | MissionStatus::Blocked);
    let waiting = live && ledger.stages().is_some_and(|s| s.waiting_for_continue);
    html! {
        p #mission-acts {
            @if waiting {
                (acts.form(chrome, &Form { key: "continue", action: "continue", hidden: &[], text: Some(("note (optional)", false)), label: "Continue to the next stage", primary: true }))
                " "
            }
            @if live {
                (acts.form(chrome, &Form { key: "pause", action: "pause", hidden: &[], text: Some(("reason (optional)", false)), label: "Pause", primary: false }))
            }
            @if status == MissionStatus::Paused {
                (acts.form(chrome, &Form { key: "resume", action: "resume", hidden: &[], text: None, label: "Resume", primary: true }))
            }
        }
    }
}

fn mission(
    chrome: &Chrome<'_>,
    repo: &str,
    ledger: &Ledger,
    links: &GitHubLinks,
    acts: Option<Acts<'_>>,
) -> Markup {
    let m = &ledger.mission;
    let (done, total, width) = progress(ledger);
    let tasks = &ledger.board.tasks;
    html! {
        section #mission {
            h2 { "Mission" }
            p.goal { strong { (super::spans::text(&m.goal)) } }
            p {
                (badge(&m.status.to_string()))
                @for (text, class) in badges(ledger) { span class=(format!("badge {class}")) { (text) } }
                " " span.progress { span class=(width) {} } " " (done) "/" (total) " steps done · v" (m.version)
                @if let Some(origin) = &m.origin {
                    @if let Some(issue) = origin.issue { " · panel on " a href=(links.issue(issue)) { "#" (issue) } }
                    @if let Some(plan) = &origin.plan_id { " · from plan " a href=(chrome.path(&format!("/r/{repo}/plans/{plan}"))) { (plan) } }
                }
                @if let Some(gate) = &m.stage_gate { " · stage " (gate.released) " released (" (gate.policy.as_str()) ")" }
            }
            @if let Some((why, unblock)) = blocked_why(ledger) {
                div.flash.bad #blocked { strong { (why) } " " (unblock) }
            }
            @if let Some(acts) = acts { (mission_acts(chrome, acts, ledger)) }
            @if !tasks.is_empty() {
                h2 { "Steps" }
                div.dag-wrap { (raw(dag::svg(tasks))) }
                table #steps {
                    thead { tr { th { "Step" } th { "Title" } th { "Status" } th { "Depends on" } th { "Pull requests" } th { "Checks" } th { "Evidence" } th { "Attempts" } } }
                    tbody {
                        @for t in tasks {
                            tr id=(format!("step-{}", t.id)) data-status=(t.status.as_str()) {
                                td { code { (t.id) } @if let Some(stage) = t.stage { span.muted { " stage " (stage) } } }
                                td { (super::spans::text(&t.title)) @if let Some(agent) = &t.agent { span.muted { " · " (agent) } } }
                                td { (badge(t.status.as_str())) }
                                td { @for d in &t.depends_on { a href=(format!("#step-{d}")) { (d) } " " } }
                                td { @for pr in &t.links.prs { a href=(links.pull(*pr)) { "#" (pr) } " " }
                                     @if let Some(issue) = t.links.issue { a href=(links.issue(issue)) { "issue #" (issue) } } }
                                td { @if let Some(round) = &t.ci_round {
                                        @for name in &round.green { span.badge.ok { (name) } }
                                        @for name in &round.red { span.badge.bad { (name) } }
                                        span.muted { " at " code { (round.head_sha.get(..7).unwrap_or(&round.head_sha)) } }
                                     } }
                                td { @for e in &t.evidence {
                                        @let word = if e.ok { "ok" } else { "bad" };
                                        @let label = format!("{}{}", e.kind.as_str(), e.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default());
                                        @match e.url.as_deref().filter(|u| crate::dashboard::markdown::is_safe_url(u)) {
                                            Some(url) => { a class=(format!("badge {word}")) href=(url) title=(e.summary) { (label) } }
                                            None => { span class=(format!("badge {word}")) title=(e.summary) { (label) } }
                                        }
                                     } }
                                td { (t.retry_count) "/" (t.max_retries)
                                     @if let (Some(acts), TaskStatus::Failed) = (acts, t.status) {
                                        " " (acts.form(chrome, &Form { key: &format!("retry-{}", t.id), action: "retry", hidden: &[("step", t.id.as_str())], text: None, label: "Retry", primary: false }))
                                     } }
                            }
                        }
                    }
                }
            }
            @if !m.missing_info.is_empty() || !m.facts.is_empty() || !m.constraints.is_empty() || !m.acceptance_criteria.is_empty() {
                h2 { "What is known" }
                @if !m.missing_info.is_empty() { h3 { "Open questions" } ol #questions { @for (i, q) in m.missing_info.iter().enumerate() { li { (super::spans::text(q))
                    @if let Some(acts) = acts {
                        @let n = (i + 1).to_string();
                        " " (acts.form(chrome, &Form { key: &format!("answer-{n}"), action: "answer", hidden: &[("question", n.as_str())], text: Some(("your answer", true)), label: "Answer", primary: false }))
                    }
                } } } }
                @if !m.facts.is_empty() { h3 { "Facts" } ul { @for f in &m.facts { li { (super::spans::text(f)) } } } }
                @if !m.constraints.is_empty() { h3 { "Constraints" } ul { @for c in &m.constraints { li { (super::spans::text(c)) } } } }
                @if !m.acceptance_criteria.is_empty() { h3 { "Acceptance criteria" } ul { @for c in &m.acceptance_criteria { li { (super::spans::text(c)) } } } }
            }
            @if !m.checkpoints.is_empty() {
                h2 { "Checkpoints" }
                ul #checkpoints { @for c in m.checkpoints.iter().rev() {
                    li { code { "v" (c.version) } " " (super::spans::text(&c.reason)) span.muted { " · " (c.at.format("%Y-%m-%d %H:%M UTC")) } }
                } }
            }
            h2 { "History" }
            table #history {
                thead { tr { th { "Version" } th { "When" } th { "Who" } th { "Operation" } th { "Why" } } }
                tbody { @for h in m.history.iter().rev() {
                    tr { td { "v" (h.version) } td { (h.at.format("%Y-%m-%d %H:%M UTC")) } td { (h.actor.to_string()) } td { code { (h.operation) } } td { (super::spans::text(&h.reason)) } }
                } }
            }
        }
    }
}
