//! The handlers of the resource verbs, as k8s.io/apiserver's `endpoints/handlers`: one module a
//! verb (`list`, `watch`, `write` for create and update, `delete`, `patch/`, `scale`), the
//! request options they read (`params`), content negotiation and the answer's forms
//! (`negotiation/`), server-side apply's field management (`fieldmanager/`), and the pod
//! subresources that are writes: `eviction`, `binding` and `ephemeral`
//! (`pods/ephemeralcontainers`).

pub(crate) mod binding;
pub(crate) mod delete;
pub(crate) mod ephemeral;
pub(crate) mod eviction;
pub(crate) mod fieldmanager;
pub(crate) mod list;
pub(crate) mod negotiation;
pub(crate) mod params;
pub(crate) mod patch;
pub(crate) mod review;
pub(crate) mod scale;
pub(crate) mod token;
pub(crate) mod validate;
pub(crate) mod watch;
pub(crate) mod write;
