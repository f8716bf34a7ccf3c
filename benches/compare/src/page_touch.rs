//! `kinform-compare page-touch`: what a page fault costs on this machine, the kernel-side
//! cost every cached object pays for its heap whichever library decodes it (BENCHMARKS.md,
//! "Informer", why the watch target is out of reach).
//!
//! Maps 1 GiB of fresh anonymous memory and writes one byte per 4 KiB page, timed, four
//! times: alternately as it is and with `MADV_HUGEPAGE` (transparent huge pages, where the
//! kernel allows them on request).

use std::time::Instant;

const BYTES: usize = 1 << 30;
const PAGE: usize = 4096;

/// Prints the time per 4 KiB page of each round.
pub fn run() {
    for round in 0..4 {
        let huge = round % 2 == 1;
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
        if huge {
            // SAFETY: advice on the mapping just made; it changes no content.
            unsafe { libc::madvise(map, BYTES, libc::MADV_HUGEPAGE) };
        }
        let start = Instant::now();
        for offset in (0..BYTES).step_by(PAGE) {
            // SAFETY: `offset < BYTES`, inside the writable mapping; a volatile write so
            // that the touch is not optimized away.
            unsafe { bytes.add(offset).write_volatile(1) };
        }
        let took = start.elapsed().as_secs_f64();
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(map, BYTES) };
        println!(
            "{}: {took:.3} s, {:.2} us per 4 KiB page",
            if huge { "MADV_HUGEPAGE" } else { "4 KiB pages" },
            took / (BYTES / PAGE) as f64 * 1e6
        );
    }
}
