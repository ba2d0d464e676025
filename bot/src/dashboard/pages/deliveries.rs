//! The deliveries page for installation admins: what is queued, running and failed (with the stored error and attempts), each failed one with a redeliver button.

use chrono::{DateTime, Utc};
use maud::{html, Markup};

use super::layout::{badge, page, Chrome};

/// One stored delivery as the page shows it.
#[derive(Debug, Clone)]
pub struct DeliveryView {
    pub delivery_id: String,
    pub event: String,
    pub action: Option<String>,
    pub repository: Option<String>,
    pub state: String,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub received_at: Option<DateTime<Utc>>,
}

pub fn render(chrome: &Chrome<'_>, rows: &[DeliveryView], flash: Option<(&str, bool)>) -> Markup {
    let body = html! {
        h1 { "Deliveries" }
        p.muted { "Webhook deliveries of the repositories you administer, newest first. A failed delivery ran out of attempts; redelivering asks GitHub to send it again, and Navin runs it once more (operations it already applied are not applied twice)." }
        @if let Some((text, ok)) = flash { div class=(if ok { "flash" } else { "flash bad" }) #flash { (text) } }
        @if rows.is_empty() {
            p.muted #no-deliveries { "Nothing queued, running or failed." }
        } @else {
            table #deliveries {
                thead { tr { th { "Received" } th { "Repository" } th { "Event" } th { "State" } th { "Attempts" } th { "Error" } th {} } }
                tbody { @for d in rows {
                    tr data-delivery=(d.delivery_id) {
                        td { @if let Some(at) = d.received_at { (at.format("%Y-%m-%d %H:%M:%S UTC")) } br; code.muted { (d.delivery_id) } }
                        td { (d.repository.as_deref().unwrap_or("")) }
                        td { (d.event) @if let Some(a) = &d.action { "." (a) } }
                        td { (badge(&d.state)) }
                        td { (d.attempts) }
                        td { @if let Some(e) = &d.last_error { pre { (e) } } }
                        td { @if d.state == "failed" {
                            form.inline method="post" action=(chrome.path(&format!("/deliveries/{}/redeliver", d.delivery_id))) {
                                input type="hidden" name="csrf" value=(chrome.csrf);
                                button.redeliver type="submit" { "Redeliver" }
                            }
                        } }
                    }
                } }
            }
        }
    };
    page(chrome, "Deliveries", body)
}
