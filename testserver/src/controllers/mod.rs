//! The work that controllers of a real cluster do and this server does itself, as
//! kube-controller-manager's garbage collector and namespace controller do (`gc`).

pub(crate) mod gc;
