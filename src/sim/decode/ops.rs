//! The decoded form of an instruction: what the machine executes.
//!
//! Every source operand is a *slot* of the thread's register file: real
//! registers, special registers (`%tid.x`, filled when the thread starts)
//! and the module's immediates (constant slots, never written) all live
//! there, so an operand is read the same way whatever it was in the text.
//! The opcode, its types and its modes are small enums decided once at load
//! time; nothing looks at a string while a kernel runs.

/// A scalar type of PTX: what an instruction computes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Pred,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    BF16,
    F32,
    F64,
}

impl Ty {
    /// `b32` is `u32` for every purpose here.
    pub fn from_name(name: &str) -> Option<Ty> {
        Some(match name {
            "pred" => Ty::Pred,
            "u8" | "b8" => Ty::U8,
            "u16" | "b16" => Ty::U16,
            "u32" | "b32" => Ty::U32,
            "u64" | "b64" => Ty::U64,
            "s8" => Ty::S8,
            "s16" => Ty::S16,
            "s32" => Ty::S32,
            "s64" => Ty::S64,
            "f16" => Ty::F16,
            "bf16" => Ty::BF16,
            "f32" => Ty::F32,
            "f64" => Ty::F64,
            _ => return None,
        })
    }

    pub fn bits(self) -> u32 {
        match self {
            Ty::Pred => 1,
            Ty::U8 | Ty::S8 => 8,
            Ty::U16 | Ty::S16 | Ty::F16 | Ty::BF16 => 16,
            Ty::U32 | Ty::S32 | Ty::F32 => 32,
            Ty::U64 | Ty::S64 | Ty::F64 => 64,
        }
    }

    /// Size in memory, in bytes.
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != Ty::Pred
    }
}

/// Integer binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntOp {
    Add,
    Sub,
    AddSat,
    SubSat,
    MulLo,
    MulHi,
    MulWide,
    Div,
    Rem,
    Min,
    Max,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// Integer unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntUnOp {
    Neg,
    Not,
    Abs,
    Popc,
    Clz,
    Brev,
    Cnot,
    Bfind,
    BfindShift,
}

/// `mad.lo`, `mad.hi`, `mad.wide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MadMode {
    Lo,
    Hi,
    Wide,
}

/// Rounding and approximation of a float operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rnd {
    /// No modifier: round to nearest even (and `.rn`).
    Rn,
    Rz,
    Rm,
    Rp,
    /// `.approx` / `.full`: computed correctly rounded, which is within
    /// every documented error bound.
    Approx,
}

/// Float modifiers besides rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct FMode {
    pub ftz: bool,
    pub sat: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    /// `min.NaN` / `max.NaN`: NaN if either input is.
    MinNan,
    MaxNan,
    Copysign,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FUnOp {
    Neg,
    Abs,
    Sqrt,
    Rsqrt,
    Rcp,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
}

/// Comparison of `setp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Unordered float forms: also true when either is NaN.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// `and`/`or`/`xor` combination of `setp.cmp.bop` with a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Rounding of `cvt` (integer rounding `.rni` ... for float → int or
/// float → float-integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CvtRnd {
    None,
    Rn,
    Rz,
    Rm,
    Rp,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// A packed conversion of `cvt` (two values in one register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packed {
    /// `.bf16x2.f32 d, a, b` / `.f16x2.f32`: `a` into the upper half.
    Bf16x2FromF32,
    F16x2FromF32,
    /// `.e4m3x2.f32 d, a, b` (`.b16` d, `a` into the upper byte).
    E4m3x2FromF32,
    E5m2x2FromF32,
    /// `.e4m3x2.f16x2 d, a`: each half of `a` into the byte of its side.
    E4m3x2FromF16x2,
    E5m2x2FromF16x2,
    /// `.f16x2.e4m3x2 d, a` (`.b16` a).
    F16x2FromE4m3x2,
    F16x2FromE5m2x2,
}

/// `cvt` of a packed type: `.rn` or `.rz`, `.relu`, `.satfinite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CvtPacked {
    pub kind: Packed,
    pub rz: bool,
    pub relu: bool,
    pub satfinite: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cvt {
    pub to: Ty,
    pub from: Ty,
    pub rnd: CvtRnd,
    pub sat: bool,
    pub ftz: bool,
    pub relu: bool,
}

/// A state space of a memory access, as the instruction names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Global,
    /// The CTA's own shared memory (`.shared`, `.shared::cta`).
    Shared,
    /// `.shared::cluster`: any CTA of the cluster.
    SharedCluster,
    Local,
    Const,
    /// The kernel's parameters.
    Param,
    /// A `.func`'s parameters and call-site `.param` variables (per thread).
    FuncParam,
    /// No space: a generic address.
    Generic,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::SharedCluster => "shared::cluster",
            Space::Local => "local",
            Space::Const => "const",
            Space::Param | Space::FuncParam => "param",
            Space::Generic => "generic",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    Cas,
}

impl AtomOp {
    /// The PTX word (`exch`).
    pub fn name(self) -> &'static str {
        match self {
            AtomOp::Add => "add",
            AtomOp::Min => "min",
            AtomOp::Max => "max",
            AtomOp::Inc => "inc",
            AtomOp::Dec => "dec",
            AtomOp::And => "and",
            AtomOp::Or => "or",
            AtomOp::Xor => "xor",
            AtomOp::Exch => "exch",
            AtomOp::Cas => "cas",
        }
    }
}

/// `cvta.to.X` (generic → X) or `cvta.X` (X → generic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CvtaDir {
    ToGeneric,
    FromGeneric,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// What the interpreter's inner loop executes. Variants are small; the
/// rare, large operations live in side tables of the [`super::Program`]
/// (`Inst::aux` indexes them).
// A plain byte tag (no niche packed into a payload): the interpreter's
// dispatch is then one load and one indexed jump.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(u8)]
pub enum Op {
    Nop,
    /// `d = a` (the value already has the destination's width).
    Mov,
    /// `mov.b64 d, {a, b}` and wider: `aux` is a list of the parts, each
    /// `bits` wide, lowest first.
    Pack {
        bits: u8,
    },
    /// `mov.b64 {d0, d1}, a`: `aux` is a list of destinations.
    Unpack {
        bits: u8,
    },
    IBin(IntOp, Ty),
    IMad(MadMode, Ty),
    IUn(IntUnOp, Ty),
    /// `bfe d, a, pos(b), len(c)`.
    Bfe(Ty),
    /// `bfi d, a(insert), b(base), pos(c), len(aux slot)`.
    Bfi(Ty),
    /// `prmt.b32 d, a, b, c` (the default mode).
    Prmt,
    /// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: the funnel shift of the
    /// 64-bit `b:a` by `c`.
    Shf {
        left: bool,
        clamp: bool,
    },
    /// `setp`: `d = a cmp b`; `aux` indexes [`SetpExt`] when there is a
    /// combining predicate or a second destination, else `u32::MAX`.
    Setp(Cmp, Ty),
    /// `selp d, a, b, c(pred)`.
    Selp,
    FBin(FOp, Ty, Rnd, FMode),
    /// `fma`/`mad` with a rounding mode: `d = a*b + c`.
    Fma(Ty, Rnd, FMode),
    FUn(FUnOp, Ty, Rnd, FMode),
    /// The packed forms `.f16x2`/`.bf16x2` of [`Op::FBin`], [`Op::Fma`] and
    /// [`Op::FUn`] (`add.rn.f16x2`, `fma.rn.bf16x2`, `neg.f16x2`): the
    /// scalar operation of the half type `Ty` on each half of the 32-bit
    /// operands, the low halves into the low half of `d`.
    FBin2(FOp, Ty, Rnd, FMode),
    Fma2(Ty, Rnd, FMode),
    FUn2(FUnOp, Ty, Rnd, FMode),
    /// `setp.cmp{.bop}.f16x2 p|q, a, b{, c}`: `p` from the low halves, `q`
    /// from the high ones (`aux` indexes the [`SetpExt`] with `q`).
    Setp2(Cmp, Ty),
    /// `testp.finite` etc. are not supported; `Cvt` is every conversion.
    Cvt(Cvt),
    /// A packed conversion: `d` from `a` (and `b` for two sources).
    CvtPacked(CvtPacked),
    /// `cvt.rna.tf32.f32 d, a`.
    CvtTf32,
    /// `cvta`: `a` converted between `space` and generic.
    Cvta(Space, CvtaDir),
    /// `mapa`: `a` in the CTA of rank `b`; `generic` for `mapa.u64` on
    /// generic addresses.
    Mapa {
        generic: bool,
    },
    /// `getctarank`: the rank owning the address `a`.
    Getctarank {
        generic: bool,
    },
    Isspacep(Space),
    /// `ld`: `d` (or the `aux` list for vectors of `vec` elements) from
    /// `[a + off]`.
    Ld {
        space: Space,
        ty: Ty,
        vec: u8,
    },
    /// `st`: `b` (or the `aux` list) to `[a + off]`.
    St {
        space: Space,
        ty: Ty,
        vec: u8,
    },
    /// `atom` (`d` = old value) / `red` (`d` = NO_DEST): `[a + off] op= b`
    /// (`cas`: compare `b`, swap in `c`).
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
    },
    /// `%clock`, `%clock64`, `%globaltimer` (and their `_lo`/`_hi`
    /// halves): the thread's executed instruction count, shifted right by
    /// `c >> 8` and cut to `c & 0xff` bits.
    Clock,
    Bra,
    /// `aux` indexes [`CallInfo`].
    Call,
    Ret,
    Exit,
    Trap,
    /// `wgmma.fence.sync.aligned`: orders the thread's earlier accesses of
    /// registers before the wgmma operations that follow (executed per
    /// thread: it clears what `machine::fence` tracks).
    WgmmaFence,
    /// A synchronising instruction, executed outside the inner loop: `aux`
    /// indexes [`SyncOp`].
    Sync,
}

/// The destination slot that means "none" (`_`, `red`).
pub const NO_DEST: u32 = u32::MAX;

/// One decoded instruction. `guard` is the predicate slot, its top bit set
/// for `@!p`; an unguarded instruction reads the always-true slot 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub guard: u32,
    pub d: u32,
    pub a: u32,
    pub b: u32,
    pub c: u32,
    /// The address offset of memory operations; the branch target of `bra`.
    pub off: i64,
    pub aux: u32,
}

/// The extra operands of `setp.cmp.bop d|d2, a, b, [!]c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SetpExt {
    pub combine: Option<(BoolOp, u32, bool)>,
    pub d2: u32,
}

/// A memory operand of a synchronising instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Addr {
    pub base: u32,
    pub off: i64,
    pub space: Space,
}

/// What an mbarrier `arrive` does besides arriving.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArriveKind {
    /// `arrive_drop`: also lower the expected count of later phases.
    pub drop: bool,
    /// `.noComplete`: the arrival must not complete the phase.
    pub no_complete: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SyncOp {
    /// `bar.sync`/`barrier.sync`/`bar.arrive`: barrier `id`, optional
    /// thread count; `wait` is false for `bar.arrive`.
    Bar {
        id: u32,
        count: Option<u32>,
        wait: bool,
    },
    BarWarpSync {
        mask: u32,
    },
    ClusterArrive,
    ClusterWait,
    MbarInit {
        addr: Addr,
        count: u32,
    },
    MbarInval {
        addr: Addr,
    },
    MbarArrive {
        addr: Addr,
        count: Option<u32>,
        tx: Option<u32>,
        kind: ArriveKind,
        d: u32,
    },
    MbarExpectTx {
        addr: Addr,
        tx: u32,
    },
    MbarCompleteTx {
        addr: Addr,
        tx: u32,
    },
    /// `test_wait`/`try_wait`: `arg` is a parity (`parity`) or a state
    /// token; `blocking` for `try_wait`.
    MbarWait {
        addr: Addr,
        arg: u32,
        parity: bool,
        blocking: bool,
        d: u32,
    },
    MbarPendingCount {
        d: u32,
        state: u32,
    },
    /// `cp.async.bulk.shared::cluster.{global,shared::cta}.mbarrier::complete_tx::bytes`,
    /// with `.multicast::cluster` the 16-bit `ctaMask` in `mask`.
    BulkToShared {
        dst: Addr,
        src: Addr,
        size: u32,
        mbar: Addr,
        mask: Option<u32>,
    },
    /// `cp.async.bulk.tensor.Nd.shared::cluster.global{.tile}.mbarrier::complete_tx::bytes{.multicast::cluster}`:
    /// the box at `coords` (a list of `rank` slots, innermost first) of
    /// the map at the generic address `map` into shared memory at `dst`.
    TensorLoad {
        dst: Addr,
        map: u32,
        coords: u32,
        rank: u8,
        mbar: Addr,
        mask: Option<u32>,
    },
    /// `cp.async.bulk.tensor.Nd.global.shared::cta{.tile}.bulk_group` and
    /// `cp.reduce.async.bulk.tensor...{op}...`: shared memory at `src` into
    /// the box at `coords` of the map.
    TensorStore {
        map: u32,
        coords: u32,
        rank: u8,
        src: Addr,
        red: Option<TensorRed>,
    },
    /// `cp.async.bulk.global.shared::cta.bulk_group`.
    BulkToGlobal {
        dst: Addr,
        src: Addr,
        size: u32,
    },
    BulkCommit,
    BulkWait {
        n: u32,
    },
    Shfl {
        mode: ShflMode,
        d: u32,
        p: u32,
        a: u32,
        b: u32,
        c: u32,
        mask: u32,
    },
    Vote {
        mode: VoteMode,
        d: u32,
        a: u32,
        negate: bool,
        mask: u32,
    },
    Activemask {
        d: u32,
    },
    Elect {
        d: u32,
        p: u32,
        mask: u32,
    },
    Redux {
        op: ReduxOp,
        ty: Ty,
        d: u32,
        a: u32,
        mask: u32,
    },
    /// `call (ret), vprintf, (fmt, args)`: CUDA's device printf; the
    /// operands are the offsets of the call's `.param` variables in the
    /// thread's parameter area.
    Vprintf {
        fmt: u32,
        args: u32,
        ret: Option<u32>,
    },
    /// `call __assertfail, (message, file, line, function, charSize)`: a
    /// failed `assert` (the offsets of the call's `.param` variables).
    AssertFail {
        message: u32,
        file: u32,
        line: u32,
        function: u32,
    },
    /// Ampere's `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], size
    /// {, src-size | ignore-src}`: `size` bytes (4, 8 or 16) into shared
    /// memory, the first `src_size` of them (a slot; all when `None`) from
    /// `src` and the rest zeros; none from `src` when the `ignore`
    /// predicate (slot, negated) holds.
    CpAsync {
        dst: Addr,
        src: Addr,
        size: u32,
        src_size: Option<u32>,
        ignore: Option<(u32, bool)>,
    },
    /// `cp.async.commit_group`.
    CpAsyncCommit,
    /// `cp.async.wait_group n`, or `cp.async.wait_all` (`None`).
    CpAsyncWait {
        n: Option<u32>,
    },
    /// `cp.async.mbarrier.arrive{.noinc}.b64 [mbar]`: an arrival on the
    /// mbarrier once the thread's earlier `cp.async`s complete (`.noinc`:
    /// one of its expected arrivals; without: none, the pending count
    /// being raised by one first).
    CpAsyncArrive {
        mbar: Addr,
        noinc: bool,
    },
    /// `match.any.sync.b32/.b64 d, a, mask` and `match.all.sync d{|p}, a,
    /// mask` (`all`): the lanes of `mask` whose `a` equals this lane's /
    /// `mask` when every lane's `a` is the same (and `p`), else 0.
    Match {
        all: bool,
        wide: bool,
        d: u32,
        p: u32,
        a: u32,
        mask: u32,
    },
    /// `wgmma.mma_async`: a warp's share of a warpgroup matrix product.
    Wgmma(Box<Wgmma>),
    /// `wgmma.commit_group`.
    WgmmaCommit,
    /// `wgmma.wait_group n` (at most 7, as ptxas clamps it).
    WgmmaWait {
        n: u32,
    },
    /// `setmaxnreg.{inc,dec}.sync.aligned.u32 n`.
    SetMaxNreg {
        inc: bool,
        n: u32,
    },
    /// `ldmatrix`/`stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16`:
    /// `num` 8x8 matrices of 16-bit elements, the rows at the addresses of
    /// lanes `8i..8i+7`; `regs` lists the `num` registers.
    Matrix {
        store: bool,
        addr: Addr,
        num: u8,
        trans: bool,
        regs: u32,
    },
}

/// An input type of `wgmma.mma_async`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgIn {
    F16,
    BF16,
    TF32,
    E4M3,
    E5M2,
    S8,
    U8,
}

impl WgIn {
    pub fn bytes(self) -> u32 {
        match self {
            WgIn::F16 | WgIn::BF16 => 2,
            WgIn::TF32 => 4,
            WgIn::E4M3 | WgIn::E5M2 | WgIn::S8 | WgIn::U8 => 1,
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, WgIn::S8 | WgIn::U8)
    }
}

/// The accumulator type of `wgmma.mma_async`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgOut {
    F32,
    F16,
    S32,
}

/// Where `wgmma.mma_async` takes its A operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgA {
    /// A shared-memory descriptor (SS): its slot.
    Desc(u32),
    /// Four registers per thread (RS): a list of their slots.
    Regs(u32),
}

/// One `wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype`.
#[derive(Clone, Debug, PartialEq)]
pub struct Wgmma {
    pub n: u32,
    pub k: u32,
    pub out: WgOut,
    pub a_ty: WgIn,
    pub b_ty: WgIn,
    pub satfinite: bool,
    /// The accumulator registers: a list of `nd` slots.
    pub d: u32,
    pub nd: u32,
    pub a: WgA,
    /// B's descriptor slot.
    pub b: u32,
    /// `scale-d`: a predicate slot (negated when `.1`), or a constant.
    pub scale_d: (u32, bool),
    pub neg_a: bool,
    pub neg_b: bool,
    pub trans_a: bool,
    pub trans_b: bool,
}

/// The operation of `cp.reduce.async.bulk.tensor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorRed {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
}

impl TensorRed {
    pub fn name(self) -> &'static str {
        match self {
            TensorRed::Add => "add",
            TensorRed::Min => "min",
            TensorRed::Max => "max",
            TensorRed::Inc => "inc",
            TensorRed::Dec => "dec",
            TensorRed::And => "and",
            TensorRed::Or => "or",
            TensorRed::Xor => "xor",
        }
    }
}

/// A call: parameter bytes copied in before the jump and out after the
/// callee's `ret`.
#[derive(Clone, Debug, PartialEq)]
pub struct CallInfo {
    pub func: u32,
    /// `(caller offset, callee offset, bytes)` in the thread's parameter area.
    pub args: Vec<(u32, u32, u32)>,
    /// `(callee offset, caller offset, bytes)`.
    pub rets: Vec<(u32, u32, u32)>,
}
