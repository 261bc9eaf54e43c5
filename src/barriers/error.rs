//! Errors and warnings about barrier groups and their operations, and the
//! one place they become diagnostics (E0301–E0311, W0320–W0323).

use crate::diagnostics::Diagnostic;
use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum BarrierError {
    /// E0301: `wait`/`test` on a cluster-scope group.
    AwaitNonCta {
        op: &'static str,
        call: Span,
        scope: Span,
        /// The method name's span and, for an explicit parity, the fix.
        method: Span,
        explicit_parity: bool,
    },
    /// E0302
    UnsupportedScope {
        scope: String,
        span: Span,
        closest: Option<String>,
    },
    /// E0303
    Unindexed {
        name: String,
        count: u32,
        span: Span,
        decl: Span,
    },
    /// E0304
    NotSingle {
        shape: String,
        span: Span,
        decl: Span,
    },
    /// E0305
    IndexOutOfBounds {
        index: i128,
        name: String,
        count: u32,
        span: Span,
        decl: Span,
    },
    /// E0306
    ArrivalsOutOfRange { n: i128, span: Span },
    /// E0307
    NeedsClusterScope {
        op: &'static str,
        call: Span,
        scope: Span,
        scope_name: &'static str,
    },
    /// E0308
    ClusterScopeWithoutCluster {
        decl: Span,
        scope: Span,
        kernel: Span,
    },
    /// E0309
    BadTxSize { n: i128, span: Span },
    /// E0310
    BadParity { n: i128, span: Span },
    /// E0311
    BadCount { name: String, n: i128, span: Span },
    /// W0320. `via` is the barrier a called function runs (`op` is then
    /// the function's name).
    Divergent {
        op: String,
        span: Span,
        cond: Span,
        via: Option<&'static str>,
    },
    /// W0321
    ArrivalMismatch {
        name: String,
        expected: u32,
        arriving: u64,
        decl: Span,
        arrive: Span,
    },
    /// W0322
    NoExpectTx {
        name: String,
        copy: Span,
        decl: Span,
    },
    /// W0323
    TxMismatch {
        name: String,
        expected: u64,
        completed: u64,
        expect: Span,
        copies: Vec<Span>,
    },
}

impl BarrierError {
    pub fn into_diagnostic(self) -> Diagnostic {
        match self {
            BarrierError::AwaitNonCta { op, call, scope, method, explicit_parity } => {
                let mut d = Diagnostic::error("E0301", "Can only await on CTA-local barriers")
                    .primary(call, format!("`{op}` needs a barrier group with scope `cta`"))
                    .secondary(scope, "declared with scope `cluster` here")
                    .note("a thread can arrive on a barrier in another CTA's shared memory, but an ordinary `.acquire.cta` wait does not order the writes that other CTAs released")
                    .help("use `wait_cluster(parity)` to wait with cluster-scope acquire, or declare the group with scope `cta`");
                if explicit_parity && op == "wait" {
                    d = d.fix("wait with cluster-scope acquire: `wait_cluster`", method, "wait_cluster");
                }
                d.fix("declare the group with scope `cta`", scope, "cta")
            }
            BarrierError::UnsupportedScope { scope, span, closest } => {
                let mut d = Diagnostic::error("E0302", format!("Unsupported scope: {scope}"))
                    .primary(span, "not a barrier scope")
                    .help("the barrier scopes are `cta` (only this CTA's threads arrive) and `cluster` (threads of other CTAs in the cluster arrive too)");
                if let Some(c) = closest {
                    d = d.help(format!("did you mean `{c}`?")).fix(format!("replace with `{c}`"), span, c);
                }
                d
            }
            BarrierError::Unindexed { name, count, span, decl } => Diagnostic::error(
                "E0303",
                format!("Attempting to operate on barrier without indexing, but `num_barriers = {count}`"),
            )
            .primary(span, format!("`{name}` is a group of {count} barriers"))
            .secondary(decl, format!("`{name}` declared with {count} barriers here"))
            .help(format!("pick one barrier of the group: `{name}[i]`")),
            BarrierError::NotSingle { shape, span, decl } => Diagnostic::error(
                "E0304",
                format!("Expected a single barrier, got a barrier reference with shape {shape}"),
            )
            .primary(span, "this names more than one barrier")
            .secondary(decl, "group declared here")
            .help("barrier operations act on one barrier: index the group with a single integer, e.g. `full[s]`"),
            BarrierError::IndexOutOfBounds { index, name, count, span, decl } => Diagnostic::error(
                "E0305",
                format!("barrier index {index} is out of bounds for group `{name}` of {count} barriers"),
            )
            .primary(span, format!("valid indices are 0..{count}"))
            .secondary(decl, format!("`{name}` declared with {count} barriers here")),
            BarrierError::ArrivalsOutOfRange { n, span } => {
                Diagnostic::error("E0306", format!("arrival count {n} is out of range (1..=1048575)"))
                    .primary(span, "arrival count")
                    .note("an mbarrier counts at most 2^20 - 1 pending arrivals per phase")
            }
            BarrierError::NeedsClusterScope { op, call, scope, scope_name } => {
                Diagnostic::error("E0307", format!("`{op}` requires a cluster-scope barrier"))
                    .primary(call, format!("`{op}` on a group with scope `{scope_name}`"))
                    .secondary(scope, format!("declared with scope `{scope_name}` here"))
                    .help(if op == "wait_cluster" {
                        "use `wait(parity)` for a CTA-local group, or declare the group with scope `cluster`"
                    } else {
                        "declare the group with scope `cluster` so other CTAs may arrive on it"
                    })
                    .fix("declare the group with scope `cluster`", scope, "cluster")
            }
            BarrierError::ClusterScopeWithoutCluster { decl, scope, kernel } => Diagnostic::error(
                "E0308",
                "cluster-scope barrier in a kernel without a cluster launch attribute",
            )
            .primary(decl, "cluster-scope barrier group")
            .secondary(kernel, "this kernel has no `cluster(...)` attribute")
            .help("add a launch attribute such as `cluster(2)` after the kernel's parameters, or declare the group with scope `cta`")
            .fix("declare the group with scope `cta`", scope, "cta"),
            BarrierError::BadTxSize { n, span } => Diagnostic::error(
                "E0309",
                format!("transaction size {n} must be a positive multiple of 16 no larger than 1048575"),
            )
            .primary(span, "transaction size in bytes")
            .note("bulk copies move whole 16-byte units, and an mbarrier's transaction count is below 2^20"),
            BarrierError::BadParity { n, span } => Diagnostic::error("E0310", format!("wait parity must be 0 or 1, found {n}"))
                .primary(span, "parity")
                .help("a phase's parity is 0 or 1; or write `wait()` and let the compiler track it"),
            BarrierError::BadCount { name, n, span } => Diagnostic::error(
                "E0311",
                format!("barrier group `{name}` must hold between 1 and 64 barriers, found {n}"),
            )
            .primary(span, "barrier count"),
            BarrierError::Divergent { op, span, cond, via } => {
                let mut d = Diagnostic::warning("W0320", "barrier operation in divergent control flow")
                    .primary(span, format!("`{op}` runs only in some threads"))
                    .secondary(cond, "this condition depends on the thread index");
                if let Some(barrier) = via {
                    d = d.note(format!("`{op}` calls `{barrier}()`"));
                }
                d.note("every thread of the CTA (or cluster) must reach the barrier, or the threads that do wait forever")
            }
            BarrierError::ArrivalMismatch { name, expected, arriving, decl, arrive } => Diagnostic::warning(
                "W0321",
                format!("barrier `{name}` expects {expected} arrivals per phase but {arriving} threads arrive"),
            )
            .primary(arrive, format!("{arriving} threads arrive here"))
            .secondary(decl, format!("declared with `arrivals = {expected}`"))
            .note("a phase completes when the expected number of arrivals is reached: too few arrivals hang its waiters, too many complete phases early"),
            BarrierError::NoExpectTx { name, copy, decl } => Diagnostic::warning(
                "W0322",
                format!("bulk copy completes on barrier `{name}`, which never expects transactions"),
            )
            .primary(copy, "completes transaction bytes on this barrier")
            .secondary(decl, "declared here")
            .help(format!("call `{name}.arrive_expect_tx(bytes)` before the copy so the phase waits for its bytes")),
            BarrierError::TxMismatch { name, expected, completed, expect, copies } => {
                let mut d = Diagnostic::warning(
                    "W0323",
                    format!("barrier `{name}` expects {expected} transaction bytes but the copies complete {completed}"),
                )
                .primary(expect, format!("expects {expected} bytes"));
                for c in copies {
                    d = d.secondary(c, "completes bytes here");
                }
                d.note("if fewer bytes arrive than expected the phase never completes; if more, the phase completes early")
            }
        }
    }
}
