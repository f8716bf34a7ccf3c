//! Work queues (client-go util/workqueue).
