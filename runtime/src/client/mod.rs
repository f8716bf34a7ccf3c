//! Talking to the API server.
//!
//! This module holds the request and response vocabulary shared by the typed [`Api`] and the
//! reflector: [`ListParams`], [`WatchParams`], [`ObjectList`], [`WatchEvent`], the typed
//! [`Error`] that keeps the server's `Status`, and [`ListerWatcher`], the seam through which
//! the reflector lists and watches (client-go's `cache.ListerWatcher`).

mod error;
mod lister_watcher;
mod params;
mod watch_event;

pub use error::{Error, Result};
pub use lister_watcher::{ListerWatcher, WatchStream};
pub use params::{ListParams, ResourceVersionMatch, WatchParams};
pub use watch_event::{Bookmark, INITIAL_EVENTS_END_ANNOTATION, ObjectList, WatchEvent};
