//! The requests the server received, in arrival order, so that tests can check what a client
//! sent (how many pages a paged list asked for, which continue tokens, in which order): the
//! audit log of a real API server, reduced to method and URI. Bounded: the oldest entries go
//! once [`CAPACITY`] are held, so a long benchmark run does not grow it without limit.

use std::collections::VecDeque;

use parking_lot::Mutex;

/// Entries kept at most.
pub(crate) const CAPACITY: usize = 10_000;

#[derive(Default)]
pub(crate) struct RequestLog(Mutex<VecDeque<String>>);

impl RequestLog {
    /// Records one request as `METHOD path?query`.
    pub(crate) fn record(&self, method: &http::Method, uri: &http::Uri) {
        let line = match uri.path_and_query() {
            Some(pq) => format!("{method} {pq}"),
            None => format!("{method} {}", uri.path()),
        };
        let mut log = self.0.lock();
        if log.len() == CAPACITY {
            log.pop_front();
        }
        log.push_back(line);
    }

    pub(crate) fn entries(&self) -> Vec<String> {
        self.0.lock().iter().cloned().collect()
    }
}
