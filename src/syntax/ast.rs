//! The abstract syntax tree: what the parser produces, with a span on every
//! node. Names are not resolved and types are not checked here; that is the
//! job of [`crate::check`], which turns this tree into the IR.
//!
//! Error recovery: where the parser skipped over a syntax error it leaves an
//! `Error` node (`Item::Error`, `StmtKind::Error`, `ExprKind::Error`) so that
//! later stages can go on and report independent errors. Later stages must
//! treat an `Error` node silently (its error was already reported).

pub use super::number::FloatLit;
use crate::span::Span;

/// A name with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: std::sync::Arc<str>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct File {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Import(Import),
    Const(ConstItem),
    Fn(FnItem),
    Kernel(KernelItem),
    /// An item the parser could not make sense of (already reported).
    Error(Span),
}

/// `import "other.kdsl";`
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// The path as written, with escapes resolved.
    pub path: String,
    /// The span of the string literal.
    pub path_span: Span,
    pub span: Span,
}

/// `const NAME: T = expr;`
#[derive(Clone, Debug, PartialEq)]
pub struct ConstItem {
    pub name: Ident,
    pub ty: TypeExpr,
    pub value: Expr,
    pub span: Span,
}

/// `fn name(params) -> T { ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct FnItem {
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    pub span: Span,
}

/// `kernel name<const C: u32 = 1>(params) block(256) cluster(2) { ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct KernelItem {
    pub name: Ident,
    /// The kernel's compile-time constants (`<const BM: u32 = 128, ...>`),
    /// in order; empty without angle brackets.
    pub consts: Vec<KernelConst>,
    pub params: Vec<Param>,
    pub launch: Vec<LaunchAttr>,
    pub body: Block,
    pub span: Span,
}

/// `const BM: u32 = 128` or `const ELEM: type = bf16` in a kernel's angle
/// brackets: a compile-time parameter with its default. The type is any
/// written type (the checker takes the integers, `bool` and the word
/// `type`); a `type` constant's default is a type name, read as a name.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelConst {
    pub name: Ident,
    pub ty: TypeExpr,
    pub default: Expr,
    pub span: Span,
}

/// `block(16, 16)`: any identifier followed by arguments; the checker knows
/// `block` and `cluster` and reports anything else (E0120).
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchAttr {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub kind: TypeExprKind,
    pub span: Span,
    /// Nesting levels in this type, itself included ([`super::depth`]).
    pub depth: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// A scalar type name (`f32`); the checker rejects unknown names (E0100).
    Named(Ident),
    /// `global [T]` or `global mut [T]`.
    Global { mutable: bool, elem: Box<TypeExpr> },
    /// `tensor [T; b0, b1, ...] fill(nan) l2(128)` (or `tensor mut [...]`):
    /// a tensor-map parameter with its box, outermost first. `word` is the
    /// word before the brackets, which the checker wants to be `tensor`
    /// (the grammar takes any, so that `tensor` stays an ordinary name
    /// everywhere else).
    Tensor {
        word: Ident,
        mutable: bool,
        elem: Box<TypeExpr>,
        dims: Vec<Expr>,
        clauses: Vec<Clause>,
    },
    /// `[T; d0, d1, ...]`: a register array, the type of a `let` only
    /// (the checker reports it anywhere else, E0444).
    Array {
        elem: Box<TypeExpr>,
        dims: Vec<Expr>,
    },
    /// A type the parser gave up on (already reported: E0124).
    Error,
}

/// `{ stmt* tail? }`. The tail is a final expression without `;`, which
/// makes the block produce a value (the branches of an if-expression, a
/// function body). In a statement-only context a tail is a type error.
///
/// A block whose last statement is an `if`/`else` with a value in every
/// branch (`{ if c { a } else { b } }`) has that `if` as its value, as in
/// Rust: see [`Block::value`].
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    pub span: Span,
    /// The deepest nesting among its statements and tail (a block adds no
    /// level of its own: it always stands in a statement or expression).
    pub depth: u32,
    /// What the block's value is, when it has one.
    pub value: Option<ValueFacts>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
    /// Nesting levels in this statement, itself included ([`super::depth`]).
    pub depth: u32,
    /// For an `if`/`else` statement with a value in every branch (so that it
    /// can be its block's value): what that value is. `None` otherwise.
    pub value: Option<ValueFacts>,
}

/// What the parser knows about a value before any name is resolved.
///
/// These are properties of the syntax alone, computed once when a node is
/// built (bottom-up, from its children's), so that the checker can ask them
/// in constant time and every answer is the same on every run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueFacts {
    /// The value is an *untyped literal expression*: made only of
    /// unsuffixed literals, parentheses, negation, arithmetic and bitwise
    /// operators and `if`s whose branch values are such expressions (`1`,
    /// `-2.0`, `(3 + 4)`, `if c { 1 } else { 2 }`). Its type comes from the
    /// context or the other operand.
    pub untyped: bool,
}

/// An attribute on a loop: `#[name]` or `#[name(arg)]` (only `unroll` is
/// known; the checker says so).
#[derive(Clone, Debug, PartialEq)]
pub struct LoopAttr {
    pub name: Ident,
    pub arg: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let mut? name (: T)? = init;`
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<Box<TypeExpr>>,
        init: Box<Expr>,
    },
    /// `let mut? name (: [T; d0, ...])? = [v; d0, ...];` or `= [a, b, c];`:
    /// a register array. `let name: [T; d0, ...];` (a C-style declaration
    /// without a value, E0442) has no `init`.
    LetArray {
        mutable: bool,
        name: Ident,
        ty: Option<Box<TypeExpr>>,
        init: Option<Box<ArrayValue>>,
    },
    /// `let (a, mut b, ...) = init;`: binds the values of a vector load
    /// (`load2`, `load4`), one name each. `pattern` is the `( ... )`.
    LetTuple {
        names: Vec<LetName>,
        pattern: Span,
        init: Box<Expr>,
    },
    /// `place = value;` or `place op= value;`. The place is any expression;
    /// the checker accepts a variable or an indexed array (`x`, `a[i]`,
    /// `tile[s, i]`, `remote(peer, 0)[0]`).
    Assign {
        place: Box<Expr>,
        /// `None` for `=`, the operator of a compound assignment otherwise.
        op: Option<BinOp>,
        /// The span of the `=` / `+=` token.
        op_span: Span,
        value: Box<Expr>,
    },
    /// `if cond { ... } else ...`
    If {
        cond: Box<Expr>,
        then_block: Box<Block>,
        else_branch: Option<ElseBranch>,
    },
    While {
        cond: Box<Expr>,
        body: Box<Block>,
    },
    /// `for var in start..end step s { ... }`, with an optional
    /// `#[unroll]`/`#[unroll(N)]` before it.
    For {
        var: Ident,
        start: Box<Expr>,
        end: Box<Expr>,
        step: Option<Box<Expr>>,
        body: Box<Block>,
        hint: Option<Box<LoopAttr>>,
    },
    /// `for var in [c0, c1, ...] { ... }`: the body once per constant,
    /// unrolled at compile time (`items_span` is the bracketed list).
    ForList {
        var: Ident,
        items: Vec<Expr>,
        items_span: Span,
        body: Box<Block>,
    },
    Break,
    Continue,
    Return(Option<Box<Expr>>),
    /// `expr;` (calls and barrier operations).
    Expr(Box<Expr>),
    /// `shared name: [T; d0, d1, ...] swizzle(128);`
    Shared {
        name: Ident,
        elem: Box<TypeExpr>,
        dims: Vec<Expr>,
        /// `swizzle(...)` and whatever else follows the brackets.
        clauses: Vec<Clause>,
    },
    /// `barrier name[count]: scope(arg = value);`
    Barrier(Box<BarrierDecl>),
    /// `accum name: [T; 64, N];`: a warpgroup's accumulator in registers.
    Accum {
        name: Ident,
        elem: Box<TypeExpr>,
        dims: Vec<Expr>,
    },
    /// A statement the parser skipped (already reported).
    Error,
}

/// The value of a register array: `[v; d0, d1]` (every element `v`) or
/// `[a, b, c, d]` (each element, row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    pub kind: ArrayValueKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ArrayValueKind {
    /// `[a, b, c]`: the elements in row-major order.
    List(Vec<Expr>),
    /// `[v; d0, d1, ...]`: `v` in every element of that shape.
    Repeat { value: Box<Expr>, dims: Vec<Expr> },
}

impl ArrayValue {
    /// The deepest nesting among its expressions.
    pub fn depth(&self) -> u32 {
        let max = |es: &[Expr]| es.iter().map(|e| e.depth).max().unwrap_or(0);
        match &self.kind {
            ArrayValueKind::List(items) => max(items),
            ArrayValueKind::Repeat { value, dims } => value.depth.max(max(dims)),
        }
    }
}

/// One name of a `let ( ... )` pattern, `mut` or not.
#[derive(Clone, Debug, PartialEq)]
pub struct LetName {
    pub mutable: bool,
    pub name: Ident,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ElseBranch {
    Block(Box<Block>),
    /// `else if ...`: the nested `if` statement.
    If(Box<Stmt>),
}

/// `barrier full[2]: cta(arrivals = 1);`
#[derive(Clone, Debug, PartialEq)]
pub struct BarrierDecl {
    pub name: Ident,
    /// The `[count]`, if written.
    pub count: Option<Expr>,
    /// The scope identifier (`cta`, `cluster`; anything else is E0302).
    pub scope: Ident,
    /// The argument's name (must be `arrivals`).
    pub arg_name: Ident,
    pub arrivals: Expr,
    /// `guards(sa, sb)` and whatever else follows the scope.
    pub clauses: Vec<Clause>,
}

/// `name(arg, ...)` after a declaration or a tensor type: `swizzle(128)`,
/// `guards(sa, sb)`, `fill(nan)`, `l2(128)`. The grammar takes any name
/// and arguments; the checker knows which clauses each place has.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub name: Ident,
    pub args: Vec<Expr>,
    pub span: Span,
}

impl Clause {
    /// The deepest nesting among its arguments.
    pub fn depth(&self) -> u32 {
        self.args.iter().map(|e| e.depth).max().unwrap_or(0)
    }
}

/// The operators are the IR's too: one definition ([`crate::operator`]).
pub use crate::operator::{BinOp, UnaryOp};

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Nesting levels in this expression, itself included ([`super::depth`]).
    pub depth: u32,
    /// True for an untyped literal expression ([`ValueFacts::untyped`]).
    pub untyped: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal; `value` is exact (the lexer rejects suffixed
    /// values over `u64::MAX`), `suffix` the written type suffix, if any.
    Int {
        value: u64,
        suffix: Option<crate::types::Scalar>,
    },
    /// An unsuffixed integer literal over `u64::MAX`, which only a float
    /// context can take; kept like a float literal ([`FloatLit`]).
    WideInt(FloatLit),
    /// A float literal; `value` keeps it exactly enough to round it once
    /// to its type (see [`FloatLit`]), `suffix` the written suffix.
    Float {
        value: FloatLit,
        suffix: Option<crate::types::Scalar>,
    },
    Bool(bool),
    /// A name: variable, parameter, constant, built-in value, shared array
    /// or barrier group.
    Name(Ident),
    /// `base.field` (`thread_idx.x`).
    Field {
        base: Box<Expr>,
        field: Ident,
    },
    /// `base[i, j]` or `full[0..2]`.
    Index {
        base: Box<Expr>,
        indices: Vec<IndexArg>,
        /// The span of the bracketed index list, `[` to `]`.
        index_span: Span,
    },
    /// `name(args)`: a device function or a built-in function. `args` are
    /// the positional arguments, `named` the `name = value` ones, which
    /// the atomics and `fence` take (`atomic_add(x[i], v, order =
    /// acquire)`), and parameters with defaults (`mask = m`); the checker
    /// reports them anywhere else (E0140). Boxed,
    /// and `None` when there are none (nearly always), so that a call is no
    /// larger than a method call and `Expr` does not grow for them.
    Call {
        callee: Ident,
        args: Vec<Expr>,
        named: NamedArgs,
    },
    /// `receiver.method(args)`: barrier operations (`full[s].wait()`).
    MethodCall {
        receiver: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinOp,
        /// The operator token's span.
        op_span: Span,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `expr as T`
    Cast {
        expr: Box<Expr>,
        ty: TypeExpr,
    },
    /// `if cond { a } else { b }` in expression position. `else if` is an
    /// else block whose tail is another `If`.
    If {
        cond: Box<Expr>,
        then_block: Box<Block>,
        else_block: Box<Block>,
    },
    /// `( expr )`, kept so spans and fix-its can see the parentheses.
    Paren(Box<Expr>),
    /// An expression the parser skipped (already reported).
    Error,
}

/// A call's `name = value` arguments: `None` when it has none.
pub type NamedArgs = Option<Box<Vec<NamedArg>>>;

/// The named arguments as a slice.
pub fn named_args(named: &NamedArgs) -> &[NamedArg] {
    named.as_deref().map_or(&[], Vec::as_slice)
}

/// A `name = value` argument of a call.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedArg {
    pub name: Ident,
    pub value: Expr,
    /// How many positional arguments come before it in the source: fewer
    /// than the call's count means a positional argument follows it
    /// (E0140).
    pub position: usize,
}

impl NamedArg {
    /// `name = value`.
    pub fn span(&self) -> Span {
        self.name.span.to(self.value.span)
    }
}

/// One argument of a call as the parser reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum CallArg {
    Positional(Expr),
    Named(Ident, Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub enum IndexArg {
    Expr(Expr),
    /// `lo..hi`, `..hi`, `lo..`, `..`: only meaningful to report E0304.
    Range {
        lo: Option<Expr>,
        hi: Option<Expr>,
        span: Span,
    },
}

impl IndexArg {
    pub fn span(&self) -> Span {
        match self {
            IndexArg::Expr(e) => e.span,
            IndexArg::Range { span, .. } => *span,
        }
    }
}

// ---- constructors: every node is built through these, so that its depth
// and value facts are always those of its children.

impl TypeExpr {
    pub fn new(kind: TypeExprKind, span: Span) -> TypeExpr {
        let depth = match &kind {
            TypeExprKind::Named(_) | TypeExprKind::Error => 0,
            TypeExprKind::Global { elem, .. } => elem.depth,
            TypeExprKind::Array { elem, dims } => {
                dims.iter().map(|e| e.depth).fold(elem.depth, u32::max)
            }
            TypeExprKind::Tensor {
                elem,
                dims,
                clauses,
                ..
            } => dims
                .iter()
                .map(|e| e.depth)
                .chain(clauses.iter().map(Clause::depth))
                .fold(elem.depth, u32::max),
        };
        TypeExpr {
            kind,
            span,
            depth: depth.saturating_add(1),
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let depth = kind.child_depth().saturating_add(1);
        let untyped = kind.is_untyped();
        Expr {
            kind,
            span,
            depth,
            untyped,
        }
    }

    /// The stand-in for an expression that could not be parsed.
    pub fn error(span: Span) -> Expr {
        Expr::new(ExprKind::Error, span)
    }
}

impl ExprKind {
    /// The deepest nesting among the children.
    fn child_depth(&self) -> u32 {
        let d = |e: &Expr| e.depth;
        let max_of = |es: &[Expr]| es.iter().map(d).max().unwrap_or(0);
        match self {
            ExprKind::Int { .. }
            | ExprKind::Float { .. }
            | ExprKind::WideInt(_)
            | ExprKind::Bool(_)
            | ExprKind::Name(_)
            | ExprKind::Error => 0,
            ExprKind::Field { base, .. } => base.depth,
            ExprKind::Index { base, indices, .. } => indices
                .iter()
                .map(IndexArg::depth)
                .fold(base.depth, u32::max),
            ExprKind::Call { args, named, .. } => named_args(named)
                .iter()
                .map(|n| n.value.depth)
                .fold(max_of(args), u32::max),
            ExprKind::MethodCall { receiver, args, .. } => receiver.depth.max(max_of(args)),
            ExprKind::Unary { operand, .. } => operand.depth,
            ExprKind::Binary { lhs, rhs, .. } => lhs.depth.max(rhs.depth),
            ExprKind::Cast { expr, ty } => expr.depth.max(ty.depth),
            ExprKind::If {
                cond,
                then_block,
                else_block,
            } => cond.depth.max(then_block.depth).max(else_block.depth),
            ExprKind::Paren(inner) => inner.depth,
        }
    }

    /// [`ValueFacts::untyped`], from the children's facts.
    fn is_untyped(&self) -> bool {
        match self {
            ExprKind::Int { suffix, .. } | ExprKind::Float { suffix, .. } => suffix.is_none(),
            ExprKind::WideInt(_) => true,
            ExprKind::Paren(inner) => inner.untyped,
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => operand.untyped,
            ExprKind::Binary { op, lhs, rhs, .. } if !op.is_comparison() && !op.is_logical() => {
                lhs.untyped && rhs.untyped
            }
            ExprKind::If {
                then_block,
                else_block,
                ..
            } => then_block.value_is_untyped() && else_block.value_is_untyped(),
            _ => false,
        }
    }
}

impl IndexArg {
    fn depth(&self) -> u32 {
        match self {
            IndexArg::Expr(e) => e.depth,
            IndexArg::Range { lo, hi, .. } => {
                let d = |e: &Option<Expr>| e.as_ref().map_or(0, |e| e.depth);
                d(lo).max(d(hi))
            }
        }
    }
}

impl Block {
    pub fn new(mut stmts: Vec<Stmt>, tail: Option<Box<Expr>>, span: Span) -> Block {
        // Built by pushing: drop the doubling slack (most blocks are short,
        // and a large file has hundreds of thousands of them).
        stmts.shrink_to_fit();
        let depth = stmts
            .iter()
            .map(|s| s.depth)
            .chain(tail.as_deref().map(|t| t.depth))
            .max()
            .unwrap_or(0);
        let value = match tail.as_deref() {
            Some(t) => Some(ValueFacts { untyped: t.untyped }),
            None => stmts.last().and_then(|s| s.value),
        };
        Block {
            stmts,
            tail,
            span,
            depth,
            value,
        }
    }

    /// True when the block's value is an untyped literal expression.
    pub fn value_is_untyped(&self) -> bool {
        self.value.is_some_and(|v| v.untyped)
    }
}

impl Stmt {
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        let depth = kind.child_depth().saturating_add(1);
        let value = match &kind {
            StmtKind::If {
                then_block,
                else_branch: Some(else_branch),
                ..
            } => {
                let else_value = match else_branch {
                    ElseBranch::Block(b) => b.value,
                    ElseBranch::If(s) => s.value,
                };
                then_block.value.zip(else_value).map(|(t, e)| ValueFacts {
                    untyped: t.untyped && e.untyped,
                })
            }
            _ => None,
        };
        Stmt {
            kind,
            span,
            depth,
            value,
        }
    }

    /// The stand-in for a statement that could not be parsed.
    pub fn error(span: Span) -> Stmt {
        Stmt::new(StmtKind::Error, span)
    }
}

impl StmtKind {
    /// The deepest nesting among the children.
    fn child_depth(&self) -> u32 {
        let d = |e: &Expr| e.depth;
        let opt = |e: Option<&Expr>| e.map_or(0, d);
        match self {
            StmtKind::Let { ty, init, .. } => init.depth.max(ty.as_ref().map_or(0, |t| t.depth)),
            StmtKind::LetArray { ty, init, .. } => ty
                .as_ref()
                .map_or(0, |t| t.depth)
                .max(init.as_ref().map_or(0, |v| v.depth())),
            StmtKind::LetTuple { init, .. } => init.depth,
            StmtKind::Assign { place, value, .. } => place.depth.max(value.depth),
            StmtKind::If {
                cond,
                then_block,
                else_branch,
            } => {
                let else_depth = match else_branch {
                    None => 0,
                    Some(ElseBranch::Block(b)) => b.depth,
                    Some(ElseBranch::If(s)) => s.depth,
                };
                cond.depth.max(then_block.depth).max(else_depth)
            }
            StmtKind::While { cond, body } => cond.depth.max(body.depth),
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => start
                .depth
                .max(end.depth)
                .max(opt(step.as_deref()))
                .max(body.depth),
            StmtKind::ForList { items, body, .. } => items
                .iter()
                .map(|e| e.depth)
                .max()
                .unwrap_or(0)
                .max(body.depth),
            StmtKind::Break | StmtKind::Continue | StmtKind::Error => 0,
            StmtKind::Return(value) => opt(value.as_deref()),
            StmtKind::Expr(e) => e.depth,
            StmtKind::Shared {
                elem,
                dims,
                clauses,
                ..
            } => dims
                .iter()
                .map(d)
                .chain(clauses.iter().map(Clause::depth))
                .fold(elem.depth, u32::max),
            StmtKind::Barrier(decl) => opt(decl.count.as_ref())
                .max(decl.arrivals.depth)
                .max(decl.clauses.iter().map(Clause::depth).max().unwrap_or(0)),
            StmtKind::Accum { elem, dims, .. } => dims.iter().map(d).fold(elem.depth, u32::max),
        }
    }
}

impl File {
    /// The deepest nesting in the file ([`super::depth`]).
    pub fn depth(&self) -> u32 {
        self.items.iter().map(Item::depth).max().unwrap_or(0)
    }
}

impl Item {
    /// The deepest nesting in the item ([`super::depth`]).
    pub fn depth(&self) -> u32 {
        let exprs = |es: &[Expr]| es.iter().map(|e| e.depth).max().unwrap_or(0);
        let params = |ps: &[Param]| ps.iter().map(|p| p.ty.depth).max().unwrap_or(0);
        match self {
            Item::Import(_) | Item::Error(_) => 0,
            Item::Const(c) => c.value.depth.max(c.ty.depth),
            Item::Fn(f) => f
                .body
                .depth
                .max(params(&f.params))
                .max(f.ret.as_ref().map_or(0, |t| t.depth)),
            Item::Kernel(k) => k
                .body
                .depth
                .max(params(&k.params))
                .max(
                    k.consts
                        .iter()
                        .map(|c| c.default.depth.max(c.ty.depth))
                        .max()
                        .unwrap_or(0),
                )
                .max(k.launch.iter().map(|l| exprs(&l.args)).max().unwrap_or(0)),
        }
    }
}

/// Dropping a tree recurses as deep as it nests: a deep one is dropped on
/// the large stack that compiled it ([`crate::stack`]), whatever thread lets
/// it go.
impl Drop for File {
    fn drop(&mut self) {
        if self.depth() > crate::stack::SHALLOW {
            let items = std::mem::take(&mut self.items);
            crate::stack::with_big_stack(move || drop(items));
        }
    }
}
