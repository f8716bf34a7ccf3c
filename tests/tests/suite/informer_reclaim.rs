//! Objects replaced in an informer's cache are handed back to the decoding threads to be
//! freed there (`kinform::reflector::Reclaim`): over real HTTP, every replaced or deleted
//! state is freed once the handlers have seen it, whether the watch goes on (the decoder
//! drops them) or falls quiet (what is left is dropped then), and the events are the
//! server's, in order. Every cached object is made on a decoding thread (its transform
//! runs there).

use std::sync::{Arc, Mutex, Weak};

use k8s_openapi::api::core::v1::Pod;
use kinform::client::{DeleteParams, Patch, PatchParams};
use kinform::fifo::Deleted;
use kinform::informer::EventHandlerFns;
use kinform::reflector::ListMode;

use kinform_tests::informer::*;

/// `"<name> <round label>"`: which state of which pod a handler saw.
fn name_and_round(pod: &Pod) -> String {
    let round = &pod.metadata.labels.as_ref().unwrap()["round"];
    format!("{} {round}", pod.metadata.name.as_deref().unwrap())
}

async fn replaced_states_are_freed(mode: ListMode) {
    let (server, api) = server_with_pods(20).await;
    let factory = factory_builder(client(&server, 3)).list_mode(mode).build();
    let informer = factory.informer::<Pod>();
    // Every state a handler saw leave the cache, as a weak reference, with the labels the
    // handler saw (the events are checked, the objects must be free to go).
    let gone: Arc<Mutex<Vec<Weak<Pod>>>> = Arc::default();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let removed: Arc<Mutex<Vec<String>>> = Arc::default();
    let (g, s, d, r) = (
        Arc::clone(&gone),
        Arc::clone(&seen),
        Arc::clone(&gone),
        Arc::clone(&removed),
    );
    informer.add_event_handler(
        EventHandlerFns::new()
            .on_update(move |old: &Arc<Pod>, new: &Arc<Pod>| {
                g.lock().unwrap().push(Arc::downgrade(old));
                s.lock().unwrap().push(name_and_round(new));
            })
            .on_delete(move |del: &Deleted<Pod>| {
                if let Deleted::Object(o) = del {
                    d.lock().unwrap().push(Arc::downgrade(o));
                    r.lock().unwrap().push(name_and_round(o));
                }
            }),
    );
    // Where each object is decoded: the transform runs right after.
    let decoded_on: Arc<Mutex<Vec<String>>> = Arc::default();
    let on = Arc::clone(&decoded_on);
    informer
        .set_transform(Some(Arc::new(move |_: &mut Pod| {
            let thread = std::thread::current();
            on.lock()
                .unwrap()
                .push(thread.name().unwrap_or_default().to_owned());
        })))
        .unwrap();
    factory.start();
    informer.wait_for_sync().await;
    until(|| informer.pending_notifications() == 0).await;
    for round in 0..3 {
        for i in 0..20 {
            let patch = Patch::Merge(
                serde_json::json!({"metadata": {"labels": {"round": round.to_string()}}}),
            );
            api.patch(&format!("p{i}"), &PatchParams::default(), &patch)
                .await
                .unwrap();
        }
    }
    for i in 0..5 {
        api.delete(&format!("p{i}"), &DeleteParams::default())
            .await
            .unwrap();
    }
    until(|| {
        informer.store().len() == 15
            && informer.store().list().iter().all(|p| {
                p.metadata
                    .labels
                    .as_ref()
                    .unwrap()
                    .get("round")
                    .map(String::as_str)
                    == Some("2")
            })
            && informer.pending_notifications() == 0
    })
    .await;
    // A handler that falls behind may see several changes of a pod as one (the buffer
    // coalesces), so at least the deletions and one update per pod left the cache.
    assert!(gone.lock().unwrap().len() >= 25);
    // Once the watch is quiet, nothing that left the cache is held any more.
    until(|| gone.lock().unwrap().iter().all(|w| w.strong_count() == 0)).await;
    let seen = seen.lock().unwrap();
    let mut removed = removed.lock().unwrap();
    removed.sort();
    assert_eq!(
        *removed,
        ["p0 2", "p1 2", "p2 2", "p3 2", "p4 2"],
        "each deletion carries the pod's last state"
    );
    for i in 0..20 {
        let rounds: Vec<&str> = seen
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("p{i} ")))
            .collect();
        assert!(
            rounds.windows(2).all(|w| w[0] < w[1]),
            "in order: {rounds:?}"
        );
        // A deleted pod's last update may have been coalesced into its deletion.
        if i >= 5 {
            assert_eq!(rounds.last(), Some(&"2"), "p{i} ends at the last state");
        }
    }
    // The 20 listed pods and at least one state per updated or deleted pod, each decoded
    // on a decoding thread.
    let decoded_on = decoded_on.lock().unwrap();
    assert!(decoded_on.len() >= 40, "{} decoded", decoded_on.len());
    assert!(
        decoded_on.iter().all(|t| t.starts_with("kinform-decode-")),
        "decoded on {decoded_on:?}"
    );
    // The cached objects themselves are alive and current.
    let p9 = informer.store().get("default/p9").unwrap();
    assert_eq!(p9.metadata.labels.as_ref().unwrap()["round"], "2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_states_are_freed_paged() {
    replaced_states_are_freed(ListMode::Paged).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replaced_states_are_freed_streaming() {
    replaced_states_are_freed(ListMode::Streaming).await;
}
