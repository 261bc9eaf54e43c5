//! `kdslc`: the command-line driver. All logic lives in [`kdsl::driver`].

/// mimalloc instead of the system allocator: the compiler builds millions of
/// small tree nodes on a thread of its own (`kdsl::stack`), where glibc's
/// per-thread arena grows by `mprotect` calls and page faults that cost a
/// fifth of a large compile (`benches/scaling.rs`, `bench/peer.py --scale`).
/// (`--features sysalloc` keeps the system allocator, for heaptrack.)
#[cfg(not(feature = "sysalloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`, which the Rust bindings leave
/// unnamed: the option just before `mi_option_use_numa_nodes` in
/// `mimalloc.h` (the test below checks its default).
#[cfg(not(feature = "sysalloc"))]
const PURGE_DELAY: libmimalloc_sys::mi_option_t = libmimalloc_sys::mi_option_use_numa_nodes - 1;

fn main() {
    // Memory freed in the middle of a compile (the syntax trees, once the
    // IR is built) goes back to the OS at once instead of after mimalloc's
    // default delay of a second (longer than most compiles), so that the PTX written next does not stack on top
    // of it: about 15% less peak memory on a large file, and fewer page
    // faults (`bench/peer.py --scale`).
    #[cfg(not(feature = "sysalloc"))]
    // SAFETY: setting an option is safe at any time; this runs first.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0)
    };
    std::process::exit(kdsl::driver::main());
}

#[cfg(all(test, not(feature = "sysalloc")))]
mod tests {
    /// The option is the purge delay: the pinned mimalloc (v3) defaults it
    /// to 1000 ms (`options.c`), and no other option has that default.
    #[test]
    fn purge_delay_is_the_option_set() {
        // SAFETY: reading an option.
        assert_eq!(
            unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) },
            1000
        );
    }
}
