//! Small constructors the grammar's actions call, so that span arithmetic
//! lives in Rust rather than in `grammar/kdsl.lalrpop`.

use super::ast::{BinOp, Expr, ExprKind, Ident, IndexArg, TypeExpr, UnaryOp};
use super::number::Number;
use crate::span::Span;

pub fn binary(lhs: Expr, op: BinOp, op_span: Span, rhs: Expr) -> Expr {
    Expr {
        span: lhs.span.to(rhs.span),
        kind: ExprKind::Binary {
            op,
            op_span,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
    }
}

/// `start` is the (empty) span at the operator.
pub fn unary(start: Span, op: UnaryOp, operand: Expr) -> Expr {
    Expr {
        span: start.to(operand.span),
        kind: ExprKind::Unary {
            op,
            operand: Box::new(operand),
        },
    }
}

pub fn cast(expr: Expr, ty: TypeExpr) -> Expr {
    Expr {
        span: expr.span.to(ty.span),
        kind: ExprKind::Cast {
            expr: Box::new(expr),
            ty,
        },
    }
}

/// `index_span` covers `[` to `]`.
pub fn index(base: Expr, indices: Vec<IndexArg>, index_span: Span) -> Expr {
    Expr {
        span: base.span.to(index_span),
        kind: ExprKind::Index {
            base: Box::new(base),
            indices,
            index_span,
        },
    }
}

pub fn field(base: Expr, field: Ident) -> Expr {
    Expr {
        span: base.span.to(field.span),
        kind: ExprKind::Field {
            base: Box::new(base),
            field,
        },
    }
}

/// `end` is the (empty) span after the closing `)`.
pub fn method_call(receiver: Expr, method: Ident, args: Vec<Expr>, end: Span) -> Expr {
    Expr {
        span: receiver.span.to(end),
        kind: ExprKind::MethodCall {
            receiver: Box::new(receiver),
            method,
            args,
        },
    }
}

pub fn number(n: Number, span: Span) -> Expr {
    let kind = match n {
        Number::Int { value, suffix } => ExprKind::Int { value, suffix },
        Number::Float { value, suffix } => ExprKind::Float { value, suffix },
    };
    Expr { kind, span }
}
