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

pub mod consteval;
pub mod contract;
pub mod layout;
pub mod print;
pub mod tensor;
pub mod verify;
pub mod visit;
pub mod visit_mut;

use crate::span::Span;
use crate::types::Scalar;

pub use crate::operator::{BinOp, UnaryOp};
pub use tensor::{L2Promotion, OobFill, Swizzle, TensorMap};

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

/// The ids a body has handed out: each expression and statement of the
/// body has its own, below these counts. Ids are never reused while the
/// body lives, so a table of facts indexed by them stays a table of facts
/// about the same nodes (until a pass changes the body, after which the
/// facts are computed again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ids {
    exprs: u32,
    stmts: u32,
}

impl Ids {
    /// A fresh expression id. (Saturates at `u32::MAX`, which is
    /// [`ExprId::NONE`]: a body that large fails verification instead of
    /// reusing ids.)
    pub fn expr(&mut self) -> ExprId {
        let id = ExprId(self.exprs);
        self.exprs = self.exprs.saturating_add(1);
        id
    }

    /// A fresh statement id (saturating like [`Ids::expr`]).
    pub fn stmt(&mut self) -> StmtId {
        let id = StmtId(self.stmts);
        self.stmts = self.stmts.saturating_add(1);
        id
    }

    /// How many expression ids were handed out: the length of a table
    /// indexed by [`ExprId`].
    pub fn exprs(self) -> usize {
        self.exprs as usize
    }

    /// How many statement ids were handed out.
    pub fn stmts(self) -> usize {
        self.stmts as usize
    }
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

impl Body {
    /// A body of hand-built nodes, numbered ([`Body::renumber`]).
    pub fn new(locals: Vec<Local>, block: Block) -> Body {
        let mut body = Body {
            locals,
            block,
            ids: Ids::default(),
        };
        body.renumber();
        body
    }

    /// A new expression of this body, with a fresh id.
    pub fn expr(&mut self, kind: ExprKind, ty: Scalar, span: Span) -> Expr {
        Expr {
            kind,
            ty,
            span,
            id: self.ids.expr(),
        }
    }

    /// A new statement of this body, with a fresh id.
    pub fn stmt(&mut self, kind: StmtKind, span: Span) -> Stmt {
        Stmt {
            kind,
            span,
            id: self.ids.stmt(),
        }
    }

    /// A new mutable local of type `ty`, for a value a pass introduces;
    /// `span` is the source it stands for. Its name, `$t` and its index,
    /// cannot collide with a kdsl name.
    pub fn fresh_local(&mut self, ty: Scalar, span: Span) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(Local {
            name: format!("$t{}", id.0),
            ty,
            mutable: true,
            span,
            dims: Vec::new(),
        });
        id
    }

    /// Gives every statement and expression of the body a fresh id, in
    /// [`visit`] order from 0: for nodes built outside the body (hand-built
    /// IR, a copied subtree). Facts computed before are stale afterwards.
    pub fn renumber(&mut self) {
        self.ids = Ids::default();
        let mut n = visit_mut::Renumber {
            ids: Ids::default(),
        };
        visit_mut::VisitMut::visit_block_mut(&mut n, &mut self.block);
        self.ids = n.ids;
    }

    /// Gives every node of `block` (a subtree about to be added to this
    /// body, such as a copy of a loop's body) fresh ids of this body.
    pub fn renumber_block(&mut self, block: &mut Block) {
        let mut n = visit_mut::Renumber { ids: self.ids };
        visit_mut::VisitMut::visit_block_mut(&mut n, block);
        self.ids = n.ids;
    }
}

impl Ids {
    /// A copy of `e` (an expression of the body these ids belong to) with
    /// fresh ids, to use beside the original.
    pub fn copy_expr(&mut self, e: &Expr) -> Expr {
        let mut copy = e.clone();
        let mut n = visit_mut::Renumber { ids: *self };
        visit_mut::VisitMut::visit_expr_mut(&mut n, &mut copy);
        *self = n.ids;
        copy
    }
}

/// Dropping a body recurses as deep as it nests, which the parser allows to
/// be far deeper than an ordinary thread's stack takes: a deep body is
/// dropped on the large stack that built it ([`crate::stack`]), whatever
/// thread lets it go.
impl Drop for Body {
    fn drop(&mut self) {
        if visit::deeper_than(&self.block, crate::stack::SHALLOW) {
            let block = std::mem::take(&mut self.block);
            crate::stack::with_big_stack(move || drop(block));
        }
    }
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

/// One instantiation of a kernel with constants: each kernel constant's
/// value, in declaration order. Its checked body has them folded in: the
/// IR knows no constants, only their values.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// The kdsl name of the kernel ([`Kernel::name`] is the instantiation's).
    pub kernel: String,
    pub consts: Vec<InstanceConst>,
}

/// A kernel constant's value in one instantiation.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceConst {
    pub name: String,
    pub value: ConstValue,
    /// The value is the constant's default (evaluated in this
    /// instantiation): such constants do not appear in its PTX name.
    pub default: bool,
}

/// The value of a kernel constant: an integer or `bool` of its type, or a
/// type (`const ELEM: type = bf16`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ConstValue {
    Value(Value, Scalar),
    Type(Scalar),
}

impl ConstValue {
    /// The value as kdsl writes it: `128`, `-3`, `true`, `bf16`.
    pub fn text(&self) -> String {
        match self {
            ConstValue::Value(Value::Int(i), _) => i.to_string(),
            ConstValue::Value(Value::Bool(b), _) => b.to_string(),
            ConstValue::Value(Value::Float(f), _) => f.to_string(),
            ConstValue::Value(Value::Pair(lo, hi), _) => format!("{lo}/{hi}"),
            ConstValue::Type(t) => t.name().to_string(),
        }
    }

    /// The constant's type as written: `u32`, `bool`, `type`.
    pub fn type_name(&self) -> &'static str {
        match self {
            ConstValue::Value(_, t) => t.name(),
            ConstValue::Type(_) => "type",
        }
    }
}

impl Instance {
    /// `BM = 64, STAGES = 4, ELEM = bf16`: every constant with its value.
    pub fn values_text(&self) -> String {
        let parts: Vec<String> = self
            .consts
            .iter()
            .map(|c| format!("{} = {}", c.name, c.value.text()))
            .collect();
        parts.join(", ")
    }
}

impl Kernel {
    /// Threads per CTA, when `block(...)` gives it.
    pub fn block_threads(&self) -> Option<u32> {
        let [x, y, z] = self.block?;
        x.checked_mul(y)?.checked_mul(z)
    }
}

/// The registers per thread every warp of a kernel starts with when one
/// CTA of `threads` threads runs per SM (`.minnctapersm 1`), the largest
/// `set_max_regs` being `largest`: `min(255, 8 * floor(65536 / (8 * T)),
/// largest)` (ptxas 13.5 lowers the count at entry to the largest
/// `setmaxnreg` when that is below what the launch allows;
/// `shared/design/hopper.md` §4.3). `None` for a block of no threads.
pub fn entry_registers(threads: u32, largest: Option<u32>) -> Option<u32> {
    let per_thread = REGS_PER_SM.checked_div(threads.checked_mul(REGS_STEP)?)? * REGS_STEP;
    let e = per_thread.min(REGS_PER_THREAD);
    Some(largest.map_or(e, |l| e.min(l)))
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

/// `accum name: [T; 64, N];`: a 64 x N matrix that a warpgroup's `wgmma`
/// instructions accumulate into, spread over the registers of its 128
/// threads: each thread holds [`Accum::elements`] of it, element `i` at
/// the row and column of the fragment map (PTX ISA 9.7.15.5.1.1; CUTLASS
/// `CLayout_64xN`): row `16 w + l / 4 + 8 ((i >> 1) & 1)`, column
/// `8 (i >> 2) + 2 (l % 4) + (i & 1)` for warp `w` of the warpgroup and
/// lane `l`. `elem` is `f32`, `f16` (two per 32-bit register) or `i32`;
/// `n` a width some `wgmma` shape has (the checker's E0412). A `bf16`
/// one (two per register, like `f16`) is a *fragment* only: no `wgmma`
/// accumulates into it, one reads it as its A operand (the RS form,
/// [`Wgmma`]). A *row vector* (`accum m: [f32; 64];`, `row`) holds one
/// value per row: element `r` (0 or 1) of a thread is the row of the
/// elements `i` of its fragments with `(i >> 1) & 1 == r`, the same in the
/// four lanes that share the row ([`FragOp`]).
#[derive(Clone, Debug)]
pub struct Accum {
    pub name: String,
    pub elem: Scalar,
    /// The columns; 1 for a row vector.
    pub n: u32,
    /// A row vector: `[T; 64]`.
    pub row: bool,
    pub span: Span,
    /// A `wgmma` naming it failed to check (a module with errors): no
    /// check concludes from what it holds.
    pub failed: bool,
}

impl Accum {
    /// The rows of every accumulator (`wgmma`'s M).
    pub const M: u32 = 64;

    /// The element types `wgmma` accumulates into.
    pub const ELEMS: [Scalar; 3] = [Scalar::F32, Scalar::F16, Scalar::I32];

    /// The widths of the integer forms (`.s32` accumulators: PTX ISA
    /// 9.7.15.5.1, verified with ptxas 13.5, `m64n40k32` rejected: q10).
    pub const INT_N: [u32; 18] = [
        8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
    ];

    /// Whether some `wgmma` shape has an accumulator of `N = n` columns of
    /// `elem`: any multiple of 8 up to 256 for the float forms, the
    /// sparser [`Accum::INT_N`] for `i32`.
    pub fn valid_n(elem: Scalar, n: i128) -> bool {
        match elem {
            Scalar::I32 => u32::try_from(n).is_ok_and(|n| Accum::INT_N.contains(&n)),
            _ => (8..=256).contains(&n) && n % 8 == 0,
        }
    }

    /// Why `n` is not a width of `elem` (for E0412).
    pub fn n_rule(elem: Scalar, n: i128) -> String {
        match elem {
            Scalar::I32 => format!(
                "an `i32` accumulator has 8, 16, 24 or a multiple of 16 up to 256 columns (the integer `wgmma` shapes), not {n}"
            ),
            _ => format!(
                "a `{elem}` accumulator has a multiple of 8 columns, from 8 to 256 (the `wgmma` shapes m64nNk), not {n}"
            ),
        }
    }

    /// The elements each thread holds: `64 * n / 128`; a row vector's two
    /// rows.
    pub fn elements(&self) -> u32 {
        if self.row {
            return 2;
        }
        self.n / 2
    }

    /// The 32-bit registers each thread holds them in (`f16` and `bf16`
    /// pack two).
    pub fn registers(&self) -> u32 {
        if self.row {
            2
        } else if self.elem.size() == 2 {
            self.n / 4
        } else {
            self.n / 2
        }
    }

    /// The fragment map: the row of element `i` in warp `w` (0..4) of the
    /// warpgroup, lane `l`.
    pub fn row(i: u32, w: u32, l: u32) -> u32 {
        16 * w + l / 4 + 8 * ((i >> 1) & 1)
    }

    /// The column of element `i` in lane `l`.
    pub fn col(i: u32, l: u32) -> u32 {
        8 * (i >> 2) + 2 * (l % 4) + (i & 1)
    }

    /// Which of a thread's two rows element `i` lies in: the element of a
    /// row vector that goes with it.
    pub fn row_slot(&self, i: u32) -> u32 {
        if self.row {
            i
        } else {
            (i >> 1) & 1
        }
    }

    /// The element types a fragment that is a register operand (RS
    /// `wgmma`'s A) may have: pairs of 16-bit floats, in the fragment map.
    pub const OPERAND_ELEMS: [Scalar; 2] = [Scalar::BF16, Scalar::F16];

    /// The elements of one K slice of an RS operand (`64 x 16` 16-bit
    /// values over 128 threads: columns `16 kk ..` are elements `8 kk ..
    /// 8 kk + 7`, registers `4 kk .. 4 kk + 3`).
    pub const SLICE_ELEMENTS: u32 = 8;
}

/// `shared name: [T; d0, d1, ...] swizzle(S);` — row-major, 128-byte
/// aligned, or aligned to its swizzle's repeat ([`Swizzle::align`]).
#[derive(Clone, Debug)]
pub struct SharedArray {
    pub name: String,
    pub elem: Scalar,
    /// Each at least 1; past `u32::MAX` only in a kernel with E0122 (a
    /// size is evaluated exactly, and saturates at `u64::MAX`).
    pub dims: Vec<u64>,
    /// How its elements are placed ([`Swizzle`]); a swizzled array's
    /// innermost dimension is one span, and each slice along its first
    /// index (when it has 3 or more dimensions) a whole number of repeats
    /// (E0403).
    pub swizzle: Swizzle,
    pub span: Span,
}

impl SharedArray {
    /// The number of elements (saturating: the checker rejects arrays whose
    /// bytes do not fit the shared memory long before 64 bits).
    pub fn len(&self) -> u64 {
        self.dims
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .unwrap_or(u64::MAX)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of one slice along the first index (`sa[s]`): the product
    /// of the other dimensions and the element size (saturating; one
    /// element for an array of one dimension).
    pub fn slice_bytes(&self) -> u64 {
        layout::array_bytes(self.elem, self.dims.get(1..).unwrap_or(&[])).unwrap_or(u64::MAX)
    }

    /// The size in bytes ([`layout::array_bytes`], saturating).
    pub fn bytes(&self) -> u64 {
        layout::array_bytes(self.elem, &self.dims).unwrap_or(u64::MAX)
    }

    /// The size in bytes exactly, however large, in decimal (for messages
    /// about sizes that [`SharedArray::bytes`] cannot hold).
    pub fn bytes_text(&self) -> String {
        exact_product(
            self.dims
                .iter()
                .copied()
                .chain([u64::from(self.elem.size())]),
        )
    }
}

/// The product of `factors` in decimal, exactly (no overflow, however many
/// factors): base-10⁹ limbs, least significant first.
pub fn exact_product(factors: impl IntoIterator<Item = u64>) -> String {
    const BASE: u128 = 1_000_000_000;
    let mut limbs: Vec<u128> = vec![1];
    for f in factors {
        let mut carry: u128 = 0;
        for limb in &mut limbs {
            let v = *limb * u128::from(f) + carry;
            *limb = v % BASE;
            carry = v / BASE;
        }
        while carry > 0 {
            limbs.push(carry % BASE);
            carry /= BASE;
        }
    }
    while limbs.len() > 1 && limbs.last() == Some(&0) {
        limbs.pop();
    }
    let mut digits = limbs.iter().rev();
    let mut out = digits.next().map_or_else(String::new, u128::to_string);
    for limb in digits {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

/// The fewest registers per thread `set_max_regs` may ask for
/// (`setmaxnreg`'s range, PTX ISA §9.7.19.5; ptxas checks it).
pub const REGS_MIN: u32 = 24;
/// The most registers per thread `set_max_regs` may ask for.
pub const REGS_MAX: u32 = 256;
/// `set_max_regs` counts registers in steps of 8.
pub const REGS_STEP: u32 = 8;
/// The registers of one SM, shared by the CTAs on it: a CTA's pool when it
/// is the only one (`.minnctapersm 1`).
pub const REGS_PER_SM: u32 = 65536;
/// The most registers one thread can have.
pub const REGS_PER_THREAD: u32 = 255;
/// Threads in a warpgroup: four consecutive warps.
pub const WARPGROUP: u32 = 128;
/// The most wgmma groups `wgmma_wait(n)` may leave pending (`wait_group`
/// takes any immediate, but ptxas treats one above 7 as 7).
pub const WGMMA_MAX_PENDING: u32 = 7;

/// The scope of a barrier group: who arrives on it and how waits order memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    Cta,
    Cluster,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
        }
    }
}

/// `barrier name[count]: scope(arrivals = n);` — `count` mbarriers (8 bytes
/// each, 8-byte aligned, in shared memory), all with the same scope and
/// arrival count. The compiler initialises them at kernel entry.
#[derive(Clone, Debug)]
pub struct BarrierGroup {
    pub name: String,
    pub scope: Scope,
    pub count: u32,
    pub arrivals: u32,
    pub spans: BarrierSpans,
    /// The parts of its declaration that failed to check (only in a
    /// module with errors).
    pub failed: Failed,
    /// `guards(sa, sb)`: barrier `i` guards slice `i` (along the first
    /// index) of each of these arrays, whose first dimension is the
    /// group's count (E0408). Empty without the clause.
    pub guards: Vec<SharedId>,
}

/// The parts of a barrier group's declaration that failed to check, each
/// then a placeholder (one barrier, scope `cta`, one arrival or 32
/// threads). The group is still declared, so that its uses are checked: a
/// check that needs a failed part says nothing about the group, and every
/// other check goes on (a wait on a `cluster` group is E0301 whatever its
/// arrival count). Only a module with errors has a failed part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Failed {
    /// `[count]`.
    pub count: bool,
    /// The scope: not `cta` or `cluster`, or not one this target or this
    /// kernel (without `cluster(...)`) can have.
    pub scope: bool,
    /// `arrivals = n` (`threads = k` for a named-barrier group).
    pub arrivals: bool,
    /// Something no check reads: where it is declared, a named group's
    /// hardware ids.
    pub other: bool,
}

impl Failed {
    pub fn any(self) -> bool {
        self.count || self.scope || self.arrivals || self.other
    }
}

impl BarrierGroup {
    /// The most barriers a group holds (E0311).
    pub const MAX_COUNT: u32 = 64;
    /// The largest arrival count of an mbarrier, in `mbarrier.init` and in
    /// `mbarrier.arrive`'s count operand: 2^20 - 1 (E0306).
    pub const MAX_ARRIVALS: u32 = (1 << 20) - 1;
}

/// `barrier name[count]: named(threads = k);`: `count` of the CTA's 16
/// hardware barriers (`bar.sync`/`bar.arrive`), each completing a phase
/// when `k` threads (a whole number of warps) have arrived. They live in
/// no memory and need no initialisation; the checker gives each group its
/// ids, `first_id..first_id + count`, all within [`NamedBarrier::IDS`] and
/// distinct between groups (id 0 stays `sync_threads`'s).
#[derive(Clone, Debug)]
pub struct NamedBarrier {
    pub name: String,
    pub count: u32,
    /// Threads per phase: a positive multiple of 32, at most 1024 and at
    /// most the block's threads when `block(...)` gives them.
    pub threads: u32,
    /// The hardware id of barrier 0 of the group.
    pub first_id: u32,
    pub spans: NamedBarrierSpans,
    /// The parts of its declaration that failed to check (its scope is
    /// never one of them).
    pub failed: Failed,
}

impl NamedBarrier {
    /// The hardware ids named barriers may take: 1..=15 (`bar.sync 0` is
    /// `sync_threads`'s and the compiler's own).
    pub const IDS: std::ops::RangeInclusive<u32> = 1..=15;
    /// A warp: the unit in which threads arrive at a hardware barrier.
    pub const WARP: u32 = 32;
    /// The most threads a phase can count: a CTA's.
    pub const MAX_THREADS: u32 = 1024;
}

/// Where each part of a named-barrier declaration is.
#[derive(Clone, Copy, Debug)]
pub struct NamedBarrierSpans {
    /// The whole declaration.
    pub decl: Span,
    pub name: Span,
    /// The `[count]` expression, if written.
    pub count: Option<Span>,
    /// The thread-count expression.
    pub threads: Span,
}

/// Where each part of a barrier declaration is, for diagnostics.
#[derive(Clone, Copy, Debug)]
pub struct BarrierSpans {
    /// The whole declaration.
    pub decl: Span,
    pub name: Span,
    /// The `[count]` expression, if written.
    pub count: Option<Span>,
    /// The scope identifier (`cluster` in `cluster(arrivals = 2)`).
    pub scope: Span,
    /// The arrival-count expression.
    pub arrivals: Span,
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

/// What a statement is, for the questions every later stage asks of every
/// statement (what synchronises, what leaves a block, what holds blocks):
/// one exhaustive match ([`StmtKind::class`]), so that a new kind of
/// statement must be classified there, and no stage's catch-all arm
/// silently mis-handles, say, a new synchronising statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtClass {
    /// Computes and stores: `let`, assignments, stores, vector loads and
    /// stores, expression statements (what its expressions do aside).
    Compute,
    /// Holds blocks of its own: `if`, `while`, `for`, a loop over a list.
    Control,
    /// Leaves its block: `break`, `continue`, `return`.
    Jump,
    /// A call of a device function, which may run a CTA-wide barrier.
    Call(FuncId),
    /// Every thread of the CTA (or cluster) must reach it.
    CtaBarrier(CtaBarrier),
    /// Synchronises or orders memory otherwise.
    Sync(SyncOp),
    /// Failed to check (a module with errors only): may do anything.
    Failed,
}

/// A barrier every thread of the CTA, or of the cluster, must reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtaBarrier {
    /// `sync_threads()`
    Threads,
    /// `cluster_sync()`
    Cluster,
}

impl CtaBarrier {
    /// The built-in as written in kdsl.
    pub fn name(self) -> &'static str {
        match self {
            CtaBarrier::Threads => "sync_threads",
            CtaBarrier::Cluster => "cluster_sync",
        }
    }
}

/// The statements that synchronise or order memory, short of a CTA-wide
/// barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncOp {
    /// `sync_warp(mask)`.
    Warp,
    /// `fence(...)`, `fence_proxy_async()`.
    Fence,
    /// An operation on an mbarrier.
    Mbarrier,
    /// An operation on a named barrier.
    Named,
    /// `copy_async`, `copy_async_store`, the tensor copies.
    BulkCopy,
    /// `copy_async_commit()`, `copy_async_wait(n)`.
    BulkGroup,
    /// An operation every thread of a warpgroup runs together
    /// (`set_max_regs`, the `wgmma` operations): `.sync.aligned` over the
    /// warpgroup.
    Warpgroup,
}

impl StmtKind {
    /// See [`StmtClass`].
    pub fn class(&self) -> StmtClass {
        match self {
            StmtKind::Let { .. }
            | StmtKind::LetArray { .. }
            | StmtKind::Assign { .. }
            | StmtKind::Store { .. }
            | StmtKind::LoadVector { .. }
            | StmtKind::StoreVector { .. }
            | StmtKind::Expr(_) => StmtClass::Compute,
            StmtKind::If { .. }
            | StmtKind::While { .. }
            | StmtKind::For { .. }
            | StmtKind::ForList { .. } => StmtClass::Control,
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => StmtClass::Jump,
            StmtKind::Call { func, .. } => StmtClass::Call(*func),
            StmtKind::SyncThreads => StmtClass::CtaBarrier(CtaBarrier::Threads),
            StmtKind::ClusterSync => StmtClass::CtaBarrier(CtaBarrier::Cluster),
            StmtKind::SyncWarp(_) => StmtClass::Sync(SyncOp::Warp),
            StmtKind::FenceProxyAsync | StmtKind::Fence(_) => StmtClass::Sync(SyncOp::Fence),
            StmtKind::Barrier(_) => StmtClass::Sync(SyncOp::Mbarrier),
            StmtKind::NamedBarrier(_) => StmtClass::Sync(SyncOp::Named),
            StmtKind::CopyAsync { .. }
            | StmtKind::CopyAsyncStore { .. }
            | StmtKind::TensorCopy(_) => StmtClass::Sync(SyncOp::BulkCopy),
            StmtKind::CopyAsyncCommit | StmtKind::CopyAsyncWait(_) => {
                StmtClass::Sync(SyncOp::BulkGroup)
            }
            StmtKind::SetMaxRegs(_)
            | StmtKind::Wgmma(_)
            | StmtKind::Fragment(_)
            | StmtKind::WgmmaCommit
            | StmtKind::WgmmaWait(_) => StmtClass::Sync(SyncOp::Warpgroup),
            StmtKind::Poisoned { .. } => StmtClass::Failed,
        }
    }
}

/// `wgmma(acc, a, b, accumulate = c)`: `acc` (64 x N) = `a` (64 x K) times
/// `b` (N x K) transposed, plus `acc` where `accumulate` holds. `a` and `b`
/// name the first element of their tile in a swizzled shared array whose
/// innermost dimension is K (K-major: the array's rows are the tile's
/// rows, contiguous along K; the tile is `[r0 .. r0 + rows, k0 .. k0 + K]`
/// of the last two dimensions, K = 32 bytes of the element type), or,
/// transposed (`trans_a`/`trans_b`, `transpose(...)` in the source), an
/// MN-major tile of an `f16`/`bf16` array whose innermost dimension is
/// along M or N: the last two dimensions are K and one span of rows, the
/// one before them (when the tile is wider than a span) the tile's blocks
/// of a span; the tile is `[b0 .., k0 .. k0 + K, 0 ..]`. The form
/// ([`WgmmaForm`]) follows from the types, which the checker matched
/// (E0411).
///
/// `a` may instead be an element of a 16-bit fragment (an `f16`/`bf16`
/// [`Accum`]: [`PlaceKind::Accum`]), the RS form: the 64 x 16 slice of
/// the fragment whose first element it is (element `8 kk` for columns
/// `16 kk ..`, [`Accum::SLICE_ELEMENTS`]), read from the four `.b32`
/// registers that hold it, which are in the layout the A operand wants
/// (PTX ISA 9.7.15.5.1.1: the A fragment of `.m64nNk16` is the
/// accumulator map of a 64 x 16 matrix).
#[derive(Clone, Debug)]
pub struct Wgmma {
    pub acc: AccumId,
    pub a: Place,
    pub b: Place,
    /// `a` MN-major (`imm-trans-a = 1`).
    pub trans_a: bool,
    /// `b` MN-major (`imm-trans-b = 1`).
    pub trans_b: bool,
    pub accumulate: Expr,
    /// The accumulator's name as written (for spans).
    pub acc_span: Span,
}

impl Wgmma {
    /// The fragment an RS `wgmma` reads its A operand from, and the
    /// index of the slice's first element.
    pub fn a_fragment(&self) -> Option<(AccumId, &Expr)> {
        match &self.a.kind {
            PlaceKind::Accum { acc, index } => Some((*acc, index)),
            _ => None,
        }
    }
}

/// A whole-fragment operation (language.md §16.7): every element of the
/// thread's part of `dst`, and the shuffles across the four lanes that
/// share a row, so that a kernel computes on rows without knowing which
/// thread holds which element. Row vectors are [`Accum::row`].
#[derive(Clone, Debug)]
pub struct FragOp {
    pub kind: FragKind,
    pub dst: AccumId,
    pub src: AccumId,
    /// `row_exp2`'s factor.
    pub factor: Option<Expr>,
    /// The operands as written (for spans).
    pub dst_span: Span,
    pub src_span: Span,
}

/// Why `kind` does not apply to `dst` and `src` (the checker's E0450; the
/// verifier's invariant).
pub fn fragment_mismatch(kind: FragKind, dst: &Accum, src: &Accum) -> Option<&'static str> {
    let f32_ = Scalar::F32;
    match kind {
        FragKind::RowMax | FragKind::RowSum if !dst.row || dst.elem != f32_ || src.elem != f32_ => {
            Some("a row vector and an `f32` fragment")
        }
        FragKind::RowScale | FragKind::RowExp2 if dst.elem != f32_ || !src.row => {
            Some("an `f32` fragment and a row vector")
        }
        FragKind::Convert
            if dst.row
                || src.row
                || !Accum::OPERAND_ELEMS.contains(&dst.elem)
                || src.elem != f32_
                || dst.n != src.n =>
        {
            Some("a 16-bit fragment and an `f32` fragment of its shape")
        }
        _ => None,
    }
}

/// The whole-fragment operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FragKind {
    /// `row_max(m, s)`: row vector `m` becomes, per row, the maximum of
    /// `m` and the row's elements of `s` (an `f32` fragment or row vector).
    RowMax,
    /// `row_sum(l, s)`: `l` plus the sum of the row's elements of `s`.
    RowSum,
    /// `row_scale(o, c)`: every element of `o` (fragment or row vector)
    /// times its row's value of row vector `c`.
    RowScale,
    /// `row_exp2(s, m, k)`: every element `x` of `s` becomes `2^(x k - m
    /// k)` with `m` its row's value of row vector `m` (`ex2.approx.ftz`).
    RowExp2,
    /// `acc_convert(p, s)`: 16-bit fragment `p` becomes `f32` fragment `s`
    /// of its shape, each element rounded to nearest even (pairs: one
    /// `cvt.rn.bf16x2.f32` per register).
    Convert,
}

impl FragKind {
    /// The built-in as written.
    pub fn name(self) -> &'static str {
        match self {
            FragKind::RowMax => "row_max",
            FragKind::RowSum => "row_sum",
            FragKind::RowScale => "row_scale",
            FragKind::RowExp2 => "row_exp2",
            FragKind::Convert => "acc_convert",
        }
    }

    /// Whether `dst`'s old elements are read (all but the conversion).
    pub fn reads_dst(self) -> bool {
        self != FragKind::Convert
    }
}

/// The `wgmma` forms: accumulator type, operand types (PTX ISA
/// 9.7.15.5.1, each verified with ptxas 13.5 on sm_90a: q01-q12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaForm {
    pub d: Scalar,
    pub a: Scalar,
    pub b: Scalar,
}

impl WgmmaForm {
    /// The form of these types, or why there is none.
    pub fn of(d: Scalar, a: Scalar, b: Scalar) -> Result<WgmmaForm, String> {
        use Scalar::*;
        let fp8 = |t: Scalar| matches!(t, E4M3 | E5M2);
        let int8 = |t: Scalar| matches!(t, I8 | U8);
        let ok = match (d, a, b) {
            (F32 | F16, F16, F16) | (F32, BF16, BF16) | (F32, TF32, TF32) => true,
            (F32 | F16, x, y) if fp8(x) && fp8(y) => true,
            (I32, x, y) if int8(x) && int8(y) => true,
            _ => false,
        };
        if ok {
            return Ok(WgmmaForm { d, a, b });
        }
        Err(match (a, b) {
            (F16 | BF16 | TF32, _) | (_, F16 | BF16 | TF32) if a != b => format!(
                "`{a}` and `{b}` operands: `f16`, `bf16` and `tf32` multiply only with their own type"
            ),
            (F16, _) => format!("`f16` operands accumulate into `f32` or `f16`, not `{d}`"),
            (BF16 | TF32, _) => format!("`{a}` operands accumulate into `f32`, not `{d}`"),
            (x, y) if fp8(x) && fp8(y) => {
                format!("fp8 operands accumulate into `f32` or `f16`, not `{d}`")
            }
            (x, y) if int8(x) && int8(y) => {
                format!("`i8` and `u8` operands accumulate into `i32`, not `{d}`")
            }
            _ => format!(
                "no `wgmma` multiplies `{a}` by `{b}`: its operands are `f16`, `bf16`, `tf32`, `e4m3`/`e5m2` or `i8`/`u8`"
            ),
        })
    }

    /// K of the instruction: 32 bytes of the operand type (16 `f16`, 8
    /// `tf32`, 32 fp8 or bytes).
    pub fn k(&self) -> u32 {
        32 / self.a.size()
    }

    /// The PTX type of an operand or accumulator (`.s8` for `i8`).
    pub fn ptx(t: Scalar) -> &'static str {
        match t {
            Scalar::F32 => "f32",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
            Scalar::TF32 => "tf32",
            Scalar::E4M3 => "e4m3",
            Scalar::E5M2 => "e5m2",
            Scalar::I8 => "s8",
            Scalar::U8 => "u8",
            _ => "s32",
        }
    }

    /// An integer form: no scale or transpose immediates.
    pub fn integer(&self) -> bool {
        self.d == Scalar::I32
    }

    /// The `f16`/`bf16` forms take the transpose immediates too.
    pub fn transposable(&self) -> bool {
        matches!(self.a, Scalar::F16 | Scalar::BF16)
    }

    /// Mixed signedness (`.s32.u8.s8`) needs PTX ISA 8.4 (q08).
    pub fn mixed_signedness(&self) -> bool {
        self.integer() && self.a != self.b
    }
}

/// A tensor copy (`docs/language.md` §15.4): one box of tensor map `map`
/// at `coords` (outermost first, 32-bit integers, one per dimension of the
/// map) between it and `smem`, a slice of a shared array whose shape is
/// the box, element type the map's.
#[derive(Clone, Debug)]
pub struct TensorCopy {
    pub kind: TensorCopyKind,
    pub smem: Slice,
    /// A `tensor` parameter ([`ParamType::Tensor`]).
    pub map: ParamId,
    pub coords: Vec<Expr>,
    /// The box as written, `a[m0, k0]`.
    pub box_span: Span,
}

#[derive(Clone, Debug)]
pub enum TensorCopyKind {
    /// Global → shared, completing the box's bytes on `barrier`; with a
    /// `mask` (a `u32` of 16 significant bits, sm_90a, a kernel with
    /// `cluster(...)`), into the same slice of every CTA of the cluster
    /// whose rank's bit is set, completing on each one's barrier.
    Load {
        barrier: BarrierRef,
        mask: Option<Box<Expr>>,
    },
    /// Shared → global, in the current bulk group.
    Store,
    /// Shared → global, added to what global memory holds, in the current
    /// bulk group.
    ReduceAdd,
}

impl TensorCopyKind {
    /// The built-in as written in kdsl.
    pub fn name(&self) -> &'static str {
        match self {
            TensorCopyKind::Load { .. } => "tma_load",
            TensorCopyKind::Store => "tma_store",
            TensorCopyKind::ReduceAdd => "tma_reduce_add",
        }
    }
}

/// `sa[s]`, `sa[s, r]` or `sa`: a shared array with fewer indices than
/// dimensions (the leading ones), the elements whose indices start so.
#[derive(Clone, Debug)]
pub struct Slice {
    pub array: SharedId,
    pub indices: Vec<Expr>,
    pub span: Span,
}

/// A reference to one barrier of a group: `full[s]`, or `done` for a group of
/// one. `index` is `None` when the source wrote no index.
#[derive(Clone, Debug)]
pub struct BarrierRef {
    pub group: BarrierId,
    pub index: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct BarrierOp {
    pub kind: BarrierOpKind,
    pub barrier: BarrierRef,
    /// The span of the method name (`wait` in `full[s].wait()`).
    pub method_span: Span,
}

#[derive(Clone, Debug)]
pub enum BarrierOpKind {
    /// `arrive()` / `arrive(count)`
    Arrive { count: Option<Expr> },
    /// `arrive_expect_tx(bytes)`
    ArriveExpectTx { bytes: Expr },
    /// `expect_tx(bytes)`
    ExpectTx { bytes: Expr },
    /// `arrive_remote(rank)`
    ArriveRemote { rank: Expr },
    /// `wait(parity)` / `wait()`: acquire at CTA scope.
    Wait { parity: Parity },
    /// `wait_cluster(parity)` / `wait_cluster()`: acquire at cluster scope.
    /// A tracked parity is the same bit as `wait()`'s for that barrier.
    WaitCluster { parity: Parity },
}

impl BarrierOpKind {
    /// The method name as written in kdsl.
    pub fn method(&self) -> &'static str {
        match self {
            BarrierOpKind::Arrive { .. } => "arrive",
            BarrierOpKind::ArriveExpectTx { .. } => "arrive_expect_tx",
            BarrierOpKind::ExpectTx { .. } => "expect_tx",
            BarrierOpKind::ArriveRemote { .. } => "arrive_remote",
            BarrierOpKind::Wait { .. } => "wait",
            BarrierOpKind::WaitCluster { .. } => "wait_cluster",
        }
    }
}

/// An operation on one barrier of a named-barrier group: `ready.sync()`,
/// `stage[s].arrive()` (`index` is `None` when the source wrote none; the
/// checker accepts that only for a group of one).
#[derive(Clone, Debug)]
pub struct NamedBarrierOp {
    pub kind: NamedOpKind,
    pub group: NamedBarrierId,
    pub index: Option<Expr>,
    /// The barrier reference (`stage[s]`).
    pub span: Span,
    /// The span of the method name (`sync` in `ready.sync()`).
    pub method_span: Span,
}

/// What a thread does at a named barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NamedOpKind {
    /// `sync()`: arrive and wait until the phase completes (`bar.sync`).
    Sync,
    /// `arrive()`: arrive and go on (`bar.arrive`).
    Arrive,
}

impl NamedOpKind {
    /// The method name as written in kdsl.
    pub fn method(self) -> &'static str {
        match self {
            NamedOpKind::Sync => "sync",
            NamedOpKind::Arrive => "arrive",
        }
    }
}

/// The parity a wait or test is for.
#[derive(Clone, Debug)]
pub enum Parity {
    /// Written by the user: `wait(0)`, `wait(p)` (a `u32`, 0 or 1).
    Explicit(Expr),
    /// `wait()` / `test()` (and their `_cluster` forms): the compiler tracks
    /// it per barrier, per thread, starting at 0 and flipping after each
    /// completed wait/successful test, whichever form made it.
    Tracked,
}

/// A warp's matrix access (`ldmatrix`, `stmatrix`) of 8 x 8 matrices of
/// 16-bit elements: transposed or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Matrix {
    pub trans: bool,
}

impl Matrix {
    /// The elements of one row: 16 bytes, which a lane's address names.
    pub const ROW: u32 = 8;

    /// The type of a register of matrices of `elem`: two elements, as a
    /// pair (`f16x2`, `bf16x2`) or as the `u32` of their bits (`u16`,
    /// `i16`); `None` for an element type the instructions do not move.
    pub fn register(elem: Scalar) -> Option<Scalar> {
        match elem {
            Scalar::F16 | Scalar::BF16 => elem.pair_of(),
            Scalar::U16 | Scalar::I16 => Some(Scalar::U32),
            _ => None,
        }
    }
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

/// Built-in values (all `u32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    ThreadIdx(Dim),
    BlockDim(Dim),
    BlockIdx(Dim),
    GridDim(Dim),
    LaneId,
    /// The linear thread index in the CTA divided by 32 (not `%warpid`).
    WarpId,
    ClusterRank,
    ClusterSize,
    ClusterIdx(Dim),
    ClusterDim(Dim),
    /// This cluster's position in the grid, in clusters (`%clusterid`):
    /// the same in every CTA of a cluster.
    ClusterGridIdx(Dim),
    /// The grid's shape, in clusters (`%nclusterid`).
    ClusterGridDim(Dim),
    /// `lane_mask_lt()` and friends: `%lanemask_lt`, ...
    LaneMask(LaneMask),
}

/// Which lanes a [`Special::LaneMask`] sets, relative to the thread's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneMask {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl LaneMask {
    pub const ALL: [LaneMask; 5] = [
        LaneMask::Eq,
        LaneMask::Lt,
        LaneMask::Le,
        LaneMask::Gt,
        LaneMask::Ge,
    ];

    /// `eq`, `lt`, ...: the suffix of the built-in and of the register.
    pub fn name(self) -> &'static str {
        match self {
            LaneMask::Eq => "eq",
            LaneMask::Lt => "lt",
            LaneMask::Le => "le",
            LaneMask::Gt => "gt",
            LaneMask::Ge => "ge",
        }
    }

    /// The mask of lane `lane` (0–31).
    pub fn of_lane(self, lane: u32) -> u32 {
        let below = (1u32 << lane) - 1;
        let me = 1u32 << lane;
        match self {
            LaneMask::Eq => me,
            LaneMask::Lt => below,
            LaneMask::Le => below | me,
            LaneMask::Gt => !(below | me),
            LaneMask::Ge => !below,
        }
    }
}

impl Special {
    /// Needs sm_90 or newer (cluster registers).
    pub fn needs_cluster_hw(self) -> bool {
        matches!(
            self,
            Special::ClusterRank
                | Special::ClusterSize
                | Special::ClusterIdx(_)
                | Special::ClusterDim(_)
                | Special::ClusterGridIdx(_)
                | Special::ClusterGridDim(_)
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    Min,
    Max,
    Abs,
    Sqrt,
    Rsqrt,
    Exp2,
    Log2,
    Exp,
    Log,
    Sin,
    Cos,
    /// `fma(a, b, c)` = a * b + c, rounded once.
    Fma,
    /// `f16x2(lo, hi)`, `bf16x2(lo, hi)`: a packed pair (the expression's
    /// type) from two halves of its half type, moved, or from two `f32`s,
    /// each rounded once to nearest even (`cvt.rn.f16x2.f32`).
    Pack,
    /// `x.lo`, `x.hi`: the low or high half of a packed pair.
    Lo,
    Hi,
}

impl MathFn {
    /// The built-in's name (`fma`).
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Min => "min",
            MathFn::Max => "max",
            MathFn::Abs => "abs",
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Exp2 => "exp2",
            MathFn::Log2 => "log2",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Fma => "fma",
            MathFn::Pack => "pack",
            MathFn::Lo => "lo",
            MathFn::Hi => "hi",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    /// `old - v`: `atom.add` of the negation (PTX has no `atom.sub`).
    Sub,
    Max,
    Min,
    /// Stores `v`, returns the old value.
    Exch,
    And,
    Or,
    Xor,
    /// `u32` only: `old >= v ? 0 : old + 1` (`atom.inc.u32`).
    Inc,
    /// `u32` only: `old == 0 || old > v ? v : old - 1` (`atom.dec.u32`).
    Dec,
    /// `args = [compare, value]`.
    Cas,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 11] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Max,
        AtomicOp::Min,
        AtomicOp::Exch,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Cas,
    ];

    /// The built-in's name (`atomic_add`).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomic_add",
            AtomicOp::Sub => "atomic_sub",
            AtomicOp::Max => "atomic_max",
            AtomicOp::Min => "atomic_min",
            AtomicOp::Exch => "atomic_exch",
            AtomicOp::And => "atomic_and",
            AtomicOp::Or => "atomic_or",
            AtomicOp::Xor => "atomic_xor",
            AtomicOp::Inc => "atomic_inc",
            AtomicOp::Dec => "atomic_dec",
            AtomicOp::Cas => "atomic_cas",
        }
    }

    /// Whether the language has this atomic on elements of type `t`.
    pub fn accepts(self, t: crate::types::Scalar) -> bool {
        use crate::types::Scalar::*;
        let ints = matches!(t, U32 | I32 | U64 | I64);
        match self {
            AtomicOp::Add | AtomicOp::Sub => matches!(t, U32 | I32 | U64 | I64 | F32 | F64),
            AtomicOp::Exch => ints || matches!(t, F32 | F64),
            AtomicOp::Max | AtomicOp::Min | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => ints,
            // PTX has `atom.cas.b16` (no other narrow atomic).
            AtomicOp::Cas => ints || matches!(t, U16 | I16),
            AtomicOp::Inc | AtomicOp::Dec => t == U32,
        }
    }
}

/// The memory order of an atomic or fence (PTX's `.sem`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    /// Fences only (`fence.sc`).
    Sc,
}

impl MemOrder {
    pub const ALL: [MemOrder; 5] = [
        MemOrder::Relaxed,
        MemOrder::Acquire,
        MemOrder::Release,
        MemOrder::AcqRel,
        MemOrder::Sc,
    ];

    /// The word in kdsl and in PTX (`acq_rel`).
    pub fn name(self) -> &'static str {
        match self {
            MemOrder::Relaxed => "relaxed",
            MemOrder::Acquire => "acquire",
            MemOrder::Release => "release",
            MemOrder::AcqRel => "acq_rel",
            MemOrder::Sc => "sc",
        }
    }
}

/// The scope of an atomic or fence: the threads it is atomic or ordered
/// with respect to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemScope {
    Cta,
    /// sm_90 and newer.
    Cluster,
    Gpu,
    Sys,
}

impl MemScope {
    pub const ALL: [MemScope; 4] = [
        MemScope::Cta,
        MemScope::Cluster,
        MemScope::Gpu,
        MemScope::Sys,
    ];

    /// The word in kdsl and in PTX (`cluster`).
    pub fn name(self) -> &'static str {
        match self {
            MemScope::Cta => "cta",
            MemScope::Cluster => "cluster",
            MemScope::Gpu => "gpu",
            MemScope::Sys => "sys",
        }
    }
}

/// An order and a scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemSem {
    pub order: MemOrder,
    pub scope: MemScope,
}

impl MemSem {
    /// An atomic's default, like CUDA's `atomicAdd`: what PTX's `atom`
    /// without qualifiers means.
    pub const ATOMIC: MemSem = MemSem {
        order: MemOrder::Relaxed,
        scope: MemScope::Gpu,
    };
    /// `fence()`'s default: `fence.acq_rel.gpu` (CUDA's
    /// `__threadfence()`).
    pub const FENCE: MemSem = MemSem {
        order: MemOrder::AcqRel,
        scope: MemScope::Gpu,
    };
}

/// A warp-synchronous operation. The shuffles take `[value, lane]` and the
/// votes `[pred]`, each with an optional last argument: the `u32` mask of
/// the lanes taking part (every lane when absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpOp {
    ShflDown,
    ShflUp,
    ShflXor,
    ShflIdx,
    /// `ballot(pred) -> u32`
    Ballot,
    /// `any(pred) -> bool`
    Any,
    /// `all(pred) -> bool`
    All,
    /// `elect_one(mask?) -> bool`: true in exactly one lane of the mask
    /// (`[]` or `[mask]`).
    Elect,
    /// `active_mask() -> u32`: the lanes executing it (`[]`).
    ActiveMask,
    /// `redux_add(value, mask?)` ...: `value` combined over the lanes of
    /// the mask, the same result in each (`u32`/`i32`, `[value]` or
    /// `[value, mask]`).
    Redux(ReduxOp),
}

/// The operation of a warp reduction (`redux.sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl ReduxOp {
    /// PTX's name of the operation (`redux.sync.add`).
    pub fn ptx(self) -> &'static str {
        match self {
            ReduxOp::Add => "add",
            ReduxOp::Min => "min",
            ReduxOp::Max => "max",
            ReduxOp::And => "and",
            ReduxOp::Or => "or",
            ReduxOp::Xor => "xor",
        }
    }
}

impl WarpOp {
    /// The built-in's name (`shfl_xor`).
    pub fn name(self) -> &'static str {
        match self {
            WarpOp::ShflDown => "shfl_down",
            WarpOp::ShflUp => "shfl_up",
            WarpOp::ShflXor => "shfl_xor",
            WarpOp::ShflIdx => "shfl_idx",
            WarpOp::Ballot => "ballot",
            WarpOp::Any => "any",
            WarpOp::All => "all",
            WarpOp::Elect => "elect_one",
            WarpOp::ActiveMask => "active_mask",
            WarpOp::Redux(ReduxOp::Add) => "redux_add",
            WarpOp::Redux(ReduxOp::Min) => "redux_min",
            WarpOp::Redux(ReduxOp::Max) => "redux_max",
            WarpOp::Redux(ReduxOp::And) => "redux_and",
            WarpOp::Redux(ReduxOp::Or) => "redux_or",
            WarpOp::Redux(ReduxOp::Xor) => "redux_xor",
        }
    }

    /// The arguments before the optional mask.
    pub fn fixed_args(self) -> usize {
        match self {
            WarpOp::ShflDown | WarpOp::ShflUp | WarpOp::ShflXor | WarpOp::ShflIdx => 2,
            WarpOp::Ballot | WarpOp::Any | WarpOp::All | WarpOp::Redux(_) => 1,
            WarpOp::Elect | WarpOp::ActiveMask => 0,
        }
    }

    /// Whether a mask argument may follow the fixed ones.
    pub fn takes_mask(self) -> bool {
        self != WarpOp::ActiveMask
    }
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

/// The most bytes one vector access (`ld.v4`, `st.v2`, ...) moves.
pub const VECTOR_BYTES: u32 = 16;

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

#[cfg(test)]
mod size_tests {
    use super::*;

    #[test]
    fn exact_products_never_wrap() {
        assert_eq!(exact_product([]), "1");
        assert_eq!(exact_product([0, 5]), "0");
        assert_eq!(
            exact_product([4194304, 2097152, 2097152]),
            "18446744073709551616"
        );
        assert_eq!(
            exact_product([u64::MAX, u64::MAX]),
            "340282366920938463426481119284349108225"
        );
        assert_eq!(
            exact_product([1_000_000_000, 1_000_000_000]),
            "1000000000000000000"
        );
    }

    #[test]
    fn shared_sizes_are_checked() {
        let array = |dims: Vec<u64>| SharedArray {
            name: "a".into(),
            elem: Scalar::F64,
            dims,
            swizzle: Swizzle::None,
            span: Span::default(),
        };
        assert_eq!(array(vec![4, 8]).bytes(), 256);
        let wraps = array(vec![u64::from(u32::MAX), u64::from(u32::MAX)]);
        assert_eq!(wraps.bytes(), u64::MAX, "saturates");
        assert_eq!(wraps.bytes_text(), "147573952520956936200");
        let mut n = vec![2147483648];
        n.extend([2; 33]);
        assert_eq!(array(n.clone()).len(), u64::MAX, "saturates");
        assert!(!array(n).is_empty());
    }
}
