//! Blocks and `if`s as values: the branches of an `if` expression, a
//! function's body, and a block whose last statement is an `if`/`else` with
//! a value in every branch (`{ if c { a } else { b } }`), which is that
//! block's value, as in Rust, to any depth.
//!
//! Everything here borrows the tree: no node is copied or built on the fly,
//! so what the parser computed about each node (`ast::Block::value`,
//! `ast::Expr::untyped`) is simply read.

use super::body::BodyChecker;
use crate::ir::{self, Expr, ExprKind};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

/// What gives a value block its value.
#[derive(Clone, Copy, Debug)]
pub enum BlockValue<'a> {
    /// The final expression.
    Tail(&'a ast::Expr),
    /// The final `if`/`else` statement (every branch has a value).
    If(&'a ast::Stmt),
}

/// The `else` of an `if` used as a value.
#[derive(Clone, Copy, Debug)]
pub enum Else<'a> {
    Block(&'a ast::Block),
    /// `else if ...` of an `if` statement.
    If(&'a ast::Stmt),
}

impl Else<'_> {
    fn is_untyped(self) -> bool {
        match self {
            Else::Block(b) => b.value_is_untyped(),
            Else::If(s) => s.value.is_some_and(|v| v.untyped),
        }
    }
}

/// The statements of a value block and what gives its value, if anything.
pub fn split_value(b: &ast::Block) -> (&[ast::Stmt], Option<BlockValue<'_>>) {
    if let Some(tail) = b.tail.as_deref() {
        return (&b.stmts, Some(BlockValue::Tail(tail)));
    }
    match b.stmts.split_last() {
        Some((last, rest)) if last.value.is_some() => (rest, Some(BlockValue::If(last))),
        _ => (&b.stmts, None),
    }
}

impl BlockValue<'_> {
    pub fn span(self) -> Span {
        match self {
            BlockValue::Tail(e) => e.span,
            BlockValue::If(s) => s.span,
        }
    }
}

impl BodyChecker<'_> {
    /// A block that produces a value: its statements, then its value.
    pub fn value_block(
        &mut self,
        b: &ast::Block,
        expected: Option<Scalar>,
    ) -> Option<(ir::Block, Expr)> {
        self.push_scope();
        self.block_depth += 1;
        let mut stmts = Vec::new();
        let (body, value) = split_value(b);
        for s in body {
            self.stmt(s, &mut stmts);
        }
        let value = match value {
            Some(v) => self.block_value(v, expected),
            None => {
                let at = b.span.end_point();
                let span = Span {
                    start: at.start.saturating_sub(1),
                    ..at
                };
                self.mismatch_text(
                    expected.map_or("a value".to_string(), |t| t.to_string()),
                    "()",
                    span,
                );
                None
            }
        };
        self.block_depth -= 1;
        self.pop_scope();
        let block = ir::Block {
            stmts,
            span: b.span,
        };
        match value {
            Some(v) => Some((block, v)),
            None => {
                // Its statements checked: keep them for the barrier pass.
                self.orphan(block);
                None
            }
        }
    }

    /// Checks what gives a block its value; `expected` types untyped
    /// literals (it is not enforced here).
    pub fn block_value(&mut self, v: BlockValue<'_>, expected: Option<Scalar>) -> Option<Expr> {
        match v {
            BlockValue::Tail(e) => self.expr(e, expected),
            BlockValue::If(s) => self.if_stmt_value(s, expected),
        }
    }

    /// Checks a block's value and requires type `ty` (E0110 otherwise).
    pub fn block_value_as(&mut self, v: BlockValue<'_>, ty: Scalar) -> Option<Expr> {
        match v {
            BlockValue::Tail(e) => self.expr_as(e, ty),
            BlockValue::If(s) => {
                let value = self.if_stmt_value(s, Some(ty))?;
                if value.ty != ty {
                    self.mismatch_text(ty.to_string(), value.ty.to_string(), s.span);
                    return None;
                }
                Some(value)
            }
        }
    }

    /// An `if`/`else` statement that is its block's value.
    fn if_stmt_value(&mut self, s: &ast::Stmt, expected: Option<Scalar>) -> Option<Expr> {
        let ast::StmtKind::If {
            cond,
            then_block,
            else_branch: Some(else_branch),
        } = &s.kind
        else {
            return None;
        };
        let els = match else_branch {
            ast::ElseBranch::Block(b) => Else::Block(b),
            ast::ElseBranch::If(nested) => Else::If(nested),
        };
        self.if_value(cond, then_block, els, expected, s.span)
    }

    /// An `if` with a value in both branches (an `if` expression, or an
    /// `if` statement that is its block's value). An untyped literal branch
    /// takes the other branch's type.
    pub fn if_value(
        &mut self,
        cond: &ast::Expr,
        then_block: &ast::Block,
        els: Else<'_>,
        expected: Option<Scalar>,
        span: Span,
    ) -> Option<Expr> {
        let cond = self.expr_as(cond, Scalar::Bool);
        let (then, other) = if then_block.value_is_untyped() && !els.is_untyped() {
            let other = self.else_value(els, expected);
            let want = other.as_ref().map(|(_, v)| v.ty).or(expected);
            (self.value_block(then_block, want), other)
        } else {
            let then = self.value_block(then_block, expected);
            let want = then.as_ref().map(|(_, v)| v.ty).or(expected);
            (then, self.else_value(els, want))
        };
        let ((then_block, then_value), (else_block, else_value)) = match (then, other) {
            (Some(t), Some(e)) => (t, e),
            (t, e) => {
                // A branch that failed orphaned its own block; keep the
                // other one for the barrier pass.
                for (b, _) in [t, e].into_iter().flatten() {
                    self.orphan(b);
                }
                return None;
            }
        };
        if then_value.ty != else_value.ty {
            self.else_mismatch(then_value.ty, &else_value, els);
            self.orphan(then_block);
            self.orphan(else_block);
            return None;
        }
        let Some(cond) = cond else {
            self.orphan(then_block);
            self.orphan(else_block);
            return None;
        };
        let ty = then_value.ty;
        Some(Expr {
            kind: ExprKind::If {
                cond: Box::new(cond),
                then_block: Box::new(then_block),
                then_value: Box::new(then_value),
                else_block: Box::new(else_block),
                else_value: Box::new(else_value),
            },
            ty,
            span,
            id: self.ids.expr(),
        })
    }

    /// The `else` branch's block and value.
    fn else_value(&mut self, els: Else<'_>, expected: Option<Scalar>) -> Option<(ir::Block, Expr)> {
        match els {
            Else::Block(b) => self.value_block(b, expected),
            // `else if`: a block of its own (a scope), holding the nested `if`.
            Else::If(s) => {
                self.push_scope();
                self.block_depth += 1;
                let value = self.if_stmt_value(s, expected);
                self.block_depth -= 1;
                self.pop_scope();
                let block = ir::Block {
                    stmts: Vec::new(),
                    span: s.span,
                };
                Some((block, value?))
            }
        }
    }

    /// E0110 on the `else` branch's value, whose type differs from the
    /// `then` branch's.
    fn else_mismatch(&mut self, expected: Scalar, found: &Expr, els: Else<'_>) {
        let value = match els {
            Else::Block(b) => split_value(b).1,
            Else::If(s) => Some(BlockValue::If(s)),
        };
        match value {
            Some(BlockValue::Tail(e)) => self.mismatch(expected, found, e),
            Some(v) => self.mismatch_text(expected.to_string(), found.ty.to_string(), v.span()),
            None => self.mismatch_text(expected.to_string(), found.ty.to_string(), found.span),
        }
    }
}
