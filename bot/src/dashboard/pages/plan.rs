//! A plan's page (the document rendered, status, approvals with reviewer and time, questions and answers, edit history with the section diff) and the list of all plans.

use maud::{html, Markup};
use navin_engine::view::PlanEntry;
use navin_ledger::plan::record::PlanRecord;

use super::layout::{badge, page, raw, Chrome};
use super::repo::GitHubLinks;
use crate::dashboard::markdown;

/// The conversation the plan lives in on GitHub, where comments stay.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub url: String,
    /// Comments on it, when GitHub could be asked.
    pub comments: Option<u64>,
}

/// Where the plan's conversation is on GitHub.
pub fn conversation_url(record: &PlanRecord, links: &GitHubLinks) -> String {
    if record.pull_request {
        links.pull(record.issue)
    } else {
        links.issue(record.issue)
    }
}

pub fn render(
    chrome: &Chrome<'_>,
    repo: &str,
    entry: &PlanEntry,
    conversation: Option<&Conversation>,
    can_edit: bool,
    flash: Option<&str>,
) -> Markup {
    let title = format!("Plan {} · {repo}", entry.id);
    let body = html! {
        p.muted { a href=(chrome.path(&format!("/r/{repo}"))) { (repo) } " / plans" }
        @if let Some(flash) = flash { div.flash #flash { (flash) } }
        @match &entry.record {
            Err(problem) => {
                h1 { "Plan " (entry.id) }
                div.flash.bad { "This plan's record cannot be read: " (maud::PreEscaped(crate::dashboard::markdown::inline(problem))) }
            }
            Ok(record) => {
                h1 { "Plan " (entry.id) " " (badge(record.status.word())) }
                p {
                    "Asked by @" (record.requested_by) ": " em { (super::spans::text(&record.request)) }
                    br;
                    span.muted { "Created " (record.created_at.format("%Y-%m-%d %H:%M UTC")) " · updated " (record.updated_at.format("%Y-%m-%d %H:%M UTC")) " · hash " code #plan-hash { (record.hash) } }
                }
                p {
                    @if let Some(c) = conversation {
                        a #conversation href=(c.url) { "Discussion on GitHub" }
                        @if let Some(n) = c.comments { " (" span #comment-count { (n) } " comment" @if n != 1 { "s" } ")" }
                        " · comments on a plan stay on GitHub. "
                    }
                    @if can_edit {
                        a.button #edit href=(chrome.path(&format!("/r/{repo}/plans/{}/edit", entry.id))) { "Edit plan" }
                    }
                }
                (approvals(record))
                @if let Some(doc) = entry.document() {
                    @let questions = &doc.plan().questions;
                    @if !questions.is_empty() {
                        h2 { "Questions" }
                        table #questions {
                            thead { tr { th { "Question" } th { "Default" } th { "Answer" } } }
                            tbody { @for q in questions {
                                tr { td { (q.question) } td { (q.default) } td { @match &q.answer { Some(a) => { (a) } None => { span.muted { "unanswered (the default applies)" } } } } }
                            } }
                        }
                    }
                }
                (history(record))
            }
        }
        h2 { "Document" }
        article.plan #plan-document { (raw(markdown::to_html(&entry.text))) }
    };
    page(chrome, &title, body)
}

fn approvals(record: &PlanRecord) -> Markup {
    html! {
        h2 { "Approvals" }
        @if record.approvals.is_empty() {
            p.muted { "No approval yet." }
        } @else {
            table #approvals {
                thead { tr { th { "Reviewer" } th { "When" } th { "Text approved" } th { "Standing" } } }
                tbody { @for a in &record.approvals {
                    tr {
                        td { "@" (a.approver) }
                        td { (a.at.format("%Y-%m-%d %H:%M UTC")) }
                        td { code { (a.plan_hash.get(..12).unwrap_or(&a.plan_hash)) } }
                        td { @if let Some(at) = a.revoked_at {
                                span.badge.bad { "revoked" } " " (at.format("%Y-%m-%d %H:%M")) @if let Some(why) = &a.revoked_because { " · " (why) }
                             } @else if a.plan_hash == record.hash { span.badge.ok { "current" } }
                             @else { span.badge.warn { "stale: the text changed" } } }
                    }
                } }
            }
        }
        @if !record.rejections.is_empty() {
            h2 { "Rejections" }
            ul { @for r in &record.rejections { li { "@" (r.by) " · " (r.at.format("%Y-%m-%d %H:%M UTC")) @if let Some(f) = &r.feedback { ": " (f) } } } }
        }
    }
}

fn history(record: &PlanRecord) -> Markup {
    html! {
        @if !record.edits.is_empty() {
            h2 { "Edit history" }
            table #edits {
                thead { tr { th { "When" } th { "Who" } th { "From" } th { "To" } th { "How" } } }
                tbody { @for e in record.edits.iter().rev() {
                    tr { td { (e.at.format("%Y-%m-%d %H:%M:%S UTC")) } td { "@" (e.by) } td { code { (e.from_hash.get(..12).unwrap_or(&e.from_hash)) } } td { code { (e.to_hash.get(..12).unwrap_or(&e.to_hash)) } } td { (e.via.as_deref().unwrap_or("")) } }
                } }
            }
            @if let Some(diff) = &record.diff {
                h3 { "Changes from the original text, by section" }
                div.diff #diff { (raw(markdown::to_html(&diff.to_markdown()))) }
            }
        }
        @if !record.superseded.is_empty() {
            h2 { "Superseded texts" }
            ul { @for s in &record.superseded { li { code { (s.hash.get(..12).unwrap_or(&s.hash)) } " " (s.status.word()) " · @" (s.by) ": " (s.reason) } } }
        }
    }
}

/// One plan in the all-plans list.
#[derive(Debug)]
pub struct PlanListRow<'a> {
    pub repo: &'a str,
    pub entry: &'a PlanEntry,
}

pub fn render_list(chrome: &Chrome<'_>, rows: &[PlanListRow<'_>]) -> Markup {
    let body = html! {
        h1 { "Plans" }
        @if rows.is_empty() {
            p.muted { "No plan yet in the repositories you can read." }
        } @else {
            table #all-plans {
                thead { tr { th { "Repository" } th { "Plan" } th { "Status" } th { "Approvals" } th { "Request" } th { "Updated" } } }
                tbody { @for row in rows {
                    tr {
                        td { a href=(chrome.path(&format!("/r/{}", row.repo))) { (row.repo) } }
                        td { a href=(chrome.path(&format!("/r/{}/plans/{}", row.repo, row.entry.id))) { (row.entry.id) } }
                        @match &row.entry.record {
                            Ok(r) => { td { (badge(r.status.word())) } td { (r.approver_count()) } td { (super::spans::text(&r.request)) } td { (r.updated_at.format("%Y-%m-%d %H:%M UTC")) } }
                            Err(p) => { td colspan="4" { span.badge.bad { "unreadable" } " " (maud::PreEscaped(crate::dashboard::markdown::inline(p))) } }
                        }
                    }
                } }
            }
        }
    };
    page(chrome, "Plans", body)
}
