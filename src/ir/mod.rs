//! The typed intermediate representation.
//!
//! The checker ([`crate::check`]) builds it from the AST; the analyses
//! (`crate::analysis`) compute facts about it, which the barrier pass
//! ([`crate::barriers`]) and the PTX writer ([`crate::ptx`]) read.
//!
//! Invariants, which the checker establishes, later stages rely on, and
//! [`verify`] checks:
//! - every name is resolved to a handle (`LocalId`, `ParamId`, `SharedId`,
//!   `BarrierId`, `FuncId`) valid for the body it appears in;
//! - every expression and statement has an id ([`ExprId`], [`StmtId`])
//!   that no other node of its body has, below the body's [`Ids`]: the key
//!   of the facts an analysis finds about it. A node built by a pass gets
//!   a fresh one ([`Body::expr`], [`Body::stmt`], [`Body::renumber_block`]);
//! - every expression has a scalar type (`Expr::ty`), and the operands of
//!   every operation have the types the operation needs (no implicit
//!   conversions are left: they are explicit `Cast`s); `const` items are
//!   inlined as `Const` values, each a value of its type (constant
//!   subexpressions such as `CHUNK * 4` stay as written and are folded by
//!   whoever needs their value, through [`consteval`]);
//! - control flow is structured (blocks, `if`, loops); `break`/`continue`
//!   appear only inside loops; the call graph has no cycles;
//! - every node keeps the span of the source it came from (a non-empty
//!   range);
//! - barrier groups are first-class: a [`BarrierGroup`] in the kernel, and
//!   every barrier operation a statement (or, for `test`, an expression) that
//!   names its group by [`BarrierId`]. Barrier references are *not* yet
//!   validated (an unindexed reference to a group of 4, a constant index out
//!   of bounds, a wait on a cluster group): that is the barrier pass's job.
//!
//! A module with errors may be partial: a statement that failed to check is
//! left out, or kept as [`StmtKind::Poisoned`] where it holds blocks that did
//! check or names barrier groups. The barrier pass runs on such a module (so
//! that independent errors are all reported); the PTX writer never does.
//!
//! Passes rewrite the IR in place with [`visit_mut`]; [`verify`] runs after
//! each in debug builds and tests.

//!
//! This file holds the tree (module, kernels, bodies, statements,
//! expressions, places) and its ids. What the tree names, with what each
//! knows about itself, lives in a module per concern and is re-exported
//! here: `barrier.rs` (barrier groups and the operations on them),
//! `wgmma.rs` (accumulators, fragments, `wgmma`), `memory.rs` (atomics,
//! orders and scopes, vector and matrix accesses, tensor copies),
//! `builtin.rs` (built-in values, math and warp operations), `shared.rs`
//! (shared arrays), `tensor.rs` (swizzles, tensor maps), `instance.rs`
//! (kernel constants' values), `registers.rs` (registers per thread),
//! `class.rs` (what a statement is), `body.rs` (building a body's nodes
//! and ids).

mod barrier;
mod body;
mod builtin;
mod class;
pub mod consteval;
pub mod contract;
mod instance;
pub mod layout;
mod memory;
pub mod print;
mod registers;
mod shared;
pub mod tensor;
pub mod verify;
pub mod visit;
pub mod visit_mut;
mod wgmma;

use crate::span::Span;
use crate::types::Scalar;

pub use crate::operator::{BinOp, UnaryOp};
pub use barrier::{
    BarrierGroup, BarrierOp, BarrierOpKind, BarrierRef, BarrierSpans, Failed, NamedBarrier,
    NamedBarrierOp, NamedBarrierSpans, NamedOpKind, Parity, Scope,
};
pub use body::Ids;
pub use builtin::{Dim, LaneMask, MathFn, ReduxOp, Special, WarpOp};
pub use class::{CtaBarrier, StmtClass, SyncOp};
pub use instance::{ConstValue, Instance, InstanceConst};
pub use memory::{
    AtomicOp, Matrix, MemOrder, MemScope, MemSem, Slice, TensorCopy, TensorCopyKind, VECTOR_BYTES,
};
pub use registers::{entry_registers, REGS_MAX, REGS_MIN, REGS_PER_SM, REGS_PER_THREAD, REGS_STEP};
pub use shared::{exact_product, SharedArray};
pub use tensor::{L2Promotion, OobFill, Swizzle, TensorMap};
pub use wgmma::{
    fragment_mismatch, Accum, FragKind, FragOp, Wgmma, WgmmaForm, WARPGROUP, WGMMA_MAX_PENDING,
};

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

id_type!(
    /// A local variable of one body (`Body::locals`).
    LocalId
);
id_type!(
    /// A kernel parameter (`Kernel::params`).
    ParamId
);
id_type!(
    /// A shared array of one kernel (`Kernel::shared`).
    SharedId
);
id_type!(
    /// A barrier group of one kernel (`Kernel::barriers`).
    BarrierId
);
id_type!(
    /// A named-barrier group of one kernel (`Kernel::named_barriers`).
    NamedBarrierId
);
id_type!(
    /// A device function (`Module::functions`).
    FuncId
);
id_type!(
    /// A warpgroup accumulator of one kernel (`Kernel::accums`).
    AccumId
);
id_type!(
    /// An expression of one body, distinct from every other expression of
    /// that body and below its [`Ids::exprs`]: the key of the facts
    /// `crate::analysis` finds about it.
    ExprId
);
id_type!(
    /// A statement of one body, distinct from every other statement of that
    /// body and below its [`Ids::stmts`].
    StmtId
);

impl ExprId {
    /// The id of an expression built outside a body (hand-written IR in
    /// tests): [`Body::new`] and [`Body::renumber`] replace it, and the
    /// verifier rejects it anywhere else.
    pub const NONE: ExprId = ExprId(u32::MAX);
}

impl StmtId {
    /// See [`ExprId::NONE`].
    pub const NONE: StmtId = StmtId(u32::MAX);
}

/// A whole compiled file: its device functions and kernels.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Device functions, indexed by [`FuncId`] (declaration order); the
    /// order they are written in, callees first, is a fact of the analysis
    /// (`analysis::ModuleInfo::call_order`).
    pub functions: Vec<Function>,
    pub kernels: Vec<Kernel>,
}

/// A device function. Its parameters are its first `params` locals.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub span: Span,
    /// Parameters are `LocalId(0) .. LocalId(params)`.
    pub params: u32,
    pub ret: Option<Scalar>,
    pub body: Body,
}

/// Local variables and the statements that use them.
#[derive(Clone, Debug, Default)]
pub struct Body {
    pub locals: Vec<Local>,
    pub block: Block,
    /// The ids handed out to the nodes of `block`.
    pub ids: Ids,
}

#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    /// A scalar's type, or a register array's element type.
    pub ty: Scalar,
    /// For a register array, whether its elements may be written.
    pub mutable: bool,
    /// The span of the name where it was declared.
    pub span: Span,
    /// Empty for a scalar. A register array's dimensions (each at least
    /// 1, row-major; language.md §5.8): declared by
    /// [`StmtKind::LetArray`], its elements read and written through
    /// [`PlaceKind::Register`], never an [`ExprKind::Local`], `Let` or
    /// `Assign`. The optimiser replaces each array by a scalar local per
    /// element before any pass (`crate::opt::registers`), so the PTX
    /// writer never sees one.
    pub dims: Vec<u32>,
}

impl Local {
    /// A scalar local.
    pub fn scalar(name: impl Into<String>, ty: Scalar, mutable: bool, span: Span) -> Local {
        Local {
            name: name.into(),
            ty,
            mutable,
            span,
            dims: Vec::new(),
        }
    }

    /// Whether it is a register array.
    pub fn is_array(&self) -> bool {
        !self.dims.is_empty()
    }

    /// A register array's number of elements (1 for a scalar; saturating,
    /// though the checker bounds it: E0443).
    pub fn elements(&self) -> u32 {
        self.dims
            .iter()
            .try_fold(1u32, |n, &d| n.checked_mul(d))
            .unwrap_or(u32::MAX)
    }

    /// The row-major position of the element at `indices` (one per
    /// dimension), if each is within its dimension.
    pub fn flat_index(&self, indices: &[i128]) -> Option<u32> {
        if indices.len() != self.dims.len() {
            return None;
        }
        let mut flat: u64 = 0;
        for (&i, &d) in indices.iter().zip(&self.dims) {
            let i = u32::try_from(i).ok().filter(|i| *i < d)?;
            flat = flat * u64::from(d) + u64::from(i);
        }
        u32::try_from(flat).ok()
    }

    /// The type as written: `f32`, or `[f32; 8, 8]` for an array.
    pub fn type_text(&self) -> String {
        if self.dims.is_empty() {
            return self.ty.name().to_string();
        }
        let dims: Vec<String> = self.dims.iter().map(u32::to_string).collect();
        format!("[{}; {}]", self.ty, dims.join(", "))
    }
}

#[derive(Clone, Debug)]
pub struct Kernel {
    /// The `.entry` name: the kdsl name, or for an instantiation of a
    /// kernel with constants its PTX name ([`Instance`]).
    pub name: String,
    /// The span of the kernel's name.
    pub name_span: Span,
    pub span: Span,
    pub params: Vec<Param>,
    /// `block(x, y, z)`: the exact CTA shape (`.reqntid`), if given.
    pub block: Option<[u32; 3]>,
    /// `cluster(x, y, z)`: the cluster shape (`.reqnctapercluster`), if given.
    pub cluster: Option<[u32; 3]>,
    pub shared: Vec<SharedArray>,
    pub barriers: Vec<BarrierGroup>,
    /// Groups of CTA hardware barriers (`named(threads = k)`), each with
    /// the hardware ids the checker gave it.
    pub named_barriers: Vec<NamedBarrier>,
    /// Warpgroup accumulators in registers (`accum acc: [f32; 64, N];`).
    pub accums: Vec<Accum>,
    /// For a kernel with constants (`kernel k<const N: u32 = 4>`), the
    /// values this instantiation was checked and lowered with; `None` for
    /// a kernel without.
    pub instance: Option<Instance>,
    pub body: Body,
}

impl Kernel {
    /// Threads per CTA, when `block(...)` gives it.
    pub fn block_threads(&self) -> Option<u32> {
        let [x, y, z] = self.block?;
        x.checked_mul(y)?.checked_mul(z)
    }
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub span: Span,
    pub ty: ParamType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamType {
    Scalar(Scalar),
    /// `global [T]` / `global mut [T]`. `written` is true when the kernel
    /// stores or atomically updates through it; read-only pointers may be
    /// loaded with `ld.global.nc`.
    Global {
        elem: Scalar,
        mutable: bool,
        written: bool,
    },
    /// `tensor [T; box]`: a tensor map, passed by value (128 bytes).
    Tensor(TensorMap),
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
    pub id: StmtId,
}

impl Stmt {
    /// A statement built outside a body (see [`ExprId::NONE`]).
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt {
            kind,
            span,
            id: StmtId::NONE,
        }
    }
}

#[derive(Clone, Debug)]
/// The large parts of the rarer and larger statements are boxed, so that a
/// statement is about as large as a `let` (an [`Expr`] and a local): every
/// block of the program is a vector of these.
pub enum StmtKind {
    /// Declares `local` with its first value.
    Let {
        local: LocalId,
        value: Expr,
    },
    /// `local = value` (compound assignments to locals are already expanded:
    /// `x += e` is `x = x + e`).
    Assign {
        local: LocalId,
        value: Expr,
    },
    /// `place = value` or `place op= value`: the address is computed once.
    Store {
        place: Box<Place>,
        op: Option<BinOp>,
        value: Expr,
    },
    /// `let acc: [T; d0, ...] = ...;`: declares the register array `local`
    /// (a [`Local`] with dimensions) with its elements' first values:
    /// either one expression, evaluated once, for every element (`[v; d0,
    /// d1]`), or one per element in row-major order (`[a, b, c, d]`), each
    /// of the element type.
    LetArray {
        local: LocalId,
        values: Vec<Expr>,
    },
    /// `let (a, b, c, d) = load4(place);`: declares `locals` (2 or 4, each
    /// of the place's element type) with the consecutive elements starting
    /// at `place`, read by one vector access (`ld.v2`/`ld.v4`): at most
    /// [`VECTOR_BYTES`], at an address aligned to the whole access.
    ///
    /// With `matrix`, `let (a, b, c, d) = ldmatrix_x4(tile[r, c]);`: the
    /// warp loads 1, 2 or 4 (the locals) 8 x 8 matrices of 16-bit elements
    /// of a shared array, each lane giving the address of one row at
    /// `place` (`ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16`); each
    /// local holds two elements, of the pair type of the element type
    /// ([`Matrix::register`]).
    LoadVector {
        locals: Vec<LocalId>,
        place: Box<Place>,
        matrix: Option<Matrix>,
    },
    /// `store4(place, a, b, c, d)`: stores `values` (2 or 4, of the place's
    /// element type, evaluated in order after the address) to the
    /// consecutive elements starting at `place` with one vector access
    /// (`st.v2`/`st.v4`); with `matrix`, `stmatrix_xN(place, values...)`,
    /// the warp's store of 1, 2 or 4 matrices (sm_90).
    StoreVector {
        place: Box<Place>,
        values: Vec<Expr>,
        matrix: Option<Matrix>,
    },
    If {
        cond: Box<Expr>,
        then_block: Block,
        else_block: Option<Block>,
    },
    While {
        cond: Box<Expr>,
        body: Block,
    },
    /// `for var in start..end step step`: `start`, `end` and `step` are
    /// evaluated once, before the first iteration; `var` is immutable in
    /// `body` and takes `start, start+step, ...` while `< end`.
    For {
        var: LocalId,
        start: Box<Expr>,
        end: Box<Expr>,
        step: Box<Expr>,
        body: Block,
        /// `#[unroll]`/`#[unroll(N)]`: overrides the optimiser's choice
        /// (`crate::opt`); a loop a pass rewrote no longer has it.
        unroll: Option<LoopHint>,
    },
    /// `for var in [c0, c1, ...] { body }`: the body once per element, in
    /// order, with `var` (immutable) each element in turn. `items` are
    /// `Const`s of `var`'s type, at least one (the checker drops the loop
    /// of an empty list). Each run sees its element as a constant, which
    /// is the language's meaning: the optimiser unrolls every such loop
    /// before anything else, whatever `--passes` says
    /// (`crate::opt::lists`), so the PTX writer never sees one; until then
    /// the analyses give the facts that differ between elements per
    /// element (`crate::analysis::values`).
    ForList {
        var: LocalId,
        items: Vec<Expr>,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// An expression evaluated for its effect (an atomic; a call whose
    /// result is dropped).
    Expr(Expr),
    /// A call of a device function that returns nothing.
    Call {
        func: FuncId,
        args: Vec<Expr>,
    },
    /// `sync_threads()`: `bar.sync 0`.
    SyncThreads,
    /// `sync_warp(mask)`: `bar.warp.sync mask` (a `u32`; every lane when
    /// the source gave none).
    SyncWarp(Expr),
    /// `cluster_sync()`: cluster-wide arrive + wait.
    ClusterSync,
    /// `fence_proxy_async()`: `fence.proxy.async.shared::cta`.
    FenceProxyAsync,
    /// `fence(order = ..., scope = ...)`: `fence.acq_rel.SCOPE` or
    /// `fence.sc.SCOPE` (the order is `AcqRel` or `Sc`). Like the other
    /// fences, nothing moves memory accesses across it.
    Fence(MemSem),
    /// A barrier operation (`full[s].arrive()`, `.wait()`, ...).
    Barrier(Box<BarrierOp>),
    /// A named-barrier operation (`ready.sync()`, `stage[s].arrive()`).
    NamedBarrier(Box<NamedBarrierOp>),
    /// `copy_async(dst, src, bytes, barrier)`: bulk copy global → shared,
    /// completing `bytes` transactions on `barrier`.
    CopyAsync {
        dst: Box<Place>,
        src: Box<Place>,
        bytes: Box<Expr>,
        barrier: BarrierRef,
    },
    /// `copy_async_store(dst, src, bytes)`: bulk copy shared → global.
    CopyAsyncStore {
        dst: Box<Place>,
        src: Box<Place>,
        bytes: Box<Expr>,
    },
    /// `tma_load(sa[s], a[m0, k0], full[s])`, `tma_store(c[m0, n0],
    /// sc[b])`, `tma_reduce_add(...)`: a tensor copy of one box between a
    /// shared slice and a tensor map.
    TensorCopy(Box<TensorCopy>),
    /// `copy_async_commit()`
    CopyAsyncCommit,
    /// `copy_async_wait(n)`: wait until at most `n` bulk groups are pending
    /// (reading their sources).
    CopyAsyncWait(u32),
    /// `wgmma(acc, a, b, accumulate)`: one `wgmma.mma_async` of the
    /// warpgroup ([`Wgmma`]).
    Wgmma(Box<Wgmma>),
    /// `row_max(m, s)`, `row_sum`, `row_scale`, `row_exp2`,
    /// `acc_convert`: a whole-fragment operation of the warpgroup
    /// ([`FragOp`]).
    Fragment(Box<FragOp>),
    /// `wgmma_commit()`: the `wgmma`s this warp issued and did not commit
    /// yet become one group (`wgmma.commit_group`).
    WgmmaCommit,
    /// `wgmma_wait(n)`: wait until at most `n` (0..=7) of the newest groups
    /// are pending (`wgmma.wait_group n`).
    WgmmaWait(u32),
    /// `set_max_regs(n)`: this warpgroup's registers per thread become `n`
    /// (a multiple of 8 in [`REGS_MIN`]`..=`[`REGS_MAX`]), `setmaxnreg.inc`
    /// or `.dec` from the count before it, which the analysis knows
    /// (`analysis::warpgroups`). Every thread of the warpgroup runs it
    /// together, in a kernel with `block(...)`.
    SetMaxRegs(u32),
    /// A statement that failed to check (its errors are already reported).
    /// Only a module with errors holds one, and such a module never reaches
    /// the PTX writer. It keeps what the barrier pass needs to go on without
    /// cascading: `blocks` are the blocks nested in it that did check (the
    /// branches of an `if` whose condition failed, the body of a loop whose
    /// range failed), so the operations in them are still checked; `groups`
    /// are the barrier groups it names, on which it may do anything, so no
    /// check concludes from the *absence* of an operation on them.
    Poisoned {
        groups: Vec<BarrierId>,
        blocks: Vec<Block>,
    },
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Scalar,
    pub span: Span,
    pub id: ExprId,
}

impl Expr {
    /// An expression built outside a body (see [`ExprId::NONE`]).
    pub fn new(kind: ExprKind, ty: Scalar, span: Span) -> Expr {
        Expr {
            kind,
            ty,
            span,
            id: ExprId::NONE,
        }
    }
}

/// A compile-time value. Integers are kept as the bits of their type
/// (zero-extended to 64 bits for unsigned, sign-extended for signed). A
/// float is an `f64` holding a value of its expression's type exactly
/// (every `f16`, `bf16` and `f32` value is an `f64` value): the checker and
/// [`consteval`] round into the type, and [`crate::fp::to_bits`] encodes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i128),
    Float(f64),
    /// A packed pair (`f16x2`, `bf16x2`): the low half, then the high
    /// half, each an `f64` holding a value of the half type exactly.
    Pair(f64, f64),
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Const(Value),
    Local(LocalId),
    /// A scalar kernel parameter.
    Param(ParamId),
    Special(Special),
    Unary(UnaryOp, Box<Expr>),
    /// `&&` and `||` short-circuit; every other operator evaluates both.
    /// Operands have the same type, except shifts (any integer amount).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Conversion from the operand's type to `Expr::ty`.
    Cast(Box<Expr>),
    /// `select(cond, a, b)`: evaluates all three.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `if cond { then_block; then_value } else { ... }`: evaluates one branch.
    /// (The blocks are boxed: inline they would make every expression as
    /// large as two blocks.)
    If {
        cond: Box<Expr>,
        then_block: Box<Block>,
        then_value: Box<Expr>,
        else_block: Box<Block>,
        else_value: Box<Expr>,
    },
    Load(Box<Place>),
    /// `&array[i, j]`: the 32-bit shared-window address of an element of a
    /// shared array (the place is always [`PlaceKind::Shared`]); a `u32`.
    /// Never written by users: the optimiser (`crate::opt::licm`) computes
    /// loop-invariant addresses with it before the loop, and reads and
    /// writes the element through [`PlaceKind::SharedAt`].
    AddrOf(Box<Place>),
    Call {
        func: FuncId,
        args: Vec<Expr>,
    },
    /// `min max abs sqrt rsqrt exp2 log2 exp log sin cos fma`.
    Math(MathFn, Vec<Expr>),
    /// `atomic_add(place, v)`, ..., `atomic_cas(place, compare, v)`:
    /// returns the old value. `sem` is its memory order (never `Sc`) and
    /// scope, relaxed at `gpu` scope unless the program says otherwise.
    Atomic {
        op: AtomicOp,
        sem: MemSem,
        place: Box<Place>,
        args: Vec<Expr>,
    },
    /// Warp shuffles (`[value, lane/delta/mask]`) and votes (`[pred]`).
    Warp(WarpOp, Vec<Expr>),
    /// `b.test(parity)` / `b.test()` (`acquire` is `Cta`) and
    /// `b.test_cluster(parity)` / `b.test_cluster()` (`Cluster`): has that
    /// phase completed? A successful test acquires at that scope.
    BarrierTest {
        barrier: Box<BarrierRef>,
        parity: Box<Parity>,
        acquire: Scope,
        /// The span of the method name (`test` in `full[s].test()`).
        method_span: Span,
    },
}

/// A `for` loop's unrolling hint, and where the source wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopHint {
    pub unroll: Unroll,
    pub span: Span,
}

/// What an unrolling hint asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unroll {
    /// `#[unroll]`: every iteration, if the trip count is the same
    /// constant in every thread.
    Full,
    /// `#[unroll(N)]`: `N` copies of the body per loop test (completely
    /// when the trip count is at most `N`); `#[unroll(1)]` keeps the loop.
    By(u32),
}

/// An element of global or shared memory, or of a thread's registers (an
/// accumulator's, a register array's).
#[derive(Clone, Debug)]
pub struct Place {
    pub kind: PlaceKind,
    /// The element type.
    pub elem: Scalar,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum PlaceKind {
    /// `param[index]` (index of any integer type).
    Global { param: ParamId, index: Expr },
    /// `array[i, j, ...]`: one index per dimension, row-major.
    Shared { array: SharedId, indices: Vec<Expr> },
    /// `remote(array, rank)[i, ...]`: the same array in cluster CTA `rank`.
    Remote {
        array: SharedId,
        rank: Expr,
        indices: Vec<Expr>,
    },
    /// The element of shared array `array` at shared-window address `addr`
    /// (a `u32` that an [`ExprKind::AddrOf`] of an element of that array
    /// computed): made by the optimiser (`crate::opt::licm`), never by the
    /// checker.
    SharedAt { array: SharedId, addr: Expr },
    /// `acc[i]`: element `i` (a `u32`) of this thread's fragment of an
    /// accumulator, a register: `i` is a compile-time constant once the
    /// loops over constant lists are unrolled (the warpgroup pass checks
    /// it, E0418), below [`Accum::elements`].
    Accum { acc: AccumId, index: Expr },
    /// `acc[i, j]`: an element of the register array `array` (a local
    /// with dimensions), one integer index per dimension, each a
    /// compile-time constant within its dimension where it runs (the
    /// checker's E0440 and E0441, after the analysis): a register, which
    /// the optimiser makes a local of its own (`crate::opt::registers`).
    Register { array: LocalId, indices: Vec<Expr> },
}
