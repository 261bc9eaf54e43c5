//! Small constructors the grammar's actions call, so that span arithmetic
//! lives in Rust rather than in `grammar/kdsl.lalrpop`.

use super::ast::{
    BinOp, Block, CallArg, Expr, ExprKind, Ident, IndexArg, NamedArg, TypeExpr, UnaryOp,
};
use super::number::Number;
use crate::span::Span;

pub fn binary(lhs: Expr, op: BinOp, op_span: Span, rhs: Expr) -> Expr {
    let span = lhs.span.to(rhs.span);
    Expr::new(
        ExprKind::Binary {
            op,
            op_span,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        span,
    )
}

/// `start` is the (empty) span at the operator.
pub fn unary(start: Span, op: UnaryOp, operand: Expr) -> Expr {
    let span = start.to(operand.span);
    Expr::new(
        ExprKind::Unary {
            op,
            operand: Box::new(operand),
        },
        span,
    )
}

/// C's `c ? a : b` as the `if c { a } else { b }` it means (the parser
/// reports it too).
pub fn ternary(cond: Expr, a: Expr, b: Expr) -> Expr {
    let span = cond.span.to(b.span);
    let (a_span, b_span) = (a.span, b.span);
    Expr::new(
        ExprKind::If {
            cond: Box::new(cond),
            then_block: Box::new(Block::new(Vec::new(), Some(Box::new(a)), a_span)),
            else_block: Box::new(Block::new(Vec::new(), Some(Box::new(b)), b_span)),
        },
        span,
    )
}

pub fn cast(expr: Expr, ty: TypeExpr) -> Expr {
    let span = expr.span.to(ty.span);
    Expr::new(
        ExprKind::Cast {
            expr: Box::new(expr),
            ty,
        },
        span,
    )
}

/// `index_span` covers `[` to `]`.
pub fn index(base: Expr, mut indices: Vec<IndexArg>, index_span: Span) -> Expr {
    // Usually one index, in a list grown with capacity 4.
    indices.shrink_to_fit();
    let span = base.span.to(index_span);
    Expr::new(
        ExprKind::Index {
            base: Box::new(base),
            indices,
            index_span,
        },
        span,
    )
}

pub fn field(base: Expr, field: Ident) -> Expr {
    let span = base.span.to(field.span);
    Expr::new(
        ExprKind::Field {
            base: Box::new(base),
            field,
        },
        span,
    )
}

/// `end` is the (empty) span after the closing `)`.
pub fn method_call(receiver: Expr, method: Ident, args: Vec<Expr>, end: Span) -> Expr {
    let span = receiver.span.to(end);
    Expr::new(
        ExprKind::MethodCall {
            receiver: Box::new(receiver),
            method,
            args,
        },
        span,
    )
}

/// `callee(args)`: positional and `name = value` arguments apart, each
/// named one knowing how many positional ones came before it.
pub fn call(callee: Ident, list: Vec<CallArg>, span: Span) -> Expr {
    let mut args = Vec::new();
    let mut named = Vec::new();
    for a in list {
        match a {
            CallArg::Positional(e) => args.push(e),
            CallArg::Named(name, value) => named.push(NamedArg {
                name,
                value,
                position: args.len(),
            }),
        }
    }
    Expr::new(
        ExprKind::Call {
            callee,
            args,
            named: (!named.is_empty()).then(|| Box::new(named)),
        },
        span,
    )
}

pub fn number(n: Number, span: Span) -> Expr {
    let kind = match n {
        Number::Int { value, suffix } => ExprKind::Int { value, suffix },
        Number::Float { value, suffix } => ExprKind::Float { value, suffix },
        Number::WideInt(value) => ExprKind::WideInt(value),
        Number::Invalid => ExprKind::Error,
    };
    Expr::new(kind, span)
}
