//! The table of built-ins: every function, value and barrier operation the
//! language provides, in one place.
//!
//! Each [`Entry`] gives a built-in's name, the enum variant the checker
//! matches on ([`Builtin`]), its parameters (from which its signature, its
//! argument counts and its named arguments follow), whether a constant may
//! use it, the oldest target and the launch shape it needs, and its one-line
//! documentation. The checker looks names up here and dispatches on the
//! variant with exhaustive matches, so a built-in added to an enum and not
//! handled is a compile error; the language server's hover and completion,
//! `docs/language.md`'s lists, both editor highlighters and the program
//! generator's coverage list are tested against this table.
//!
//! Adding a built-in: an entry in [`BUILTINS`] (and a variant if it is a
//! new kind of operation), its arm in the checker (`calls.rs` for a
//! function), its IR operation, its PTX, its simulation, its line in
//! `docs/language.md` and the highlighters, and its tests.

use crate::ir::{AtomicOp, FragKind, LaneMask, MathFn, NamedOpKind, ReduxOp, WarpOp};
use crate::target::Target;
use crate::types::Scalar;

/// What a built-in is: the checker dispatches on this.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// Called by name: `min(a, b)`.
    Function(Function),
    /// A name on its own, or with a field: `lane_id`, `thread_idx.x`.
    Value(BuiltinValue),
    /// An operation on a barrier group or a named barrier: `full[s].wait()`.
    Method(Method),
}

/// The built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Function {
    Math(MathFn),
    /// `f16x2(lo, hi)`, `bf16x2(lo, hi)`: a packed pair of that type.
    Pack(Scalar),
    Select,
    Atomic(AtomicOp),
    Fence,
    Warp(WarpOp),
    LaneMask(LaneMask),
    SyncWarp,
    SyncThreads,
    ClusterSync,
    FenceProxyAsync,
    CopyAsync,
    CopyAsyncStore,
    CopyAsyncCommit,
    CopyAsyncWait,
    /// `tma_load(sa[s], a[c0, c1], full[s], mask = m)`.
    TmaLoad,
    /// `tma_store(c[c0, c1], sc[b])`.
    TmaStore,
    /// `tma_reduce_add(c[c0, c1], sc[b])`.
    TmaReduceAdd,
    /// `bytes_of(sa[s])`: the bytes of a slice, a constant.
    BytesOf,
    /// `size_of(T)`: the bytes of a type, a constant.
    SizeOf,
    /// `set_max_regs(n)`: this warpgroup's register budget (`setmaxnreg`).
    SetMaxRegs,
    /// `acc_row(acc, i)`, `acc_col(acc, i)`: the fragment map.
    AccRow,
    AccCol,
    /// `wgmma(acc, a, b, accumulate)`.
    Wgmma,
    /// `row_max(m, s)`, `row_sum`, `row_scale`, `row_exp2`, `acc_convert`:
    /// whole-fragment operations.
    Fragment(FragKind),
    /// `wgmma_commit()`, `wgmma_wait(n)`.
    WgmmaCommit,
    WgmmaWait,
    /// `remote(array, rank)[i]`: only as the base of an element.
    Remote,
    Load2,
    Load4,
    Store2,
    Store4,
    /// `ldmatrix_xN(tile[r, c], trans = t)`: N (1, 2, 4) 8 x 8 matrices.
    LdMatrix(u8),
    /// `stmatrix_xN(tile[r, c], values..., trans = t)`.
    StMatrix(u8),
}

/// The built-in values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinValue {
    ThreadIdx,
    BlockDim,
    BlockIdx,
    GridDim,
    ClusterIdx,
    ClusterDim,
    ClusterGridIdx,
    ClusterGridDim,
    LaneId,
    WarpId,
    ClusterRank,
    ClusterSize,
}

/// The operations of barrier groups and named barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Barrier(BarrierMethod),
    Named(NamedOpKind),
}

/// The operations of an mbarrier group (language.md §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierMethod {
    Arrive,
    ArriveExpectTx,
    ExpectTx,
    ArriveRemote,
    Wait,
    Test,
    WaitCluster,
    TestCluster,
}

/// How a built-in is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `name(args)`.
    Function,
    /// `name`, a `u32`.
    Scalar,
    /// `name.x`, `name.y`, `name.z`, each a `u32`.
    Vector,
    /// `group.name(args)` on an mbarrier group.
    BarrierMethod,
    /// `group.name(args)` on a named barrier.
    NamedMethod,
}

/// One parameter of a built-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    /// The type as shown in signatures (`T` is the type the arguments
    /// marked with it share); empty for an operand that is not a value
    /// (a place such as `array[index]`, a barrier).
    pub ty: &'static str,
    pub kind: ParamKind,
    pub operand: Operand,
}

/// What an argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A value.
    Value,
    /// An element of an array, written `array[index]`: the atomics and
    /// vector accesses use its address.
    Place,
    /// An array by its name alone (`remote(tile, rank)`).
    Array,
    /// A barrier: a group's name, indexed when it has several
    /// (`copy_async(..., full[s])`).
    Barrier,
    /// A slice of a shared array: its name with fewer indices than
    /// dimensions, the leading ones (`sa[s]`, or `sa` for all of it).
    Slice,
    /// A box of a tensor map: the map's name with one coordinate per
    /// dimension (`a[m0, k0]`).
    Box,
    /// A warpgroup accumulator by its name (`acc_row(acc, i)`).
    Accum,
    /// A type by its name: a scalar type or a kernel's type constant
    /// (`size_of(bf16)`, `size_of(ELEM)`).
    Type,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Always given, by position.
    Required,
    /// By position or by name (`mask = m`), with this default.
    Default(&'static str),
    /// By position or left out, with no default value: the two forms
    /// mean different things (`wait()` tracks the parity, `wait(p)` is
    /// explicit).
    Omittable,
    /// By name only (`order = acquire`), with this default.
    Named(&'static str),
}

/// What a built-in needs of the target and the launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// The oldest target that has it.
    pub target: Target,
    /// Only in a kernel with a `cluster(...)` attribute.
    pub cluster: bool,
    /// Only on these architecture-specific targets (`sm_90a`), whatever
    /// `target` says; empty: on `target` and every newer one.
    pub arch: &'static [Target],
}

/// One built-in.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub name: &'static str,
    pub builtin: Builtin,
    pub form: Form,
    pub params: &'static [Param],
    /// The result type as shown in signatures; empty for none.
    pub ret: &'static str,
    /// A constant's expression may call it (it folds).
    pub in_const: bool,
    pub needs: Needs,
    /// One line for hover, completion and the docs.
    pub doc: &'static str,
}

const fn req(name: &'static str, ty: &'static str) -> Param {
    Param {
        name,
        ty,
        kind: ParamKind::Required,
        operand: Operand::Value,
    }
}

/// A required parameter that is not a value (its type is not shown).
const fn operand(name: &'static str, operand: Operand) -> Param {
    Param {
        name,
        ty: "",
        kind: ParamKind::Required,
        operand,
    }
}

/// An element of an array (its address), shown as `ty`.
const fn place(name: &'static str, ty: &'static str) -> Param {
    Param {
        name,
        ty,
        kind: ParamKind::Required,
        operand: Operand::Place,
    }
}

const fn omit(name: &'static str, ty: &'static str) -> Param {
    Param {
        name,
        ty,
        kind: ParamKind::Omittable,
        operand: Operand::Value,
    }
}

const fn named(name: &'static str, default: &'static str) -> Param {
    Param {
        name,
        ty: "",
        kind: ParamKind::Named(default),
        operand: Operand::Value,
    }
}

/// The lane mask of a warp-synchronous built-in.
const MASK: Param = Param {
    name: "mask",
    ty: "u32",
    kind: ParamKind::Default("0xFFFF_FFFF"),
    operand: Operand::Value,
};
/// `order =` and `scope =` of an atomic: PTX's defaults (`.relaxed.gpu`)
/// when not given, and then not written.
const ATOMIC_SEM: [Param; 2] = [named("order", "..."), named("scope", "...")];
const PLACE: Param = place("array[index]", "");
/// The row a lane of a matrix access names.
const ROW: Param = place("row", "shared element");
/// `trans = true`: the matrices transposed (`.trans`).
const TRANS: Param = Param {
    name: "trans",
    ty: "bool",
    kind: ParamKind::Default("false"),
    operand: Operand::Value,
};

const ALL: Needs = Needs {
    target: Target::Sm80,
    cluster: false,
    arch: &[],
};
const SM90: Needs = Needs {
    target: Target::Sm90,
    cluster: false,
    arch: &[],
};
const CLUSTER: Needs = Needs {
    target: Target::Sm90,
    cluster: true,
    arch: &[],
};
/// `wgmma`: sm_90a only (ptx-notes §11.3: sm_100a has tcgen05 instead).
const WGMMA: Needs = Needs {
    target: Target::Sm90a,
    cluster: false,
    arch: &[Target::Sm90a],
};
/// `setmaxnreg`: sm_90a and sm_100a (ptx-notes §11.4; also sm_100f and
/// sm_120a, which kdslc has no targets for).
const SETMAXNREG: Needs = Needs {
    target: Target::Sm90a,
    cluster: false,
    arch: &[Target::Sm90a, Target::Sm100a],
};

impl Entry {
    const fn new(
        name: &'static str,
        builtin: Builtin,
        form: Form,
        params: &'static [Param],
        ret: &'static str,
        doc: &'static str,
    ) -> Entry {
        Entry {
            name,
            builtin,
            form,
            params,
            ret,
            in_const: false,
            needs: ALL,
            doc,
        }
    }

    const fn function(
        name: &'static str,
        f: Function,
        params: &'static [Param],
        ret: &'static str,
        doc: &'static str,
    ) -> Entry {
        Entry::new(name, Builtin::Function(f), Form::Function, params, ret, doc)
    }

    const fn value(name: &'static str, v: BuiltinValue, form: Form, doc: &'static str) -> Entry {
        Entry::new(name, Builtin::Value(v), form, &[], "u32", doc)
    }

    const fn barrier(
        name: &'static str,
        m: BarrierMethod,
        params: &'static [Param],
        ret: &'static str,
        doc: &'static str,
    ) -> Entry {
        let b = Builtin::Method(Method::Barrier(m));
        Entry::new(name, b, Form::BarrierMethod, params, ret, doc)
    }

    const fn named_barrier(name: &'static str, k: NamedOpKind, doc: &'static str) -> Entry {
        let b = Builtin::Method(Method::Named(k));
        Entry::new(name, b, Form::NamedMethod, &[], "", doc)
    }

    const fn constant(self) -> Entry {
        Entry {
            in_const: true,
            ..self
        }
    }

    const fn needs(self, needs: Needs) -> Entry {
        Entry { needs, ..self }
    }
}

use BarrierMethod as B;
use BuiltinValue as V;
use Function as F;

/// Every built-in, in the order of the language reference.
pub const BUILTINS: &[Entry] = &[
    // ---- values (language.md §7)
    Entry::value("thread_idx", V::ThreadIdx, Form::Vector, "This thread's index in its CTA (`%tid`)."),
    Entry::value("block_dim", V::BlockDim, Form::Vector, "The CTA's shape, in threads (`%ntid`)."),
    Entry::value("block_idx", V::BlockIdx, Form::Vector, "This CTA's index in the grid (`%ctaid`)."),
    Entry::value("grid_dim", V::GridDim, Form::Vector, "The grid's shape, in CTAs (`%nctaid`)."),
    Entry::value("lane_id", V::LaneId, Form::Scalar, "This thread's lane in its warp, 0 to 31 (`%laneid`)."),
    Entry::value("warp_id", V::WarpId, Form::Scalar, "This thread's warp in its CTA: the linear thread index divided by 32 (never `%warpid`)."),
    Entry::value("cluster_rank", V::ClusterRank, Form::Scalar, "This CTA's rank in its cluster (`%cluster_ctarank`).").needs(SM90),
    Entry::value("cluster_size", V::ClusterSize, Form::Scalar, "The number of CTAs in the cluster (`%cluster_nctarank`).").needs(SM90),
    Entry::value("cluster_idx", V::ClusterIdx, Form::Vector, "This CTA's position in its cluster (`%cluster_ctaid`).").needs(SM90),
    Entry::value("cluster_dim", V::ClusterDim, Form::Vector, "The cluster's shape, in CTAs (`%cluster_nctaid`).").needs(SM90),
    Entry::value("cluster_grid_idx", V::ClusterGridIdx, Form::Vector, "This cluster's position in the grid, in clusters (`%clusterid`): the same in every CTA of the cluster.").needs(SM90),
    Entry::value("cluster_grid_dim", V::ClusterGridDim, Form::Vector, "The grid's shape, in clusters (`%nclusterid`).").needs(SM90),
    // ---- math (language.md §8)
    Entry::function("min", F::Math(MathFn::Min), &[req("a", "T"), req("b", "T")], "T", "The smaller of `a` and `b` (integers, `f32`, `f64`, `f16x2` and `bf16x2` half by half).").constant(),
    Entry::function("max", F::Math(MathFn::Max), &[req("a", "T"), req("b", "T")], "T", "The larger of `a` and `b` (integers, `f32`, `f64`, `f16x2` and `bf16x2` half by half).").constant(),
    Entry::function("abs", F::Math(MathFn::Abs), &[req("x", "T")], "T", "The absolute value of `x` (signed integers, `f32`, `f64`, `f16x2`, `bf16x2`; `abs(i32::MIN)` is `i32::MIN`).").constant(),
    Entry::function("sqrt", F::Math(MathFn::Sqrt), &[req("x", "T")], "T", "The square root of `x`, correctly rounded (`f32`, `f64`)."),
    Entry::function("rsqrt", F::Math(MathFn::Rsqrt), &[req("x", "T")], "T", "An approximation of `1 / sqrt(x)` (`f32`, `f64`)."),
    Entry::function("exp2", F::Math(MathFn::Exp2), &[req("x", "f32")], "f32", "2 to the power `x`, the hardware approximation (`ex2.approx.f32`)."),
    Entry::function("log2", F::Math(MathFn::Log2), &[req("x", "f32")], "f32", "The base-2 logarithm of `x`, the hardware approximation (`lg2.approx.f32`)."),
    Entry::function("exp", F::Math(MathFn::Exp), &[req("x", "f32")], "f32", "e to the power `x`, through the hardware's `ex2.approx.f32`."),
    Entry::function("log", F::Math(MathFn::Log), &[req("x", "f32")], "f32", "The natural logarithm of `x`, through the hardware's `lg2.approx.f32`."),
    Entry::function("sin", F::Math(MathFn::Sin), &[req("x", "f32")], "f32", "The sine of `x` (radians), the hardware approximation (`sin.approx.f32`)."),
    Entry::function("cos", F::Math(MathFn::Cos), &[req("x", "f32")], "f32", "The cosine of `x` (radians), the hardware approximation (`cos.approx.f32`)."),
    Entry::function("fma", F::Math(MathFn::Fma), &[req("a", "T"), req("b", "T"), req("c", "T")], "T", "`a * b + c`, rounded once (`f32`, `f64`, and `f16x2`/`bf16x2` half by half: HFMA2).").constant(),
    Entry::function("f16x2", F::Pack(Scalar::F16x2), &[req("lo", "T"), req("hi", "T")], "f16x2", "A pair of halves from two `f16` (moved) or two `f32` (each rounded to nearest even: one `cvt.rn.f16x2.f32`); `.lo` and `.hi` read them back.").constant(),
    Entry::function("bf16x2", F::Pack(Scalar::BF16x2), &[req("lo", "T"), req("hi", "T")], "bf16x2", "A pair of halves from two `bf16` (moved) or two `f32` (each rounded to nearest even: one `cvt.rn.bf16x2.f32`); `.lo` and `.hi` read them back.").constant(),
    Entry::function("select", F::Select, &[req("cond", "bool"), req("a", "T"), req("b", "T")], "T", "`a` if `cond`, else `b`; all three are evaluated (`selp`).").constant(),
    // ---- atomics
    Entry::function("atomic_add", F::Atomic(AtomicOp::Add), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "Adds `value` to the element and returns what it held before."),
    Entry::function("atomic_sub", F::Atomic(AtomicOp::Sub), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "Subtracts `value` from the element and returns what it held before."),
    Entry::function("atomic_max", F::Atomic(AtomicOp::Max), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "Stores the larger of the element and `value`; returns what the element held before."),
    Entry::function("atomic_min", F::Atomic(AtomicOp::Min), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "Stores the smaller of the element and `value`; returns what the element held before."),
    Entry::function("atomic_exch", F::Atomic(AtomicOp::Exch), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "Stores `value` and returns what the element held before."),
    Entry::function("atomic_and", F::Atomic(AtomicOp::And), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "ANDs `value` into the element and returns what it held before."),
    Entry::function("atomic_or", F::Atomic(AtomicOp::Or), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "ORs `value` into the element and returns what it held before."),
    Entry::function("atomic_xor", F::Atomic(AtomicOp::Xor), &[PLACE, req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "XORs `value` into the element and returns what it held before."),
    Entry::function("atomic_inc", F::Atomic(AtomicOp::Inc), &[PLACE, req("limit", "u32"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "u32", "Increments the element, wrapping to 0 past `limit`; returns what it held before."),
    Entry::function("atomic_dec", F::Atomic(AtomicOp::Dec), &[PLACE, req("limit", "u32"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "u32", "Decrements the element, wrapping to `limit` below 0 or above `limit`; returns what it held before."),
    Entry::function("atomic_cas", F::Atomic(AtomicOp::Cas), &[PLACE, req("compare", "T"), req("value", "T"), ATOMIC_SEM[0], ATOMIC_SEM[1]], "T", "Stores `value` if the element equals `compare`; returns what it held before."),
    // ---- warp level
    Entry::function("shfl_down", F::Warp(WarpOp::ShflDown), &[req("value", "T"), req("delta", "u32"), MASK], "T", "`value` of the lane `delta` above this one (this lane's own past the end)."),
    Entry::function("shfl_up", F::Warp(WarpOp::ShflUp), &[req("value", "T"), req("delta", "u32"), MASK], "T", "`value` of the lane `delta` below this one (this lane's own before the start)."),
    Entry::function("shfl_xor", F::Warp(WarpOp::ShflXor), &[req("value", "T"), req("lanes", "u32"), MASK], "T", "`value` of the lane whose id is this lane's XOR `lanes` (a butterfly)."),
    Entry::function("shfl_idx", F::Warp(WarpOp::ShflIdx), &[req("value", "T"), req("lane", "u32"), MASK], "T", "`value` of lane `lane` (a broadcast)."),
    Entry::function("ballot", F::Warp(WarpOp::Ballot), &[req("pred", "bool"), MASK], "u32", "The lanes of the mask whose `pred` is true, one bit each."),
    Entry::function("any", F::Warp(WarpOp::Any), &[req("pred", "bool"), MASK], "bool", "Whether `pred` is true in any lane of the mask."),
    Entry::function("all", F::Warp(WarpOp::All), &[req("pred", "bool"), MASK], "bool", "Whether `pred` is true in every lane of the mask."),
    Entry::function("redux_add", F::Warp(WarpOp::Redux(ReduxOp::Add)), &[req("value", "T"), MASK], "T", "The sum of `value` over the lanes of the mask, wrapping (`u32`, `i32`; `redux.sync`)."),
    Entry::function("redux_min", F::Warp(WarpOp::Redux(ReduxOp::Min)), &[req("value", "T"), MASK], "T", "The smallest `value` of the lanes of the mask (`u32`, `i32`; `redux.sync`)."),
    Entry::function("redux_max", F::Warp(WarpOp::Redux(ReduxOp::Max)), &[req("value", "T"), MASK], "T", "The largest `value` of the lanes of the mask (`u32`, `i32`; `redux.sync`)."),
    Entry::function("redux_and", F::Warp(WarpOp::Redux(ReduxOp::And)), &[req("value", "T"), MASK], "T", "The AND of `value` over the lanes of the mask (`u32`, `i32`; `redux.sync`)."),
    Entry::function("redux_or", F::Warp(WarpOp::Redux(ReduxOp::Or)), &[req("value", "T"), MASK], "T", "The OR of `value` over the lanes of the mask (`u32`, `i32`; `redux.sync`)."),
    Entry::function("redux_xor", F::Warp(WarpOp::Redux(ReduxOp::Xor)), &[req("value", "T"), MASK], "T", "The XOR of `value` over the lanes of the mask (`u32`, `i32`; `redux.sync`)."),
    Entry::function("elect_one", F::Warp(WarpOp::Elect), &[MASK], "bool", "True in exactly one lane of the mask, the same in every lane (`elect.sync` on sm_90)."),
    Entry::function("active_mask", F::Warp(WarpOp::ActiveMask), &[], "u32", "The lanes of this warp executing this call (`activemask`)."),
    Entry::function("lane_mask_eq", F::LaneMask(LaneMask::Eq), &[], "u32", "The bit of this lane (`%lanemask_eq`)."),
    Entry::function("lane_mask_lt", F::LaneMask(LaneMask::Lt), &[], "u32", "The bits of the lanes below this one (`%lanemask_lt`)."),
    Entry::function("lane_mask_le", F::LaneMask(LaneMask::Le), &[], "u32", "The bits of this lane and the lanes below it (`%lanemask_le`)."),
    Entry::function("lane_mask_gt", F::LaneMask(LaneMask::Gt), &[], "u32", "The bits of the lanes above this one (`%lanemask_gt`)."),
    Entry::function("lane_mask_ge", F::LaneMask(LaneMask::Ge), &[], "u32", "The bits of this lane and the lanes above it (`%lanemask_ge`)."),
    Entry::function("sync_warp", F::SyncWarp, &[MASK], "", "Waits until every lane of the mask reaches a `sync_warp` with the same mask (`bar.warp.sync`)."),
    // ---- synchronisation and memory order
    Entry::function("sync_threads", F::SyncThreads, &[], "", "Waits until every thread of the CTA arrives (`bar.sync 0`)."),
    Entry::function("cluster_sync", F::ClusterSync, &[], "", "Waits until every thread of the cluster arrives; release and acquire at cluster scope.").needs(CLUSTER),
    Entry::function("fence", F::Fence, &[named("order", "acq_rel"), named("scope", "gpu")], "", "Orders this thread's memory accesses before it against those after it, at the scope (`fence.acq_rel.gpu`)."),
    Entry::function("fence_proxy_async", F::FenceProxyAsync, &[], "", "Orders this thread's shared-memory writes before the bulk copies after it (`fence.proxy.async`).").needs(SM90),
    // ---- bulk copies and distributed shared memory
    Entry::function("copy_async", F::CopyAsync, &[place("dst", "shared element"), place("src", "global element"), req("bytes", "u32"), operand("barrier", Operand::Barrier)], "", "Copies `bytes` from global to shared memory in the background; the barrier's phase completes when they have landed.").needs(SM90),
    Entry::function("copy_async_store", F::CopyAsyncStore, &[place("dst", "global element"), place("src", "shared element"), req("bytes", "u32")], "", "Copies `bytes` from shared to global memory in the background, in the current bulk group.").needs(SM90),
    Entry::function("copy_async_commit", F::CopyAsyncCommit, &[], "", "Closes the current bulk group of `copy_async_store`s.").needs(SM90),
    Entry::function("copy_async_wait", F::CopyAsyncWait, &[req("n", "u32")], "", "Waits until at most `n` (a constant) bulk groups still read their shared memory.").needs(SM90),
    Entry::function("remote", F::Remote, &[operand("array", Operand::Array), req("rank", "u32")], "", "The shared array `array` of the cluster's CTA `rank`, indexed like the array: `remote(tile, 1)[i]`.").needs(CLUSTER),
    // ---- tensor copies (language.md §15)
    Entry::function("tma_load", F::TmaLoad, &[operand("dst", Operand::Slice), operand("src", Operand::Box), operand("barrier", Operand::Barrier), named("mask", "none")], "", "Copies a box of the tensor map into the shared slice in the background, completing its bytes on the barrier; with `mask`, into that slice of each CTA of the cluster whose bit is set (sm_90a).").needs(SM90),
    Entry::function("tma_store", F::TmaStore, &[operand("dst", Operand::Box), operand("src", Operand::Slice)], "", "Copies the shared slice into a box of the tensor map in the background, in the current bulk group (the elements outside the tensor are not written).").needs(SM90),
    Entry::function("tma_reduce_add", F::TmaReduceAdd, &[operand("dst", Operand::Box), operand("src", Operand::Slice)], "", "Adds the shared slice to a box of the tensor map in the background, in the current bulk group.").needs(SM90),
    Entry::function("bytes_of", F::BytesOf, &[operand("slice", Operand::Slice)], "u32", "The bytes of a shared slice (`sa[s]`), a constant: what a tensor copy of it moves.").constant(),
    Entry::function("size_of", F::SizeOf, &[operand("T", Operand::Type)], "u32", "The bytes of one value of the type `T` (`size_of(bf16)` is 2), a constant: with a kernel's type constant, `size_of(ELEM)`.").constant(),
    // ---- vector accesses
    Entry::function("load2", F::Load2, &[PLACE], "(T, T)", "Two consecutive elements in one access: `let (a, b) = load2(x[i]);`."),
    Entry::function("load4", F::Load4, &[PLACE], "(T, T, T, T)", "Four consecutive elements in one access: `let (a, b, c, d) = load4(x[i]);`."),
    Entry::function("store2", F::Store2, &[PLACE, req("a", "T"), req("b", "T")], "", "Stores two consecutive elements in one access."),
    Entry::function("store4", F::Store4, &[PLACE, req("a", "T"), req("b", "T"), req("c", "T"), req("d", "T")], "", "Stores four consecutive elements in one access."),
    // ---- warp matrix loads and stores (language.md §8)
    Entry::function("ldmatrix_x1", F::LdMatrix(1), &[ROW, TRANS], "(R)", "The warp loads one 8 x 8 matrix of 16-bit elements from shared memory, lanes 0 to 7 giving the address of each row: `let (r) = ldmatrix_x1(tile[row, col]);` (`ldmatrix.sync.aligned.m8n8.x1.shared.b16`)."),
    Entry::function("ldmatrix_x2", F::LdMatrix(2), &[ROW, TRANS], "(R, R)", "The warp loads two 8 x 8 matrices of 16-bit elements from shared memory, lanes 8i to 8i + 7 giving the rows of matrix i (`ldmatrix.sync.aligned.m8n8.x2.shared.b16`)."),
    Entry::function("ldmatrix_x4", F::LdMatrix(4), &[ROW, TRANS], "(R, R, R, R)", "The warp loads four 8 x 8 matrices of 16-bit elements from shared memory, lanes 8i to 8i + 7 giving the rows of matrix i: the A fragment of an m16n8k16 `mma` (`ldmatrix.sync.aligned.m8n8.x4.shared.b16`)."),
    Entry::function("stmatrix_x1", F::StMatrix(1), &[ROW, req("a", "R"), TRANS], "", "The warp stores one 8 x 8 matrix of 16-bit elements to shared memory, lanes 0 to 7 giving the address of each row (`stmatrix.sync.aligned.m8n8.x1.shared.b16`).").needs(SM90),
    Entry::function("stmatrix_x2", F::StMatrix(2), &[ROW, req("a", "R"), req("b", "R"), TRANS], "", "The warp stores two 8 x 8 matrices of 16-bit elements to shared memory (`stmatrix.sync.aligned.m8n8.x2.shared.b16`).").needs(SM90),
    Entry::function("stmatrix_x4", F::StMatrix(4), &[ROW, req("a", "R"), req("b", "R"), req("c", "R"), req("d", "R"), TRANS], "", "The warp stores four 8 x 8 matrices of 16-bit elements to shared memory: an epilogue's tile of converted accumulators (`stmatrix.sync.aligned.m8n8.x4.shared.b16`).").needs(SM90),
    // ---- tensor cores and register budgets (language.md §16)
    Entry::function("acc_row", F::AccRow, &[operand("acc", Operand::Accum), req("i", "u32")], "u32", "The row (0 to 63) of this thread's element `i` of the accumulator: `16 * (warp_id % 4) + lane_id / 4 + 8 * ((i >> 1) & 1)`."),
    Entry::function("acc_col", F::AccCol, &[operand("acc", Operand::Accum), req("i", "u32")], "u32", "The column of this thread's element `i` of the accumulator: `8 * (i >> 2) + 2 * (lane_id % 4) + (i & 1)`."),
    Entry::function("wgmma", F::Wgmma, &[operand("acc", Operand::Accum), place("a", "shared or fragment element"), place("b", "shared element"), Param { name: "accumulate", ty: "bool", kind: ParamKind::Default("true"), operand: Operand::Value }], "", "This warpgroup's `acc` (64 x N) becomes the tile at `a` (64 x K) times the tile at `b` (N x K) transposed, plus `acc` where `accumulate` holds: one `wgmma.mma_async` (K = 32 bytes of the operand type), asynchronous until `wgmma_commit` and `wgmma_wait`; `a` an element `p[8 * kk]` of a `bf16`/`f16` fragment reads columns `16 kk ..` of it from registers (the RS form).").needs(WGMMA),
    Entry::function("row_max", F::Fragment(FragKind::RowMax), &[operand("m", Operand::Accum), operand("s", Operand::Accum)], "", "Row vector `m` becomes, per row, the maximum of `m` and the elements of `s` in that row (the four lanes that share a row exchange them by shuffles)."),
    Entry::function("row_sum", F::Fragment(FragKind::RowSum), &[operand("l", Operand::Accum), operand("s", Operand::Accum)], "", "Row vector `l` becomes, per row, `l` plus the sum of the elements of `s` in that row (shuffles across the four lanes of the row)."),
    Entry::function("row_scale", F::Fragment(FragKind::RowScale), &[operand("o", Operand::Accum), operand("c", Operand::Accum)], "", "Every element of `o` (an `f32` fragment or row vector) becomes itself times its row's value of row vector `c`."),
    Entry::function("row_exp2", F::Fragment(FragKind::RowExp2), &[operand("s", Operand::Accum), operand("m", Operand::Accum), req("k", "f32")], "", "Every element `x` of `s` becomes `2^(x * k - m * k)`, `m` its row's value of row vector `m` (`ex2.approx.ftz.f32`; `k = scale * log2(e)` gives `e^(scale (x - m))`)."),
    Entry::function("acc_convert", F::Fragment(FragKind::Convert), &[operand("p", Operand::Accum), operand("s", Operand::Accum)], "", "`bf16`/`f16` fragment `p` becomes `f32` fragment `s` of its shape, each element rounded to nearest even (one `cvt.rn.bf16x2.f32` per register): the A operand of a `wgmma` from registers."),
    Entry::function("wgmma_commit", F::WgmmaCommit, &[], "", "Makes this warpgroup's `wgmma`s since the last commit one group (`wgmma.commit_group`).").needs(WGMMA),
    Entry::function("wgmma_wait", F::WgmmaWait, &[req("n", "u32")], "", "Waits until at most `n` (a constant, 0 to 7) of the newest `wgmma` groups are pending (`wgmma.wait_group`).").needs(WGMMA),
    Entry::function("set_max_regs", F::SetMaxRegs, &[req("n", "u32")], "", "Sets this warpgroup's registers per thread to `n`, a constant multiple of 8 from 24 to 256, giving registers back to the CTA's pool or taking them from it (`setmaxnreg`).").needs(SETMAXNREG),
    // ---- barrier-group operations (language.md §9)
    Entry::barrier("arrive", B::Arrive, &[omit("count", "u32")], "", "One arrival by this thread (or `count` at once) on the barrier's current phase. Any scope."),
    Entry::barrier("arrive_expect_tx", B::ArriveExpectTx, &[req("bytes", "u32")], "", "Expect `bytes` more transaction bytes this phase, then arrive once. Any scope.").needs(SM90),
    Entry::barrier("expect_tx", B::ExpectTx, &[req("bytes", "u32")], "", "Expect `bytes` more transaction bytes this phase, without arriving. Any scope.").needs(SM90),
    Entry::barrier("arrive_remote", B::ArriveRemote, &[req("rank", "u32")], "", "Arrive on the same barrier in cluster CTA `rank`, releasing this thread's writes at cluster scope. Cluster-scope groups only.").needs(CLUSTER),
    Entry::barrier("wait", B::Wait, &[omit("parity", "u32")], "", "Block until the phase with this parity has completed; acquire at CTA scope. CTA-scope groups only."),
    Entry::barrier("test", B::Test, &[omit("parity", "u32")], "bool", "Has the phase with this parity completed? Never blocks; acquires at CTA scope when it has. CTA-scope groups only."),
    Entry::barrier("wait_cluster", B::WaitCluster, &[omit("parity", "u32")], "", "Block until the phase with this parity has completed; acquire at cluster scope, so writes other CTAs released before arriving are visible. Cluster-scope groups only.").needs(SM90),
    Entry::barrier("test_cluster", B::TestCluster, &[omit("parity", "u32")], "bool", "Has the phase with this parity completed? Never blocks; acquires at cluster scope when it has. Cluster-scope groups only.").needs(SM90),
    // ---- named-barrier operations (language.md §4.3)
    Entry::named_barrier("sync", NamedOpKind::Sync, "Arrive and wait until the barrier's thread count has arrived (`bar.sync`)."),
    Entry::named_barrier("arrive", NamedOpKind::Arrive, "Arrive and go on without waiting (`bar.arrive`)."),
];

/// The built-in function called `name`.
pub fn function(name: &str) -> Option<&'static Entry> {
    BUILTINS
        .iter()
        .find(|e| e.form == Form::Function && e.name == name)
}

/// The built-in value called `name`.
pub fn value(name: &str) -> Option<&'static Entry> {
    BUILTINS
        .iter()
        .find(|e| matches!(e.form, Form::Scalar | Form::Vector) && e.name == name)
}

/// The operation `name` of a barrier group (`form` [`Form::BarrierMethod`])
/// or a named barrier ([`Form::NamedMethod`]).
pub fn method(form: Form, name: &str) -> Option<&'static Entry> {
    BUILTINS.iter().find(|e| e.form == form && e.name == name)
}

/// The entry of `b`.
pub fn entry(b: Builtin) -> Option<&'static Entry> {
    BUILTINS.iter().find(|e| e.builtin == b)
}

/// The entry of the built-in function `f`.
pub fn of(f: Function) -> Option<&'static Entry> {
    entry(Builtin::Function(f))
}

/// The names of the entries written `form`, in table order (as short-lived
/// as the names they are listed with: `'static` outlives any `'n`).
pub fn names<'n>(form: Form) -> impl Iterator<Item = &'n str> {
    BUILTINS
        .iter()
        .filter(move |e| e.form == form)
        .map(|e| -> &'n str { e.name })
}

impl Entry {
    /// The parameters given by position (every kind but [`ParamKind::Named`]).
    pub fn positional(&self) -> impl Iterator<Item = &'static Param> {
        self.params
            .iter()
            .filter(|p| !matches!(p.kind, ParamKind::Named(_)))
    }

    /// How many positional arguments a call needs, and may have.
    pub fn arity(&self) -> (usize, usize) {
        let required = self
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Required)
            .count();
        (required, self.positional().count())
    }

    /// The expected argument count, as E0111 words it: `2`, `0 or 1`,
    /// `1 to 3`.
    pub fn expected_args(&self) -> String {
        match self.arity() {
            (a, b) if a == b => a.to_string(),
            (a, b) if a + 1 == b => format!("{a} or {b}"),
            (a, b) => format!("{a} to {b}"),
        }
    }

    /// Whether one of its parameters is an `operand` (an array, a
    /// barrier, ...).
    pub fn takes(&self, operand: Operand) -> bool {
        self.params.iter().any(|p| p.operand == operand)
    }

    /// The parameters a call may give by name (`mask = m`, `order = ...`).
    pub fn named_params(&self) -> impl Iterator<Item = &'static str> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Default(_) | ParamKind::Named(_)))
            .map(|p| p.name)
    }

    /// The signature, as E0111 notes, hover and the docs show it:
    /// `shfl_xor(value: T, lanes: u32, mask: u32 = 0xFFFF_FFFF) -> T`;
    /// `wait() or wait(parity: u32)` where leaving an argument out is a
    /// form of its own; `thread_idx.x: u32` for a value.
    pub fn signature(&self) -> String {
        match self.form {
            Form::Scalar => return format!("{}: u32", self.name),
            Form::Vector => return format!("{}.x/.y/.z: u32", self.name),
            _ => {}
        }
        let omittable = self.params.iter().any(|p| p.kind == ParamKind::Omittable);
        let full = self.call_form(true, true);
        if omittable {
            format!("{} or {full}", self.call_form(false, false))
        } else {
            full
        }
    }

    /// Each way to call it, with its result type: `test() -> bool` and
    /// `test(parity: u32) -> bool`; one form for most built-ins.
    pub fn forms(&self) -> Vec<String> {
        if self.params.iter().any(|p| p.kind == ParamKind::Omittable) {
            vec![self.call_form(false, true), self.call_form(true, true)]
        } else {
            vec![self.signature()]
        }
    }

    /// `name(params) -> ret`, with the omittable parameters or without,
    /// with the result type or without.
    fn call_form(&self, with_omittable: bool, with_ret: bool) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .filter(|p| with_omittable || p.kind != ParamKind::Omittable)
            .map(|p| match (p.kind, p.ty) {
                (ParamKind::Named(d), _) => format!("{} = {d}", p.name),
                (ParamKind::Default(d), ty) => format!("{}: {ty} = {d}", p.name),
                (_, "") => p.name.to_string(),
                (_, ty) => format!("{}: {ty}", p.name),
            })
            .collect();
        let ret = if self.ret.is_empty() || !with_ret {
            String::new()
        } else {
            format!(" -> {}", self.ret)
        };
        format!("{}({}){ret}", self.name, params.join(", "))
    }

    /// How E0200 and E0123 name this built-in.
    pub fn feature(&self) -> String {
        match self.builtin {
            Builtin::Function(Function::CopyAsync | Function::CopyAsyncStore) => {
                format!("the bulk copy `{}`", self.name)
            }
            Builtin::Function(Function::TmaLoad | Function::TmaStore | Function::TmaReduceAdd) => {
                format!("the tensor copy `{}`", self.name)
            }
            Builtin::Function(Function::Remote) => "`remote` (distributed shared memory)".into(),
            _ if self.form == Form::Function && self.params.is_empty() => {
                format!("`{}()`", self.name)
            }
            _ => format!("`{}`", self.name),
        }
    }

    /// The note E0110 and E0111 give about a call of this built-in.
    pub fn call_note(&self) -> String {
        format!("`{}` is `{}`", self.name, self.signature())
    }

    /// The target column of the docs: `all`, `sm_90+`, `sm_90+, cluster(...)`,
    /// `sm_90a, sm_100a`.
    pub fn target_text(&self) -> String {
        let t = match self.needs.target {
            _ if !self.needs.arch.is_empty() => {
                let names: Vec<&str> = self.needs.arch.iter().map(|t| t.name()).collect();
                names.join(", ")
            }
            Target::Sm80 => "all".to_string(),
            t => format!("{}+", t.name()),
        };
        if self.needs.cluster {
            format!("{t}, `cluster(...)`")
        } else {
            t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_form() {
        for (i, a) in BUILTINS.iter().enumerate() {
            for b in BUILTINS.iter().skip(i + 1) {
                assert!(
                    !(a.form == b.form && a.name == b.name),
                    "`{}` twice as {:?}",
                    a.name,
                    a.form
                );
                assert_ne!(a.builtin, b.builtin, "{} and {}", a.name, b.name);
            }
        }
    }

    #[test]
    fn lookups_find_their_entries() {
        for e in BUILTINS {
            let found = match e.form {
                Form::Function => function(e.name),
                Form::Scalar | Form::Vector => value(e.name),
                f => method(f, e.name),
            };
            assert_eq!(found.map(|f| f.builtin), Some(e.builtin), "{}", e.name);
            assert_eq!(entry(e.builtin).map(|f| f.name), Some(e.name));
        }
    }

    #[test]
    fn the_ir_names_its_operations_as_the_table_does() {
        for e in BUILTINS {
            let ir = match e.builtin {
                Builtin::Function(Function::Atomic(op)) => op.name().to_string(),
                Builtin::Function(Function::Math(f)) => f.name().to_string(),
                Builtin::Function(Function::Warp(op)) => op.name().to_string(),
                Builtin::Function(Function::LaneMask(m)) => format!("lane_mask_{}", m.name()),
                Builtin::Method(Method::Named(k)) => k.method().to_string(),
                _ => continue,
            };
            assert_eq!(ir, e.name);
        }
    }

    #[test]
    fn signatures_are_each_their_own() {
        let sig = |n: &str| function(n).map(Entry::signature).unwrap_or_default();
        assert_eq!(
            sig("shfl_xor"),
            "shfl_xor(value: T, lanes: u32, mask: u32 = 0xFFFF_FFFF) -> T"
        );
        assert_eq!(sig("max"), "max(a: T, b: T) -> T");
        assert_eq!(sig("lane_mask_ge"), "lane_mask_ge() -> u32");
        assert_eq!(sig("fence"), "fence(order = acq_rel, scope = gpu)");
        assert_eq!(
            method(Form::BarrierMethod, "test").map(Entry::signature),
            Some("test() or test(parity: u32) -> bool".into())
        );
        assert_eq!(
            value("thread_idx").map(Entry::signature),
            Some("thread_idx.x/.y/.z: u32".into())
        );
        for e in BUILTINS {
            assert!(e.signature().starts_with(e.name), "{}", e.name);
            assert!(!e.doc.is_empty() && e.doc.ends_with('.'), "{}", e.name);
        }
    }

    #[test]
    fn operands_that_are_no_values_show_no_value_type() {
        for e in BUILTINS {
            for p in e.params {
                match p.operand {
                    Operand::Value => assert!(
                        !p.ty.is_empty() || matches!(p.kind, ParamKind::Named(_)),
                        "{}: `{}` shows no type",
                        e.name,
                        p.name
                    ),
                    Operand::Array
                    | Operand::Barrier
                    | Operand::Slice
                    | Operand::Box
                    | Operand::Accum
                    | Operand::Type => {
                        assert!(p.ty.is_empty(), "{}: `{}`", e.name, p.name)
                    }
                    Operand::Place => assert_eq!(p.kind, ParamKind::Required, "{}", e.name),
                }
            }
        }
        let remote = function("remote").expect("remote");
        assert!(remote.takes(Operand::Array) && !remote.takes(Operand::Barrier));
        let copy = function("copy_async").expect("copy_async");
        assert!(copy.takes(Operand::Barrier) && copy.takes(Operand::Place));
    }

    #[test]
    fn argument_counts_follow_the_parameters() {
        let expected = |n: &str| function(n).map(Entry::expected_args);
        assert_eq!(expected("shfl_down").as_deref(), Some("2 or 3"));
        assert_eq!(expected("fence").as_deref(), Some("0"));
        assert_eq!(expected("atomic_cas").as_deref(), Some("3"));
        assert_eq!(
            method(Form::BarrierMethod, "wait").map(Entry::expected_args),
            Some("0 or 1".into())
        );
        let named: Vec<_> = function("atomic_add")
            .into_iter()
            .flat_map(Entry::named_params)
            .collect();
        assert_eq!(named, ["order", "scope"]);
        let named: Vec<_> = function("ballot")
            .into_iter()
            .flat_map(Entry::named_params)
            .collect();
        assert_eq!(named, ["mask"]);
    }
}
