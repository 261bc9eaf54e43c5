//! A large stack for the work that recurses over syntax trees.
//!
//! The checker, the barrier pass, the PTX writer, the printers, the language
//! server's walks and the trees' own `drop` all recurse over the tree, as
//! deep as it nests. The parser bounds that depth (`syntax::depth`, E0124);
//! this module provides a stack on which the bounded depth always fits: a
//! stack overflow would abort the process, which the compiler must never do.
//! Compilation runs on it, and so does the whole command line (`kdslc`'s
//! printers and the language server hold compiled trees too).

use std::cell::Cell;

/// The stack size of the thread [`with_big_stack`] starts. It is virtual
/// memory: only the pages a compilation touches are used.
pub const BIG_STACK: usize = 1 << 30;

/// Trees at most this deep are dropped, printed or walked on any stack (a
/// level costs well under a kilobyte of stack there); deeper ones go to the
/// big stack.
pub const SHALLOW: u32 = 1_000;

thread_local! {
    /// True on a thread that [`with_big_stack`] started.
    static ON_BIG_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Starts a thread with a [`BIG_STACK`]-byte stack on which
/// [`with_big_stack`] runs its work in place (for work that outlives the
/// caller, such as the language server's analyses).
pub fn spawn<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(BIG_STACK)
        .spawn(move || {
            ON_BIG_STACK.with(|b| b.set(true));
            f()
        })
}

/// Runs `f` on a thread with a [`BIG_STACK`]-byte stack (or right here, when
/// this already is such a thread).
pub fn with_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if ON_BIG_STACK.with(Cell::get) {
        return f();
    }
    // The closure is handed over through a mutex so that, should the OS
    // refuse the thread, it can still run here on the current stack.
    let job = std::sync::Mutex::new(Some(f));
    let take = || job.lock().ok().and_then(|mut j| j.take());
    let spawned = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("kdslc".into())
            .stack_size(BIG_STACK)
            .spawn_scoped(scope, || {
                ON_BIG_STACK.with(|b| b.set(true));
                take().map(|f| f())
            })
            .ok()?;
        Some(match handle.join() {
            Ok(v) => v,
            // A panic in the compiler thread: re-raise it here so the
            // driver's catch_unwind turns it into an internal error.
            Err(payload) => std::panic::resume_unwind(payload),
        })
    });
    match spawned.flatten() {
        Some(v) => v,
        None => match take() {
            Some(f) => f(),
            None => std::panic::resume_unwind(Box::new("the compiler thread did not run")),
        },
    }
}
