//! The PostgreSQL queue in a build without the `postgres` feature: no queue can exist, so connecting explains how to get one.

use std::collections::HashSet;
use std::time::Duration;

use super::list::ListPlan;
pub use super::pg_options::PgOptions;
use super::{
    ClaimedDelivery, DeliveryRow, DeliveryStatus, EnqueueOutcome, NewDelivery, QueueError,
    QueueStats,
};

/// Has no values: a queue of this kind is never made in this build.
#[derive(Debug)]
pub(super) enum PgQueue {}

/// Has no values, like [`PgQueue`].
#[derive(Debug)]
pub enum PgLeader {}

impl PgLeader {
    pub fn held(&self) -> bool {
        match *self {}
    }
}

impl PgQueue {
    pub(super) async fn connect(_url: &str, _options: &PgOptions) -> Result<Self, QueueError> {
        Err(QueueError::DatabaseUrl(
            "this navin was built without the `postgres` feature, so NAVIN_DATABASE_URL \
             cannot be used; install it with the default features (cargo install --locked \
             --path bot), or leave NAVIN_DATABASE_URL unset for the SQLite queue"
                .to_owned(),
        ))
    }

    pub(super) fn lease(&self) -> Duration {
        match *self {}
    }

    pub(super) async fn enqueue(
        &self,
        _d: &NewDelivery,
        _zbody: &[u8],
    ) -> Result<EnqueueOutcome, QueueError> {
        match *self {}
    }

    pub(super) async fn claim(
        &self,
        _now_ms: i64,
        _limit: usize,
    ) -> Result<Vec<ClaimedDelivery>, QueueError> {
        match *self {}
    }

    pub(super) async fn complete(&self, _seq: i64, _now_ms: i64) -> Result<(), QueueError> {
        match *self {}
    }

    pub(super) async fn retry_at(
        &self,
        _seq: i64,
        _error: &str,
        _at_ms: i64,
    ) -> Result<(), QueueError> {
        match *self {}
    }

    pub(super) async fn fail(
        &self,
        _seq: i64,
        _error: &str,
        _now_ms: i64,
    ) -> Result<(), QueueError> {
        match *self {}
    }

    pub(super) async fn renew(&self, _seqs: &[i64], _now_ms: i64) -> Result<(), QueueError> {
        match *self {}
    }

    pub(super) async fn known(&self, _ids: &[String]) -> Result<HashSet<String>, QueueError> {
        match *self {}
    }

    pub(super) async fn stats(&self) -> Result<QueueStats, QueueError> {
        match *self {}
    }

    pub(super) async fn status(&self, _id: &str) -> Result<Option<DeliveryStatus>, QueueError> {
        match *self {}
    }

    pub(super) async fn list(&self, _plan: &ListPlan) -> Result<Vec<DeliveryRow>, QueueError> {
        match *self {}
    }

    pub(super) async fn prune(
        &self,
        _done_before_ms: i64,
        _failed_before_ms: i64,
        _batch: usize,
    ) -> Result<usize, QueueError> {
        match *self {}
    }

    pub(super) async fn try_lead(&self, _role: &str) -> Result<Option<PgLeader>, QueueError> {
        match *self {}
    }

    pub(super) fn close(&self) {
        match *self {}
    }
}
