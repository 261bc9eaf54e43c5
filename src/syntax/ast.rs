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
    pub name: String,
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

/// `kernel name(params) block(256) cluster(2) { ... }`
#[derive(Clone, Debug, PartialEq)]
pub struct KernelItem {
    pub name: Ident,
    pub params: Vec<Param>,
    pub launch: Vec<LaunchAttr>,
    pub body: Block,
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
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// A scalar type name (`f32`); the checker rejects unknown names (E0100).
    Named(Ident),
    /// `global [T]` or `global mut [T]`.
    Global { mutable: bool, elem: Box<TypeExpr> },
}

/// `{ stmt* tail? }`. The tail is a final expression without `;`, which
/// makes the block produce a value (the branches of an if-expression, a
/// function body). In a statement-only context a tail is a type error.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `let mut? name (: T)? = init;`
    Let {
        mutable: bool,
        name: Ident,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    /// `place = value;` or `place op= value;`. The place is any expression;
    /// the checker accepts a variable or an indexed array (`x`, `a[i]`,
    /// `tile[s, i]`, `remote(peer, 0)[0]`).
    Assign {
        place: Expr,
        /// `None` for `=`, the operator of a compound assignment otherwise.
        op: Option<BinOp>,
        /// The span of the `=` / `+=` token.
        op_span: Span,
        value: Expr,
    },
    /// `if cond { ... } else ...`
    If {
        cond: Expr,
        then_block: Block,
        else_branch: Option<ElseBranch>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    /// `for var in start..end step s { ... }`
    For {
        var: Ident,
        start: Expr,
        end: Expr,
        step: Option<Expr>,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// `expr;` (calls and barrier operations).
    Expr(Expr),
    /// `shared name: [T; d0, d1, ...];`
    Shared {
        name: Ident,
        elem: TypeExpr,
        dims: Vec<Expr>,
    },
    /// `barrier name[count]: scope(arg = value);`
    Barrier(BarrierDecl),
    /// A statement the parser skipped (already reported).
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ElseBranch {
    Block(Block),
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&`, short-circuit.
    And,
    /// `||`, short-circuit.
    Or,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }

    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }

    pub fn is_bitwise(self) -> bool {
        matches!(self, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x`: logical not on `bool`, bitwise not on integers.
    Not,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal; `value` is exact (the lexer rejects values over
    /// `u64::MAX`), `suffix` the written type suffix, if any.
    Int {
        value: u64,
        suffix: Option<crate::types::Scalar>,
    },
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
    /// `name(args)`: a device function or a built-in function.
    Call {
        callee: Ident,
        args: Vec<Expr>,
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
        then_block: Block,
        else_block: Block,
    },
    /// `( expr )`, kept so spans and fix-its can see the parentheses.
    Paren(Box<Expr>),
    /// An expression the parser skipped (already reported).
    Error,
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
