//! Recovers deliveries GitHub could not hand us (downtime, timeouts): GitHub never
//! redelivers by itself, so at start and periodically we ask for redelivery of every
//! event that has no successful attempt and that our queue has never seen.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::DeliveryQueue;
use crate::server::metrics::Metrics;
use navin_github::deliveries::HookDelivery;
use navin_github::{GitHubApp, GitHubError};

/// GitHub keeps deliveries for 3 days on github.com; redelivering older ones fails.
pub const REDELIVERY_WINDOW: chrono::Duration = chrono::Duration::days(3);
/// Redeliveries GitHub already made for one GUID beyond which we stop asking (a delivery
/// that fails every time, e.g. signed with a secret we no longer accept).
pub const MAX_REDELIVERIES_PER_GUID: usize = 3;

/// The attempt ids to redeliver, at most one per GUID. A GUID qualifies when none of its
/// attempts is `OK`, the queue does not hold it, its latest attempt is inside `window`,
/// and it has not already been redelivered [`MAX_REDELIVERIES_PER_GUID`] times.
pub fn plan_redeliveries(
    attempts: &[HookDelivery],
    held: &HashSet<String>,
    now: DateTime<Utc>,
    window: chrono::Duration,
) -> Vec<u64> {
    let mut by_guid: BTreeMap<&str, Vec<&HookDelivery>> = BTreeMap::new();
    for attempt in attempts {
        by_guid
            .entry(attempt.guid.as_str())
            .or_default()
            .push(attempt);
    }
    let oldest_allowed = now - window;
    let mut chosen: Vec<(DateTime<Utc>, u64)> = by_guid
        .into_iter()
        .filter(|(guid, _)| !held.contains(*guid))
        .filter(|(_, list)| !list.iter().any(|a| a.status.eq_ignore_ascii_case("OK")))
        .filter(|(_, list)| {
            list.iter().filter(|a| a.redelivery).count() < MAX_REDELIVERIES_PER_GUID
        })
        .filter_map(|(_, list)| list.into_iter().max_by_key(|a| (a.delivered_at, a.id)))
        .filter(|latest| latest.delivered_at >= oldest_allowed)
        .map(|latest| (latest.delivered_at, latest.id))
        .collect();
    // Oldest first, so redelivered events reach the queue in their original order.
    chosen.sort_unstable();
    chosen.into_iter().map(|(_, id)| id).collect()
}

/// One sweep: list, decide, redeliver. Returns how many redeliveries were requested.
pub async fn reconcile_once(
    github: &GitHubApp,
    queue: &DeliveryQueue,
    metrics: &Metrics,
    now: DateTime<Utc>,
) -> Result<usize, ReconcileError> {
    let attempts = github.hook_deliveries(now - REDELIVERY_WINDOW, 50).await?;
    let guids: Vec<String> = attempts
        .iter()
        .map(|a| a.guid.clone())
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let held = queue.known(guids).await?;
    let plan = plan_redeliveries(&attempts, &held, now, REDELIVERY_WINDOW);
    let mut requested = 0;
    for id in plan {
        match github.redeliver(id).await {
            Ok(()) => {
                requested += 1;
                metrics.redeliveries_requested.inc();
            }
            Err(e) => tracing::warn!(attempt = id, error = %e, "redelivery request failed"),
        }
    }
    Ok(requested)
}

#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Queue(#[from] super::QueueError),
}

/// Runs a sweep now and then every `interval` until `stop` flips to true.
pub async fn run_reconciler(
    github: GitHubApp,
    queue: DeliveryQueue,
    metrics: Arc<Metrics>,
    interval: Duration,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    // On a shared queue one replica reconciles: the others would ask GitHub for the
    // same redeliveries. Leadership moves when its holder's connection dies.
    let mut leader: Option<crate::queue::Leader> = None;
    loop {
        if !leader.as_ref().is_some_and(crate::queue::Leader::held) {
            leader = match queue.try_lead("reconciler").await {
                Ok(held) => held,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot tell which replica reconciles");
                    None
                }
            };
            if leader.is_some() {
                tracing::info!("this replica reconciles missed deliveries");
            }
        }
        if leader.is_some() {
            match reconcile_once(&github, &queue, &metrics, Utc::now()).await {
                Ok(n) if n > 0 => tracing::info!(
                    redeliveries = n,
                    "asked GitHub to redeliver missed deliveries"
                ),
                Ok(_) => tracing::debug!("no missed deliveries"),
                Err(e) => tracing::warn!(error = %e, "delivery reconciliation failed"),
            }
        }
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap()
    }

    fn attempt(
        id: u64,
        guid: &str,
        status: &str,
        hours_ago: i64,
        redelivery: bool,
    ) -> HookDelivery {
        HookDelivery {
            id,
            guid: guid.to_owned(),
            delivered_at: now() - chrono::Duration::hours(hours_ago),
            redelivery,
            status: status.to_owned(),
            status_code: if status == "OK" { 202 } else { 502 },
            event: "issue_comment".to_owned(),
            action: Some("created".to_owned()),
            installation_id: Some(1),
        }
    }

    #[test]
    fn only_guids_without_an_ok_attempt_are_redelivered() {
        let attempts = vec![
            attempt(1, "a", "Invalid HTTP Response: 502", 5, false),
            attempt(2, "a", "OK", 4, true),
            attempt(3, "b", "Invalid HTTP Response: 502", 5, false),
            attempt(4, "c", "OK", 1, false),
        ];
        assert_eq!(
            plan_redeliveries(&attempts, &HashSet::new(), now(), REDELIVERY_WINDOW),
            vec![3]
        );
    }

    #[test]
    fn guids_already_in_the_queue_are_not_redelivered() {
        // We stored it but GitHub saw a timeout (e.g. the 202 was lost): no redelivery.
        let attempts = vec![attempt(1, "a", "timed out", 2, false)];
        let held = HashSet::from(["a".to_owned()]);
        assert!(plan_redeliveries(&attempts, &held, now(), REDELIVERY_WINDOW).is_empty());
    }

    #[test]
    fn attempts_outside_the_three_day_window_are_skipped() {
        let attempts = vec![
            attempt(1, "old", "502", 73, false),
            attempt(2, "recent", "502", 71, false),
        ];
        assert_eq!(
            plan_redeliveries(&attempts, &HashSet::new(), now(), REDELIVERY_WINDOW),
            vec![2]
        );
    }

    #[test]
    fn one_redelivery_per_guid_using_its_latest_attempt_oldest_guid_first() {
        let attempts = vec![
            attempt(10, "later", "502", 1, false),
            attempt(5, "first", "502", 10, false),
            attempt(7, "first", "502", 9, true),
        ];
        assert_eq!(
            plan_redeliveries(&attempts, &HashSet::new(), now(), REDELIVERY_WINDOW),
            vec![7, 10]
        );
    }

    #[test]
    fn a_guid_that_keeps_failing_is_given_up_after_three_redeliveries() {
        let attempts = vec![
            attempt(1, "a", "502", 10, false),
            attempt(2, "a", "502", 9, true),
            attempt(3, "a", "502", 8, true),
            attempt(4, "a", "502", 7, true),
        ];
        assert!(plan_redeliveries(&attempts, &HashSet::new(), now(), REDELIVERY_WINDOW).is_empty());
    }
}
