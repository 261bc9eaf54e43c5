//! `kdslc`: the command-line driver. All logic lives in [`kdsl::driver`].

/// mimalloc instead of the system allocator: the compiler builds millions of
/// small tree nodes on a thread of its own (`kdsl::stack`), where glibc's
/// per-thread arena grows by `mprotect` calls and page faults that cost a
/// fifth of a large compile (`benches/scaling.rs`, `bench/peer.py --scale`).
/// (`--features sysalloc` keeps the system allocator, for heaptrack.)
#[cfg(not(feature = "sysalloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(kdsl::driver::main());
}
