//! Concurrency test: producer threads and consumer tasks on one DeltaFIFO. Every change is
//! delivered exactly once, each key's changes arrive in order, and the store fed by the
//! consumers ends with every key's final state.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use kinform_runtime::fifo::{Delta, DeltaFifo, KnownObjects};
use kinform_runtime::reflector::ReflectorSink;
use kinform_runtime::store::Store;
use parking_lot::Mutex;

const PRODUCERS: usize = 4;
const KEYS_PER_PRODUCER: usize = 50;
const VERSIONS: usize = 40;

fn cm(producer: usize, key: usize, version: usize) -> Arc<ConfigMap> {
    let mut o = ConfigMap::default();
    o.metadata.namespace = Some(format!("p{producer}"));
    o.metadata.name = Some(format!("k{key}"));
    o.metadata.resource_version = Some(version.to_string());
    Arc::new(o)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn producers_and_consumers_deliver_every_change_in_order() {
    let store: Store<ConfigMap> = Store::new();
    let known: Arc<dyn KnownObjects<ConfigMap>> = Arc::new(store.clone());
    let fifo = DeltaFifo::new(Some(known));
    // key -> resource versions seen, in delivery order.
    let seen: Arc<Mutex<HashMap<String, Vec<usize>>>> = Arc::default();

    let consumers: Vec<_> = (0..3)
        .map(|c| {
            let (fifo, store, seen) = (fifo.clone(), store.clone(), Arc::clone(&seen));
            tokio::spawn(async move {
                loop {
                    let process = |d: &kinform_runtime::fifo::Deltas<ConfigMap>| {
                        let mut seen = seen.lock();
                        let versions = seen.entry(d.key().to_string()).or_default();
                        for delta in d {
                            let rv = delta.object().unwrap().metadata.resource_version.as_deref();
                            versions.push(rv.unwrap().parse().unwrap());
                        }
                        match d.newest() {
                            Delta::Deleted(del) => {
                                store.delete_key(del.key());
                            }
                            other => store.update(Arc::clone(other.object().unwrap())),
                        }
                        Ok::<_, ()>(())
                    };
                    let done = if c == 0 {
                        fifo.pop_batch(8, process).await.is_err()
                    } else {
                        fifo.pop(process).await.is_err()
                    };
                    if done {
                        break;
                    }
                }
            })
        })
        .collect();

    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                for v in 0..VERSIONS {
                    for k in 0..KEYS_PER_PRODUCER {
                        let obj = cm(p, k, v);
                        if v == 0 {
                            fifo.add(obj).unwrap();
                        } else {
                            fifo.update(obj).unwrap();
                        }
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    fifo.close();
    for c in consumers {
        c.await.unwrap();
    }

    let seen = seen.lock();
    assert_eq!(seen.len(), PRODUCERS * KEYS_PER_PRODUCER);
    for (key, versions) in seen.iter() {
        assert_eq!(
            versions,
            &(0..VERSIONS).collect::<Vec<_>>(),
            "{key}: every version once, in order"
        );
    }
    assert_eq!(store.len(), PRODUCERS * KEYS_PER_PRODUCER);
    for obj in store.list() {
        assert_eq!(
            obj.metadata.resource_version.as_deref(),
            Some((VERSIONS - 1).to_string().as_str())
        );
    }
    assert!(fifo.is_empty());
}
