//! A stack deep enough for the deepest document kube-apiserver accepts.
//!
//! Reading a document, converting its schema and emitting and formatting its types all recurse
//! once or more per level of nesting, and a document may nest
//! [`MAX_NESTING`](super::yaml::MAX_NESTING) levels deep. The main thread's 8 MiB (2 MiB for a
//! test or spawned thread) does not hold that, so that work runs on a thread of its own with a
//! [`DEEP_STACK`] stack: address space reserved, pages used only as deep as the recursion
//! goes. (Considered: the `stacker` crate, which grows the stack on demand but needs a check at
//! every recursive call of syn and prettyplease too, out of reach here.)

/// The stack of [`deep`]'s thread: room for [`MAX_NESTING`](super::yaml::MAX_NESTING) levels
/// of the deepest recursion per level, with debug builds' frames.
pub(crate) const DEEP_STACK: usize = 1 << 30;

/// Runs `f` on a thread with a [`DEEP_STACK`] stack (on this thread when that one already
/// is such a thread, or when no thread can be started).
pub(crate) fn deep<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if ON_DEEP_STACK.get() {
        return f();
    }
    let f = std::sync::Mutex::new(Some(f));
    let take = || f.lock().unwrap_or_else(|e| e.into_inner()).take();
    let run = || {
        ON_DEEP_STACK.set(true);
        take().map(|f| f())
    };
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("kinform-gen".to_owned())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, run)
        {
            Ok(handle) => match handle.join() {
                Ok(r) => r,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => None,
        }
    })
    .or_else(|| take().map(|f| f()))
    .expect("the closure runs on one thread or the other")
}

thread_local! {
    static ON_DEEP_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_a_deep_stack_once() {
        let depth = |n: u64| {
            fn down(n: u64) -> u64 {
                let pad = std::hint::black_box([0u8; 1024]);
                if n == 0 {
                    u64::from(pad[0])
                } else {
                    down(n - 1) + 1
                }
            }
            down(n)
        };
        // 64 MiB of frames: far beyond a test thread's 2 MiB.
        assert_eq!(deep(|| depth(64 * 1024)), 64 * 1024);
        assert!(deep(|| deep(|| ON_DEEP_STACK.get())));
        assert!(!ON_DEEP_STACK.get());
    }
}
