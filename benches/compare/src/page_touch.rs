//! `kinform-compare page-touch`: what a page fault costs on this machine, the kernel-side
//! cost every cached object pays for its heap whichever library decodes it (BENCHMARKS.md,
//! "kinform vs kube-rs", what a page fault costs).
//!
//! Maps 1 GiB of fresh anonymous memory and writes one byte per 4 KiB page, timed, six
//! times: in turn as it is, with `MADV_HUGEPAGE` (transparent huge pages, where the kernel
//! allows them on request), and with `MADV_COLLAPSE` (huge pages made at once by the call,
//! which is timed with the writes). Before the collapse one byte per 2 MiB is written,
//! untimed: the kernel collapses only ranges that have pages, as the blocks of a heap grown
//! ahead do (`heap` in kinform-client).

use std::time::Instant;

const BYTES: usize = 1 << 30;
const PAGE: usize = 4096;
const HUGE_PAGE: usize = 2 << 20;

/// What each round asks of the kernel before the pages are written.
const ROUNDS: [(&str, Option<libc::c_int>); 3] = [
    ("4 KiB pages", None),
    ("MADV_HUGEPAGE", Some(libc::MADV_HUGEPAGE)),
    ("MADV_COLLAPSE", Some(libc::MADV_COLLAPSE)),
];

/// Prints the time per 4 KiB page of each round.
pub fn run() {
    for round in 0..6 {
        let (name, advice) = ROUNDS[round % ROUNDS.len()];
        // SAFETY: a private anonymous mapping of `BYTES` that nothing else refers to; it is
        // only written within its bounds and unmapped once, below.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED, "mmap of 1 GiB failed");
        let bytes = map.cast::<u8>();
        let touch = |step: usize| {
            for offset in (0..BYTES).step_by(step) {
                // SAFETY: `offset < BYTES`, inside the writable mapping; a volatile write so
                // that the touch is not optimized away.
                unsafe { bytes.add(offset).write_volatile(1) };
            }
        };
        if advice == Some(libc::MADV_COLLAPSE) {
            touch(HUGE_PAGE);
        }
        let start = Instant::now();
        if let Some(advice) = advice {
            // SAFETY: advice on the mapping just made; it changes no content.
            unsafe { libc::madvise(map, BYTES, advice) };
        }
        touch(PAGE);
        let took = start.elapsed().as_secs_f64();
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(map, BYTES) };
        println!(
            "{name}: {took:.3} s, {:.2} us per 4 KiB page",
            took / (BYTES / PAGE) as f64 * 1e6
        );
    }
}
