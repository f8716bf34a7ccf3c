//! Generated clients, listers and informers for every built-in Kubernetes GroupVersionResource.
