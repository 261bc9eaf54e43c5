//! Barrier references: an unindexed reference to a group of several barriers
//! (E0303), a constant index outside the group, of barriers or of named
//! barriers (E0305; an immutable local bound to a constant counts as a
//! constant, and the element of a loop over a constant list in each run of
//! its body).

use super::error::BarrierError;
use super::walk::{self, Cx, Once, Visitor};
use crate::analysis::values::Values;
use crate::ir::{BarrierRef, Kernel, Stmt, StmtKind};
use crate::span::Span;

pub fn check(kernel: &Kernel, values: &Values, out: &mut Vec<BarrierError>) {
    let mut v = Refs {
        kernel,
        values,
        once: Once::default(),
        out,
    };
    walk::runs(&kernel.body, values, &mut v);
}

struct Refs<'k, 'o> {
    kernel: &'k Kernel,
    values: &'k Values,
    /// By the reference's span: each reported once.
    once: Once<Span>,
    out: &'o mut Vec<BarrierError>,
}

impl<'a> Visitor<'a> for Refs<'_, '_> {
    /// A constant index outside a named-barrier group (E0305).
    fn stmt(&mut self, s: &'a Stmt, cx: Cx<'a>) {
        let StmtKind::NamedBarrier(op) = &s.kind else {
            return;
        };
        let (Some(g), Some(i)) = (self.kernel.named_barriers.get(op.group.index()), &op.index)
        else {
            return;
        };
        let Some(index) = self.values.int(i, cx.at).filter(|_| !g.failed.count) else {
            return;
        };
        if !(0..i128::from(g.count)).contains(&index) && self.once.first(op.span) {
            self.out.push(BarrierError::IndexOutOfBounds {
                index,
                name: g.name.clone(),
                count: g.count,
                span: op.span,
                decl: g.spans.decl,
            });
        }
    }

    fn barrier_ref(&mut self, r: &'a BarrierRef, cx: Cx<'a>) {
        let Some(g) = self.kernel.barriers.get(r.group.index()) else {
            return;
        };
        // A count that failed to check (a placeholder) says nothing.
        if g.failed.count {
            return;
        }
        // The count's own span says "2 barriers" best; a group of one has none.
        let decl = g.spans.count.unwrap_or(g.spans.decl);
        match &r.index {
            None if g.count > 1 => {
                if !self.once.first(r.span) {
                    return;
                }
                self.out.push(BarrierError::Unindexed {
                    name: g.name.clone(),
                    count: g.count,
                    span: r.span,
                    decl,
                });
            }
            None => {}
            Some(i) => {
                let Some(index) = self.values.int(i, cx.at) else {
                    return;
                };
                if (index < 0 || index >= i128::from(g.count)) && self.once.first(r.span) {
                    self.out.push(BarrierError::IndexOutOfBounds {
                        index,
                        name: g.name.clone(),
                        count: g.count,
                        span: i.span,
                        decl,
                    });
                }
            }
        }
    }
}
