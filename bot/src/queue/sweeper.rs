//! Navin's clock: every sweep interval one `navin_sweep` delivery per repository with a live mission goes into the queue, so the closed agent loop's waits fire without a webhook.
//!
//! The ticks go through the same durable queue as webhooks, so a tick runs in its
//! repository's order and never beside one of its deliveries. One replica sweeps (the
//! leader, as for the reconciler); a tick's id names its time slot, so a second sweep in
//! the same slot, from a restart or another replica, is a duplicate and changes nothing.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;

use super::{DeliveryQueue, EnqueueOutcome, NewDelivery, QueueError};
use navin_domain::event::SWEEP_EVENT;
use navin_domain::sweeps::Sweeps;

/// Queues one tick per remembered repository for the slot `now_ms` falls in; returns
/// how many were new.
pub async fn enqueue_ticks(
    queue: &DeliveryQueue,
    sweeps: &Sweeps,
    now_ms: i64,
    interval: Duration,
) -> Result<usize, QueueError> {
    let slot = now_ms / i64::try_from(interval.as_millis().max(1)).unwrap_or(i64::MAX);
    let mut queued = 0;
    for target in sweeps.list() {
        let delivery = NewDelivery {
            delivery_id: format!(
                "navin-sweep-{slot}-{}",
                target.full_name.to_ascii_lowercase()
            ),
            event: SWEEP_EVENT.to_owned(),
            action: Some("tick".to_owned()),
            repository: Some(target.full_name.clone()),
            installation_id: Some(target.installation),
            headers: Vec::new(),
            body: Bytes::from(target.payload().to_string()),
            received_at_ms: now_ms,
        };
        if queue.enqueue(delivery).await? == EnqueueOutcome::Queued {
            queued += 1;
        }
    }
    Ok(queued)
}

/// Ticks now and every `interval` until `stop` flips, while this replica leads.
pub async fn run_sweeper(
    queue: DeliveryQueue,
    sweeps: Sweeps,
    interval: Duration,
    wake: Arc<Notify>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut leader: Option<super::Leader> = None;
    loop {
        if !leader.as_ref().is_some_and(super::Leader::held) {
            leader = match queue.try_lead("sweeper").await {
                Ok(held) => held,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot tell which replica sweeps");
                    None
                }
            };
        }
        if leader.is_some() {
            let now_ms = chrono::Utc::now().timestamp_millis();
            match enqueue_ticks(&queue, &sweeps, now_ms, interval).await {
                Ok(0) => {}
                Ok(n) => {
                    tracing::debug!(ticks = n, "queued sweep ticks");
                    wake.notify_waiters();
                }
                Err(e) => tracing::warn!(error = %e, "cannot queue sweep ticks"),
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
