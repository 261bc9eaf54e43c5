//! The unrolling of loops over constant lists (`for d in [16u32, 8, 4]`):
//! not a pass that `--passes` can switch off but the language's meaning
//! (each run of the body sees its element as a constant, an immediate in
//! the PTX), so [`super::run`] does it first, before any pass, and the PTX
//! writer never sees a [`StmtKind::ForList`]. Each element gets a copy of
//! the body, in order, with the loop variable replaced by the element and
//! every local the body declares fresh ([`rewrite::copy_block_with`]);
//! the checker bounds how much that makes (E0162).

use super::rewrite;
use crate::ir::visit_mut::{self, VisitMut};
use crate::ir::{Block, Body, Module, Stmt, StmtKind};

/// Unrolls every loop over a constant list of `module`; whether there was
/// one.
pub fn run(module: &mut Module) -> bool {
    let mut changed = false;
    let bodies = module
        .kernels
        .iter_mut()
        .map(|k| &mut k.body)
        .chain(module.functions.iter_mut().map(|f| &mut f.body));
    for body in bodies {
        let mut block = std::mem::take(&mut body.block);
        changed |= lower_block(body, &mut block);
        body.block = block;
    }
    changed
}

/// Unrolls the loops over lists in `b` and in every block nested in it
/// (a loop's own body first, so that its copies are copies of what is
/// already unrolled).
fn lower_block(body: &mut Body, b: &mut Block) -> bool {
    let mut nested = Nested {
        body,
        changed: false,
    };
    for s in &mut b.stmts {
        visit_mut::walk_stmt_mut(&mut nested, s);
    }
    let mut changed = nested.changed;
    if !b
        .stmts
        .iter()
        .any(|s| matches!(s.kind, StmtKind::ForList { .. }))
    {
        return changed;
    }
    let old = std::mem::take(&mut b.stmts);
    let mut out: Vec<Stmt> = Vec::with_capacity(old.len());
    for s in old {
        match s.kind {
            StmtKind::ForList {
                var,
                items,
                body: lb,
            } => {
                changed = true;
                for item in &items {
                    let copy = rewrite::copy_block_with(body, &lb, &[(var, item)]);
                    out.extend(copy.stmts);
                }
            }
            _ => out.push(s),
        }
    }
    b.stmts = out;
    changed
}

/// Lowers the blocks nested in a statement (those of `if` statements and
/// expressions, loops, and loops over lists) before the statement's own
/// block is rebuilt.
struct Nested<'b> {
    body: &'b mut Body,
    changed: bool,
}

impl VisitMut for Nested<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.changed |= lower_block(self.body, b);
    }
}
