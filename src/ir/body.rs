//! Building a body: fresh ids for its nodes ([`Ids`]), new expressions,
//! statements and locals, renumbering a copied subtree, and dropping a
//! deep body on a large stack.

use super::{
    visit, visit_mut, Block, Body, Expr, ExprId, ExprKind, Local, LocalId, Stmt, StmtId, StmtKind,
};
use crate::span::Span;
use crate::types::Scalar;

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
