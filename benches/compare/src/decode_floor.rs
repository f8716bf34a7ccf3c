//! The floor of a pod watch event: decoding the same pod bytes into `Pod` on one thread with
//! `serde_json` and with simd-json, and dropping the object (a watch event replaces a cached
//! pod, so each event frees one), with nothing else around it. The burst tables' CPU per
//! event is read against it ("x floor"), so it shows how far above the pure decode a
//! library's watch path is.
//!
//! The pods are the server's own (the first `n` of its list, fetched once); each is decoded
//! as it is (managedFields included) and with its `metadata.managedFields` member taken out of
//! the bytes (what a decoder skipping that member still has to read past is then not read at
//! all, so that floor is lower than any decoder of the full bytes can reach). Each variant is
//! timed by this thread's CPU clock over every pod, three rounds, the fastest round kept;
//! allocations are counted by the bench's counting allocator.

use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// One floor: a decoder over the pod bytes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Floor {
    pub name: String,
    /// Thread CPU per pod (decode and drop).
    pub cpu_us: f64,
    /// Allocations per pod.
    pub allocs: f64,
    /// JSON bytes per pod.
    pub bytes: f64,
    /// Whether the bytes kept `metadata.managedFields`.
    pub managed_fields: bool,
}

#[derive(Deserialize)]
struct List {
    items: Vec<Box<RawValue>>,
}

/// This thread's CPU time in seconds.
fn thread_cpu() -> f64 {
    // SAFETY: `clock_gettime` only writes the `timespec` it is given, a plain C struct for
    // which all-zero bytes are a valid value.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// The fastest of three rounds of `decode` over every pod: (µs per pod, allocations per pod).
fn measure(pods: &[Vec<u8>], mut decode: impl FnMut(&[u8]) -> Pod) -> (f64, f64) {
    let mut best = f64::MAX;
    let mut allocs = 0;
    for _ in 0..3 {
        let (cpu, a) = (thread_cpu(), crate::heap::allocs());
        for p in pods {
            drop(std::hint::black_box(decode(p)));
        }
        best = best.min(thread_cpu() - cpu);
        allocs = crate::heap::allocs() - a;
    }
    let n = pods.len().max(1) as f64;
    (best * 1e6 / n, allocs as f64 / n)
}

/// Like [`measure`], but the way a cache replaces its objects: every pod decoded takes the
/// place of the one decoded `pods.len()` pods before (all pods are held, as in a cache),
/// which is dropped on this thread, or, with `elsewhere`, sent to another thread that drops
/// it. Timed by the process's CPU (both threads), over two rounds after a first that fills
/// the cache.
fn measure_cached(
    pods: &[Vec<u8>],
    elsewhere: bool,
    mut decode: impl FnMut(&[u8]) -> Pod,
) -> (f64, f64) {
    let mut cache: Vec<Pod> = pods.iter().map(|p| decode(p)).collect();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Pod>(4096);
    let dropper = std::thread::spawn(move || {
        for p in rx {
            drop(std::hint::black_box(p))
        }
    });
    let (before, a) = (crate::rss::usage(), crate::heap::allocs());
    for _ in 0..2 {
        for (slot, p) in cache.iter_mut().zip(pods) {
            let old = std::mem::replace(slot, decode(p));
            if elsewhere {
                tx.send(old).expect("dropper");
            } else {
                drop(std::hint::black_box(old));
            }
        }
    }
    drop(tx);
    dropper.join().expect("dropper");
    let after = crate::rss::usage();
    let n = 2.0 * pods.len().max(1) as f64;
    (
        (after.cpu_secs - before.cpu_secs) * 1e6 / n,
        (crate::heap::allocs() - a) as f64 / n,
    )
}

/// The floors over the server's first `n` pods.
pub async fn run(url: &str, n: usize) -> Vec<Floor> {
    let client = crate::sides::whole_list_client(kinform::Config::new(url.parse().expect("url")));
    let req = http::Request::get(format!("/api/v1/pods?limit={n}"))
        .body(Vec::new())
        .unwrap();
    let text = client.request_text(req).await.expect("list");
    let list: List = serde_json::from_str(&text).expect("raw list");
    let full: Vec<Vec<u8>> = list
        .items
        .iter()
        .map(|p| p.get().as_bytes().to_vec())
        .collect();
    let without_mf: Vec<Vec<u8>> = full
        .iter()
        .map(|p| {
            let mut v: serde_json::Value = serde_json::from_slice(p).expect("pod");
            if let Some(m) = v.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                m.remove("managedFields");
            }
            serde_json::to_vec(&v).expect("pod")
        })
        .collect();
    let start = Instant::now();
    let mut floors = Vec::new();
    // simd-json parses in place: each pod is copied into one reused buffer first.
    let mut buf = Vec::new();
    let mut simd = |p: &[u8]| -> Pod {
        buf.clear();
        buf.extend_from_slice(p);
        simd_json::serde::from_slice(&mut buf).expect("simd-json")
    };
    for (pods, managed_fields) in [(&full, true), (&without_mf, false)] {
        let bytes = pods.iter().map(Vec::len).sum::<usize>() as f64 / pods.len().max(1) as f64;
        let mut push = |name: &str, (cpu_us, allocs): (f64, f64)| {
            floors.push(Floor {
                name: name.into(),
                cpu_us,
                allocs,
                bytes,
                managed_fields,
            });
        };
        push(
            "serde_json",
            measure(pods, |p| serde_json::from_slice(p).expect("serde_json")),
        );
        push("simd-json", measure(pods, &mut simd));
        push(
            "simd-json, cached, the replaced pod dropped on the decoding thread",
            measure_cached(pods, false, &mut simd),
        );
        push(
            "simd-json, cached, the replaced pod dropped on another thread",
            measure_cached(pods, true, &mut simd),
        );
    }
    eprintln!(
        "decode floors over {} pods in {:.1} s",
        full.len(),
        start.elapsed().as_secs_f64()
    );
    floors
}
