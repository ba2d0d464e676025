//! The conditional-request cache: GET answers kept by lane and URL with their ETag, so a
//! repeated read is a 304 that GitHub does not count against the rate limit.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue};

/// Entries kept in the ETag cache (oldest evicted first).
const ETAG_CACHE_ENTRIES: usize = 2048;

pub(crate) struct CachedGet {
    pub(crate) etag: HeaderValue,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

#[derive(Default)]
pub(crate) struct EtagCache {
    pub(crate) entries: HashMap<(u64, String), CachedGet>,
    order: VecDeque<(u64, String)>,
}

impl EtagCache {
    pub(crate) fn insert(&mut self, key: (u64, String), value: CachedGet) {
        if self.entries.insert(key.clone(), value).is_none() {
            self.order.push_back(key);
            while self.order.len() > ETAG_CACHE_ENTRIES {
                if let Some(old) = self.order.pop_front() {
                    self.entries.remove(&old);
                }
            }
        }
    }
}
