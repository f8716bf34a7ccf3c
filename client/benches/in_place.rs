//! In-place decoding of a watch event's pod into a replaced pod (run with
//! `cargo bench -p kinform-client --bench in_place`), the informer's path for every
//! MODIFIED event once a watch is past its initial events (`decode/in_place`):
//!
//! - `in_place/cold`: each of 20,000 realistic pods' JSON (about 6 KB each, with
//!   managedFields) into another pod of a cache of 20,000 (700 MB, far beyond the CPU's
//!   caches), in a scattered order, as a burst of changes to a large cache does;
//! - `in_place/hot`: the same documents into one of 8 pods, which stay in the caches;
//! - `in_place/tape`: simd-json's tape of each of the same documents, read in the same
//!   order, the step both of the above begin with: what `hot` takes beyond it is the walk
//!   into the target.
//!
//! - `in_place/pull` (a measured try, reverted by the next commit): a scalar tokenizer that
//!   builds no tape, the least a decoder reading the JSON directly must do.
//!
//! Each is timed per document.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use kinform_client::decode::bench::DocDecoder;
use kinform_client::{Client, Config};
use kinform_testserver::TestApiServer;

const PODS: usize = 20_000;

/// The test server's realistic pods, each as its own JSON document.
fn pod_documents() -> Vec<Vec<u8>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let server = TestApiServer::builder()
            .pods(PODS)
            .namespaces(10)
            .start()
            .await
            .expect("the test server starts");
        let client = Client::new(Config::new(server.url().parse().expect("url"))).expect("client");
        let req = http::Request::get("/api/v1/pods")
            .body(Vec::new())
            .expect("request");
        let list: serde_json::Value = client.request(req).await.expect("the pod list");
        let items = list["items"].as_array().expect("items");
        items
            .iter()
            .map(|pod| {
                let mut pod = pod.clone();
                pod["apiVersion"] = "v1".into();
                pod["kind"] = "Pod".into();
                serde_json::to_vec(&pod).expect("JSON")
            })
            .collect()
    })
}

/// Times `iters` documents decoded into `targets[target(i)]`, document `i` of `docs`
/// being another pod than the target's.
fn into_targets(
    decoder: &mut DocDecoder,
    docs: &[Vec<u8>],
    targets: &mut [Pod],
    target: impl Fn(usize) -> usize,
    iters: u64,
) -> Duration {
    let start = Instant::now();
    for i in 0..iters as usize {
        let doc = &docs[(i + docs.len() / 2) % docs.len()];
        assert!(decoder.decode_into(&mut targets[target(i)], doc));
    }
    start.elapsed()
}

fn in_place(c: &mut Criterion) {
    let docs = pod_documents();
    let mut decoder = DocDecoder::default();
    let mut cache: Vec<Pod> = docs
        .iter()
        .map(|doc| decoder.decode(doc).expect("a pod"))
        .collect();
    let n = cache.len();
    let mut group = c.benchmark_group("in_place");
    group.throughput(Throughput::Elements(1));
    // 7919 is prime, so the targets run over the whole cache, far apart.
    group.bench_function("cold", |b| {
        b.iter_custom(|iters| {
            into_targets(&mut decoder, &docs, &mut cache, |i| (i * 7919) % n, iters)
        });
    });
    group.bench_function("hot", |b| {
        b.iter_custom(|iters| into_targets(&mut decoder, &docs, &mut cache, |i| i % 8, iters));
    });
    group.bench_function("tape", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters as usize {
                assert!(decoder.tape(&docs[i % docs.len()]));
            }
            start.elapsed()
        });
    });
    group.bench_function("pull", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            for i in 0..iters as usize {
                let mut p = pull::P::new(&docs[i % docs.len()]).expect("utf-8");
                assert!(p.doc().is_some());
                std::hint::black_box(p.acc);
            }
            start.elapsed()
        });
    });
    group.finish();
}

criterion_group!(benches, in_place);
criterion_main!(benches);

/// A scalar pull tokenizer: the least a decoder without a tape must do (validate the
/// grammar, find every string's and number's extent, check the text is UTF-8).
mod pull {
    pub struct P<'a> {
        b: &'a [u8],
        i: usize,
        pub acc: usize,
    }

    const HI: u64 = 0x8080_8080_8080_8080;
    const LO: u64 = 0x0101_0101_0101_0101;

    #[inline(always)]
    fn has_byte(w: u64, c: u8) -> u64 {
        let x = w ^ (LO * c as u64);
        x.wrapping_sub(LO) & !x & HI
    }
    #[inline(always)]
    fn has_less(w: u64, n: u8) -> u64 {
        w.wrapping_sub(LO * n as u64) & !w & HI
    }

    impl<'a> P<'a> {
        pub fn new(b: &'a [u8]) -> Option<Self> {
            std::str::from_utf8(b).ok()?;
            Some(Self { b, i: 0, acc: 0 })
        }
        #[inline(always)]
        fn ws(&mut self) {
            while let Some(&c) = self.b.get(self.i) {
                if matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                    self.i += 1;
                } else {
                    break;
                }
            }
        }
        #[inline(always)]
        fn peek(&self) -> Option<u8> {
            self.b.get(self.i).copied()
        }
        pub fn doc(&mut self) -> Option<()> {
            self.value(0)?;
            self.ws();
            (self.i == self.b.len()).then_some(())
        }
        fn string(&mut self) -> Option<()> {
            // at the opening quote
            let start = self.i + 1;
            let mut j = start;
            loop {
                while j + 8 <= self.b.len() {
                    let w = u64::from_le_bytes(self.b[j..j + 8].try_into().unwrap());
                    let m = has_byte(w, b'"') | has_byte(w, b'\\') | has_less(w, 0x20);
                    if m != 0 {
                        j += (m.trailing_zeros() / 8) as usize;
                        break;
                    }
                    j += 8;
                }
                let c = *self.b.get(j)?;
                match c {
                    b'"' => {
                        self.acc += j - start;
                        self.i = j + 1;
                        return Some(());
                    }
                    b'\\' => {
                        let e = *self.b.get(j + 1)?;
                        match e {
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                            b'u' => {
                                let h = self.b.get(j + 2..j + 6)?;
                                if !h.iter().all(u8::is_ascii_hexdigit) {
                                    return None;
                                }
                                j += 6;
                            }
                            _ => return None,
                        }
                    }
                    c if c < 0x20 => return None,
                    _ => j += 1,
                }
            }
        }
        fn number(&mut self) -> Option<()> {
            let s = self.i;
            let b = self.b;
            let mut j = s;
            if b.get(j) == Some(&b'-') {
                j += 1;
            }
            match b.get(j)? {
                b'0' => j += 1,
                b'1'..=b'9' => {
                    while b.get(j).is_some_and(u8::is_ascii_digit) {
                        j += 1
                    }
                }
                _ => return None,
            }
            if b.get(j) == Some(&b'.') {
                j += 1;
                let d = j;
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1
                }
                if j == d {
                    return None;
                }
            }
            if matches!(b.get(j), Some(b'e' | b'E')) {
                j += 1;
                if matches!(b.get(j), Some(b'+' | b'-')) {
                    j += 1
                }
                let d = j;
                while b.get(j).is_some_and(u8::is_ascii_digit) {
                    j += 1
                }
                if j == d {
                    return None;
                }
            }
            self.acc += j - s;
            self.i = j;
            Some(())
        }
        fn lit(&mut self, l: &[u8]) -> Option<()> {
            (self.b.get(self.i..self.i + l.len())? == l).then(|| self.i += l.len())
        }
        fn value(&mut self, depth: usize) -> Option<()> {
            if depth > 127 {
                return None;
            }
            self.ws();
            match self.peek()? {
                b'{' => {
                    self.i += 1;
                    self.ws();
                    if self.peek()? == b'}' {
                        self.i += 1;
                        return Some(());
                    }
                    loop {
                        self.ws();
                        if self.peek()? != b'"' {
                            return None;
                        }
                        self.string()?;
                        self.ws();
                        if self.peek()? != b':' {
                            return None;
                        }
                        self.i += 1;
                        self.value(depth + 1)?;
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b'}' => {
                                self.i += 1;
                                return Some(());
                            }
                            _ => return None,
                        }
                    }
                }
                b'[' => {
                    self.i += 1;
                    self.ws();
                    if self.peek()? == b']' {
                        self.i += 1;
                        return Some(());
                    }
                    loop {
                        self.value(depth + 1)?;
                        self.ws();
                        match self.peek()? {
                            b',' => self.i += 1,
                            b']' => {
                                self.i += 1;
                                return Some(());
                            }
                            _ => return None,
                        }
                    }
                }
                b'"' => self.string(),
                b't' => self.lit(b"true"),
                b'f' => self.lit(b"false"),
                b'n' => self.lit(b"null"),
                _ => self.number(),
            }
        }
    }
}
