//! The plain JSON wire pieces that the user verbs (`api`) and the reflector's pipeline
//! (`decode`) share: a LIST body (`list`) and the newline-delimited events of a WATCH
//! (`watch`: line framing, the bound on one event, and the `serde_json` decoding of
//! `{"type": ..., "object": ...}` lines). Nothing here knows about caches or decoding threads.

pub(crate) mod list;
pub(crate) mod watch;
