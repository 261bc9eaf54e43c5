//! The PTX module as written: what the parser produces and the decoder
//! reads. Names stay strings here; the decoder resolves them once.

/// A byte range in the PTX text and the 1-based line it starts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub start: u32,
    pub end: u32,
    pub line: u32,
}

/// One `.loc FILE LINE COL` directive (with `inlined_at`, the call site).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub file: u32,
    pub line: u32,
    pub col: u32,
    /// `inlined_at FILE LINE COL`: where the inlined function was called.
    pub inlined_at: Option<(u32, u32, u32)>,
    /// The outermost call site of the chain of inlined functions the
    /// position is in: the line of the function itself (a helper inlined
    /// into a helper inlined into the kernel: the kernel's call).
    pub outermost: Option<(u32, u32, u32)>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub version: Option<(u32, u32)>,
    pub target: Option<String>,
    pub address_size: Option<u32>,
    /// `.file N "path"`.
    pub files: Vec<(u32, String)>,
    /// Module-scope `.global`/`.const`/`.shared` variables.
    pub vars: Vec<VarDecl>,
    pub functions: Vec<Function>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    Entry,
    Func,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub kind: FuncKind,
    pub params: Vec<VarDecl>,
    /// The return parameters of a `.func`.
    pub rets: Vec<VarDecl>,
    pub attrs: FuncAttrs,
    /// `None` for a prototype (`.func f(...);`, `.extern .func`).
    pub body: Option<Block>,
    pub pos: Pos,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct FuncAttrs {
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
    pub reqnctapercluster: Option<[u32; 3]>,
    pub explicitcluster: bool,
    pub maxclusterrank: Option<u32>,
    pub minnctapersm: Option<u32>,
    pub maxnreg: Option<u32>,
}

/// The state space of a variable or an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Reg,
    Param,
    Global,
    Const,
    Shared,
    Local,
}

#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    pub space: Space,
    pub name: String,
    /// The element type's name without its dot: `b8`, `u64`, `f32`, `pred`.
    pub ty: String,
    /// `.v2`/`.v4` element count (1 when not a vector).
    pub vector: u32,
    pub align: Option<u32>,
    /// Array dimensions; `Some(None)` is `[]` (an unsized `.extern` array).
    pub dims: Vec<Option<u64>>,
    /// `%r<N>`: declares `%r0` .. `%r(N-1)`.
    pub range: Option<u32>,
    /// The initialiser, flattened to element values.
    pub init: Vec<Imm>,
    pub is_extern: bool,
    pub pos: Pos,
}

/// An immediate value as written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Imm {
    /// An integer (negative ones wrap to two's complement).
    Int(u64),
    /// `0fXXXXXXXX`: the bits of an f32.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal `1.5`: the bits of an f64.
    F64(u64),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Var(VarDecl),
    Label(String, Pos),
    Inst(Instruction),
    Block(Block),
    Loc(Loc),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// `@%p` / `@!%p`.
    pub guard: Option<(String, bool)>,
    /// The opcode without modifiers: `ld`, `mbarrier`, `cp`.
    pub opcode: String,
    /// The modifiers in order, without their dots: `shared::cta`, `b64`.
    pub mods: Vec<String>,
    pub operands: Vec<Operand>,
    pub pos: Pos,
}

impl Instruction {
    /// The opcode as written, with its modifiers (`ld.global.f32`).
    pub fn full_name(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.mods {
            s.push('.');
            s.push_str(m);
        }
        s
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A register or a symbol name (`%r1`, `%tid.x`, `$s_buf`, a label).
    Name(String),
    /// `!%p`.
    Not(String),
    Imm(Imm),
    /// `sym+4` outside brackets.
    SymOffset(String, i64),
    /// `[base+offset]` / `[sym]` / `[imm]`.
    Addr(Address),
    /// `{a, b, ...}`.
    Vector(Vec<Operand>),
    /// `%r|%p`: a value and a predicate destination.
    Pair(String, String),
    /// `_`.
    Sink,
    /// `(a, b)`: a call's parameter list.
    List(Vec<Operand>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Address {
    /// A register or a symbol; `None` for an absolute `[imm]`.
    pub base: Option<String>,
    pub offset: i64,
}
