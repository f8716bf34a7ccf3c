//! Serving, as k8s.io/apiserver's `server`: the routing of a request to its handler and the
//! filters around it (`router`), TLS with the server's own CA (`tls`), faults switchable at
//! run time (`faults`), and the log of requests (`request_log`).

pub(crate) mod faults;
pub(crate) mod request_log;
pub(crate) mod router;
pub(crate) mod tls;
