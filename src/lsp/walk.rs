//! A walk over every node of an IR body that hover can describe:
//! expressions, memory places, barrier references and the names of barrier
//! operations.

use crate::ir::visit::{self, Visit};
use crate::ir::{
    BarrierRef, Body, Expr, ExprKind, Function, Kernel, Module, Parity, Place, Scope, Stmt,
    StmtKind,
};
use crate::span::Span;

/// The kernel or function a node is in (for its locals, parameters, shared
/// arrays and barrier groups).
#[derive(Clone, Copy)]
pub enum Owner<'m> {
    Kernel(&'m Kernel),
    Function(&'m Function),
}

impl<'m> Owner<'m> {
    pub fn body(self) -> &'m Body {
        match self {
            Owner::Kernel(k) => &k.body,
            Owner::Function(f) => &f.body,
        }
    }

    pub fn kernel(self) -> Option<&'m Kernel> {
        match self {
            Owner::Kernel(k) => Some(k),
            Owner::Function(_) => None,
        }
    }
}

#[derive(Clone, Copy)]
pub enum Node<'m> {
    Expr(&'m Expr),
    Place(&'m Place),
    Barrier(&'m BarrierRef),
    /// The method name of a barrier operation (`wait` in `full[s].wait()`),
    /// and whether its parity is tracked (for `wait`/`test` and their
    /// `_cluster` forms).
    Operation {
        method: &'static str,
        span: Span,
        tracked: Option<bool>,
    },
}

/// Calls `f` on every node of every kernel and function of `module`, each
/// before the nodes inside it.
pub fn module<'m>(module: &'m Module, f: &mut dyn FnMut(Owner<'m>, Node<'m>)) {
    let owners = (module.kernels.iter().map(Owner::Kernel))
        .chain(module.functions.iter().map(Owner::Function));
    for owner in owners {
        let mut each = Each {
            f: &mut |n| f(owner, n),
        };
        each.visit_block(&owner.body().block);
    }
}

/// Hands every expression, place and barrier reference to `f`.
struct Each<'f, 'm> {
    f: &'f mut dyn FnMut(Node<'m>),
}

fn tracked(p: &Parity) -> Option<bool> {
    Some(matches!(p, Parity::Tracked))
}

impl<'m> Visit<'m> for Each<'_, 'm> {
    fn visit_stmt(&mut self, s: &'m Stmt) {
        if let StmtKind::Barrier(op) = &s.kind {
            let tracked = match &op.kind {
                crate::ir::BarrierOpKind::Wait { parity }
                | crate::ir::BarrierOpKind::WaitCluster { parity } => tracked(parity),
                _ => None,
            };
            (self.f)(Node::Operation {
                method: op.kind.method(),
                span: op.method_span,
                tracked,
            });
        }
        visit::walk_stmt(self, s);
    }

    fn visit_expr(&mut self, e: &'m Expr) {
        (self.f)(Node::Expr(e));
        if let ExprKind::BarrierTest {
            parity,
            acquire,
            method_span,
            ..
        } = &e.kind
        {
            (self.f)(Node::Operation {
                method: match acquire {
                    Scope::Cta => "test",
                    Scope::Cluster => "test_cluster",
                },
                span: *method_span,
                tracked: tracked(parity),
            });
        }
        visit::walk_expr(self, e);
    }

    fn visit_place(&mut self, p: &'m Place) {
        (self.f)(Node::Place(p));
        visit::walk_place(self, p);
    }

    fn visit_barrier_ref(&mut self, r: &'m BarrierRef) {
        (self.f)(Node::Barrier(r));
        visit::walk_barrier_ref(self, r);
    }
}
