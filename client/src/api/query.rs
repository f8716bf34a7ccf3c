//! Query strings of API requests, with the list/watch parameters of `metav1.ListOptions`.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::{ListParams, WatchParams};

/// Characters left unescaped in query values and path segments (RFC 3986 unreserved).
const ESCAPE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Escapes a path segment (an object name).
pub(crate) fn segment(s: &str) -> String {
    utf8_percent_encode(s, ESCAPE).to_string()
}

/// A query string under construction.
#[derive(Debug, Default)]
pub(crate) struct Query(String);

impl Query {
    pub(crate) fn push(&mut self, key: &str, value: &str) {
        self.0.push(if self.0.is_empty() { '?' } else { '&' });
        self.0.push_str(key);
        self.0.push('=');
        self.0.extend(utf8_percent_encode(value, ESCAPE));
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn list(&mut self, lp: &ListParams) {
        if let Some(s) = lp.label_selector.as_deref().filter(|s| !s.is_empty()) {
            self.push("labelSelector", s);
        }
        if let Some(s) = lp.field_selector.as_deref().filter(|s| !s.is_empty()) {
            self.push("fieldSelector", s);
        }
        if let Some(l) = lp.limit {
            self.push("limit", &l.to_string());
        }
        if let Some(c) = lp.continue_token.as_deref().filter(|s| !s.is_empty()) {
            self.push("continue", c);
        }
        if let Some(rv) = &lp.resource_version {
            self.push("resourceVersion", rv);
        }
        if let Some(m) = lp.resource_version_match {
            self.push("resourceVersionMatch", m.as_str());
        }
        if let Some(t) = lp.timeout_seconds {
            self.push("timeoutSeconds", &t.to_string());
        }
        if let Some(s) = lp.shard_selector.as_deref().filter(|s| !s.is_empty()) {
            self.push("shardSelector", s);
        }
    }

    pub(crate) fn watch(&mut self, wp: &WatchParams) {
        self.push("watch", "true");
        if let Some(s) = wp.label_selector.as_deref().filter(|s| !s.is_empty()) {
            self.push("labelSelector", s);
        }
        if let Some(s) = wp.field_selector.as_deref().filter(|s| !s.is_empty()) {
            self.push("fieldSelector", s);
        }
        if let Some(rv) = &wp.resource_version {
            self.push("resourceVersion", rv);
        }
        if let Some(m) = wp.resource_version_match {
            self.push("resourceVersionMatch", m.as_str());
        }
        if let Some(t) = wp.timeout_seconds {
            self.push("timeoutSeconds", &t.to_string());
        }
        if wp.allow_watch_bookmarks {
            self.push("allowWatchBookmarks", "true");
        }
        if wp.send_initial_events {
            self.push("sendInitialEvents", "true");
        }
        if let Some(s) = wp.shard_selector.as_deref().filter(|s| !s.is_empty()) {
            self.push("shardSelector", s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ResourceVersionMatch;

    #[test]
    fn list_and_watch_queries() {
        let mut q = Query::default();
        q.list(&ListParams {
            label_selector: Some("app in (a,b),tier!=x".into()),
            limit: Some(50),
            continue_token: Some("abc=".into()),
            resource_version: Some("0".into()),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListParams::default()
        });
        assert_eq!(
            q.as_str(),
            "?labelSelector=app%20in%20%28a%2Cb%29%2Ctier%21%3Dx&limit=50&continue=abc%3D&resourceVersion=0&resourceVersionMatch=NotOlderThan"
        );
        let mut q = Query::default();
        q.watch(&WatchParams {
            resource_version: Some("10".into()),
            allow_watch_bookmarks: true,
            send_initial_events: true,
            timeout_seconds: Some(290),
            ..WatchParams::default()
        });
        assert_eq!(
            q.as_str(),
            "?watch=true&resourceVersion=10&timeoutSeconds=290&allowWatchBookmarks=true&sendInitialEvents=true"
        );
    }

    #[test]
    fn shard_selector_is_sent_escaped_on_list_and_watch() {
        let selector = kinform_core::ShardSelector::nth(kinform_core::ShardField::Uid, 1, 2)
            .unwrap()
            .to_string();
        let escaped = "shardSelector=shardRange%28object.metadata.uid%2C%20%270x8000000000000000%27%2C%20%270x10000000000000000%27%29";
        let mut q = Query::default();
        q.list(&ListParams {
            limit: Some(2),
            shard_selector: Some(selector.clone()),
            ..ListParams::default()
        });
        assert_eq!(q.as_str(), format!("?limit=2&{escaped}"));
        let mut q = Query::default();
        q.watch(&WatchParams {
            shard_selector: Some(selector),
            ..WatchParams::default()
        });
        assert_eq!(q.as_str(), format!("?watch=true&{escaped}"));
        // An empty selector is not sent (the server refuses an empty one).
        let mut q = Query::default();
        q.list(&ListParams {
            shard_selector: Some(String::new()),
            ..ListParams::default()
        });
        assert_eq!(q.as_str(), "");
    }
}
