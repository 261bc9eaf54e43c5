//! The barrier pass's errors and warnings, and the one place they become
//! diagnostics (E0301, E0303, E0305–E0307, E0309, E0310, W0320–W0326). The
//! errors the checker finds in barrier declarations and references (E0302,
//! E0304, E0306 for a declaration, E0308, E0311) are its own
//! (`check::error`).

use crate::diagnostics::{agree, plural, Diagnostic};
use crate::span::Span;

/// The fixes of a scope error (E0301, E0307): the operation's spelling for
/// the group's scope, and re-declaring the group with the scope the
/// operation needs, unless something stands in the way.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeFix {
    /// The scope identifier in the group's declaration.
    pub scope: Span,
    /// The operation's method name.
    pub method: Span,
    /// Why the group cannot take the scope the operation needs, if it cannot.
    pub blocker: Option<Blocker>,
}

/// What makes re-declaring a group with another scope lead into a new error.
#[derive(Clone, Debug, PartialEq)]
pub enum Blocker {
    /// Another operation on the group needs its present scope.
    Op {
        op: &'static str,
        span: Span,
        scope: &'static str,
    },
    /// A cluster-scope group needs a kernel with `cluster(...)` (E0308).
    NoCluster { kernel: Span },
    /// A statement that failed to check names the group: what it needs is
    /// unknown, so nothing is said about it.
    Unknown,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BarrierError {
    /// E0301: `wait`/`test` on a cluster-scope group.
    AwaitNonCta {
        op: &'static str,
        call: Span,
        fix: ScopeFix,
    },
    /// E0303
    Unindexed {
        name: String,
        count: u32,
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
    /// E0306 for `arrive(count)` (a declaration's count is the checker's)
    ArrivalsOutOfRange { n: i128, span: Span },
    /// E0307: `arrive_remote`, `wait_cluster` or `test_cluster` on a
    /// cta-scope group.
    NeedsClusterScope {
        op: &'static str,
        call: Span,
        fix: ScopeFix,
    },
    /// E0309
    BadTxSize { n: i128, span: Span },
    /// E0310. `reference` is the barrier as written (`full[s]`), `op` the
    /// operation (`wait`, `test`, `wait_cluster`, `test_cluster`).
    BadParity {
        n: i128,
        span: Span,
        reference: String,
        op: &'static str,
    },
    /// W0320. `via` is the barrier a called function runs (`op` is then
    /// the function's name).
    Divergent {
        op: String,
        span: Span,
        cond: Span,
        via: Option<&'static str>,
    },
    /// W0324: `op` on named barrier `name` under `cond`, which varies
    /// within a warp.
    NamedDivergent {
        name: String,
        op: &'static str,
        span: Span,
        cond: Span,
    },
    /// W0326: the warps that can reach named barrier `name` hold
    /// `reaching` threads, not its count.
    NamedReach {
        name: String,
        expected: u32,
        reaching: u32,
        decl: Span,
        first: Span,
    },
    /// W0321
    ArrivalMismatch {
        name: String,
        expected: u32,
        arriving: u64,
        decl: Span,
        arrive: Span,
    },
    /// W0322. `reference` is the copy's barrier as written (`full[s]`).
    NoExpectTx {
        name: String,
        reference: String,
        copy: Span,
        decl: Span,
    },
    /// W0323. `reference` is the barrier as the first expect wrote it
    /// (`full[s]`).
    TxMismatch {
        name: String,
        reference: String,
        expected: u64,
        completed: u64,
        expect: Span,
        copies: Vec<Span>,
    },
    /// E0407: a copy into a guarded stage that completes on a barrier that
    /// does not guard it.
    StageCopy {
        why: String,
        /// The barrier reference.
        span: Span,
        copy: Span,
        /// The group's declaration.
        guards: Span,
    },
    /// E0407: a read of a filled stage with no wait on its barrier before
    /// it on some path.
    UnwaitedRead {
        array: String,
        read: String,
        barrier: String,
        span: Span,
        guards: Span,
    },
    /// E0406: W0323 with a tensor copy among the copies, whose bytes are
    /// certain; `cta` says which CTAs of the cluster receive `completed`
    /// under multicast.
    TensorTxMismatch {
        name: String,
        reference: String,
        expected: u64,
        completed: u64,
        cta: CtaCount,
        expect: Span,
        copies: Vec<TxCopy>,
    },
}

/// The CTAs an E0406 is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtaCount {
    /// No multicast: the copying CTA.
    One,
    /// Multicast: every CTA of the cluster receives the same bytes.
    Each,
    /// Multicast: the CTA of this rank (the CTAs receive different bytes).
    Rank(u32),
}

/// A copy of E0406 and what it completes on the barrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxCopy {
    pub span: Span,
    pub label: String,
}

impl BarrierError {
    pub fn into_diagnostic(self) -> Diagnostic {
        match self {
            BarrierError::AwaitNonCta { op, call, fix } => {
                let cluster_op = if op == "test" { "test_cluster" } else { "wait_cluster" };
                let verb = if op == "test" { "test" } else { "wait" };
                let d = Diagnostic::error("E0301", "Can only await on CTA-local barriers")
                    .primary(call, format!("`{op}` needs a barrier group with scope `cta`"))
                    .secondary(fix.scope, "declared with scope `cluster` here")
                    .note("a thread can arrive on a barrier in another CTA's shared memory, but an ordinary `.acquire.cta` wait does not order the writes that other CTAs released")
                    // The fixes are the help: each said once.
                    .fix(format!("{verb} with cluster-scope acquire: `{cluster_op}`"), fix.method, cluster_op);
                scope_fix(d, &fix, "cta")
            }
            BarrierError::Unindexed { name, count, span, decl } => Diagnostic::error(
                "E0303",
                format!("operation on barrier group `{name}` without an index"),
            )
            .primary(span, format!("`{name}` holds {}: which one?", plural(count, "barrier")))
            .secondary(decl, format!("`{name}` declared with {} here", plural(count, "barrier")))
            .help(format!("pick one barrier of the group: `{name}[i]`")),
            BarrierError::IndexOutOfBounds { index, name, count, span, decl } => Diagnostic::error(
                "E0305",
                format!("barrier index {index} is out of bounds for group `{name}` of {}", plural(count, "barrier")),
            )
            .primary(span, format!("valid indices are 0..{count}"))
            .secondary(decl, format!("`{name}` declared with {} here", plural(count, "barrier"))),
            BarrierError::ArrivalsOutOfRange { n, span } => {
                Diagnostic::error("E0306", format!("arrival count {n} is out of range (1..=1048575)"))
                    .primary(span, "arrival count")
                    .note("an mbarrier counts at most 2^20 - 1 pending arrivals per phase")
            }
            BarrierError::NeedsClusterScope { op, call, fix } => {
                let cta_op = op.strip_suffix("_cluster");
                let mut d = Diagnostic::error("E0307", format!("`{op}` requires a cluster-scope barrier"))
                    .primary(call, format!("`{op}` on a group with scope `cta`"))
                    .secondary(fix.scope, "declared with scope `cta` here");
                // The fixes are the help; only a way out that no fix
                // offers is said in words.
                d = match (cta_op, &fix.blocker) {
                    (Some(_), _) | (None, None) => d,
                    (None, Some(Blocker::Op { .. })) => d.help("declare the group with scope `cluster` so other CTAs may arrive on it, and await it with `wait_cluster`/`test_cluster`"),
                    (None, Some(_)) => d.help("declare the group with scope `cluster` so other CTAs may arrive on it"),
                };
                d = scope_fix(d, &fix, "cluster");
                if let Some(c) = cta_op {
                    let verb = if c == "test" { "test" } else { "wait" };
                    d = d.fix(format!("{verb} with CTA-scope acquire: `{c}`"), fix.method, c);
                }
                d
            }
            BarrierError::BadTxSize { n, span } => Diagnostic::error(
                "E0309",
                format!("transaction size {n} must be a positive multiple of 16 no larger than 1048575"),
            )
            .primary(span, "transaction size in bytes")
            .note("bulk copies move whole 16-byte units, and an mbarrier's transaction count is below 2^20"),
            BarrierError::BadParity { n, span, reference, op } => Diagnostic::error("E0310", format!("wait parity must be 0 or 1, found {n}"))
                .primary(span, "parity")
                .help(format!("a phase's parity is 0 or 1; or write `{reference}.{op}()` and let the compiler track it")),
            BarrierError::Divergent { op, span, cond, via } => {
                let mut d = Diagnostic::warning("W0320", "barrier operation in divergent control flow")
                    .primary(span, format!("`{op}` runs only in some threads"))
                    .secondary(cond, "this condition depends on the thread index");
                if let Some(barrier) = via {
                    d = d.note(format!("`{op}` calls `{barrier}()`"));
                }
                d.note("every thread of the CTA (or cluster) must reach the barrier, or the threads that do wait forever")
            }
            BarrierError::NamedDivergent { name, op, span, cond } => Diagnostic::warning(
                "W0324",
                format!("named barrier `{name}` used under a condition that splits warps"),
            )
            .primary(span, format!("`{op}()` runs only in some threads of a warp"))
            .secondary(cond, "this condition can differ between the threads of a warp")
            .note("threads arrive at a named barrier a warp at a time: give roles to whole warps (`if warp_id == 0`), or count only the warps that arrive")
            .note("kdslc emits the non-`.aligned` `barrier.sync`/`barrier.arrive` here"),
            BarrierError::NamedReach { name, expected, reaching, decl, first } => Diagnostic::warning(
                "W0326",
                format!("named barrier `{name}` counts {} but {} can reach it", plural(expected, "thread"), plural(reaching, "thread")),
            )
            .primary(first, format!("{} can reach `{name}`, here and at its other operations", plural(reaching, "thread")))
            .secondary(decl, format!("declared with `threads = {expected}`"))
            .note(if reaching < expected {
                "a phase completes only when the count is reached: the threads that wait hang"
            } else {
                "a phase completes at the count, whoever arrives: threads meant for different phases can complete one together"
            }),
            BarrierError::ArrivalMismatch { name, expected, arriving, decl, arrive } => Diagnostic::warning(
                "W0321",
                format!("barrier `{name}` expects {} per phase but {} {}", plural(expected, "arrival"), plural(arriving, "thread"), agree(arriving, "arrives", "arrive")),
            )
            .primary(arrive, format!("{} {} here", plural(arriving, "thread"), agree(arriving, "arrives", "arrive")))
            .secondary(decl, format!("declared with `arrivals = {expected}`"))
            .note("a phase completes when the expected number of arrivals is reached: too few arrivals hang its waiters, too many complete phases early"),
            BarrierError::NoExpectTx { name, reference, copy, decl } => Diagnostic::warning(
                "W0322",
                format!("bulk copy completes on barrier `{name}`, which never expects transactions"),
            )
            .primary(copy, "completes transaction bytes on this barrier")
            .secondary(decl, "declared here")
            .help(format!("call `{reference}.arrive_expect_tx(bytes)` before the copy so the phase waits for its bytes")),
            BarrierError::TxMismatch { name, reference, expected, completed, expect, copies } => {
                let mut d = Diagnostic::warning(
                    "W0323",
                    format!("barrier `{name}` expects {} but the copies complete {completed}", plural(expected, "transaction byte")),
                )
                .primary(expect, format!("`{reference}` expects {} here", plural(expected, "byte")));
                for c in copies {
                    d = d.secondary(c, "completes bytes here");
                }
                d.note("if fewer bytes arrive than expected the phase never completes; if more, the phase completes early")
            }
            BarrierError::StageCopy { why, span, copy, guards } => Diagnostic::error(
                "E0407",
                format!("stage discipline: {why}"),
            )
            .primary(span, "the copy completes here")
            .secondary(copy, "this copy")
            .secondary(guards, "the stages this group guards are declared here")
            .note("`guards(...)` says that barrier `i` of a group guards slice `i` of each array: a copy into a stage completes on that stage's barrier, so that a wait on it means the stage has landed"),
            BarrierError::UnwaitedRead { array, read, barrier, span, guards } => Diagnostic::error(
                "E0407",
                format!("stage discipline: `{read}` is read with no wait on `{barrier}` before it"),
            )
            .primary(span, format!("a stage of `{array}` read here"))
            .secondary(guards, format!("`{array}` is filled by tensor copies completing on this group"))
            .note("the copy filling the stage may still be landing until its barrier's phase completes: a read before a wait on it (on some path to the read, or after an arrival that may have released the stage) reads a half-written tile")
            .help(format!("wait first: `{barrier}.wait();`")),
            BarrierError::TensorTxMismatch { name, reference, expected, completed, cta, expect, copies } => {
                let in_cta = match cta {
                    CtaCount::One => String::new(),
                    CtaCount::Each => " in each CTA of the cluster".to_string(),
                    CtaCount::Rank(r) => format!(" in the CTA of rank {r}"),
                };
                let mut d = Diagnostic::error(
                    "E0406",
                    format!("barrier `{name}` expects {} but the tensor copies complete {completed}{in_cta}", plural(expected, "transaction byte")),
                )
                .primary(expect, format!("`{reference}` expects {} here", plural(expected, "byte")));
                for c in copies {
                    d = d.secondary(c.span, c.label);
                }
                let d = d.note("a tensor copy completes its whole box's bytes on the barrier (a multicast on the barrier of each CTA it names); if fewer bytes arrive than expected the phase never completes and its waiters hang, if more it completes before the data has landed");
                match cta {
                    CtaCount::Rank(_) => d.help("the CTAs of the cluster receive different bytes but expect the same: let the masks name every CTA, or expect in each CTA what it receives"),
                    _ => d.help(format!("expect what the copies deliver: `bytes_of(...)` of their slices, {completed} bytes")),
                }
            }
        }
    }
}

/// The scope fix of E0301/E0307: re-declare the group with `scope`, unless
/// that leads into another error, in which case a label says what needs the
/// present scope.
fn scope_fix(d: Diagnostic, fix: &ScopeFix, scope: &'static str) -> Diagnostic {
    match &fix.blocker {
        None => d.fix(
            format!("declare the group with scope `{scope}`"),
            fix.scope,
            scope,
        ),
        Some(Blocker::Op {
            op,
            span,
            scope: needed,
        }) => d.secondary(
            *span,
            format!("`{op}` needs scope `{needed}`, so the group keeps it"),
        ),
        Some(Blocker::NoCluster { kernel }) => d.secondary(
            *kernel,
            "a cluster-scope group needs a kernel with `cluster(...)`",
        ),
        Some(Blocker::Unknown) => d,
    }
}
