//! Reports of the CUDA runtime's device functions — a failed `assert`,
//! `printf` output past the printf buffer — and of `mapa` past the
//! cluster.

use super::{at, Run};
use crate::diagnostics::Diagnostic;
use crate::sim::machine::printf::{AssertInfo, FIFO_BYTES};

/// S0041: `assert(condition)` was false (`__assertfail`).
pub(crate) fn assert_failed(
    p: &Run<'_>,
    pc: u32,
    info: &AssertInfo,
    who: &str,
    n: &str,
) -> Diagnostic {
    let d = Diagnostic::error("S0041", format!("assertion `{}` failed", info.message));
    let [bx, by, bz] = info.block;
    let [tx, ty, tz] = info.thread;
    at(d, p, pc, &format!("failed here in {n}"), true)
        .note(format!(
            "`assert` in `{}` at {}:{}",
            info.function, info.file, info.line
        ))
        .note(format!("by {who}"))
        .note(format!(
            "a GPU prints: {}:{}: {}: block: [{bx},{by},{bz}], thread: [{tx},{ty},{tz}] Assertion `{}` failed.",
            info.file, info.line, info.function, info.message
        ))
        .help("the condition was false in these threads; a failed `assert` stops the kernel on a GPU (`cudaErrorAssert`), and here each such thread ends")
}

/// S0040: `printf` calls dropped because the printf buffer was full: output
/// a GPU loses silently, an error here; at the first dropped call
/// (`first`: its instruction, CTA and thread).
pub(crate) fn printf_dropped(
    p: &Run<'_>,
    dropped: u64,
    first: Option<(u32, [u32; 3], u32)>,
) -> Diagnostic {
    let d = Diagnostic::error(
        "S0040",
        format!(
            "{} dropped: the printf buffer ({} MiB) was full",
            crate::diagnostics::plural(dropped, "`printf` call"),
            FIFO_BYTES >> 20
        ),
    );
    let d = match first {
        Some((pc, [x, y, z], tid)) => at(
            d,
            p,
            pc,
            &format!("the first call dropped here, by cta ({x},{y},{z}) thread {tid}"),
            true,
        ),
        None => d,
    };
    d.note("a GPU's printf buffer (`cudaLimitPrintfFifoSize`, 1 MiB by default) holds a launch's output; what does not fit is lost, and so it is here")
    .help("print less (from fewer threads, or fewer times), or copy the values to an output array")
}

/// S0002: `mapa` to a CTA rank past the cluster.
pub(crate) fn mapa_rank(
    p: &Run<'_>,
    pc: u32,
    rank: u32,
    cluster: u32,
    who: &str,
    n: &str,
) -> Diagnostic {
    let d = Diagnostic::error(
        "S0002",
        format!(
            "out-of-bounds `mapa` in shared::cluster memory: CTA rank {rank} of a cluster of {}",
            crate::diagnostics::plural(cluster, "CTA")
        ),
    );
    at(d, p, pc, &format!("rank {rank} asked for here by {n}"), true)
        .note(format!("by {who}"))
        .note(format!(
            "the ranks of this cluster are 0 to {}; the address `mapa` returns names no CTA, and every access through it is out of bounds",
            cluster.saturating_sub(1)
        ))
        .help("compute the rank modulo `%cluster_nctarank` (kdsl: `cluster_size()`), or check it first")
}
