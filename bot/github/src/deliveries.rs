//! The App's webhook delivery log: list attempts and ask GitHub to redeliver one.

use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::client::{ApiRequest, GitHubApp};
use super::GitHubError;

/// One delivery attempt as `GET /app/hook/deliveries` reports it. Redeliveries are
/// separate entries sharing the original's `guid`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HookDelivery {
    /// Id of this attempt; what `POST .../{id}/attempts` takes.
    pub id: u64,
    /// The `X-GitHub-Delivery` value, shared by all attempts of one event.
    pub guid: String,
    pub delivered_at: DateTime<Utc>,
    #[serde(default)]
    pub redelivery: bool,
    /// `OK` when our server answered 2xx.
    pub status: String,
    #[serde(default)]
    pub status_code: u16,
    pub event: String,
    #[serde(default)]
    pub action: Option<String>,
    #[serde(default)]
    pub installation_id: Option<u64>,
}

impl GitHubApp {
    /// Delivery attempts newer than `since`, newest first, following the cursor in
    /// `Link: rel="next"`. Stops at `max_pages` so a huge backlog cannot stall a sweep.
    pub async fn hook_deliveries(
        &self,
        since: DateTime<Utc>,
        max_pages: usize,
    ) -> Result<Vec<HookDelivery>, GitHubError> {
        let mut all = Vec::new();
        let mut next = Some("/app/hook/deliveries?per_page=100".to_owned());
        let mut pages = 0;
        while let Some(path) = next.take() {
            if pages >= max_pages {
                tracing::warn!(pages, "stopped paging webhook deliveries at the page limit");
                break;
            }
            pages += 1;
            let response = self.app_request(ApiRequest::get(path.clone())).await?;
            let page: Vec<HookDelivery> = response.json(&path)?;
            let reached_window_start = page.last().is_none_or(|d| d.delivered_at < since);
            all.extend(page.into_iter().filter(|d| d.delivered_at >= since));
            if !reached_window_start {
                next = response.next_page();
            }
        }
        Ok(all)
    }

    /// Asks GitHub to send attempt `delivery_id` again (answered 202).
    pub async fn redeliver(&self, delivery_id: u64) -> Result<(), GitHubError> {
        let path = format!("/app/hook/deliveries/{delivery_id}/attempts");
        self.app_request(ApiRequest::new(http::Method::POST, path))
            .await?;
        Ok(())
    }
}
