//! The checker's errors and warnings. The first lines are the
//! catalogue's (language.md §8); `error/diagnostic.rs` is the one place
//! they become diagnostics.

mod diagnostic;

pub use diagnostic::word_list;

use crate::span::Span;
use crate::target::Target;

/// A machine-applicable edit suggested with an error.
#[derive(Clone, Debug, PartialEq)]
pub struct Suggestion {
    pub message: String,
    pub span: Span,
    pub replacement: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CheckError {
    /// E0003
    LiteralOutOfRange { ty: String, span: Span },
    /// E0010, from the checker: a word the grammar leaves to the checker
    /// (the `arrivals` argument name) is wrong.
    ExpectedWord {
        expected: &'static str,
        found: String,
        span: Span,
    },
    /// E0100
    NotFound {
        kind: &'static str,
        name: String,
        span: Span,
        similar: Option<String>,
        help: Option<String>,
    },
    /// E0101
    Duplicate {
        name: String,
        span: Span,
        first: Span,
    },
    /// E0102
    AssignImmutable {
        name: String,
        span: Span,
        decl: Option<Span>,
        what: &'static str,
        fix: Option<Suggestion>,
    },
    /// E0103
    StoreReadOnly {
        name: String,
        span: Span,
        param: Span,
        fix: Option<Suggestion>,
    },
    /// E0110
    Mismatch {
        expected: String,
        found: String,
        span: Span,
        note: Option<String>,
        fix: Option<Suggestion>,
    },
    /// E0111
    ArgCount {
        callee: String,
        expected: String,
        found: usize,
        span: Span,
        signature: Option<String>,
    },
    /// E0112
    IndexCount {
        name: String,
        dims: usize,
        found: usize,
        span: Span,
        decl: Option<Span>,
    },
    /// E0113
    NotA {
        name: String,
        what: &'static str,
        span: Span,
        decl: Option<Span>,
    },
    /// E0114
    Recursive {
        name: String,
        call: Span,
        func: Span,
    },
    /// E0115
    OutsideLoop { keyword: &'static str, span: Span },
    /// E0161: an unknown loop attribute or a bad `#[unroll(N)]` count.
    BadLoopAttr {
        why: String,
        span: Span,
        fix: Option<(Span, String)>,
    },
    /// E0163: a kernel constant that cannot be one: its type, or a `type`
    /// constant's default that is not a type.
    KernelConst {
        why: String,
        span: Span,
        label: String,
        help: Option<String>,
    },
    /// E0126 for an instantiation whose PTX name another kernel (or
    /// another kernel's instantiation) has.
    InstanceName {
        name: String,
        /// The constants the instantiation was asked for with.
        values: String,
        span: Span,
        /// The kernel whose name (or instantiation's) it is.
        other: Span,
    },
    /// E0160: `break`/`continue` acting on a loop over a constant list.
    ListLoopJump { keyword: &'static str, span: Span },
    /// E0162: the loops over constant lists of one body unroll to more
    /// than `limit` statements and expressions: this one alone (`size`
    /// from its `elements`), or with the others (`whole`).
    UnrolledTooLarge {
        span: Span,
        elements: usize,
        size: u64,
        whole: bool,
        limit: u64,
    },
    /// E0116
    MissingReturn { name: String, span: Span, ret: Span },
    /// E0117
    NotConstant { span: Span, why: Option<String> },
    /// E0117: an integer `/` or `%` whose divisor is the constant zero.
    DivisionByZero { op: &'static str, span: Span },
    /// E0118
    BadOperand {
        op: String,
        ty: String,
        span: Span,
        note: Option<String>,
    },
    /// E0119
    GlobalOutsideParams { span: Span },
    /// E0120
    LaunchBounds {
        why: String,
        span: Span,
        help: Option<String>,
    },
    /// E0121
    DeclNotTopLevel { what: &'static str, span: Span },
    /// E0122
    SharedTooLarge {
        limit: u64,
        /// Whose maximum `limit` is.
        target: Target,
        /// The kernel's total in decimal (exact, or `at least N` when it
        /// does not fit 64 bits).
        used: String,
        /// Where the crossing declaration starts and ends.
        start: Option<u64>,
        end: Option<u64>,
        span: Span,
    },
    /// E0126
    KernelName {
        name: String,
        why: &'static str,
        span: Span,
    },
    /// E0127
    ParamsTooLarge {
        used: u64,
        limit: u64,
        /// The first parameter that does not fit.
        span: Span,
        kernel: Span,
    },
    /// E0125: constants whose values depend on each other. `uses` is the
    /// cycle as (constant, the use of the next constant in its value), in
    /// order; the last use names the first constant again.
    CyclicConstants { uses: Vec<(String, Span)> },
    /// E0400: a tensor type or a declaration's clause that is malformed
    /// (`why` is the first line's tail and the label).
    TensorDecl {
        why: String,
        span: Span,
        note: Option<String>,
        help: Option<String>,
        fix: Option<Suggestion>,
        /// A second place and its label (the first of a clause given twice).
        other: Option<(Span, String)>,
    },
    /// E0401: a tensor copy's box is not the shape of its shared slice.
    BoxShape {
        map: String,
        boxed: String,
        slice: String,
        shape: String,
        span: Span,
        param: Span,
    },
    /// E0402: a tensor copy between a map and a slice of other elements.
    BoxElem {
        map: String,
        map_elem: String,
        slice: String,
        slice_elem: String,
        span: Span,
        param: Span,
    },
    /// E0404: one map copied to or from arrays of different swizzles.
    MapSwizzle {
        map: String,
        array: String,
        swizzle: String,
        first_array: String,
        first_swizzle: String,
        span: Span,
        first: Span,
    },
    /// E0409: a tensor copy the hardware cannot do (`why` is the label).
    TensorCopy {
        callee: &'static str,
        why: String,
        span: Span,
        note: Option<String>,
        help: Option<String>,
    },
    /// E0403: `what` (an array or a slice) does not fit its swizzle.
    SwizzleShape {
        what: String,
        swizzle: u64,
        why: String,
        span: Span,
        /// The `swizzle(...)` clause.
        clause: Option<Span>,
        help: Option<String>,
    },
    /// E0405: a tensor box past the hardware's limits.
    TensorBox {
        why: String,
        span: Span,
        note: &'static str,
    },
    /// E0408: a `guards(...)` clause that names something a barrier group
    /// cannot guard.
    Guards {
        group: String,
        array: String,
        why: String,
        span: Span,
        decl: Option<Span>,
    },
    /// E0132: a shared array with a dimension of 0 (`dim` of `dims`).
    ZeroLength {
        name: String,
        span: Span,
        dim: usize,
        dims: usize,
        /// The dimension's value: 0, or a negative size (`0 - 1`).
        value: i128,
    },
    /// E0123
    NeedsCluster {
        feature: String,
        span: Span,
        kernel: Span,
    },
    /// E0200
    TargetTooOld {
        feature: String,
        needs: &'static str,
        current: String,
        span: Span,
    },
    /// E0200 for an instruction of architecture-specific targets only
    /// (`setmaxnreg`, `wgmma`): `needs` lists them (`sm_90a or sm_100a`),
    /// `first` is the one to suggest.
    TargetNotArch {
        feature: String,
        needs: String,
        first: &'static str,
        current: String,
        span: Span,
    },
    /// E0412: an accumulator declaration that is not a `wgmma` shape.
    BadAccum {
        name: String,
        shape: String,
        why: String,
        span: Span,
    },
    /// E0410: a `wgmma` operand array that cannot hold the tile.
    BadWgmmaTile { why: String, span: Span, decl: Span },
    /// E0411: operand and accumulator types of no `wgmma` form.
    BadWgmmaTypes {
        form: String,
        why: String,
        span: Span,
        acc: Span,
    },
    /// E0419: `wgmma_commit`/`wgmma_wait`/`wgmma` in a device function.
    WgmmaOutsideKernel { op: String, span: Span },
    /// E0450: a fragment operation (or an RS `wgmma` operand) on
    /// accumulators whose kinds, types or shapes do not fit it.
    BadFragment {
        op: String,
        why: String,
        span: Span,
        decl: Option<Span>,
    },
    /// E0417: `wgmma_wait(n)` with `n` above 7.
    WaitTooDeep { n: u64, span: Span },
    /// E0418: a constant element index past an accumulator's elements.
    AccumIndex {
        name: String,
        index: i128,
        elements: u32,
        span: Span,
    },
    /// E0440: an index of a register array that is not a compile-time
    /// constant where it runs (after the loops around it are unrolled).
    ArrayIndexNotConstant {
        name: String,
        span: Span,
        decl: Span,
    },
    /// E0441: a constant index past its dimension of a register array.
    ArrayIndexOutOfBounds {
        name: String,
        index: i128,
        /// Which dimension (0 for the first) and its length.
        dim: usize,
        len: u32,
        dims: usize,
        span: Span,
        decl: Span,
    },
    /// E0442: a register array's value does not fit its type, or it has
    /// none.
    ArrayValue {
        name: String,
        why: String,
        label: String,
        span: Span,
        /// The type, where written, and its label.
        ty: Option<(Span, &'static str)>,
        help: Option<String>,
        fix: Option<Suggestion>,
    },
    /// E0443: a register array that cannot live in registers (a dimension
    /// of 0, more registers than a thread has), or the arrays of one body
    /// past [`super::arrays::MAX_BODY_ELEMENTS`].
    ArraySize {
        name: String,
        why: String,
        label: String,
        span: Span,
    },
    /// E0444: an array type where only a scalar type goes (anywhere but a
    /// `let`, or an array of arrays).
    ArrayTypeHere {
        span: Span,
        note: String,
        fix: Option<Suggestion>,
    },
    /// E0420: `set_max_regs(n)` with `n` not a multiple of 8 in 24..=256.
    BadRegisterCount { n: u64, span: Span },
    /// E0421: `set_max_regs` in a device function (`kernel` is `None`) or
    /// in a kernel without `block(...)` (the span of its name).
    RegistersWithoutBlock { span: Span, kernel: Option<Span> },
    /// W0001
    Unused { name: String, span: Span },
    /// W0002
    NonPortableCluster { size: u32, span: Span },
    /// W0003: the root file has no kernel (`empty`: no items at all).
    NoKernel { span: Span, empty: bool },
    /// E0302: a barrier group's scope is neither `cta` nor `cluster`.
    UnsupportedScope {
        scope: String,
        span: Span,
        closest: Option<String>,
    },
    /// E0304: a barrier reference names several barriers.
    NotSingleBarrier {
        name: String,
        shape: String,
        span: Span,
        decl: Span,
    },
    /// E0308. `cta_fix` is false when something in the kernel needs the
    /// group to be cluster-scope (the fix would lead into E0307).
    ClusterScopeWithoutCluster {
        decl: Span,
        scope: Span,
        kernel: Span,
        cta_fix: bool,
    },
    /// E0311
    BadBarrierCount { name: String, n: i128, span: Span },
    /// E0144: a named barrier's thread count is not a positive multiple of
    /// 32 up to 1024.
    NamedThreads { name: String, n: i128, span: Span },
    /// E0145: a named barrier counts more threads than `block(...)` has.
    NamedThreadsOverBlock {
        name: String,
        n: i128,
        block: u32,
        span: Span,
    },
    /// E0149: a named-barrier group of no barriers or more than 15.
    NamedCount { name: String, n: i128, span: Span },
    /// E0149: the kernel's named barriers need more than 15 ids.
    TooManyNamed {
        needed: u32,
        span: Span,
        /// The groups declared before, as `` `name` (count) ``.
        others: Vec<String>,
    },
    /// E0306 for a declaration's arrival count (the barrier pass reports
    /// `arrive(count)`'s).
    ArrivalsOutOfRange { n: i128, span: Span },
    /// E0140: a named argument the callee does not take. `takes` are the
    /// names it does take (none for most functions).
    UnknownNamedArg {
        callee: String,
        name: String,
        span: Span,
        takes: Vec<&'static str>,
        similar: Option<String>,
    },
    /// E0140: a parameter without a default given by name
    /// (`shfl_down(v, delta = 1)`); `position` is its index among the
    /// positional ones, `unname` the `delta = ` to remove when the value
    /// already stands there.
    PositionalByName {
        callee: String,
        name: String,
        span: Span,
        position: usize,
        unname: Option<Span>,
    },
    /// E0140: a named argument given twice.
    DuplicateNamedArg {
        name: String,
        span: Span,
        first: Span,
    },
    /// E0140: a positional argument after a named one (`named`).
    PositionalAfterNamed { span: Span, named: Span },
    /// E0141: the value of `order = ...` or `scope = ...` is not one of
    /// the words it can be.
    UnknownWord {
        what: &'static str,
        word: String,
        span: Span,
        words: Vec<&'static str>,
        similar: Option<String>,
    },
    /// E0142: an order the operation cannot have (`sc` for an atomic,
    /// `relaxed` for a fence).
    OrderNotAllowed {
        callee: String,
        order: &'static str,
        span: Span,
        allowed: Vec<&'static str>,
    },
    /// E0143: an atomic on a peer CTA's shared memory (`remote(...)`) at
    /// CTA scope, which leaves out the CTA that owns the memory.
    ScopeTooNarrow {
        callee: String,
        scope: Span,
        place: Span,
    },
    /// E0146: a `let ( ... )` pattern bound to something other than a
    /// vector load.
    NotVectorLoad {
        span: Span,
        pattern: Span,
        names: usize,
    },
    /// E0146: a vector load bound to a pattern of another width.
    VectorNames {
        callee: String,
        n: usize,
        names: usize,
        pattern: Span,
        call: Span,
    },
    /// E0146: a vector load used as one value.
    VectorAsValue {
        callee: String,
        n: usize,
        span: Span,
    },
    /// E0147: a vector access of more than 16 bytes.
    VectorTooWide {
        callee: String,
        elem: String,
        n: usize,
        bytes: u32,
        span: Span,
    },
    /// E0148: a vector access at a constant element index that is not a
    /// multiple of its width.
    VectorMisaligned {
        callee: String,
        n: usize,
        index: String,
        span: Span,
    },
    /// W0325: a vector access whose index is not provably a multiple of its
    /// width.
    VectorUnproven {
        callee: String,
        n: usize,
        span: Span,
    },
    /// E0430: `ldmatrix`/`stmatrix` on something that is not an element of
    /// this CTA's shared memory.
    MatrixPlace {
        callee: String,
        found: &'static str,
        span: Span,
    },
    /// E0431: `ldmatrix`/`stmatrix` of elements that are not 16 bits.
    MatrixElem {
        callee: String,
        elem: String,
        span: Span,
    },
    /// E0432: a matrix row address whose element index is never a multiple
    /// of 8 (16 bytes).
    MatrixMisaligned {
        callee: String,
        index: String,
        span: Span,
    },
    /// W0432: a matrix row address not proven 16-byte aligned.
    MatrixUnproven { callee: String, span: Span },
    /// E0433: a shared array whose rows are no whole number of matrix rows
    /// (its innermost dimension is not a multiple of 8).
    MatrixRows {
        callee: String,
        array: String,
        inner: u64,
        span: Span,
        decl: Span,
    },
    /// E0434: a warp-collective matrix access that not every lane of a
    /// warp may run: under a condition that may split a warp, or in a
    /// block whose last warp is partial.
    MatrixDivergent {
        callee: String,
        span: Span,
        cond: Option<Span>,
        threads: Option<u32>,
    },
}
