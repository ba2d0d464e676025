//! Workers: handle queued deliveries, in order per repository and concurrently across them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::{watch, Notify};
use tokio::task::{Id, JoinSet};

use super::{ClaimedDelivery, DeliveryHandler, DeliveryQueue, HandlerError};
use crate::server::metrics::Metrics;

/// How deliveries are scheduled and retried.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Deliveries handled at once; never more than one per repository.
    pub concurrency: usize,
    /// Attempts before a delivery is marked failed.
    pub max_attempts: u32,
    /// Delay before the second attempt; doubles per attempt.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// How often to look for due retries when nothing wakes the scheduler.
    pub idle_poll: Duration,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        Self {
            concurrency: 8,
            max_attempts: 6,
            base_backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(600),
            idle_poll: Duration::from_secs(1),
        }
    }
}

/// Delay after failed attempt number `attempt` (1-based): `base * 2^(attempt-1)`, capped.
pub fn retry_delay(config: &WorkerConfig, attempt: u32) -> Duration {
    let factor = 1u32
        .checked_shl(attempt.saturating_sub(1))
        .unwrap_or(u32::MAX);
    config
        .base_backoff
        .checked_mul(factor)
        .unwrap_or(config.max_backoff)
        .min(config.max_backoff)
}

/// What happens to a delivery after an attempt, decided from the handler's result.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Done,
    RetryAt(i64, String),
    Failed(String),
}

fn verdict(
    config: &WorkerConfig,
    attempt: u32,
    result: Result<(), HandlerError>,
    now_ms: i64,
) -> Outcome {
    match result {
        Ok(()) => Outcome::Done,
        Err(HandlerError::Permanent(msg)) => Outcome::Failed(msg),
        Err(HandlerError::Transient(msg)) if attempt >= config.max_attempts => {
            Outcome::Failed(format!("gave up after {attempt} attempts: {msg}"))
        }
        Err(HandlerError::Transient(msg)) => {
            let delay = i64::try_from(retry_delay(config, attempt).as_millis()).unwrap_or(i64::MAX);
            Outcome::RetryAt(now_ms.saturating_add(delay), msg)
        }
        // However many attempts it took: the disk coming back is not the delivery's
        // fault, and everything it carries applies once then.
        Err(HandlerError::Storage(msg)) => {
            let delay = i64::try_from(retry_delay(config, attempt).as_millis()).unwrap_or(i64::MAX);
            Outcome::RetryAt(now_ms.saturating_add(delay), format!("storage: {msg}"))
        }
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Crashes (runs cut short by the process dying, or a lapsed lease) after which a
/// delivery is failed rather than run again: a payload that takes the server down each
/// time would otherwise restart it forever.
pub const MAX_CRASHES: u32 = 5;

/// Spawns the scheduler. `wake` is notified by ingress after each enqueue.
#[derive(Debug)]
pub struct Workers;

/// Running workers; [`WorkerHandle::shutdown`] stops them.
#[derive(Debug)]
pub struct WorkerHandle {
    stop: watch::Sender<Option<Duration>>,
    task: tokio::task::JoinHandle<ShutdownReport>,
}

/// What a shutdown left behind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Handlers that finished during the grace period.
    pub finished: usize,
    /// Handlers cut off at the deadline; their deliveries run again at the next start.
    pub abandoned: usize,
}

impl Workers {
    pub fn spawn(
        queue: DeliveryQueue,
        handler: Arc<dyn DeliveryHandler>,
        config: WorkerConfig,
        metrics: Arc<Metrics>,
        wake: Arc<Notify>,
    ) -> WorkerHandle {
        let (stop, stopped) = watch::channel(None);
        let scheduler = Scheduler {
            queue,
            handler,
            config,
            metrics,
            wake,
            tasks: JoinSet::new(),
            in_flight: HashMap::new(),
            next_prune: tokio::time::Instant::now(),
            next_renew: tokio::time::Instant::now(),
        };
        let task = tokio::spawn(scheduler.run(stopped));
        WorkerHandle { stop, task }
    }
}

impl WorkerHandle {
    /// Stops claiming, lets running handlers finish within `grace`, then abandons the
    /// rest (they stay in the queue and run again at the next start).
    pub async fn shutdown(self, grace: Duration) -> ShutdownReport {
        let _ = self.stop.send(Some(grace));
        let abort = self.task.abort_handle();
        // Backstop in case recording outcomes hangs past the grace period.
        match tokio::time::timeout(grace + Duration::from_secs(2), self.task).await {
            Ok(Ok(report)) => report,
            _ => {
                abort.abort();
                ShutdownReport::default()
            }
        }
    }
}

struct InFlight {
    delivery_id: String,
    seq: i64,
    attempt: u32,
    /// [`Delivery::tries`]: what the verdict counts.
    tries: u32,
    received_at_ms: i64,
    started: tokio::time::Instant,
}

struct Scheduler {
    queue: DeliveryQueue,
    handler: Arc<dyn DeliveryHandler>,
    config: WorkerConfig,
    metrics: Arc<Metrics>,
    wake: Arc<Notify>,
    tasks: JoinSet<Result<(), HandlerError>>,
    in_flight: HashMap<Id, InFlight>,
    next_prune: tokio::time::Instant,
    /// When the leases of running deliveries are next extended (shared queues only).
    next_renew: tokio::time::Instant,
}

/// Done deliveries are remembered this long, beyond GitHub's redelivery window (3 days,
/// 7 on GHES), so a late redelivery is still recognised as a duplicate.
pub const KEEP_DONE: Duration = Duration::from_secs(8 * 24 * 3600);
/// Failed deliveries are kept this long for inspection.
pub const KEEP_FAILED: Duration = Duration::from_secs(30 * 24 * 3600);
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

impl Scheduler {
    async fn run(mut self, mut stopped: watch::Receiver<Option<Duration>>) -> ShutdownReport {
        let grace = loop {
            if let Some(grace) = *stopped.borrow() {
                break grace;
            }
            self.prune_if_due().await;
            self.renew_if_due().await;
            self.fill().await;
            let renew_at = self.next_renew;
            let renewing = self.queue.renew_every().is_some() && !self.in_flight.is_empty();
            tokio::select! {
                () = tokio::time::sleep_until(renew_at), if renewing => {}
                () = self.wake.notified() => {}
                Some(joined) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => {
                    self.finish(joined).await;
                }
                () = tokio::time::sleep(self.config.idle_poll) => {}
                changed = stopped.changed() => {
                    // The handle was dropped without a shutdown: stop at once.
                    if changed.is_err() {
                        break Duration::ZERO;
                    }
                }
            }
        };
        self.drain(grace).await
    }

    async fn prune_if_due(&mut self) {
        if tokio::time::Instant::now() < self.next_prune {
            return;
        }
        self.next_prune = tokio::time::Instant::now() + PRUNE_EVERY;
        let now = now_ms();
        let age =
            |d: Duration| now.saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        match self.queue.prune(age(KEEP_DONE), age(KEEP_FAILED)).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "pruned old deliveries"),
            Err(e) => tracing::warn!(error = %e, "cannot prune old deliveries"),
        }
    }

    /// On a shared queue, tells the other replicas this one is still running its
    /// deliveries, so they are not taken over while a handler is slow.
    async fn renew_if_due(&mut self) {
        let Some(every) = self.queue.renew_every() else {
            return;
        };
        let now = tokio::time::Instant::now();
        if now < self.next_renew {
            return;
        }
        self.next_renew = now + every;
        let seqs: Vec<i64> = self.in_flight.values().map(|f| f.seq).collect();
        if let Err(e) = self.queue.renew(&seqs, now_ms()).await {
            tracing::warn!(error = %e, "cannot renew delivery leases");
        }
    }

    /// Claims as many due deliveries as there are free slots and starts them.
    async fn fill(&mut self) {
        let free = self.config.concurrency.saturating_sub(self.in_flight.len());
        if free == 0 {
            return;
        }
        let claimed = match self.queue.claim(now_ms(), free).await {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::error!(error = %e, "cannot claim deliveries");
                return;
            }
        };
        for delivery in claimed {
            self.start(delivery);
        }
    }

    fn start(&mut self, mut delivery: ClaimedDelivery) {
        // The handler tells a person when nothing will follow a failure: only the worker
        // knows how many attempts it allows.
        delivery.final_attempt = delivery.tries() >= self.config.max_attempts;
        let handler = Arc::clone(&self.handler);
        let info = InFlight {
            delivery_id: delivery.delivery_id.clone(),
            seq: delivery.seq,
            attempt: delivery.attempt,
            tries: delivery.tries(),
            received_at_ms: delivery.received_at_ms,
            started: tokio::time::Instant::now(),
        };
        // Its own task, so a panicking handler is caught as a JoinError and retried
        // like any transient failure instead of taking the scheduler down.
        // A delivery that keeps taking the process down with it is not run again.
        if delivery.crashes >= MAX_CRASHES {
            let why = format!(
                "the server stopped {} times while handling this delivery; it is not run again (redeliver it once the cause is fixed)",
                delivery.crashes
            );
            let abort = self
                .tasks
                .spawn(async move { Err(HandlerError::Permanent(why)) });
            self.in_flight.insert(abort.id(), info);
            return;
        }
        let abort = self
            .tasks
            .spawn(async move { handler.handle(&delivery).await });
        self.in_flight.insert(abort.id(), info);
    }

    async fn finish(
        &mut self,
        joined: Result<(Id, Result<(), HandlerError>), tokio::task::JoinError>,
    ) {
        let (id, result) = match joined {
            Ok((id, result)) => (id, result),
            Err(join_error) => {
                let id = join_error.id();
                let why = if join_error.is_panic() {
                    "handler panicked"
                } else {
                    "handler was cancelled"
                };
                (id, Err(HandlerError::Transient(why.to_owned())))
            }
        };
        let Some(info) = self.in_flight.remove(&id) else {
            return;
        };
        self.metrics
            .handler_seconds
            .observe(info.started.elapsed().as_secs_f64());
        let now = now_ms();
        match &result {
            Err(HandlerError::Storage(why)) => self.metrics.storage_failed(why),
            Ok(()) => self.metrics.storage_ok(),
            Err(_) => {}
        }
        let outcome = match verdict(&self.config, info.tries, result, now) {
            Outcome::Done => {
                self.metrics.attempt("done");
                let latency_ms = now.saturating_sub(info.received_at_ms).max(0);
                #[expect(clippy::cast_precision_loss, reason = "latency in ms fits f64 exactly")]
                self.metrics
                    .delivery_latency_seconds
                    .observe(latency_ms as f64 / 1000.0);
                self.queue.complete(info.seq, now).await
            }
            Outcome::RetryAt(at, error) => {
                self.metrics.attempt("retry");
                tracing::warn!(delivery = %info.delivery_id, attempt = info.attempt, %error, "delivery will be retried");
                self.queue.retry_at(info.seq, error, at).await
            }
            Outcome::Failed(error) => {
                self.metrics.attempt("failed");
                tracing::error!(delivery = %info.delivery_id, attempt = info.attempt, %error, "delivery failed");
                self.queue.fail(info.seq, error, now).await
            }
        };
        if let Err(e) = outcome {
            // The delivery stays `running` in the store and runs again after a restart.
            tracing::error!(delivery = %info.delivery_id, error = %e, "cannot record delivery outcome");
        }
    }

    async fn drain(mut self, grace: Duration) -> ShutdownReport {
        let deadline = tokio::time::Instant::now() + grace;
        let mut report = ShutdownReport::default();
        while !self.tasks.is_empty() {
            match tokio::time::timeout_at(deadline, self.tasks.join_next_with_id()).await {
                Ok(Some(joined)) => {
                    self.finish(joined).await;
                    report.finished += 1;
                }
                Ok(None) => break,
                Err(_elapsed) => {
                    report.abandoned = self.tasks.len();
                    self.tasks.abort_all();
                    break;
                }
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> WorkerConfig {
        WorkerConfig {
            concurrency: 2,
            max_attempts: 3,
            base_backoff: Duration::from_secs(5),
            max_backoff: Duration::from_secs(60),
            idle_poll: Duration::from_millis(10),
        }
    }

    #[test]
    fn retry_delay_doubles_and_is_capped() {
        let c = config();
        assert_eq!(retry_delay(&c, 1), Duration::from_secs(5));
        assert_eq!(retry_delay(&c, 2), Duration::from_secs(10));
        assert_eq!(retry_delay(&c, 4), Duration::from_secs(40));
        assert_eq!(retry_delay(&c, 5), Duration::from_secs(60));
        assert_eq!(retry_delay(&c, 64), Duration::from_secs(60));
    }

    #[test]
    fn transient_failure_retries_until_the_last_attempt() {
        let c = config();
        let err = || Err(HandlerError::Transient("503".to_owned()));
        assert_eq!(
            verdict(&c, 1, err(), 1000),
            Outcome::RetryAt(6000, "503".to_owned())
        );
        assert!(matches!(verdict(&c, 3, err(), 1000), Outcome::Failed(m) if m.contains("503")));
    }

    #[test]
    fn permanent_failure_is_not_retried() {
        let c = config();
        let v = verdict(&c, 1, Err(HandlerError::Permanent("bad payload".into())), 0);
        assert_eq!(v, Outcome::Failed("bad payload".to_owned()));
        assert_eq!(verdict(&c, 1, Ok(()), 0), Outcome::Done);
    }

    #[test]
    fn a_full_disk_is_retried_past_the_last_attempt_and_never_failed() {
        let c = config();
        let err = || Err(HandlerError::Storage("no space left on device".to_owned()));
        for attempt in [1, 3, 50] {
            assert!(
                matches!(verdict(&c, attempt, err(), 0), Outcome::RetryAt(_, m) if m.starts_with("storage:")),
                "attempt {attempt}"
            );
        }
    }
}
